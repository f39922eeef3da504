// rwd::measure_costs: a forward step, a snapshot's disk write and read and the levels' copies,
// timed against the stepper that will run, are positive and finite; in forward steps they are
// the measured seconds over the step's, with step_time 1; sizes and the probe's slots follow the
// state; bad probes are refused.
#include "rewind/adjoint/measure_costs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "rewind/error.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "support/scratch_directory.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vec = B::Vector;

bool positive_and_finite(double seconds) {
  return std::isfinite(seconds) && seconds > 0.0;
}

TEST(MeasureCosts, StepSecondsArePositiveEvenForRunsShorterThanABatch) {
  Lorenz96<> problem(40);
  const Vec y0 = problem.default_initial_state(), theta = problem.default_parameters();
  // Three steps: every batch starts the run over many times.
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 3));
  const double seconds = measure_step_seconds(stepper, y0, theta);
  EXPECT_TRUE(positive_and_finite(seconds)) << seconds;
  EXPECT_GE(seconds, 1e-9);
  EXPECT_LT(seconds, 1.0);  // an RK4 step of 40 values
}

TEST(MeasureCosts, EveryLevelAskedForIsMeasuredAndConvertedToSteps) {
  Lorenz96<> problem(4096);
  const Vec y0 = problem.default_initial_state(), theta = problem.default_parameters();
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.001, 50));
  test::ScratchDirectory scratch("rewind-measure-costs");

  const CostMeasurement step_only = measure_costs(stepper, y0, theta);
  EXPECT_TRUE(positive_and_finite(step_only.step_seconds));
  EXPECT_FALSE(step_only.disk);
  EXPECT_FALSE(step_only.levels);
  CostModel base;
  base.adjoint_cost_factor = 2.0;
  base.write_time = 0.25;
  const CostModel unchanged = step_only.in_forward_steps(base);
  EXPECT_EQ(unchanged.step_time, 1.0);
  EXPECT_EQ(unchanged.adjoint_cost_factor, 2.0);
  EXPECT_EQ(unchanged.write_time, 0.25);  // not measured: as given
  EXPECT_EQ(unchanged.disk_write_time, 0.0);

  CostProbe probe;
  probe.disk_directory = scratch.path();
  probe.levels = true;
  probe.level_slots = level_probe_slots(4096 * 8, 20);
  const CostMeasurement m = measure_costs(stepper, y0, theta, probe);
  ASSERT_TRUE(m.disk);
  ASSERT_TRUE(m.levels);
  EXPECT_TRUE(positive_and_finite(m.step_seconds));
  for (double seconds :
       {m.disk->write_seconds, m.disk->read_seconds, m.levels->device_write_seconds,
        m.levels->device_read_seconds, m.levels->host_write_seconds, m.levels->host_read_seconds})
    EXPECT_TRUE(positive_and_finite(seconds)) << seconds;
  EXPECT_EQ(m.levels->snapshot_bytes, 4096 * 8);
  EXPECT_TRUE(std::filesystem::is_empty(scratch.path()));  // the scratch file is gone

  const CostModel costs = m.in_forward_steps(base);
  EXPECT_EQ(costs.step_time, 1.0);
  EXPECT_EQ(costs.adjoint_cost_factor, 2.0);
  EXPECT_EQ(costs.write_time, m.levels->device_write_seconds / m.step_seconds);
  EXPECT_EQ(costs.read_time, m.levels->device_read_seconds / m.step_seconds);
  EXPECT_EQ(costs.host_write_time, m.levels->host_write_seconds / m.step_seconds);
  EXPECT_EQ(costs.host_read_time, m.levels->host_read_seconds / m.step_seconds);
  EXPECT_EQ(costs.disk_write_time, m.disk->write_seconds / m.step_seconds);
  EXPECT_EQ(costs.disk_read_time, m.disk->read_seconds / m.step_seconds);
  EXPECT_NO_THROW(costs.validate());
}

