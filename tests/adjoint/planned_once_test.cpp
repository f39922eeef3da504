// The schedule is planned once per run: the driver calls its planner exactly once, and every
// further instance it needs (the schedule it executes, the read-ahead scout of a disk level) is a
// clone of the planned one, never a second planning. Counted with a schedule that records how
// often it is constructed and cloned, in memory, on disk and with an adaptive run's counting
// sweep; the gradients stay bit for bit those of store-all.
#include <gtest/gtest.h>

#include <memory>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "rewind/schedule/revolve_schedule.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/scratch_directory.hpp"

namespace rwd {
namespace {

using B = EigenBackend;

// Revolve that counts its constructions (plannings) and clones.
struct Counts {
  int constructed = 0;
  int cloned = 0;
};

class CountingRevolve final : public Schedule {
 public:
  CountingRevolve(Index steps, int snapshots, Counts& counts)
      : inner_(steps, snapshots), counts_(&counts) {
    ++counts_->constructed;
  }
  Action next() override { return inner_.next(); }
  Index steps() const override { return inner_.steps(); }
  int slots() const override { return inner_.slots(); }
  std::string name() const override { return "counting " + inner_.name(); }
  void reset() override { inner_.reset(); }
  std::unique_ptr<Schedule> clone() const override {
    ++counts_->cloned;
    return std::unique_ptr<Schedule>(new CountingRevolve(*this));
  }

 private:
  CountingRevolve(const CountingRevolve& other) = default;
  RevolveSchedule inner_;
  Counts* counts_;
};

struct Lorenz96Run {
  Lorenz96<> problem{20};
  ExplicitRungeKutta<Lorenz96<>> stepper{problem, ButcherTableau::rk4(),
                                         StepControl::fixed(0.0, 0.01, 300)};
  Objective<B> objective = Objective<B>::terminal_squared_norm();
  B::Vector y0 = problem.default_initial_state();
  B::Vector theta = problem.default_parameters();
};

TEST(PlannedOnce, MemoryRunPlansOnceAndMatchesStoreAll) {
  Lorenz96Run run;
  Counts counts;
  int planner_calls = 0;
  const Planner counting = [&](Index steps) {
    ++planner_calls;
    return CheckpointPlan::of(std::make_unique<CountingRevolve>(steps, 5, counts));
  };
  CheckpointedAdjoint driver(run.stepper, run.objective);
  const auto result = driver.run(run.y0, run.theta, counting);
  EXPECT_EQ(planner_calls, 1);
  EXPECT_EQ(counts.constructed, 1);
  // One clone to simulate the plan's costs, one for the driver; no read-ahead without a disk.
  EXPECT_EQ(counts.cloned, 2);

  StoreAllAdjoint reference(run.stepper, run.objective);
  const auto expected = reference.run(run.y0, run.theta);
  EXPECT_EQ(result.loss, expected.loss);
  EXPECT_TRUE(result.grad_y0 == expected.grad_y0);
  EXPECT_TRUE(result.grad_theta == expected.grad_theta);
}

TEST(PlannedOnce, DiskRunPlansOnceTheScoutIsAClone) {
  test::ScratchDirectory scratch;
  Lorenz96Run run;
  Counts counts;
  int planner_calls = 0;
  const Planner counting = on_disk([&](Index steps) {
    ++planner_calls;
    return CheckpointPlan::of(std::make_unique<CountingRevolve>(steps, 5, counts));
  });
  CheckpointOptions options;
  options.disk.directory = scratch.path();
  CheckpointedAdjoint driver(run.stepper, run.objective, options);
  const auto result = driver.run(run.y0, run.theta, counting);
  EXPECT_EQ(planner_calls, 1);
  EXPECT_EQ(counts.constructed, 1);
  EXPECT_GT(result.summary.storage.stores_on(LevelKind::disk), 0);
  EXPECT_GT(result.summary.storage.io.prefetch_hits, 0);  // the scout ran

  StoreAllAdjoint reference(run.stepper, run.objective);
  const auto expected = reference.run(run.y0, run.theta);
  EXPECT_TRUE(result.grad_y0 == expected.grad_y0);
  EXPECT_TRUE(result.grad_theta == expected.grad_theta);
}

TEST(PlannedOnce, TwoLevelPlanIsMadeOnceAndRunAsGiven) {
  test::ScratchDirectory scratch;
  Lorenz96Run run;
  CostModel costs;
  costs.disk_write_time = 2.0;
  costs.disk_read_time = 1.0;
  const CheckpointPlan plan = plan_checkpoints(PlanRequest::two_level(2, 6, costs), 300);
  ASSERT_NE(plan.level(LevelKind::disk), nullptr);
  EXPECT_EQ(plan.level(LevelKind::disk)->first_slot, 2);
  EXPECT_GT(plan.slots_used_on(LevelKind::disk), 0);
  EXPECT_LE(plan.slots_used_on(LevelKind::disk), 6);
  CheckpointOptions options;
  options.disk.directory = scratch.path();
  CheckpointedAdjoint driver(run.stepper, run.objective, options);
  const auto result = driver.run(run.y0, run.theta, plan);
  EXPECT_EQ(result.summary.storage.stores_on(LevelKind::disk), *plan.stores_on(LevelKind::disk));
  EXPECT_EQ(result.summary.storage.restores_on(LevelKind::disk),
            *plan.restores_on(LevelKind::disk));
  EXPECT_EQ(result.summary.recomputed_steps, plan.advances);

  StoreAllAdjoint reference(run.stepper, run.objective);
  const auto expected = reference.run(run.y0, run.theta);
  EXPECT_TRUE(result.grad_theta == expected.grad_theta);
}

TEST(PlannedOnce, AdaptiveRunPlansOnceAfterCounting) {
  Lorenz63<> problem;
  ExplicitRungeKutta<Lorenz63<>> stepper(problem, ButcherTableau::dormand_prince(),
                                         StepControl::adaptive(0.0, 1.0, 1e-8, 1e-10));
  const auto objective = Objective<B>::terminal_squared_norm();
  int planner_calls = 0;
  Index planned_steps = -1;
  const Planner planner = [&](Index steps) {
    ++planner_calls;
    planned_steps = steps;
    return plan_checkpoints(PlanRequest::revolve(4), steps);
  };
  CheckpointedAdjoint driver(stepper, objective);
  const auto result =
      driver.run(problem.default_initial_state(), problem.default_parameters(), planner);
  EXPECT_EQ(planner_calls, 1);
  EXPECT_EQ(planned_steps, result.counting_steps);
  EXPECT_EQ(result.summary.steps, result.counting_steps);
}

TEST(PlannedOnce, APlanForOtherStepsIsRefused) {
  Lorenz96Run run;
  CheckpointedAdjoint driver(run.stepper, run.objective);
  const CheckpointPlan plan = plan_checkpoints(PlanRequest::revolve(4), 299);
  EXPECT_THROW(driver.run(run.y0, run.theta, plan), InvalidArgument);
}

}  // namespace
}  // namespace rwd
