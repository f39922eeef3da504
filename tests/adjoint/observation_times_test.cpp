// Observations at times in adaptive runs: the stepper lands exactly on its stop times, the loss
// observes the states there (Objective::at_times), and the gradient is the exact discrete
// adjoint of the accepted steps — bitwise the same from store-all, every online budget and a
// counted planner, bitwise the gradient of the prescribed run with those steps observed by
// index, and that gradient agrees with finite differences. Misuse is refused before any work.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "rewind/adjoint/backsolve_adjoint.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/forward_loss.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/rewind.hpp"
#include "support/error_message.hpp"
#include "support/gradient_check.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vec = B::Vector;

#define EXPECT_THROW_MESSAGE(statement, Error, part) \
  testing::expect_message(testing::error_message<Error>([&] { statement; }), part)

bool same_bits(const Vec& a, const Vec& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof(double)) == 0;
}

std::vector<double> grid(double t0, double dt, int points) {
  std::vector<double> times;
  for (int k = 1; k <= points; ++k) times.push_back(t0 + dt * k);
  return times;
}

StepControl adaptive_with_stops(std::vector<double> stops, double rtol = 1e-7) {
  StepControl c = StepControl::adaptive(0.0, stops.back(), rtol, 1e-9);
  c.stop_times = std::move(stops);
  return c;
}

// Σ_k ½|y(t_k) − d_k|² with d_k a fixed, made-up target per time.
Objective<B> misfit_at(const std::vector<double>& times) {
  auto fn = [times](Index, double t, const Vec& y, Vec& grad) {
    const auto k = std::lower_bound(times.begin(), times.end(), t) - times.begin();
    Vec target(3);
    target << std::sin(0.3 * static_cast<double>(k)), 1.0, 20.0 + static_cast<double>(k);
    grad = y - target;
    return 0.5 * grad.squaredNorm();
  };
  return Objective<B>::at_times(Objective<B>::TerminalFn{}, times, fn);
}

struct Trajectory {
  std::vector<double> times;  // t_n of every state, n = 0..l
  std::vector<double> sizes;  // h_n of every accepted step
};

template <class Stepper>
Trajectory walk(Stepper& stepper, const Vec& y0, const Vec& theta) {
  Trajectory out;
  Vec y = y0;
  Carry carry = stepper.initial_carry(y, theta);
  out.times.push_back(carry.t);
  while (!stepper.finished(carry)) {
    stepper.step(y, carry, theta);
    out.times.push_back(carry.t);
    out.sizes.push_back(stepper.last_step_size());
  }
  return out;
}

TEST(ObservationTimes, AdaptiveStepsLandExactlyOnEveryStopTime) {
  Lorenz63<> problem;
  const std::vector<double> stops = grid(0.0, 0.07, 20);  // 0.07 … 1.4, not binary fractions
  ExplicitRungeKutta stepper(problem, ButcherTableau::dormand_prince(), adaptive_with_stops(stops));
  const Trajectory path =
      walk(stepper, problem.default_initial_state(), problem.default_parameters());
  for (double s : stops)
    EXPECT_TRUE(std::find(path.times.begin(), path.times.end(), s) != path.times.end())
        << "no state at stop time " << s;
  EXPECT_EQ(path.times.back(), stops.back());
  EXPECT_TRUE(std::is_sorted(path.times.begin(), path.times.end()));
  for (double s : stops) EXPECT_TRUE(stepper.lands_on(s));
  EXPECT_TRUE(stepper.lands_on(0.0));
  EXPECT_FALSE(stepper.lands_on(0.5));
}

