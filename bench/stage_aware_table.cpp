// Stage-aware checkpointing against revolve at equal memory, and store-all with and without
// stages: recomputed steps predicted and measured, time predicted and measured, in one run.
//
//   build/bench/stage_aware_table [steps = 100000] [units = 20]
//
// Part 1: Gray–Scott on a 71 × 71 grid (10 082 unknowns), RK4, dt = 1, `steps` steps, a budget
// of `units` state-sized slots: revolve(c) and stage-aware(c, u = 4). The predicted time is the
// plan's predicted_time_ratio times the median of three forward runs made just before each
// gradient, with F (the adjoint part of a reverse step, in forward steps) measured from the
// store-all-stages run of part 2 and a snapshot copy's price measured as `rewind run --stage-aware`
// measures it (rwd::measure_level_costs round `units` slots), both in forward steps. 10^5 steps is
// the most a stage-aware plan takes (rwd::kStageAwareMaxSteps); the time to plan is printed. Part
// 2: (gradient time) / (forward time) of store-all (every reverse re-runs its step) and of
// store-all-stages (none does), medians of five runs after an untimed first, for Lorenz-96 N = 40
// (10^4 steps of 0.01) and the same Gray–Scott (1000 steps, as its stages take 4 × 80 MB).
// F is also measured with each step's stages just made (an adjoint step right after the step
// that made them: "in cache" while the stepper built them in their slots; since it streams them
// out past the cache for states up to 2^17 values they come from memory, but from a store of one
// step's stages rather than of l steps'), and each schedule's prediction printed with that F too.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "rewind/schedule/schedules.hpp"
#include "rewind/store/snapshot_level_probe.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The process's CPU time: on a shared or virtual machine it moves far less than wall time
// (another job's work or a stolen slice is not counted); the runs here use one thread.
double cpu_seconds() {
  return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
}

template <class Stepper, class Vector>
double forward_seconds(Stepper& stepper, const Vector& y0, const Vector& theta) {
  using B = typename Stepper::Backend;
  Vector y = B::zeros(B::size(y0));
  B::copy(y0, y);
  const auto start = Clock::now();
  rwd::Carry carry = stepper.initial_carry(y, theta);
  while (!stepper.finished(carry)) stepper.step(y, carry, theta);
  return since(start);
}

// The median of three forward runs (wall and CPU seconds): on this shared guest one run can be
// 20 % off its neighbours, and every prediction is scaled by it.
template <class Stepper, class Vector>
std::pair<double, double> median_forward_seconds(Stepper& stepper, const Vector& y0,
                                                 const Vector& theta) {
  double wall[3], cpu[3];
  for (int k = 0; k < 3; ++k) {
    const double cpu_start = cpu_seconds();
    wall[k] = forward_seconds(stepper, y0, theta);
    cpu[k] = cpu_seconds() - cpu_start;
  }
  std::sort(wall, wall + 3);
  std::sort(cpu, cpu + 3);
  return {wall[1], cpu[1]};
}

struct StoreAllRatios {
  double plain, stages, adjoint_factor;
};

// The median of a few values (the runs below are short and the machine is shared).
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// Gradient / forward of store-all and store-all-stages, and F from the stage run's reverse
// sweep: medians of kRuns runs, each gradient right after a forward run of its own. (One timed
// run of each, as before, gave F = 2.49 in one run of this program and 1.48 in the next, and the
// stage-aware prediction moved by a sixth with it.)
template <class P>
StoreAllRatios store_all_ratios(const P& problem, double dt, rwd::Index steps) {
  constexpr int kRuns = 5;
  using B = typename P::Backend;
  const auto y0 = problem.default_initial_state();
  const auto theta = problem.default_parameters();
  const auto objective = rwd::Objective<B>::terminal_squared_norm();
  rwd::ExplicitRungeKutta stepper(problem, rwd::ButcherTableau::rk4(),
                                  rwd::StepControl::fixed(0.0, dt, steps));
  forward_seconds(stepper, y0, theta);  // warm the caches
  // Each driver runs once untimed first: it allocates and first touches its store (l states, or
  // l·4 stage vectors), which a driver keeps for its later runs.
  rwd::StoreAllAdjoint plain(stepper, objective);
  plain.run(y0, theta);
  rwd::CheckpointOptions options;
  options.drift_policy = rwd::DriftPolicy::fail;
  rwd::CheckpointedAdjoint staged(stepper, objective, options);
  staged.run(y0, theta, rwd::store_all_stages_schedule(4));
  std::vector<double> plain_ratio, staged_ratio, factor;
  for (int run = 0; run < kRuns; ++run) {
    double forward = forward_seconds(stepper, y0, theta);
    auto start = Clock::now();
    const auto a = plain.run(y0, theta);
    plain_ratio.push_back(since(start) / forward);
    forward = forward_seconds(stepper, y0, theta);
    start = Clock::now();
    const auto b = staged.run(y0, theta, rwd::store_all_stages_schedule(4));
    staged_ratio.push_back(since(start) / forward);
    if (!(a.grad_theta == b.grad_theta) || !(a.grad_y0 == b.grad_y0)) {
      std::fprintf(stderr, "store-all-stages gradient differs from store-all\n");
      std::exit(1);
    }
    factor.push_back(b.summary.reverse_seconds / forward);
  }
  return {median(plain_ratio), median(staged_ratio), median(factor)};
}

