// The op-by-op N_Vector conformance suite (cvodes_nvector_conformance.hpp) on the Thrust N_Vector
// over CUDA: element-wise results within nvcc's fused multiply-adds of the reference (one rounding
// fewer per a·x + b·y; 1e-13 of the largest value allows that for the 21-term combination),
// everything else as on the CPU. Skipped without a CUDA device.
#include <gtest/gtest.h>

#include <string>

#include "cvodes_nvector_conformance.hpp"
#include "support/cuda_device.hpp"
#include "thrust_nvector_harness.hpp"

namespace {

using namespace rwd::nvector_conformance;

TEST(NVectorConformanceCuda, ThrustCuda) {
  const std::string why = rwd::testing::missing_cuda_device();
  if (!why.empty()) GTEST_SKIP() << why;
  ThrustHarness h(false, 1e-13);
  expect_conformance(h, {0, 1, 2, 3, 7, 33, 1001, 4099, 40001, 1 << 20});
}

}  // namespace