TEST(ObservationTimes, StopTimesCostFewExtraSteps) {
  // A step near a stop time stretches to it instead of leaving a sliver, and the step after a
  // landing retries the size the landing cut: stops must not drag the step size down.
  Lorenz63<> problem;
  const Vec y0 = problem.default_initial_state(), theta = problem.default_parameters();
  ExplicitRungeKutta free_run(problem, ButcherTableau::dormand_prince(),
                              StepControl::adaptive(0.0, 2.0, 1e-8, 1e-10));
  const auto free_steps = static_cast<Index>(walk(free_run, y0, theta).sizes.size());
  for (int stops : {10, 40, 200}) {
    ExplicitRungeKutta stopped(problem, ButcherTableau::dormand_prince(), [&] {
      StepControl c = StepControl::adaptive(0.0, 2.0, 1e-8, 1e-10);
      c.stop_times = grid(0.0, 2.0 / stops, stops - 1);
      return c;
    }());
    const auto steps = static_cast<Index>(walk(stopped, y0, theta).sizes.size());
    SCOPED_TRACE(std::to_string(stops) + " stop times, " + std::to_string(free_steps) +
                 " steps without, " + std::to_string(steps) + " with");
    // Measured: 249, 249, 323 steps (rhs 1.01–1.31 × the free run's).
    EXPECT_LE(steps, free_steps + stops / 2);
    EXPECT_LE(stopped.counters().rhs_evaluations, 1.4 * free_run.counters().rhs_evaluations);
    EXPECT_GE(steps, std::max<Index>(free_steps - 2, stops));
  }
}

TEST(ObservationTimes, GradientIsBitwiseTheSameFromEveryDriverAndBudget) {
  Lorenz63<> problem;
  const std::vector<double> stops = grid(0.0, 0.05, 30);
  ExplicitRungeKutta stepper(problem, ButcherTableau::tsitouras(), adaptive_with_stops(stops));
  const auto objective = misfit_at(stops);
  const Vec y0 = problem.default_initial_state(), theta = problem.default_parameters();
  StoreAllAdjoint reference(stepper, objective);
  const auto expected = reference.run(y0, theta);
  ASSERT_GT(expected.summary.steps, static_cast<Index>(stops.size()));
  EXPECT_GT(expected.loss, 0.0);
  for (int c : {1, 2, 3, 7, 1000}) {
    SCOPED_TRACE("online c = " + std::to_string(c));
    CheckpointOptions options;
    options.drift_policy = DriftPolicy::fail;
    CheckpointedAdjoint driver(stepper, objective, options);
    const auto result = driver.run(y0, theta, revolve_schedule(c));
    EXPECT_EQ(result.counting_steps, 0);
    EXPECT_TRUE(same_bits(result.loss, expected.loss));
    EXPECT_TRUE(same_bits(result.grad_y0, expected.grad_y0));
    EXPECT_TRUE(same_bits(result.grad_theta, expected.grad_theta));
  }
  CheckpointedAdjoint counted(stepper, objective);
  const auto uniform = counted.run(y0, theta, uniform_schedule(5));
  EXPECT_GT(uniform.counting_steps, 0);
  EXPECT_TRUE(same_bits(uniform.grad_theta, expected.grad_theta));
  EXPECT_TRUE(same_bits(forward_loss(stepper, objective, y0, theta), expected.loss));
}

TEST(ObservationTimes, GradientIsThePrescribedRunsAndMatchesFiniteDifferences) {
  Lorenz63<> problem;
  const std::vector<double> stops = grid(0.0, 0.1, 12);
  ExplicitRungeKutta adaptive(problem, ButcherTableau::dormand_prince(),
                              adaptive_with_stops(stops, 1e-9));
  const Vec y0 = problem.default_initial_state(), theta = problem.default_parameters();
  const Trajectory path = walk(adaptive, y0, theta);
  StoreAllAdjoint by_time(adaptive, misfit_at(stops));
  const auto timed = by_time.run(y0, theta);

  // The same steps, prescribed, observed at the step indices that landed on the stop times.
  // Lorenz-63 is autonomous, so t_n + h_n rounding differently from the landed time changes
  // nothing but the time the observation function is told: give it the stop time by index.
  std::vector<Index> steps;
  for (double s : stops)
    steps.push_back(std::find(path.times.begin(), path.times.end(), s) - path.times.begin());
  const Objective<B> reference = misfit_at(stops);
  const auto by_index_fn = [&](Index step, double, const Vec& y, Vec& grad) {
    return reference.observation(step, path.times[static_cast<std::size_t>(step)], y, grad);
  };
  const Objective<B> by_index(Objective<B>::TerminalFn{}, steps, by_index_fn);
  ExplicitRungeKutta prescribed(problem, ButcherTableau::dormand_prince(),
                                StepControl::prescribed(0.0, path.sizes));
  StoreAllAdjoint frozen(prescribed, by_index);
  const auto indexed = frozen.run(y0, theta);
  EXPECT_TRUE(same_bits(timed.loss, indexed.loss));
  EXPECT_TRUE(same_bits(timed.grad_y0, indexed.grad_y0));
  EXPECT_TRUE(same_bits(timed.grad_theta, indexed.grad_theta));

  for (int which : {0, 1}) {
    const auto check = testing::directional_fd(prescribed, by_index, y0, theta,
                                               which == 0 ? timed.grad_y0 : timed.grad_theta, which,
                                               7 + which, 1e-6);
    EXPECT_LT(check.rel_error(), 1e-6) << "adjoint " << check.adjoint << " fd " << check.fd;
  }
}

