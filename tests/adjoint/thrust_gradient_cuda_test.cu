// The gradient checks of thrust_gradient_suite.hpp on the CUDA device system: on the GPU,
// store-all and revolve (2, 3 and 7 snapshots) give the same loss, gradients and final state bit
// for bit for Gray–Scott, Heat2D and Lorenz-96 — the schedule-independence matrix on the device —
// and the GPU's gradients are the CPU's (EigenBackend) to 1e-12 relative (nvcc's fused
// multiply-adds change only the last bits). Larger grids than the CPP test, so the reductions use
// both passes of their fixed decomposition. Skipped without a CUDA device.
#include <gtest/gtest.h>

#include <string>

#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/heat2d.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "support/cuda_device.hpp"
#include "thrust_gradient_suite.hpp"

namespace rwd::thrust_gradients {
namespace {

class ThrustGradientsCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = rwd::testing::missing_cuda_device();
    if (!why.empty()) GTEST_SKIP() << why;
  }
};

TEST_F(ThrustGradientsCuda, GrayScottScheduleIndependentOnTheDevice) {
  expect_schedule_independence<GrayScott>(rk4_steps(60, 1.0), Index{128});
}
TEST_F(ThrustGradientsCuda, Heat2DScheduleIndependentOnTheDevice) {
  expect_schedule_independence<Heat2D>(rk4_steps(60, 2e-5), Index{128});
}
TEST_F(ThrustGradientsCuda, Lorenz96ScheduleIndependentOnTheDevice) {
  expect_schedule_independence<Lorenz96>(rk4_steps(100), Index{20000});
}

TEST_F(ThrustGradientsCuda, GrayScottMatchesTheCpu) {
  expect_close_to_eigen<GrayScott>("rk4", rk4_steps(60, 1.0), 1e-12, Index{128});
}
TEST_F(ThrustGradientsCuda, Heat2DMatchesTheCpu) {
  expect_close_to_eigen<Heat2D>("rk4", rk4_steps(60, 2e-5), 1e-12, Index{128});
}
TEST_F(ThrustGradientsCuda, Lorenz96MatchesTheCpu) {
  expect_close_to_eigen<Lorenz96>("rk4", rk4_steps(100), 1e-12, Index{20000});
}
// Every explicit Runge–Kutta method's step and exact adjoint step on device vectors.
TEST_F(ThrustGradientsCuda, EveryRungeKuttaMethodMatchesTheCpu) {
  for (const std::string& method : ButcherTableau::names()) {
    SCOPED_TRACE(method);
    expect_close_to_eigen<Lorenz96>(method.c_str(), rk4_steps(80), 1e-12, Index{20000});
  }
}
TEST_F(ThrustGradientsCuda, Lorenz96AdaptiveMatchesTheCpu) {
  expect_close_to_eigen<Lorenz96>("tsit5", StepControl::adaptive(0.0, 1.0, 1e-8, 1e-10), 1e-10,
                                  Index{2000});
}

}  // namespace
}  // namespace rwd::thrust_gradients
