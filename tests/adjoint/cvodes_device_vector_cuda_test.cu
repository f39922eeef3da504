// CVODES with the state on the GPU (rewind's device N_Vector over the CUDA device system): the
// checks of cvodes_device_vector_test.cpp on the device. Against the CPU the BDF gradient may
// take other steps (nvcc's fused multiply-adds change the last bits of every kernel, and an
// adaptive solver's step choices follow them), so its tolerance is the solver's, not round-off.
// Skipped without a CUDA device.
#include <gtest/gtest.h>

#include <string>

#include "cvodes_device_vector_suite.hpp"
#include "support/cuda_device.hpp"

namespace {

using namespace rwd::cvodes_device_checks;

class CvodesDeviceVectorCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = rwd::testing::missing_cuda_device();
    if (!why.empty()) GTEST_SKIP() << why;
  }
};

TEST_F(CvodesDeviceVectorCuda, OperationsMatchTheCpuVector) {
  expect_vector_operations_match_the_cpu(1 << 20, 1e-15);
}

TEST_F(CvodesDeviceVectorCuda, BdfGradientMatchesTheCpuProblem) {
  expect_bdf_gradient_close_to_cpu(64, 1e-6);
}

TEST_F(CvodesDeviceVectorCuda, EveryScheduleGivesTheSameBits) {
  expect_schedule_independence(64);
}

TEST_F(CvodesDeviceVectorCuda, Esdirk43GradientMatchesTheCpuProblem) {
  expect_esdirk_gradient_close_to_cpu(64, 1e-6);
}

TEST_F(CvodesDeviceVectorCuda, Esdirk43EveryScheduleGivesTheSameBits) {
  expect_esdirk_schedule_independence(64);
}

}  // namespace
