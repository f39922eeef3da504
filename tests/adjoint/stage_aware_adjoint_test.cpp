// Stage snapshots through the checkpointed driver: with stage-aware plans (every budget from a
// single stage snapshot to all of them) and store-all-stages, the gradient, loss and final state
// are bit for bit those of StoreAllAdjoint — for a 2-stage and a 4-stage method, Eigen and
// Thrust (CPP) backends — and the driver's counts are the plan's.
#include <gtest/gtest.h>

#include <chrono>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/backend/thrust_backend.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/host_vectors.hpp"
#include "support/same_gradient_bits.hpp"
#include "support/scratch_directory.hpp"

namespace rwd {
namespace {

using testing::to_host;

template <class B>
Objective<B> objective_with_observations() {
  return Objective<B>(
      [](double, const typename B::Vector& y, typename B::Vector& g) {
        B::copy(y, g);
        return 0.5 * B::dot(y, y);
      },
      {0, 3, 7, 12},
      [](Index, double, const typename B::Vector& y, typename B::Vector& g) {
        B::copy(y, g);
        B::scale(0.25, g);
        return 0.125 * B::dot(y, y);
      });
}

template <class P>
void check_stage_plans(const P& problem, const char* method, const StepControl& control) {
  using B = typename P::Backend;
  const auto y0 = problem.default_initial_state();
  const auto theta = problem.default_parameters();
  const auto objective = objective_with_observations<B>();
  ExplicitRungeKutta stepper(problem, ButcherTableau::by_name(method), control);
  const int s = stepper.stage_count();
  StoreAllAdjoint reference_driver(stepper, objective);
  const auto reference = reference_driver.run(y0, theta);
  const Index l = reference.summary.steps;

  std::vector<std::pair<std::string, Planner>> plans = {
      {"store-all-stages", store_all_stages_schedule(s)}};
  for (const int units : {s, s + 1, s + 2, 2 * s + 1, 3 * s + 2, 5 * s, static_cast<int>(l) * s})
    plans.emplace_back("stage-aware c=" + std::to_string(units), stage_aware_schedule(units, s));
  // One driver for every plan, each run twice: the driver keeps its memory store from one run
  // to the next (stage values go straight into its slots), which must change neither
  // the bits nor the per-run counts.
  CheckpointOptions options;
  options.drift_policy = DriftPolicy::fail;
  CheckpointedAdjoint driver(stepper, objective, options);
  for (const auto& [name, planner] : plans) {
    SnapshotStoreStatistics first_round;
    for (int round = 0; round < 2; ++round) {
      SCOPED_TRACE(name + (round ? ", again" : ""));
      const CheckpointPlan plan = planner(l);
      const auto result = driver.run(y0, theta, plan);
      const SnapshotStoreStatistics& counts = result.summary.storage;
      if (round == 0) {
        first_round = counts;
        EXPECT_GT(counts.stores_on(LevelKind::memory), 0);
      } else {
        EXPECT_EQ(counts.stores_on(LevelKind::memory), first_round.stores_on(LevelKind::memory));
        EXPECT_EQ(counts.restores_on(LevelKind::memory),
                  first_round.restores_on(LevelKind::memory));
        EXPECT_EQ(counts.peak_bytes_on(LevelKind::memory),
                  first_round.peak_bytes_on(LevelKind::memory));
      }
      testing::expect_same_gradient_bits<B>(result, reference);
      EXPECT_EQ(result.drift.max_rel_drift, 0.0);
      EXPECT_EQ(result.summary.reversed_steps, l);
      EXPECT_EQ(result.summary.forward_steps, plan.forward_steps());
      if (name == "store-all-stages") {
        EXPECT_EQ(result.summary.forward_steps, l);  // nothing re-run
        EXPECT_EQ(plan.stage_reverses, l);
        // Nothing replayed, so nothing to check: only y_0 is fingerprinted.
        EXPECT_GT(result.drift.sampling_stride, l);
        EXPECT_EQ(result.drift.replayed_steps_checked, 0);
      }
      EXPECT_LE(result.summary.storage.peak_bytes_on(LevelKind::memory),
                plan.snapshots * (B::size(y0) * 8 + static_cast<Index>(sizeof(Carry))));
    }
  }
}

class StageAwareAdjoint : public ::testing::TestWithParam<std::string> {};

TEST_P(StageAwareAdjoint, Lorenz63) {
  check_stage_plans(Lorenz63<>(), GetParam().c_str(), StepControl::fixed(0.0, 0.01, 40));
}
TEST_P(StageAwareAdjoint, GrayScott) {
  check_stage_plans(GrayScott<>(8), GetParam().c_str(), StepControl::fixed(0.0, 1.0, 25));
}
TEST_P(StageAwareAdjoint, Lorenz96OnThrust) {
  check_stage_plans(Lorenz96<ThrustBackend>(12), GetParam().c_str(),
                    StepControl::fixed(0.0, 0.01, 30));
}

INSTANTIATE_TEST_SUITE_P(Methods, StageAwareAdjoint, ::testing::Values("heun", "rk4", "euler"));

// Both ways step_keeping_stages hands out a step's stages (explicit_runge_kutta.hpp): copied out
// of the stepper's vectors, with streaming stores from 4096 values on (2·48² = 4608; the Eigen
// backend's non-temporal stores, as StoreAllAdjoint keeps its states), and, above
// kCopiedStagesMaxSize values, built straight into the store's slots.
TEST(StageAwareAdjoint, StreamedAndInPlaceStagesGiveTheSameBits) {
  check_stage_plans(GrayScott<>(48), "rk4", StepControl::fixed(0.0, 1.0, 12));
  const Index big = ExplicitRungeKutta<Lorenz96<>>::kCopiedStagesMaxSize + 2;
  check_stage_plans(Lorenz96<>(big), "rk4", StepControl::fixed(0.0, 0.01, 13));
}

// Stage snapshots in the disk level (on_disk) and the same plan's actions all in memory
// (in_memory): the store-all bits, the stages written to and read from the snapshot file.
TEST(StageAwareAdjoint, StageSnapshotsOnDiskGiveTheStoreAllBits) {
  const Lorenz63 problem;
  const auto y0 = problem.default_initial_state();
  const auto theta = problem.default_parameters();
  const auto objective = objective_with_observations<EigenBackend>();
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 40));
  const int s = stepper.stage_count();
  StoreAllAdjoint reference_driver(stepper, objective);
  const auto reference = reference_driver.run(y0, theta);
  test::ScratchDirectory scratch;
  CheckpointOptions options;
  options.drift_policy = DriftPolicy::fail;
  options.disk.directory = scratch.path();
  CheckpointedAdjoint driver(stepper, objective, options);
  for (const int units : {2 * s + 1, 5 * s}) {
    SCOPED_TRACE(units);
    const auto on_file = driver.run(y0, theta, on_disk(stage_aware_schedule(units, s)));
    testing::expect_same_gradient_bits<EigenBackend>(on_file, reference);
    EXPECT_GT(on_file.summary.storage.stores_on(LevelKind::disk), 0);
    EXPECT_EQ(on_file.summary.storage.stores_on(LevelKind::memory), 0);
    const auto in_ram = driver.run(y0, theta, in_memory(stage_aware_schedule(units, s)));
    testing::expect_same_gradient_bits<EigenBackend>(in_ram, reference);
    EXPECT_EQ(in_ram.summary.forward_steps, on_file.summary.forward_steps);
  }
}

