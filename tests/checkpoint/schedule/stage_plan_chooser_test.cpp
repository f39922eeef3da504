// rwd::choose_stage_plan: the plan of least predicted time among revolve, stage-aware and the
// store-alls, as snapshot copies cost more or less against a step; beyond the stage-aware tables'
// limits it says so and chooses among the others.
#include "rewind/schedule/stage_plan_chooser.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/schedule/revolve_cost.hpp"
#include "rewind/warning.hpp"

namespace rwd {
namespace {

CostModel with_adjoint_cost(double adjoint_cost) {
  CostModel costs;
  costs.adjoint_cost_factor = adjoint_cost;
  return costs;
}

TEST(StagePlanChooser, SnapshotCopyCostsDecideBetweenStagesAndRevolve) {
  // With free copies the plan with the fewest evaluations wins: stage snapshots. In the driver's
  // memory store a stage snapshot costs one copy (its state: the other stage values are built in
  // their slots and read there by the reverse step), and here stage-aware makes fewer copies
  // than revolve's restores, so it still wins when a copy costs half a step. Were every stage
  // vector copied in and out (4 copies each way for RK4), the stage snapshots would no longer
  // pay at that price and revolve would win — its prediction counting its own copies too.
  const CostModel free_copies = with_adjoint_cost(1.5);
  const CheckpointPlan cheap = choose_stage_plan(2000, 10, 4, free_copies);
  EXPECT_GT(cheap.stage_stores, 0);
  EXPECT_EQ(cheap.budget, 10);
  CostModel dear = free_copies;
  dear.write_time = dear.read_time = 0.5;
  const CheckpointPlan in_place = choose_stage_plan(2000, 10, 4, dear);
  EXPECT_EQ(in_place.stage_stores, cheap.stage_stores);
  EXPECT_EQ(in_place.costs.write_time, 0.5);
  EXPECT_GT(in_place.predicted_time_ratio(1.5), cheap.predicted_time_ratio(1.5));
  dear.stage_values_copied = true;
  const CheckpointPlan plan = choose_stage_plan(2000, 10, 4, dear);
  EXPECT_EQ(plan.family, &revolve_family());
  EXPECT_EQ(plan.name, "revolve(c = 10)");
  EXPECT_EQ(plan.advances, revolve_advances(2000, 10));
  EXPECT_EQ(plan.stage_stores, 0);
  CheckpointPlan revolve_free = plan;
  revolve_free.costs = free_copies;
  EXPECT_GT(plan.predicted_time_ratio(1.5), revolve_free.predicted_time_ratio(1.5));
  EXPECT_LT(cheap.predicted_time_ratio(1.5), revolve_free.predicted_time_ratio(1.5));
}

TEST(StagePlanChooser, WhenEverythingFitsNothingIsRecomputed) {
  const CostModel costs = with_adjoint_cost(1.5);
  // c >= l·u: every step's stages fit, and no step is re-run.
  const CheckpointPlan stages = choose_stage_plan(50, 200, 4, costs);
  EXPECT_EQ(stages.family, &custom_family());
  EXPECT_EQ(stages.stage_reverses, 50);
  EXPECT_EQ(stages.forward_steps(), 50);
  // Stages that cost more to copy than the step they save: the state-only plans compete, and
  // with c >= l neither revolve nor store-all recomputes a step beyond the first sweep.
  CostModel dear = costs;
  dear.write_time = dear.read_time = 2.0;
  dear.stage_values_copied = true;
  const CheckpointPlan states = choose_stage_plan(50, 60, 4, dear);
  EXPECT_EQ(states.stage_stores, 0);
  EXPECT_EQ(states.advances, 49);
}

TEST(StagePlanChooser, RefusesBadInput) {
  const CostModel costs = with_adjoint_cost(1.5);
  EXPECT_THROW(choose_stage_plan(2000, 0, 4, costs), InvalidArgument);
  EXPECT_THROW(choose_stage_plan(2000, 10, 0, costs), InvalidArgument);
  EXPECT_THROW(choose_stage_plan(0, 10, 4, costs), InvalidArgument);
  CostModel bad = costs;
  bad.write_time = -1.0;
  EXPECT_THROW(choose_stage_plan(2000, 10, 4, bad), InvalidArgument);
}

TEST(StagePlanChooser, BeyondTheTablesLimitsSaysSoAndPlansTheOthers) {
  const CostModel costs = with_adjoint_cost(1.5);
  std::vector<Warning> warnings;
  ScopedWarningHandler collect([&](const Warning& w) { warnings.push_back(w); });
  const CheckpointPlan within = choose_stage_plan(30000, 20, 4, costs);  // above the old 20 000
  EXPECT_GT(within.stage_stores, 0);
  EXPECT_TRUE(warnings.empty());
  const CheckpointPlan beyond = choose_stage_plan(100001, 20, 4, costs);
  EXPECT_EQ(beyond.family, &revolve_family());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].source, "stage-aware plan");
  EXPECT_NE(warnings[0].message.find("no stage-aware plan"), std::string::npos);
  EXPECT_NE(warnings[0].message.find("above 100000"), std::string::npos) << warnings[0].message;
}

}  // namespace
}  // namespace rwd