// F measured where a checkpointed reverse sweep meets it: each step's stage values just computed
// (step_keeping_stages) and the adjoint step from them timed at once (its stages in cache when
// built in their slots; written past the cache, and so read from memory, when streamed out),
// against a plain forward step of the same states; the median of kRuns rounds of `steps` steps.
// The store-all-stages F above streams every stage back from a store of l·4 vectors instead.
template <class P>
double in_cache_adjoint_factor(const P& problem, double dt, rwd::Index steps) {
  constexpr int kRuns = 5;
  using B = typename P::Backend;
  using Vector = typename B::Vector;
  const auto y0 = problem.default_initial_state();
  const auto theta = problem.default_parameters();
  rwd::ExplicitRungeKutta stepper(problem, rwd::ButcherTableau::rk4(),
                                  rwd::StepControl::fixed(0.0, dt, steps));
  const rwd::Index n = B::size(y0);
  std::vector<Vector> stages;
  for (int i = 0; i < stepper.stage_count(); ++i) stages.push_back(B::zeros(n));
  Vector y = B::zeros(n), lambda = B::zeros(n), mu = B::zeros(B::size(theta));
  std::vector<double> factor;
  for (int run = 0; run <= kRuns; ++run) {  // run 0 warms up, untimed
    const double forward = forward_seconds(stepper, y0, theta);
    B::copy(y0, y);
    rwd::Carry carry = stepper.initial_carry(y, theta);
    double adjoint = 0.0;
    while (!stepper.finished(carry)) {
      const rwd::Carry at = carry;
      stepper.step_keeping_stages(y, carry, theta, stages);
      B::copy(y, lambda);  // a cotangent of the state's size and scale
      const auto start = Clock::now();
      stepper.adjoint_step_from_stages(stages, at, theta, lambda, mu);
      adjoint += since(start);
    }
    if (run > 0) factor.push_back(adjoint / forward);
  }
  return median(factor);
}

}  // namespace

