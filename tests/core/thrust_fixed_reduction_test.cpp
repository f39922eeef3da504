// ThrustBackend's reductions on the CPP device system fold in the documented fixed decomposition
// (rewind/backend/thrust_fixed_reduction.hpp): bit for bit the independent host fold of
// fixed_reduction_checks.hpp. thrust_fixed_reduction_omp_test checks the same on the OMP device
// system with several thread counts, so the two systems give the same bits as each other.
#include <gtest/gtest.h>

#include <string>
#include <vector>

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

// The GPU's loop (one partial per thread, terms loaded in batches), run here on the host task by
// task: every partial folds its terms k, k + P, k + 2P, … in that order, bit for bit a plain
// loop's — lengths with and without a partial batch at the end, one and many batches per partial.
TEST(ThrustFixedReductionCpp, TheOneThreadPerPartialLoopFoldsInOrder) {
  using thrust_detail::FoldStrided;
  using thrust_detail::Plus;
  using thrust_detail::ReadValue;
  for (const Index n : {Index{1}, Index{31}, Index{33}, Index{1000}, Index{8193}, Index{40000},
                        Index{65536 * 9 + 5}, Index{65536 * 40 - 1}}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const std::vector<double> values = rwd::testing::random_values(n, /*seed=*/n);
    const Index stride = thrust_detail::reduction_layout(n).partials;
    std::vector<double> partials(static_cast<std::size_t>(stride), -1.0);
    const FoldStrided<double, ReadValue<double>, Plus> gpu_loop{
        ReadValue<double>{values.data()}, Plus{}, 0.0, partials.data(), n, stride, 1};
    for (Index task = 0; task < stride; ++task) gpu_loop(task);
    for (Index k = 0; k < stride; ++k) {
      double expected = 0.0;
      for (Index i = k; i < n; i += stride)
        expected = expected + values[static_cast<std::size_t>(i)];
      ASSERT_TRUE(same_bits(partials[static_cast<std::size_t>(k)], expected)) << "partial " << k;
    }
  }
}

}  // namespace
}  // namespace rwd::fixed_reduction
