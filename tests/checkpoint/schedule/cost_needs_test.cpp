// Which costs a plan request needs measured is the family's answer (rwd::costs_to_measure), and
// given costs override measured ones (rwd::with_given_costs): a two-level request needs the disk
// unless both its costs are given; a three-level one every level's copies and the disk when it
// has a disk level; the stage chooser the memory copies unless a copy cost is given; the others
// nothing.
#include "rewind/schedule/cost_needs.hpp"

#include <gtest/gtest.h>

#include "rewind/schedule/checkpoint_plan.hpp"

namespace rwd {
namespace {

bool same(const CostNeeds& a, const CostNeeds& b) {
  return a.disk == b.disk && a.memory_copies == b.memory_copies && a.host_copies == b.host_copies;
}

TEST(CostNeeds, EachFamilySaysWhatItsPlansWeigh) {
  const CostModel costs;
  const GivenCosts none;
  EXPECT_FALSE(costs_to_measure(PlanRequest::revolve(8), none).any());
  EXPECT_FALSE(costs_to_measure(PlanRequest::uniform(8), none).any());
  EXPECT_FALSE(costs_to_measure(PlanRequest::store_all(), none).any());
  PlanRequest on_disk = PlanRequest::revolve(8);
  on_disk.all_on_disk = true;  // one level: the costs change no placement
  EXPECT_FALSE(costs_to_measure(on_disk, none).any());

  const PlanRequest two = PlanRequest::two_level(4, 16, costs);
  EXPECT_TRUE(same(costs_to_measure(two, none), {.disk = true}));
  GivenCosts write_only;
  write_only.disk_write = 2.0;
  EXPECT_TRUE(same(costs_to_measure(two, write_only), {.disk = true}));
  GivenCosts both = write_only;
  both.disk_read = 1.0;
  EXPECT_FALSE(costs_to_measure(two, both).any());

  const CostNeeds three = costs_to_measure(PlanRequest::three_level(2, 8, 32, costs), both);
  EXPECT_TRUE(same(three, {.disk = true, .memory_copies = true, .host_copies = true}));
  EXPECT_TRUE(three.level_copies());
  EXPECT_TRUE(same(costs_to_measure(PlanRequest::three_level(2, 8, 0, costs), none),
                   {.disk = false, .memory_copies = true, .host_copies = true}));

  EXPECT_TRUE(same(costs_to_measure(PlanRequest::revolve(8), none, /*stage_aware=*/true),
                   {.memory_copies = true}));
  GivenCosts copy;
  copy.copy = 0.5;
  EXPECT_FALSE(costs_to_measure(PlanRequest::revolve(8), copy, /*stage_aware=*/true).any());
}

TEST(CostNeeds, GivenCostsOverrideMeasuredOnesAndTheRestStays) {
  CostModel base;
  base.adjoint_cost_factor = 2.5;
  base.write_time = 0.125;
  base.disk_write_time = 7.0;
  CostModel measured;
  measured.write_time = 0.5;
  measured.read_time = 0.25;
  measured.host_write_time = 3.0;
  measured.host_read_time = 4.0;
  measured.disk_write_time = 10.0;
  measured.disk_read_time = 20.0;

  // The disk measured, its read given: the write as measured, the copies as they were.
  GivenCosts read;
  read.disk_read = 1.5;
  const CostModel disk = with_given_costs(base, {.disk = true}, measured, read);
  EXPECT_EQ(disk.disk_write_time, 10.0);
  EXPECT_EQ(disk.disk_read_time, 1.5);
  EXPECT_EQ(disk.write_time, 0.125);
  EXPECT_EQ(disk.host_write_time, 0.0);
  EXPECT_EQ(disk.adjoint_cost_factor, 2.5);
  EXPECT_EQ(disk.step_time, 1.0);

  // Every level measured, nothing given.
  const CostModel all = with_given_costs(
      base, {.disk = true, .memory_copies = true, .host_copies = true}, measured, {});
  EXPECT_EQ(all.write_time, 0.5);
  EXPECT_EQ(all.read_time, 0.25);
  EXPECT_EQ(all.host_write_time, 3.0);
  EXPECT_EQ(all.host_read_time, 4.0);
  EXPECT_EQ(all.disk_read_time, 20.0);

  // The memory copies alone (the stage chooser): the host level keeps its base costs.
  const CostModel copies = with_given_costs(base, {.memory_copies = true}, measured, {});
  EXPECT_EQ(copies.write_time, 0.5);
  EXPECT_EQ(copies.host_write_time, 0.0);
  EXPECT_EQ(copies.disk_write_time, 7.0);

  // Nothing measured: the given copy cost for both directions, over the base.
  GivenCosts copy;
  copy.copy = 0.75;
  const CostModel given = with_given_costs(base, {}, measured, copy);
  EXPECT_EQ(given.write_time, 0.75);
  EXPECT_EQ(given.read_time, 0.75);
  EXPECT_EQ(given.disk_write_time, 7.0);
}

}  // namespace
}  // namespace rwd