// The summary's time split: forward, recompute and reverse time are each counted where that work
// runs (the clock is read where the kind of work changes), add up to no more than the run, and
// a plan that re-runs nothing has no recompute time.
TEST(StageAwareAdjoint, TimeSplitFollowsTheWork) {
  Lorenz96<> problem(16);
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 300));
  CheckpointedAdjoint driver(stepper, Objective<EigenBackend>::terminal_squared_norm());
  const auto y0 = problem.default_initial_state();
  const auto theta = problem.default_parameters();
  for (const bool replays : {true, false}) {
    SCOPED_TRACE(replays ? "revolve" : "store-all-stages");
    const auto start = std::chrono::steady_clock::now();
    const auto result =
        driver.run(y0, theta, replays ? revolve_schedule(5) : store_all_stages_schedule(4));
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const Summary& s = result.summary;
    EXPECT_GT(s.forward_seconds, 0.0);
    EXPECT_GT(s.reverse_seconds, 0.0);
    if (replays)
      EXPECT_GT(s.recompute_seconds, 0.0);
    else
      EXPECT_EQ(s.recompute_seconds, 0.0);
    EXPECT_LE(s.total_seconds(), wall);
  }
}

TEST(StageAwareAdjoint, FewerForwardStepsThanRevolveAtEqualMemory) {
  Lorenz96<> problem(16);
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 300));
  CheckpointedAdjoint driver(stepper, Objective<EigenBackend>::terminal_squared_norm());
  const auto y0 = problem.default_initial_state();
  const auto theta = problem.default_parameters();
  const auto revolve = driver.run(y0, theta, revolve_schedule(12));
  const auto stages = driver.run(y0, theta, stage_aware_schedule(12, 4));
  EXPECT_LT(stages.summary.forward_steps, revolve.summary.forward_steps);
  EXPECT_EQ(to_host<EigenBackend>(stages.grad_theta), to_host<EigenBackend>(revolve.grad_theta));
}

