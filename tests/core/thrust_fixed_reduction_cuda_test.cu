// ThrustBackend's reductions on the CUDA device system fold in the documented fixed decomposition
// (rewind/backend/thrust_fixed_reduction.hpp): sums of values, max |x| and all_finite give bit for
// bit the host fold of fixed_reduction_checks.hpp — the bits the CPP and OMP systems give — and
// dot and wrms_norm do too when built with REWIND_CUDA_FMAD=OFF (else within one rounding of each
// product). Skipped without a CUDA device.
#include <gtest/gtest.h>

#include <string>

#include "fixed_reduction_checks.hpp"
#include "rewind/backend/thrust_backend.hpp"
#include "support/cuda_device.hpp"

namespace rwd::fixed_reduction {
namespace {

class ThrustFixedReductionCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = rwd::testing::missing_cuda_device();
    if (!why.empty()) GTEST_SKIP() << why;
  }
};

TEST_F(ThrustFixedReductionCuda, MatchesTheHostFoldOfTheDecomposition) {
  expect_reductions_match_the_host_fold<ThrustBackend>(/*products_exact=*/REWIND_CUDA_FMAD == 0);
}

TEST_F(ThrustFixedReductionCuda, FindsNonFiniteValuesEverywhere) {
  expect_non_finite_values_found_everywhere<ThrustBackend>();
}

TEST_F(ThrustFixedReductionCuda, RepeatsItselfBitForBit) {
  using B = ThrustBackend;
  const Index n = 3 * 1024 * 1024 + 5;
  const B::Vector x = rwd::testing::to_backend<B>(rwd::testing::random_values(n, 11));
  const B::Vector y = rwd::testing::to_backend<B>(rwd::testing::random_values(n, 12));
  const double first = B::dot(x, y);
  for (int run = 0; run < 20; ++run) EXPECT_TRUE(same_bits(B::dot(x, y), first)) << run;
}

}  // namespace
}  // namespace rwd::fixed_reduction
