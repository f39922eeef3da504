// The command line's progress (src/cli/progress.hpp) watches the drivers through their step
// observer, so a run with progress keeps every capability of its stepper: a run that ends on an
// event located inside its last step and a run observed at given times give the library's bits,
// and the progress reaches the end of both sweeps. (The forwarding stepper this replaced had no
// step_sized or lands_on, so such runs were refused as soon as progress was on.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "../../src/cli/progress.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/forward_loss.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/projectile.hpp"
#include "rewind/schedule/schedules.hpp"

namespace rwd::cli {
namespace {

using B = EigenBackend;
using Vec = B::Vector;

bool same_bits(const Vec& a, const Vec& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

template <class R>
void expect_same_result(const R& a, const R& b) {
  EXPECT_EQ(std::memcmp(&a.loss, &b.loss, sizeof(double)), 0);
  EXPECT_TRUE(same_bits(a.grad_y0, b.grad_y0));
  EXPECT_TRUE(same_bits(a.grad_theta, b.grad_theta));
  EXPECT_TRUE(same_bits(a.y_final, b.y_final));
  EXPECT_EQ(a.summary.steps, b.summary.steps);
}

// The run with the command line's progress against the bare library run, by both drivers.
template <class Stepper>
void expect_progress_changes_nothing(Stepper& stepper, const Objective<B>& objective, const Vec& y0,
                                     const Vec& theta,
                                     const std::optional<StopCondition<B>>& stop) {
  ProgressBar bar(false);
  {
    StoreAllAdjoint bare(stepper, objective, {}, stop);
    const auto expected = bare.run(y0, theta);
    StepProgress progress(stepper, bar);
    StoreAllOptions options;
    options.observer = progress.observer();
    StoreAllAdjoint watched(stepper, objective, options, stop);
    const auto result = watched.run(y0, theta);
    expect_same_result(result, expected);
    EXPECT_EQ(progress.reached(), result.summary.steps);
    EXPECT_EQ(progress.reversed(), result.summary.steps);
  }
  {
    CheckpointedAdjoint bare(stepper, objective, {}, stop);
    const auto expected = bare.run(y0, theta, revolve_schedule(5));
    StepProgress progress(stepper, bar);
    CheckpointOptions options;
    options.observer = progress.observer();
    CheckpointedAdjoint watched(stepper, objective, options, stop);
    const auto result = watched.run(y0, theta, revolve_schedule(5));
    expect_same_result(result, expected);
    EXPECT_EQ(progress.runs(), 1);  // online: no counting sweep
    EXPECT_EQ(progress.reached(), result.summary.steps);
    EXPECT_EQ(progress.reversed(), result.summary.steps);
  }
}

TEST(ProgressObserver, AnEventLocatedStopRunsAsInTheLibrary) {
  const Vec y0 = Projectile<>::launch_state(30.0, 0.7);
  const Vec theta = Projectile<>::default_parameters(9.81, 0.01);
  Projectile<> shot;
  ExplicitRungeKutta stepper(shot, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 100000));
  const auto range = Objective<B>::terminal_linear(Projectile<>::range_weights());
  expect_progress_changes_nothing(stepper, range, y0, theta, Projectile<>::landing());
}

TEST(ProgressObserver, ObservationTimesRunAsInTheLibrary) {
  Lorenz63<> problem;
  const Vec y0 = problem.default_initial_state(), theta = problem.default_parameters();
  std::vector<double> times;
  for (int k = 1; k <= 12; ++k) times.push_back(0.07 * k);
  StepControl control = StepControl::adaptive(0.0, times.back(), 1e-7, 1e-9);
  control.stop_times = times;
  ExplicitRungeKutta stepper(problem, ButcherTableau::dormand_prince(), control);
  const auto misfit = Objective<B>::at_times(
      Objective<B>::TerminalFn{}, times, [times](Index, double t, const Vec& y, Vec& grad) {
        const auto k = std::lower_bound(times.begin(), times.end(), t) - times.begin();
        Vec target(3);
        target << std::sin(0.3 * static_cast<double>(k)), 1.0, 20.0;
        grad = y - target;
        return 0.5 * grad.squaredNorm();
      });
  expect_progress_changes_nothing(stepper, misfit, y0, theta, std::nullopt);

  // The finite-difference check's forward runs: the same loss, one run counted per call, the
  // adaptive run's span [t0, t_final] covered.
  ProgressBar bar(false);
  StepProgress progress(stepper, bar, "finite-difference check");
  const double watched = forward_loss(stepper, misfit, y0, theta, nullptr, progress.observer());
  const double bare = forward_loss(stepper, misfit, y0, theta);
  EXPECT_EQ(std::memcmp(&watched, &bare, sizeof(double)), 0);
  EXPECT_EQ(progress.runs(), 1);
  EXPECT_EQ(progress.forward_fraction(), 1.0);
}

}  // namespace
}  // namespace rwd::cli
