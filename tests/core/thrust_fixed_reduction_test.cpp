// ThrustBackend's reductions on the CPP device system fold in the documented fixed decomposition
// (rewind/backend/thrust_fixed_reduction.hpp): bit for bit the independent host fold of
// fixed_reduction_checks.hpp. thrust_fixed_reduction_omp_test checks the same on the OMP device
// system with several thread counts, so the two systems give the same bits as each other.
#include <gtest/gtest.h>

#include "fixed_reduction_checks.hpp"
#include "rewind/backend/thrust_backend.hpp"

namespace rwd::fixed_reduction {
namespace {

TEST(ThrustFixedReductionCpp, MatchesTheHostFoldOfTheDecomposition) {
  expect_reductions_match_the_host_fold<ThrustBackend>(/*products_exact=*/true);
}

TEST(ThrustFixedReductionCpp, FindsNonFiniteValuesEverywhere) {
  expect_non_finite_values_found_everywhere<ThrustBackend>();
}

TEST(ThrustFixedReductionCpp, LayoutDependsOnTheLengthAlone) {
  using thrust_detail::reduction_layout;
  EXPECT_EQ(reduction_layout(1).partials, 1);
  EXPECT_EQ(reduction_layout(32).partials, 1);
  EXPECT_EQ(reduction_layout(33).partials, 2);
  EXPECT_EQ(reduction_layout(8192).final_partials, 256);
  EXPECT_EQ(reduction_layout(8193).partials, 257);
  EXPECT_EQ(reduction_layout(8193).final_partials, 256);
  EXPECT_EQ(reduction_layout(Index{1} << 40).partials, 65536);
}

}  // namespace
}  // namespace rwd::fixed_reduction
