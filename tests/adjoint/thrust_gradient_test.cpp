// The GPU code path on the CPU: the same Runge–Kutta engine, store-all driver and built-in
// problems over the Thrust backend (CPP device system here; CUDA in the *_cuda_test.cu build)
// give the Eigen backend's loss and gradients to round-off, fixed and adaptive.
#include <gtest/gtest.h>

#include <vector>

#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/backend/eigen_backend.hpp"
#include "rewind/backend/thrust_backend.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "support/host_vectors.hpp"

namespace rwd {
namespace {

using testing::to_host;

double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += (a[i] - b[i]) * (a[i] - b[i]);
    norm += a[i] * a[i];
  }
  return std::sqrt(diff / std::max(norm, 1e-300));
}

template <template <class> class Problem, class... Args>
void compare_backends(const char* method, StepControl control, Args... args) {
  Problem<EigenBackend> eigen_problem(args...);
  Problem<ThrustBackend> thrust_problem(args...);
  ExplicitRungeKutta eigen_stepper(eigen_problem, ButcherTableau::by_name(method), control);
  ExplicitRungeKutta thrust_stepper(thrust_problem, ButcherTableau::by_name(method), control);
  StoreAllAdjoint eigen_driver(eigen_stepper, Objective<EigenBackend>::terminal_squared_norm());
  StoreAllAdjoint thrust_driver(thrust_stepper, Objective<ThrustBackend>::terminal_squared_norm());
  const auto e =
      eigen_driver.run(eigen_problem.default_initial_state(), eigen_problem.default_parameters());
  const auto t = thrust_driver.run(thrust_problem.default_initial_state(),
                                   thrust_problem.default_parameters());
  EXPECT_EQ(e.summary.steps, t.summary.steps);
  EXPECT_NEAR(e.loss, t.loss, 1e-12 * std::abs(e.loss));
  EXPECT_LT(
      relative_difference(to_host<EigenBackend>(e.grad_y0), to_host<ThrustBackend>(t.grad_y0)),
      1e-11);
  EXPECT_LT(relative_difference(to_host<EigenBackend>(e.grad_theta),
                                to_host<ThrustBackend>(t.grad_theta)),
            1e-11);
  EXPECT_STREQ(t.summary.backend.c_str(), ThrustBackend::name);
}

TEST(ThrustBackendGradients, Lorenz96Fixed) {
  compare_backends<Lorenz96>("rk4", StepControl::fixed(0.0, 0.01, 100), Index{64});
}
TEST(ThrustBackendGradients, Lorenz96Adaptive) {
  compare_backends<Lorenz96>("tsit5", StepControl::adaptive(0.0, 1.0, 1e-8, 1e-10), Index{64});
}
TEST(ThrustBackendGradients, GrayScottFixed) {
  compare_backends<GrayScott>("rk4", StepControl::fixed(0.0, 1.0, 50), Index{16});
}
TEST(ThrustBackendGradients, GrayScottAdaptive) {
  compare_backends<GrayScott>("dopri5", StepControl::adaptive(0.0, 20.0, 1e-7, 1e-9), Index{12});
}

TEST(ThrustBackendGradients, DeterministicOnTheCppDeviceSystem) {
  // Schedule independence rests on bitwise reproducibility: two identical runs, same bits.
  ASSERT_TRUE(ThrustBackend::deterministic);
  Lorenz96<ThrustBackend> problem(32);
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 50));
  StoreAllAdjoint driver(stepper, Objective<ThrustBackend>::terminal_squared_norm());
  const auto a = driver.run(problem.default_initial_state(), problem.default_parameters());
  const auto b = driver.run(problem.default_initial_state(), problem.default_parameters());
  EXPECT_EQ(to_host<ThrustBackend>(a.grad_y0), to_host<ThrustBackend>(b.grad_y0));
  EXPECT_EQ(to_host<ThrustBackend>(a.grad_theta), to_host<ThrustBackend>(b.grad_theta));
}

}  // namespace
}  // namespace rwd
