// MultiLevelSchedule (rewind/schedule/multilevel_schedule.hpp) and its planner: valid streams
// whose simulated makespan is what the planner predicts; optimal within the recursive family for
// every l ≤ 200 of a grid of budgets and costs (against an independent DP, itself checked against
// a search over all action sequences for tiny l); never worse than memory revolve or uniform disk
// snapshots; the limits d = 0, free disk, dear disk; l = 10^6 with 1000 disk snapshots; errors.
// Also the per-level counting of the schedule simulator and revolve_stores.
#include "rewind/schedule/multilevel_schedule.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "multilevel_checks.hpp"
#include "multilevel_reference.hpp"
#include "rewind/error.hpp"
#include "rewind/schedule/multilevel_plan.hpp"
#include "rewind/schedule/revolve_cost.hpp"
#include "rewind/schedule/revolve_schedule.hpp"
#include "rewind/schedule/schedule_simulator.hpp"
#include "support/error_message.hpp"

namespace rwd {
namespace {

using test::check_plan;
using test::cost_model;

using testing::contains;

using test::ActionListSchedule;

ActionListSchedule uniform_disk(Index l, int m, int d, Index k) {
  return test::uniform_disk_schedule(l, m, d, k);
}

double time_of(Schedule& schedule, const CostModel& costs) {
  return predicted_time(simulate(schedule), costs);
}

// ---------------------------------------------------------------------------------------------
// The simulator's levels.
// ---------------------------------------------------------------------------------------------

TEST(TwoLevelSimulator, CountsEachLevel) {
  // l = 3, one memory slot and one disk slot: y_0 on disk, y_1 in memory; y_0 is moved into memory
  // after its restore (a second store of the current state), and the disk copy freed.
  ActionListSchedule s(
      3, 2, 1,
      {Action::store(1, 0), Action::advance(1), Action::store(0, 1), Action::advance(2),
       Action::reverse(2), Action::restore(0, 1), Action::reverse(1), Action::free(0, 1),
       Action::restore(1, 0), Action::store(0, 0), Action::free(1, 0), Action::reverse(0),
       Action::free(0, 0), Action::done()});
  const ScheduleCost cost = simulate(s);
  EXPECT_EQ(cost.stores, 3);
  EXPECT_EQ(cost.disk_stores, 1);
  EXPECT_EQ(cost.restores, 2);
  EXPECT_EQ(cost.disk_restores, 1);
  EXPECT_EQ(cost.peak_slots, 2);
  EXPECT_EQ(cost.peak_disk_slots, 1);
  EXPECT_EQ(cost.disk_slots, 1);
  EXPECT_TRUE(contains(cost.to_string(), "disk level (1 slots): 1 stores, 1 restores, peak 1"))
      << cost.to_string();
  // Memory I/O at write_time/read_time, disk I/O at the disk times.
  const CostModel costs = cost_model(1.0, 10.0, 100.0, 0.5, 0.25);
  EXPECT_DOUBLE_EQ(predicted_time(cost, costs), 2.0 + 3 * 2.0 + 2 * 0.5 + 10.0 + 0.25 + 100.0);

  // Single-level schedules and streams: no disk part, as before.
  RevolveSchedule revolve(10, 3);
  const ScheduleCost r = simulate(revolve);
  EXPECT_EQ(r.disk_stores, 0);
  EXPECT_EQ(r.disk_slots, 0);
  EXPECT_FALSE(contains(r.to_string(), "disk"));
  EXPECT_DOUBLE_EQ(predicted_time(r, costs),
                   predicted_time(r, cost_model(1.0, 0.0, 0.0, 0.5, 0.25)));

  // The validator's memory_slots argument.
  ScheduleValidator all_disk(2, 1, "v", 0);
  all_disk.apply(Action::store(0, 0));
  EXPECT_EQ(all_disk.cost().disk_stores, 1);
  EXPECT_EQ(all_disk.disk_slots_in_use(), 1);
  EXPECT_THROW(ScheduleValidator(2, 1, "v", 2), InvalidArgument);
  EXPECT_THROW(ScheduleValidator(2, 1, "v", -2), InvalidArgument);
  try {
    ScheduleValidator(2, 3, "v", 7);
    ADD_FAILURE();
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(contains(e.what(), "memory slots = 7 must lie in [0, c = 3]")) << e.what();
  }
  for (const CostModel& bad : {cost_model(1.0, -1.0, 0.0), cost_model(1.0, 0.0, std::nan(""))})
    EXPECT_THROW(bad.validate(), InvalidArgument);
  try {
    cost_model(1.0, 0.0, -3.0).validate();
    ADD_FAILURE();
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(contains(e.what(), "disk_read_time = -3 must be finite and >= 0")) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// revolve_stores.
// ---------------------------------------------------------------------------------------------

TEST(RevolveStores, EqualsTheStoresOfTheRevolveSchedule) {
  for (int c = 1; c <= 14; ++c)
    for (Index l = 1; l <= 400; ++l) {
      RevolveSchedule s(l, c);
      ASSERT_EQ(revolve_stores(l, c), simulate(s).stores) << "l = " << l << ", c = " << c;
    }
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<Index> steps(1000, 400000);
  for (const int c : {2, 3, 4, 7, 30, 200, 5000}) {
    const Index l = steps(rng);
    RevolveSchedule s(l, c);
    EXPECT_EQ(revolve_stores(l, c), simulate(s).stores) << "l = " << l << ", c = " << c;
  }
  EXPECT_EQ(revolve_stores(1000, 1), 1);             // only y_0
  EXPECT_EQ(revolve_stores(1000, 2000), 999);        // y_0 … y_998
  EXPECT_GT(revolve_stores(Index{1} << 40, 50), 0);  // no overflow, fast
  EXPECT_THROW(revolve_stores(0, 3), InvalidArgument);
  EXPECT_THROW(revolve_stores(5, 0), InvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// Optimality.
// ---------------------------------------------------------------------------------------------

// Disk much slower than a step, about one step, much faster; memory I/O free or not; adjoints of
// different cost.
std::vector<CostModel> cost_grid() {
  return {cost_model(1.0, 20.0, 20.0),        cost_model(2.0, 1.0, 1.0),
          cost_model(0.0, 0.05, 0.05),        cost_model(2.0, 5.0, 0.5),
          cost_model(1.0, 0.5, 8.0),          cost_model(3.0, 2.0, 2.0, 0.1, 0.1),
          cost_model(1.0, 0.0, 0.0, 0.3, 0.2)};
}

TEST(TwoLevelReference, RecursiveFamilyIsOptimalOverAllActionSequences) {
  const std::vector<std::pair<int, int>> budgets = {{1, 0}, {1, 1}, {1, 2}, {2, 1},
                                                    {2, 2}, {1, 3}, {3, 1}, {2, 3}};
  for (const CostModel& costs : cost_grid())
    for (const auto& [m, d] : budgets) {
      test::ReferenceTwoLevelDP dp(7, m, d, costs);
      for (Index l = 1; l <= 7; ++l) {
        if ((m + d >= 5) && l > 6) continue;  // keeps the search small
        const double all = test::exhaustive_two_level(l, m, d, costs);
        const double family = dp.optimum(l);
        ASSERT_NEAR(family, all, 1e-9 * all)
            << "l = " << l << ", m = " << m << ", d = " << d << ", w_d = " << costs.disk_write_time
            << ", r_d = " << costs.disk_read_time << ", w_m = " << costs.write_time;
        MultiLevelSchedule s(l, m, d, costs);
        ASSERT_TRUE(s.exact());
        check_plan(s, m, d);
        ASSERT_NEAR(time_of(s, costs), all, 1e-9 * all)
            << "l = " << l << ", m = " << m << ", d = " << d;
      }
    }
}

TEST(MultiLevelSchedule, OptimalWithinTheFamilyForEveryHorizonUpTo200) {
  const std::vector<std::pair<int, int>> budgets = {{1, 1}, {2, 3}, {4, 8}, {3, 0}, {1, 12}};
  const std::vector<CostModel> grid = cost_grid();
  for (std::size_t g = 0; g < grid.size(); ++g)
    for (const auto& [m, d] : budgets) {
      const CostModel& costs = grid[g];
      test::ReferenceTwoLevelDP dp(200, m, d, costs);
      for (Index l = 1; l <= 200; ++l) {
        MultiLevelSchedule s(l, m, d, costs);
        ASSERT_TRUE(s.exact()) << "l = " << l;
        check_plan(s, m, d);
        const double simulated = time_of(s, costs);
        const double optimum = dp.optimum(l);
        ASSERT_LE(simulated, optimum * (1.0 + 1e-9))
            << "l = " << l << ", m = " << m << ", d = " << d << ", costs #" << g;
        ASSERT_GE(simulated, optimum * (1.0 - 1e-9)) << "the reference DP is not optimal?";
        ASSERT_NEAR(s.plan().optimum, simulated, 1e-9 * simulated);
      }
    }
}

// ---------------------------------------------------------------------------------------------
// Limits and comparisons.
// ---------------------------------------------------------------------------------------------

TEST(MultiLevelSchedule, WithoutDiskItIsRevolve) {
  for (const int m : {1, 2, 5})
    for (Index l = 1; l <= 200; l += (l < 30 ? 1 : 7)) {
      MultiLevelSchedule s(l, m, 0, cost_model(2.0, 3.0, 3.0));
      const ScheduleCost cost = check_plan(s, m, 0);
      ASSERT_EQ(cost.advances, revolve_advances(l, m)) << "l = " << l << ", m = " << m;
      ASSERT_EQ(cost.disk_stores, 0);
    }
  for (const Index l : {Index{5000}, Index{123457}}) {
    MultiLevelSchedule s(l, 6, 0, cost_model(1.0, 1.0, 1.0));
    EXPECT_FALSE(s.exact());
    EXPECT_EQ(s.super_step(), l);
    EXPECT_EQ(check_plan(s, 6, 0).advances, revolve_advances(l, 6));
  }
}

TEST(MultiLevelSchedule, FreeDiskIsAtLeastAsGoodAsRevolveWithAllSlots) {
  // Disk and memory I/O free: the two-level plan may use the d disk slots like memory.
  const CostModel costs = cost_model(1.0, 0.0, 0.0);
  for (const auto& [m, d] : std::vector<std::pair<int, int>>{{1, 3}, {2, 6}, {4, 4}})
    for (Index l = 2; l <= 200; l += 3) {
      MultiLevelSchedule s(l, m, d, costs);
      RevolveSchedule r(l, m + d);
      ASSERT_LE(time_of(s, costs), time_of(r, costs) * (1.0 + 1e-12)) << "l = " << l;
      ASSERT_EQ(check_plan(s, m, d).advances, revolve_advances(l, m + d)) << "l = " << l;
    }
}

TEST(MultiLevelSchedule, DearDiskIsLeftAlone) {
  const CostModel costs = cost_model(1.0, 1e9, 1e9);
  for (const Index l : {Index{2}, Index{50}, Index{200}, Index{20000}, Index{300000}}) {
    MultiLevelSchedule s(l, 3, 50, costs);
    const ScheduleCost cost = check_plan(s, 3, 50);
    EXPECT_EQ(cost.disk_stores, 0) << "l = " << l;
    EXPECT_EQ(cost.advances, revolve_advances(l, 3)) << "l = " << l;
  }
}

TEST(MultiLevelSchedule, NeverWorseThanMemoryRevolveOrUniformDisk) {
  struct Case {
    Index l;
    int m, d;
  };
  for (const Case c : {Case{60, 2, 5}, Case{150, 4, 100}, Case{1000, 4, 100}, Case{1000, 2, 10},
                       Case{20000, 4, 100}, Case{100000, 4, 100}, Case{77777, 3, 1000}})
    for (const CostModel& costs :
         {cost_model(2.0, 2.0, 2.0), cost_model(1.0, 20.0, 20.0), cost_model(1.0, 0.1, 0.1),
          cost_model(2.0, 2.0, 2.0, 0.01, 0.01)}) {
      MultiLevelSchedule s(c.l, c.m, c.d, costs);
      check_plan(s, c.m, c.d);
      const double planned = time_of(s, costs);
      RevolveSchedule revolve(c.l, c.m);
      EXPECT_LE(planned, time_of(revolve, costs)) << "l = " << c.l;
      // Uniform disk snapshots every ⌈l/L⌉ steps, for L = d (all disk slots) and a few fewer.
      for (const Index count : {Index{c.d}, Index{c.d} / 2, Index{c.d} / 4 + 1}) {
        if (count > c.l) continue;
        const Index k = (c.l - 1) / count + 1;
        ActionListSchedule uniform = uniform_disk(c.l, c.m, c.d, k);
        EXPECT_LE(planned, time_of(uniform, costs) * (1.0 + 1e-12))
            << "l = " << c.l << ", m = " << c.m << ", d = " << c.d << ", k = " << k;
      }
    }
}

// Past the exact table: the grid table (split points on multiples of k, in-place memory revolve
// inside) or the super-step plan — valid, exactly predicted, no worse than any super-step plan,
// and close to the optimum of the recursive family.
TEST(MultiLevelSchedule, GridPlansBeyondTheExactTable) {
  struct Case {
    Index l;
    int m, d;
    CostModel costs;
  };
  int grids = 0;
  for (const Case& c :
       {Case{400, 4, 100, cost_model(1.0, 20.0, 20.0)}, Case{600, 8, 30, cost_model(1.0, 0.1, 0.1)},
        Case{3000, 4, 30, cost_model(2.0, 2.0, 2.0)},
        Case{3000, 2, 300, cost_model(1.0, 0.5, 4.0, 0.01, 0.02)},
        Case{20000, 4, 10, cost_model(2.0, 2.0, 2.0)}}) {
    SCOPED_TRACE("l = " + std::to_string(c.l) + ", m = " + std::to_string(c.m) +
                 ", d = " + std::to_string(c.d));
    MultiLevelSchedule s(c.l, c.m, c.d, c.costs);
    ASSERT_FALSE(s.exact());
    check_plan(s, c.m, c.d);
    grids += s.plan().method == detail::TwoLevelPlan::Method::grid;
    const double planned = s.predicted_time();
    for (Index k = 1; k <= c.l; ++k)
      ASSERT_LE(planned, predicted_time(detail::super_step_counts(c.l, c.m, c.d, k), c.costs))
          << "k = " << k;
    if (c.l <= 400) {  // more in multilevel_long_test.cpp
      test::ReferenceTwoLevelDP dp(c.l, c.m, c.d, c.costs);
      const double optimum = dp.optimum(c.l);
      std::printf("l = %lld, m = %d, d = %d, w_d = %g: %s k = %lld, %.2f %% above the optimum\n",
                  static_cast<long long>(c.l), c.m, c.d, c.costs.disk_write_time,
                  s.plan().method == detail::TwoLevelPlan::Method::grid ? "grid" : "super-steps",
                  static_cast<long long>(s.super_step()), 100.0 * (planned / optimum - 1.0));
      EXPECT_GE(planned, optimum * (1.0 - 1e-12));
      EXPECT_LE(planned, optimum * 1.05);
    }
  }
  EXPECT_GE(grids, 3);
}

// The numbers of the design note: l = 10^5, m = 4, d = 100, disk write = read = 2 steps,
// adjoint 2 steps.
TEST(MultiLevelSchedule, ReportsTheComparison) {
  const Index l = 100000;
  const CostModel costs = cost_model(2.0, 2.0, 2.0);
  MultiLevelSchedule s(l, 4, 100, costs);
  const ScheduleCost cost = check_plan(s, 4, 100);
  RevolveSchedule revolve(l, 4);
  ActionListSchedule uniform = uniform_disk(l, 4, 100, l / 100);
  const double planned = predicted_time(cost, costs), memory_only = time_of(revolve, costs),
               even = time_of(uniform, costs);
  std::printf(
      "l = %lld, m = 4, d = 100, w_d = r_d = 2, adjoint 2 (in forward runs of l steps):\n"
      "  two-level (super-step k = %lld): %.4f   [%s]\n"
      "  memory revolve(4): %.4f\n  uniform disk every %lld: %.4f\n",
      static_cast<long long>(l), static_cast<long long>(s.super_step()), planned / l,
      cost.to_string().c_str(), memory_only / l, static_cast<long long>(l / 100), even / l);
  EXPECT_LT(planned, even);
  EXPECT_LT(even, memory_only);
}

// ---------------------------------------------------------------------------------------------
// Streams, scale, errors.
// ---------------------------------------------------------------------------------------------

TEST(MultiLevelSchedule, InterfaceAndStream) {
  MultiLevelSchedule s(40, 2, 5, cost_model(1.0, 3.0, 3.0));
  EXPECT_EQ(s.name(), "two-level(memory = 2, disk = 5)");
  EXPECT_EQ(s.slots(), 7);
  EXPECT_EQ(s.memory_slots(), 2);
  EXPECT_EQ(s.steps(), 40);
  const ScheduleCost first = check_plan(s, 2, 5);
  const ScheduleCost again = simulate(s);  // reset() restarts the same stream
  EXPECT_EQ(again.actions, first.actions);
  s.reset();
  EXPECT_EQ(s.next().kind, ActionKind::store);  // y_0
  // done stays done
  s.reset();
  for (Action a = s.next(); a.kind != ActionKind::done; a = s.next()) {
  }
  EXPECT_EQ(s.next(), Action::done());
  // One step: reversed at once, nothing stored.
  MultiLevelSchedule one(1, 1, 0, CostModel{});
  EXPECT_EQ(one.next(), Action::reverse(0));
  EXPECT_EQ(one.next(), Action::done());
  // A base class pointer, as the driver holds it.
  std::unique_ptr<Schedule> base = std::make_unique<MultiLevelSchedule>(10, 1, 2, CostModel{});
  EXPECT_EQ(base->memory_slots(), 1);
  EXPECT_EQ(simulate(*base).reverses, 10);
}

TEST(MultiLevelSchedule, MovesSnapshotsBetweenLevelsWhenItPays) {
  // Disk reads dear, memory scarce: a disk snapshot re-read often is first moved into memory.
  const CostModel costs = cost_model(1.0, 0.5, 6.0);
  MultiLevelSchedule s(60, 2, 6, costs);
  ASSERT_TRUE(s.exact());
  Index moves = 0, current = 0;
  ScheduleValidator v(60, 8, "moves", 2);
  std::vector<Index> held(8, -1);
  s.reset();
  for (Action a = s.next();; a = s.next()) {
    v.apply(a);
    if (a.kind == ActionKind::store) {
      for (int slot = 0; slot < 8; ++slot)
        if (held[static_cast<std::size_t>(slot)] == a.step) ++moves;  // held twice
      held[static_cast<std::size_t>(a.slot)] = a.step;
    }
    if (a.kind == ActionKind::free) held[static_cast<std::size_t>(a.slot)] = -1;
    if (a.kind == ActionKind::advance || a.kind == ActionKind::restore) current = a.step;
    if (a.kind == ActionKind::done) break;
  }
  (void)current;
  EXPECT_GT(moves, 0);
  test::ReferenceTwoLevelDP dp(60, 2, 6, costs);
  EXPECT_NEAR(time_of(s, costs), dp.optimum(60), 1e-9 * dp.optimum(60));
}

TEST(MultiLevelSchedule, MillionStepsWithAThousandDiskSnapshots) {
  const Index l = 1000000;
  const CostModel costs = cost_model(2.0, 2.0, 2.0);
  const auto start = std::chrono::steady_clock::now();
  MultiLevelSchedule s(l, 4, 1000, costs);
  const double plan_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(plan_seconds, 1.0);
  EXPECT_FALSE(s.exact());
  const auto t0 = std::chrono::steady_clock::now();
  const ScheduleCost cost = check_plan(s, 4, 1000);
  const double sim_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "l = 10^6, m = 4, d = 1000: planned in %.3f s (super-step k = %lld), simulated in "
      "%.2f s: %.4f forward runs [%s]\n",
      plan_seconds, static_cast<long long>(s.super_step()), sim_seconds,
      predicted_time(cost, costs) / static_cast<double>(l), cost.to_string().c_str());
  RevolveSchedule revolve(l, 4);
  EXPECT_LT(predicted_time(cost, costs), predicted_time(simulate(revolve), costs));
  // Planning the same horizon again costs the same: nothing is kept per step.
  EXPECT_EQ(MultiLevelSchedule(l, 4, 1000, costs).predicted_time(), s.predicted_time());
}

TEST(MultiLevelSchedule, RefusesBadInput) {
  const auto message = [](auto&& make) -> std::string {
    try {
      make();
    } catch (const InvalidArgument& e) {
      return e.what();
    }
    return "no error";
  };
  const CostModel ok;
  EXPECT_TRUE(contains(message([&] { MultiLevelSchedule(0, 2, 2, ok); }), "steps l = 0"));
  EXPECT_TRUE(contains(message([&] { MultiLevelSchedule(10, 0, 2, ok); }),
                       "memory snapshots = 0 must be >= 1"));
  EXPECT_TRUE(
      contains(message([&] { MultiLevelSchedule(10, -3, 2, ok); }), "memory snapshots = -3"));
  EXPECT_TRUE(contains(message([&] { MultiLevelSchedule(10, 2, -1, ok); }),
                       "disk snapshots = -1 must be >= 0"));
  EXPECT_TRUE(contains(message([&] { MultiLevelSchedule(10, 2, 1 << 30, ok); }),
                       "disk snapshots = 1073741824 is more than"));
  EXPECT_TRUE(contains(message([&] { MultiLevelSchedule(10, 1 << 28, 0, ok); }),
                       "memory snapshots = 268435456 is more than"));
  EXPECT_TRUE(contains(message([&] { MultiLevelSchedule(10, 2, 2, cost_model(1.0, -2.0, 1.0)); }),
                       "disk_write_time = -2"));
  EXPECT_TRUE(contains(
      message([&] {
        MultiLevelSchedule(10, 2, 2, cost_model(1.0, 1.0, std::numeric_limits<double>::infinity()));
      }),
      "disk_read_time = inf"));
  EXPECT_TRUE(contains(message([&] { MultiLevelSchedule(10, 2, 2, CostModel{.step_time = 0.0}); }),
                       "step_time = 0"));
}

}  // namespace
}  // namespace rwd