TEST(ObservationTimes, MisuseIsRefusedBeforeAnyWork) {
  Lorenz63<> problem;
  const Vec y0 = problem.default_initial_state(), theta = problem.default_parameters();
  const std::vector<double> stops = grid(0.0, 0.1, 5);

  // A fixed-step stepper has no state at arbitrary times.
  ExplicitRungeKutta fixed(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.1, 5));
  StoreAllAdjoint on_fixed(fixed, misfit_at(stops));
  EXPECT_THROW_MESSAGE(on_fixed.run(y0, theta), InvalidArgument, "has no state there");
  EXPECT_EQ(fixed.counters().steps, 0);

  // An observation time the adaptive run does not stop at.
  ExplicitRungeKutta adaptive(problem, ButcherTableau::dormand_prince(),
                              adaptive_with_stops(stops));
  CheckpointedAdjoint missing(adaptive, misfit_at({0.1, 0.25}));
  EXPECT_THROW_MESSAGE(missing.run(y0, theta, revolve_schedule(3)), InvalidArgument, "t = 0.25");
  EXPECT_EQ(adaptive.counters().steps, 0);
  EXPECT_THROW_MESSAGE((void)forward_loss(adaptive, misfit_at({0.25}), y0, theta), InvalidArgument,
                       "t = 0.25");

  // The backsolve driver observes step indices only.
  BacksolveAdjoint backsolve(adaptive, misfit_at(stops));
  EXPECT_THROW_MESSAGE(backsolve.run(y0, theta), InvalidArgument, "step indices only");

  // Stop times: increasing, inside (t0, t_final], adaptive only.
  StepControl c = StepControl::adaptive(0.0, 1.0, 1e-6, 1e-9);
  c.stop_times = {0.5, 0.5};
  EXPECT_THROW_MESSAGE(c.validate(), InvalidArgument, "increase strictly");
  c.stop_times = {0.5, 1.5};
  EXPECT_THROW_MESSAGE(c.validate(), InvalidArgument, "(t0, t_final]");
  c.stop_times = {0.0};
  EXPECT_THROW_MESSAGE(c.validate(), InvalidArgument, "(t0, t_final]");
  StepControl f = StepControl::fixed(0.0, 0.1, 10);
  f.stop_times = {0.5};
  EXPECT_THROW_MESSAGE(f.validate(), InvalidArgument, "adaptive steps");

  // Observation times themselves.
  const auto fn = [](Index, double, const Vec& y, Vec& grad) {
    grad = y;
    return 0.0;
  };
  EXPECT_THROW_MESSAGE(Objective<B>::at_times({}, {0.1, 0.1}, fn), InvalidArgument, "distinct");
  EXPECT_THROW_MESSAGE(Objective<B>::at_times({}, {}, fn), InvalidArgument, "empty");
  EXPECT_THROW_MESSAGE(Objective<B>::at_times({}, {std::nan("")}, fn), InvalidArgument,
                       "not finite");
}

}  // namespace
}  // namespace rwd
