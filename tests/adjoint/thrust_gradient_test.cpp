// The GPU code path on the CPU: the same Runge–Kutta engine, drivers and built-in problems over
// the Thrust backend (CPP device system here; CUDA in thrust_gradient_cuda_test.cu, through the
// same thrust_gradient_suite.hpp) give the Eigen backend's loss and gradients to round-off, fixed
// and adaptive, and store-all and revolve give the same bits.
#include <gtest/gtest.h>

#include <string>

#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/heat2d.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "thrust_gradient_suite.hpp"

namespace rwd::thrust_gradients {
namespace {

TEST(ThrustBackendGradients, Lorenz96Fixed) {
  expect_close_to_eigen<Lorenz96>("rk4", rk4_steps(100), 1e-12, Index{64});
}
TEST(ThrustBackendGradients, EveryRungeKuttaMethod) {
  for (const std::string& method : ButcherTableau::names()) {
    SCOPED_TRACE(method);
    expect_close_to_eigen<Lorenz96>(method.c_str(), rk4_steps(60), 1e-12, Index{64});
  }
}
TEST(ThrustBackendGradients, Lorenz96Adaptive) {
  expect_close_to_eigen<Lorenz96>("tsit5", StepControl::adaptive(0.0, 1.0, 1e-8, 1e-10), 1e-11,
                                  Index{64});
}
TEST(ThrustBackendGradients, GrayScottFixed) {
  expect_close_to_eigen<GrayScott>("rk4", rk4_steps(50, 1.0), 1e-12, Index{16});
}
TEST(ThrustBackendGradients, GrayScottAdaptive) {
  expect_close_to_eigen<GrayScott>("dopri5", StepControl::adaptive(0.0, 20.0, 1e-7, 1e-9), 1e-11,
                                   Index{12});
}
TEST(ThrustBackendGradients, Heat2DFixed) {
  expect_close_to_eigen<Heat2D>("rk4", rk4_steps(40, 0.002), 1e-12, Index{24});
}

TEST(ThrustBackendGradients, Lorenz96ScheduleIndependent) {
  expect_schedule_independence<Lorenz96>(rk4_steps(60), Index{32});
}
TEST(ThrustBackendGradients, GrayScottScheduleIndependent) {
  expect_schedule_independence<GrayScott>(rk4_steps(40, 1.0), Index{16});
}
TEST(ThrustBackendGradients, Heat2DScheduleIndependent) {
  expect_schedule_independence<Heat2D>(rk4_steps(40, 0.002), Index{24});
}

}  // namespace
}  // namespace rwd::thrust_gradients