int main(int argc, char** argv) {
  const rwd::Index steps = argc > 1 ? std::atoll(argv[1]) : rwd::kStageAwareMaxSteps;
  const int units = argc > 2 ? std::atoi(argv[2]) : 20;
  rwd::GrayScott<> gray_scott(71);
  const StoreAllRatios gs = store_all_ratios(gray_scott, 1.0, 1000);
  rwd::Lorenz96<> lorenz(40);
  const StoreAllRatios l96 = store_all_ratios(lorenz, 0.01, 10000);
  const double f_in_cache = in_cache_adjoint_factor(gray_scott, 1.0, 200);

  using B = rwd::EigenBackend;
  const auto y0 = gray_scott.default_initial_state();
  const auto theta = gray_scott.default_parameters();
  rwd::ExplicitRungeKutta stepper(gray_scott, rwd::ButcherTableau::rk4(),
                                  rwd::StepControl::fixed(0.0, 1.0, steps));
  const double forward = median_forward_seconds(stepper, y0, theta).first;
  const double step_seconds = forward / static_cast<double>(steps);
  const rwd::LevelCosts copies = rwd::measure_level_costs<B>(B::size(y0), 41, units);
  rwd::CostModel costs;
  costs.adjoint_cost_factor = gs.adjoint_factor;
  costs.write_time = copies.device_write_seconds / step_seconds;
  costs.read_time = copies.device_read_seconds / step_seconds;
  const auto objective = rwd::Objective<B>::terminal_squared_norm();
  std::printf(
      "Gray-Scott %ld unknowns, RK4, %ld steps, %d state-sized units; F = %.3f (streamed from a "
      "store-all-stages store; %.3f with the stages in cache), a snapshot copy in %.3f / out "
      "%.3f steps (measured); a forward run %.3f s (median of 3)\n\n",
      static_cast<long>(B::size(y0)), static_cast<long>(steps), units, gs.adjoint_factor,
      f_in_cache, costs.write_time, costs.read_time, forward);
  std::printf(
      "Each gradient is timed right after three forward runs of its own; predicted = the plan's\n"
      "predicted_time_ratio x their median, in wall and in CPU time.\n\n");
  std::printf("%-26s %10s %10s %10s %10s %9s %10s %10s %9s %6s\n", "schedule", "recomputed",
              "recomputed", "wall", "wall", "wall", "cpu", "cpu", "cpu", "peak");
  std::printf("%-26s %10s %10s %10s %10s %9s %10s %10s %9s %6s\n", "", "predicted", "measured",
              "predicted", "measured", "meas/pred", "predicted", "measured", "meas/pred", "slots");
  double times[2] = {0, 0}, plan_seconds[2] = {0, 0};
  rwd::Index recomputed[2] = {0, 0};
  const rwd::Planner planners[2] = {rwd::revolve_schedule(units),
                                    rwd::stage_aware_schedule(units, 4)};
  for (int i = 0; i < 2; ++i) {
    const auto plan_start = Clock::now();
    rwd::CheckpointPlan plan = planners[i](steps);
    plan_seconds[i] = since(plan_start);
    plan.costs = costs;
    rwd::CheckpointedAdjoint driver(stepper, objective);
    const auto [forward_wall, forward_cpu] = median_forward_seconds(stepper, y0, theta);
    const double cpu_start = cpu_seconds();
    const auto start = Clock::now();
    const auto result = driver.run(y0, theta, plan);
    times[i] = since(start);
    const double cpu = cpu_seconds() - cpu_start;
    recomputed[i] = result.summary.recomputed_steps;
    const double ratio = plan.predicted_time_ratio(gs.adjoint_factor);
    std::printf("%-26s %10ld %10ld %9.2fs %9.2fs %9.3f %9.2fs %9.2fs %9.3f %6ld\n",
                plan.name.c_str(), static_cast<long>(plan.forward_steps() - steps),
                static_cast<long>(result.summary.recomputed_steps), ratio * forward_wall, times[i],
                times[i] / (ratio * forward_wall), ratio * forward_cpu, cpu,
                cpu / (ratio * forward_cpu), static_cast<long>(plan.peak_slots));
    const double ratio_in_cache = plan.predicted_time_ratio(f_in_cache);
    std::printf("%-26s predicted with F in cache: %.2fs wall (meas/pred %.3f)\n", "",
                ratio_in_cache * forward_wall, times[i] / (ratio_in_cache * forward_wall));
    // Where the time went, in forward steps of the run just before (the driver's own split).
    const double step = forward_wall / static_cast<double>(steps);
    const rwd::Summary& summary = result.summary;
    std::printf("%-26s first sweep %.0f, recomputation %.0f, reverse sweep %.0f steps' time\n", "",
                summary.forward_seconds / step, summary.recompute_seconds / step,
                summary.reverse_seconds / step);
  }
  std::printf("\nstage-aware / revolve: recomputed steps %.3f, time %.3f\n",
              static_cast<double>(recomputed[1]) / static_cast<double>(recomputed[0]),
              times[1] / times[0]);
  std::printf("planning (not in the times above): revolve %.3f s, stage-aware %.3f s\n\n",
              plan_seconds[0], plan_seconds[1]);
  std::printf("store-all gradient / forward (RK4)   without stages   with stages (F measured)\n");
  std::printf("Lorenz-96 N = 40, 10^4 steps         %14.3f   %11.3f (%.2f)\n", l96.plain,
              l96.stages, l96.adjoint_factor);
  std::printf("Gray-Scott 10^4 unknowns, 1000 steps %14.3f   %11.3f (%.2f)\n", gs.plain, gs.stages,
              gs.adjoint_factor);
  return 0;
}