// Store-all keeping stages against store-all with adaptive steps: the same bits, no step re-run.
template <class P>
void check_adaptive_stage_keeping(const P& problem, const char* method, double t_final) {
  using B = typename P::Backend;
  const auto y0 = problem.default_initial_state();
  const auto theta = problem.default_parameters();
  const auto objective = Objective<B>::terminal_squared_norm();
  ExplicitRungeKutta stepper(problem, ButcherTableau::by_name(method),
                             StepControl::adaptive(0.0, t_final, 1e-6, 1e-9));
  EXPECT_EQ(stepper.stage_count(), ButcherTableau::by_name(method).stages + 1);
  StoreAllAdjoint reference_driver(stepper, objective);
  const auto reference = reference_driver.run(y0, theta);
  ASSERT_GT(reference.summary.steps, 2);
  StoreAllOptions keep;
  keep.keep_stages = true;
  StoreAllAdjoint driver(stepper, objective, keep);
  const auto kept = driver.run(y0, theta);
  EXPECT_EQ(kept.loss, reference.loss);
  EXPECT_EQ(to_host<B>(kept.grad_theta), to_host<B>(reference.grad_theta));
  EXPECT_EQ(to_host<B>(kept.grad_y0), to_host<B>(reference.grad_y0));
  EXPECT_EQ(kept.summary.schedule, "store-all-stages");
  EXPECT_EQ(kept.summary.recomputed_steps, 0);
  EXPECT_LT(kept.summary.rhs_evaluations_reverse, reference.summary.rhs_evaluations_reverse);
}

// Adaptive steps keep their accepted size beside their stage values: store-all keeping stages
// gives store-all's bits without re-running a step or an attempt — for a method with and without
// a first-same-as-last stage (with rejected attempts among the steps), for a state large enough
// that the stages are built in place (above kCopiedStagesMaxSize values), and on Thrust.
TEST(StageAwareAdjoint, AdaptiveStepsKeepTheirSizeAndGiveTheStoreAllBits) {
  for (const char* method : {"bs3", "dopri5"}) {
    SCOPED_TRACE(method);
    check_adaptive_stage_keeping(Lorenz63<>(), method, 2.0);
  }
  ExplicitRungeKutta counted(Lorenz63<>(), ButcherTableau::by_name("bs3"),
                             StepControl::adaptive(0.0, 2.0, 1e-6, 1e-9));
  StoreAllAdjoint(counted, Objective<EigenBackend>::terminal_squared_norm())
      .run(Lorenz63<>().default_initial_state(), Lorenz63<>().default_parameters());
  EXPECT_GT(counted.counters().rejected_attempts, 0);  // attempts the reverse would re-run
  const Index big = ExplicitRungeKutta<Lorenz96<>>::kCopiedStagesMaxSize + 2;
  check_adaptive_stage_keeping(Lorenz96<>(big), "bs3", 0.3);
  check_adaptive_stage_keeping(Lorenz96<ThrustBackend>(12), "dopri5", 0.5);
}

TEST(StageAwareAdjoint, RefusesWhatItCannotRun) {
  Lorenz63<> problem;
  const auto y0 = problem.default_initial_state();
  const auto theta = problem.default_parameters();
  const auto objective = Objective<EigenBackend>::terminal_squared_norm();
  ExplicitRungeKutta rk4(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 20));
  CheckpointedAdjoint driver(rk4, objective);
  try {
    driver.run(y0, theta, stage_aware_schedule(10, 2));  // Heun's count with RK4
    ADD_FAILURE() << "ran a plan with the wrong number of stages";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("the method keeps 4 per step"), std::string::npos)
        << e.what();
  }
  ExplicitRungeKutta adaptive(problem, ButcherTableau::by_name("bs3"),
                              StepControl::adaptive(0.0, 0.5, 1e-6, 1e-8));
  CheckpointedAdjoint adaptive_driver(adaptive, objective);
  EXPECT_THROW(adaptive_driver.run(y0, theta, stage_aware_schedule(10, 4)), InvalidArgument);
}

}  // namespace
}  // namespace rwd
