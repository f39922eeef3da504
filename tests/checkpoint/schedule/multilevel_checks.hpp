// Shared by the two-level schedule tests (multilevel_schedule_test, multilevel_long_test): cost
// models in units of one forward step, and the check every planned MultiLevelSchedule passes.
//
//   using rwd::test::cost_model;
//   rwd::MultiLevelSchedule s(400, /*memory=*/4, /*disk=*/100, cost_model(1.0, 20.0, 20.0));
//   const rwd::ScheduleCost cost = rwd::test::check_plan(s, 4, 100);
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "rewind/schedule/multilevel_schedule.hpp"
#include "rewind/schedule/schedule_simulator.hpp"

namespace rwd::test {

// A forward step costs 1; a reverse step 1 + adjoint; a snapshot write and read cost write and
// read in memory, disk_write and disk_read on disk.
inline CostModel cost_model(double adjoint, double disk_write, double disk_read, double write = 0.0,
                            double read = 0.0) {
  return CostModel{.step_time = 1.0,
                   .adjoint_cost_factor = adjoint,
                   .write_time = write,
                   .read_time = read,
                   .disk_write_time = disk_write,
                   .disk_read_time = disk_read};
}

// Simulates (which throws at the first broken rule), checks the budget per level and that the
// planner predicted exactly these counts and this makespan; returns the simulated cost.
inline ScheduleCost check_plan(MultiLevelSchedule& s, int m, int d) {
  const ScheduleCost cost = simulate(s);
  const ScheduleCost& p = s.predicted_cost();
  const std::string where = s.name() + ", l = " + std::to_string(s.steps());
  EXPECT_EQ(cost.advances, p.advances) << where;
  EXPECT_EQ(cost.stores, p.stores) << where;
  EXPECT_EQ(cost.disk_stores, p.disk_stores) << where;
  EXPECT_EQ(cost.restores, p.restores) << where;
  EXPECT_EQ(cost.disk_restores, p.disk_restores) << where;
  EXPECT_EQ(cost.reverses, s.steps()) << where;
  EXPECT_EQ(cost.frees, cost.stores) << where;
  EXPECT_EQ(cost.first_sweep_advances, s.steps() - 1) << where;
  EXPECT_LE(cost.peak_disk_slots, d) << where;
  EXPECT_LE(cost.peak_slots - cost.peak_disk_slots, m) << where;
  EXPECT_EQ(cost.disk_slots, d) << where;
  EXPECT_EQ(predicted_time(cost, s.costs()), s.predicted_time()) << where;
  return cost;
}

}  // namespace rwd::test
