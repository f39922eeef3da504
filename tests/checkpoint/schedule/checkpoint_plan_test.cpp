// rwd::plan_checkpoints: a PlanRequest and a horizon l give a CheckpointPlan whose counts are the
// closed forms (revolve), those of the schedule it runs (uniform, store-all) and within its
// budget; an interval chosen from a budget is the best that fits; bad requests are refused.
#include "rewind/schedule/checkpoint_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "rewind/error.hpp"
#include "rewind/schedule/revolve_cost.hpp"
#include "rewind/schedule/uniform_schedule.hpp"
#include "support/error_message.hpp"

namespace rwd {
namespace {

using rwd::testing::error_message;
using rwd::testing::expect_message;

PlanRequest revolve_request(Index c) {
  PlanRequest r;
  r.budget = c;
  return r;
}

TEST(CheckpointPlan, RevolveCountsAreTheClosedForm) {
  const CheckpointPlan p = plan_checkpoints(revolve_request(10), 1000);
  EXPECT_TRUE(p.simulated);
  EXPECT_EQ(p.advances, 3636);
  EXPECT_EQ(p.forward_steps(), 4636);
  EXPECT_DOUBLE_EQ(p.recompute_ratio(), 4.636);
  EXPECT_EQ(p.restores, 999);
  EXPECT_EQ(p.reverses, 1000);
  EXPECT_EQ(p.peak_slots, 10);
  EXPECT_EQ(p.name, "revolve(c = 10)");
  EXPECT_DOUBLE_EQ(p.predicted_time_ratio(1.5), (3636 + 1000 * 2.5) / 1000.0);
  for (Index l : {1, 2, 3, 10, 99, 100, 101, 1000, 4321})
    for (Index c : {1, 2, 3, 5, 20, 100, 5000}) {
      const CheckpointPlan q = plan_checkpoints(revolve_request(c), l);
      EXPECT_EQ(q.advances, revolve_advances(l, c)) << l << " " << c;
      EXPECT_LE(q.peak_slots, std::min(c, l)) << l << " " << c;
      EXPECT_EQ(q.store_all_fits(), c >= l);
    }
}

TEST(CheckpointPlan, LargeHorizonsUseTheClosedForm) {
  const CheckpointPlan p = plan_checkpoints(revolve_request(20), Index{1} << 40);
  EXPECT_FALSE(p.simulated);
  EXPECT_FALSE(p.peak_exact);
  EXPECT_FALSE(p.stores.has_value());
  EXPECT_EQ(p.advances, revolve_advances(Index{1} << 40, 20));
}

// The levels tile the slot range fastest first, and hold the simulation's counts per level.
TEST(CheckpointPlan, LevelsTileTheSlotRange) {
  const CheckpointPlan memory = plan_checkpoints(revolve_request(10), 1000);
  ASSERT_EQ(memory.levels.size(), 1u);
  EXPECT_EQ(memory.levels[0].kind, LevelKind::memory);
  EXPECT_EQ(memory.levels[0].name, "memory");
  EXPECT_EQ(memory.levels[0].first_slot, 0);
  EXPECT_EQ(memory.levels[0].slots, 10);
  EXPECT_EQ(memory.levels[0].slots_used, 10);
  EXPECT_EQ(memory.levels[0].stores, memory.stores);
  EXPECT_EQ(memory.levels[0].peak_slots, memory.peak_slots);
  EXPECT_EQ(memory.level(LevelKind::disk), nullptr);
  EXPECT_EQ(memory.stores_on(LevelKind::disk), 0);  // simulated: none on a level it lacks
  EXPECT_FALSE(memory.uses_disk());
  EXPECT_FALSE(memory.all_on_disk());

  CostModel costs;
  costs.disk_write_time = 3.0;
  costs.disk_read_time = 2.0;
  const CheckpointPlan two = plan_checkpoints(PlanRequest::two_level(3, 7, costs), 400);
  ASSERT_EQ(two.levels.size(), 2u);
  const StorageLevel& disk = two.levels[1];
  EXPECT_EQ(disk.kind, LevelKind::disk);
  EXPECT_EQ(two.levels[0].end_slot(), disk.first_slot);
  EXPECT_EQ(disk.first_slot, 3);
  EXPECT_EQ(disk.end_slot(), 10);
  EXPECT_TRUE(disk.holds(9));
  EXPECT_FALSE(disk.holds(2));
  EXPECT_LE(disk.slots_used, 7);
  EXPECT_EQ(*two.levels[0].stores + *disk.stores, *two.stores);
  EXPECT_EQ(*two.levels[0].restores + *disk.restores, two.restores);
  EXPECT_EQ(two.write_cost(disk), 3.0);
  EXPECT_EQ(two.read_cost(disk), 2.0);
  EXPECT_TRUE(two.uses_disk());

  PlanRequest on_disk = revolve_request(5);
  on_disk.all_on_disk = true;
  const CheckpointPlan all = plan_checkpoints(on_disk, 100);
  ASSERT_EQ(all.levels.size(), 1u);
  EXPECT_EQ(all.levels[0].kind, LevelKind::disk);
  EXPECT_EQ(all.levels[0].first_slot, 0);
  EXPECT_EQ(all.stores_on(LevelKind::disk), all.stores);
  EXPECT_TRUE(all.all_on_disk());

  // Closed forms: every slot may be used; counts a closed form lacks stay unknown.
  const CheckpointPlan large = plan_checkpoints(revolve_request(20), Index{1} << 40);
  ASSERT_EQ(large.levels.size(), 1u);
  EXPECT_EQ(large.levels[0].slots_used, 20);
  EXPECT_FALSE(large.levels[0].stores.has_value());
  EXPECT_FALSE(large.levels[0].peak_slots.has_value());
  EXPECT_FALSE(large.stores_on(LevelKind::disk).has_value());
  EXPECT_STREQ(level_kind_name(LevelKind::host), "host");
}

TEST(CheckpointPlan, UniformMatchesTheScheduleAndFitsItsBudget) {
  PlanRequest r;
  r.family = &uniform_family();
  for (Index l : {1, 2, 5, 31, 32, 33, 1000})
    for (Index k : {1, 2, 7, 32, 2000}) {
      r.interval = k;
      const CheckpointPlan p = plan_checkpoints(r, l);
      const UniformSchedule u(l, std::min(k, l));
      EXPECT_EQ(p.snapshots, u.slots()) << l << " " << k;
      EXPECT_EQ(p.advances, u.predicted_advances()) << l << " " << k;
      EXPECT_EQ(*p.stores, u.predicted_stores()) << l << " " << k;
    }
  r.interval.reset();
  for (Index budget : {61, 100, 300, 999, 5000}) {
    r.budget = budget;
    const CheckpointPlan p = plan_checkpoints(r, 1000);
    EXPECT_TRUE(p.interval_chosen);
    EXPECT_LE(p.peak_slots, budget);
    // No other interval that fits advances fewer steps.
    for (Index k = 1; k <= 1000; ++k) {
      const UniformSchedule u(1000, k);
      if (u.slots() <= budget) {
        EXPECT_GE(u.predicted_advances(), p.advances) << k;
      }
    }
  }
  r.budget = 60;  // uniform needs about 2 sqrt(l) slots: 61 for l = 1000
  expect_message(error_message<InvalidArgument>([&] { plan_checkpoints(r, 1000); }),
                 "uniform checkpointing of 1000 steps needs at least 61 snapshots");
  r.budget = 30;
  r.interval = 5;  // 200 segments do not fit in 30
  expect_message(error_message<InvalidArgument>([&] { plan_checkpoints(r, 1000); }),
                 "more than the budget of 30");
}

TEST(CheckpointPlan, StoreAllAndRefusals) {
  PlanRequest r;
  r.family = &store_all_family();
  const CheckpointPlan p = plan_checkpoints(r, 500);
  EXPECT_EQ(p.advances, 499);
  EXPECT_EQ(*p.stores, 500);
  EXPECT_EQ(p.peak_slots, 500);
  r.budget = 499;
  expect_message(error_message<InvalidArgument>([&] { plan_checkpoints(r, 500); }),
                 "more than the budget of 499 snapshots");
  expect_message(error_message<InvalidArgument>([] { plan_checkpoints(revolve_request(0), 10); }),
                 "budget = 0 must be >= 1");
  expect_message(error_message<InvalidArgument>([] { plan_checkpoints(revolve_request(3), 0); }),
                 "steps = 0 must be >= 1");
  expect_message(error_message<InvalidArgument>([] { plan_checkpoints(PlanRequest{}, 10); }),
                 "revolve needs a snapshot budget");
  EXPECT_EQ(snapshots_in_memory(1 << 20, 8192 + kCarryBytes), (1 << 20) / (8192 + 48));
  expect_message(error_message<InvalidArgument>([] { snapshots_in_memory(100, 101); }),
                 "memory budget = 100 bytes holds no snapshot");
  EXPECT_EQ(kCarryBytes, 48);
}

}  // namespace
}  // namespace rwd