// A step and a reversed step (the step re-run, then reversed) are timed from the same starts — a
// run's first steps, here all three of a run shorter than the 64 it may take — and give the
// adjoint cost factor F = reversed / step − 1. The counters count each part's work: the steps'
// when between_parts sees them, the reversed steps' afterwards.
TEST(MeasureCosts, AStepAndAReversedStepOnTheSameStepsGiveTheAdjointCostFactor) {
  Lorenz96<> problem(40);
  const Vec y0 = problem.default_initial_state(), theta = problem.default_parameters();
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 3));
  StepperCounters forward;
  const AdjointStepSeconds pair = measure_adjoint_step_seconds(
      stepper, y0, theta, [&](const auto& s) { forward = s.counters(); });
  EXPECT_TRUE(positive_and_finite(pair.step_seconds)) << pair.step_seconds;
  EXPECT_TRUE(positive_and_finite(pair.adjoint_step_seconds)) << pair.adjoint_step_seconds;
  EXPECT_GT(forward.steps, 0);
  EXPECT_EQ(forward.adjoint_steps, 0);
  EXPECT_EQ(forward.rhs_evaluations, 4 * forward.steps);
  EXPECT_EQ(stepper.counters().steps, 0);
  EXPECT_GT(stepper.counters().adjoint_steps, 0);
  EXPECT_EQ(stepper.counters().vjp_evaluations, 4 * stepper.counters().adjoint_steps);
  EXPECT_EQ(pair.adjoint_cost_factor(),
            std::max(0.0, pair.adjoint_step_seconds / pair.step_seconds - 1.0));

  CostProbe probe;
  probe.adjoint = true;
  const CostMeasurement m = measure_costs(stepper, y0, theta, probe);
  ASSERT_TRUE(m.adjoint);
  EXPECT_EQ(m.in_forward_steps().adjoint_cost_factor, m.adjoint->adjoint_cost_factor());

  AdjointStepSeconds given{.step_seconds = 2.0, .adjoint_step_seconds = 5.0};
  EXPECT_EQ(given.adjoint_cost_factor(), 1.5);
  given.adjoint_step_seconds = 1.5;  // below a step (noise): F is never negative
  EXPECT_EQ(given.adjoint_cost_factor(), 0.0);
}

TEST(MeasureCosts, SnapshotSizesAndProbeSlotsFollowTheState) {
  const Vec y = Vec::Zero(1000);
  EXPECT_EQ(snapshot_values<B>(y), 1000);
  EXPECT_EQ(snapshot_bytes<B>(y), 8000 + kCarryBytes);
  EXPECT_EQ(snapshots_in_memory(10 * snapshot_bytes<B>(y), snapshot_bytes<B>(y)), 10);
  EXPECT_EQ(level_probe_slots(8000, 20), 20);                // as many as the run keeps
  EXPECT_EQ(level_probe_slots(Index{32} << 20, 20), 2);      // 64 MiB of them at most
  EXPECT_EQ(level_probe_slots(Index{128} << 20, 20), 1);     // at least one
  EXPECT_EQ(level_probe_slots(8, Index{1} << 40), 1 << 20);  // at most 2^20
}

TEST(MeasureCosts, RefusesBadProbesAndUnmeasuredSteps) {
  Lorenz96<> problem(40);
  const Vec y0 = problem.default_initial_state(), theta = problem.default_parameters();
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 10));
  CostProbe probe;
  probe.level_slots = 0;
  EXPECT_THROW(measure_costs(stepper, y0, theta, probe), InvalidArgument);
  probe.level_slots = 1;
  probe.level_samples = 0;
  EXPECT_THROW(measure_costs(stepper, y0, theta, probe), InvalidArgument);
  EXPECT_THROW(CostMeasurement{}.in_forward_steps(), InvalidArgument);  // step_seconds 0
}

}  // namespace
}  // namespace rwd
