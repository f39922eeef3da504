// tests/adjoint/thrust_gradient_suite.hpp — the gradient checks of the Thrust backend, shared by
// the CPP device system (thrust_gradient_test.cpp, run on every build) and the CUDA device system
// (thrust_gradient_cuda_test.cu, run on a GPU machine).
//
//   rwd::thrust_gradients::expect_schedule_independence<rwd::GrayScott>(rk4_steps(50), Index{16});
//   rwd::thrust_gradients::expect_close_to_eigen<rwd::Lorenz96>(rk4_steps(100), 1e-12, Index{64});
//
// expect_schedule_independence: on ThrustBackend (deterministic on every device system: its
// reductions fold in a fixed decomposition), store-all and revolve with several snapshot budgets
// give the same loss, dJ/dy0, dJ/dθ and y_N bit for bit — the schedule-independence contract
// checked on the device itself — and revolve recomputes the steps it should.
// expect_close_to_eigen: the same run on ThrustBackend and on EigenBackend (CPU) agree to a
// relative tolerance: the kernels compute the same discrete adjoint.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/backend/eigen_backend.hpp"
#include "rewind/backend/thrust_backend.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/objective.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/host_vectors.hpp"

namespace rwd::thrust_gradients {

using Host = std::vector<double>;

inline StepControl rk4_steps(Index steps, double dt = 0.01) {
  return StepControl::fixed(0.0, dt, steps);  // (t0, dt, steps)
}

// sqrt(Σ (a_i − b_i)²) / sqrt(Σ a_i²).
inline double relative_difference(const Host& a, const Host& b) {
  EXPECT_EQ(a.size(), b.size());
  double diff = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    diff += (a[i] - b[i]) * (a[i] - b[i]);
    norm += a[i] * a[i];
  }
  return std::sqrt(diff / std::max(norm, 1e-300));
}

// A gradient result on the host: what two runs must share bit for bit.
struct HostGradient {
  double loss = 0.0;
  Host grad_y0, grad_theta, y_final;
  Index recomputed_steps = 0;

  template <class B, class Result>
  static HostGradient of(const Result& r) {
    return {r.loss, rwd::testing::to_host<B>(r.grad_y0), rwd::testing::to_host<B>(r.grad_theta),
            rwd::testing::to_host<B>(r.y_final), r.summary.recomputed_steps};
  }
};

inline void expect_same_bits(const HostGradient& a, const HostGradient& b) {
  EXPECT_EQ(a.loss, b.loss);
  EXPECT_TRUE(a.grad_y0 == b.grad_y0)
      << "dJ/dy0 differs; relative " << relative_difference(a.grad_y0, b.grad_y0);
  EXPECT_TRUE(a.grad_theta == b.grad_theta)
      << "dJ/dθ differs; relative " << relative_difference(a.grad_theta, b.grad_theta);
  EXPECT_TRUE(a.y_final == b.y_final) << "y_N differs";
}

template <template <class> class Problem, class B, class... Args>
HostGradient store_all_gradient(const char* method, StepControl control, Args... args) {
  Problem<B> problem(args...);
  ExplicitRungeKutta stepper(problem, ButcherTableau::by_name(method), control);
  StoreAllAdjoint driver(stepper, Objective<B>::terminal_squared_norm());
  return HostGradient::of<B>(
      driver.run(problem.default_initial_state(), problem.default_parameters()));
}

template <template <class> class Problem, class... Args>
void expect_schedule_independence(StepControl control, Args... args) {
  using B = ThrustBackend;
  ASSERT_TRUE(B::deterministic);
  const HostGradient store_all = store_all_gradient<Problem, B>("rk4", control, args...);
  Problem<B> problem(args...);
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), control);
  CheckpointedAdjoint driver(stepper, Objective<B>::terminal_squared_norm());
  for (const int snapshots : {2, 3, 7}) {
    SCOPED_TRACE(::testing::Message() << "revolve with " << snapshots << " snapshots");
    const HostGradient revolve =
        HostGradient::of<B>(driver.run(problem.default_initial_state(),
                                       problem.default_parameters(), revolve_schedule(snapshots)));
    expect_same_bits(revolve, store_all);
    EXPECT_GT(revolve.recomputed_steps, 0);  // it did replay from snapshots
  }
  // And a second store-all run repeats itself (the reductions of the objective included).
  expect_same_bits(store_all_gradient<Problem, B>("rk4", control, args...), store_all);
}

template <template <class> class Problem, class... Args>
void expect_close_to_eigen(const char* method, StepControl control, double tolerance,
                           Args... args) {
  const HostGradient e = store_all_gradient<Problem, EigenBackend>(method, control, args...);
  const HostGradient t = store_all_gradient<Problem, ThrustBackend>(method, control, args...);
  EXPECT_NEAR(t.loss, e.loss, tolerance * std::abs(e.loss));
  EXPECT_LT(relative_difference(e.grad_y0, t.grad_y0), tolerance);
  EXPECT_LT(relative_difference(e.grad_theta, t.grad_theta), tolerance);
  EXPECT_LT(relative_difference(e.y_final, t.y_final), tolerance);
}

}  // namespace rwd::thrust_gradients
