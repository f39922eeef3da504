// ThrustBackend on Thrust's OMP device system (linked through rewind::thrust_omp): its reductions
// give, for 1, 2, 3 and 4 threads, the bits of the independent host fold of the fixed
// decomposition — the bits thrust_fixed_reduction_test checks on the CPP system — so the two
// device systems agree bit for bit and the thread count changes nothing.
#include <gtest/gtest.h>
#include <omp.h>

#include "fixed_reduction_checks.hpp"
#include "rewind/backend/thrust_backend.hpp"

namespace rwd::fixed_reduction {
namespace {

static_assert(THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_OMP);

TEST(ThrustFixedReductionOmp, IsTheDeterministicOmpDeviceSystem) {
  EXPECT_TRUE(ThrustBackend::deterministic);
  EXPECT_STREQ(ThrustBackend::name, "thrust-omp");
}

TEST(ThrustFixedReductionOmp, MatchesTheHostFoldForEveryThreadCount) {
  const int before = omp_get_max_threads();
  for (const int threads : {1, 2, 3, 4}) {
    SCOPED_TRACE(::testing::Message() << threads << " threads");
    omp_set_num_threads(threads);
    expect_reductions_match_the_host_fold<ThrustBackend>(/*products_exact=*/true);
  }
  omp_set_num_threads(before);
}

TEST(ThrustFixedReductionOmp, FindsNonFiniteValuesEverywhere) {
  omp_set_num_threads(3);
  expect_non_finite_values_found_everywhere<ThrustBackend>();
}

}  // namespace
}  // namespace rwd::fixed_reduction
