// ThreeLevelSchedule: every plan is a valid schedule whose simulated per-level counts and
// predicted time are what the planner said; with an empty device or host level it is no worse
// than the two-level plan of the other two; against an exhaustive search over every action
// sequence for tiny l it is never better (that would be a costing bug) and close; bad input is
// refused with a message naming the value.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <iostream>
#include <map>
#include <queue>
#include <string>
#include <vector>

#include "rewind/schedule/checkpoint_plan.hpp"
#include "rewind/schedule/multilevel_schedule.hpp"
#include "rewind/schedule/schedule_simulator.hpp"
#include "rewind/schedule/three_level_schedule.hpp"
#include "support/gpu_like_costs.hpp"

namespace rwd {
namespace {

// A GPU's costs, and costs where the disk is cheap and the host dear, so that the planner's
// choices differ.
using testing::gpu_like_costs;
CostModel odd_costs() {
  CostModel c;
  c.adjoint_cost_factor = 0.5;
  c.write_time = 0.0;
  c.read_time = 0.0;
  c.host_write_time = 2.0;
  c.host_read_time = 2.5;
  c.disk_write_time = 0.5;
  c.disk_read_time = 0.25;
  return c;
}

// Simulates (throws at the first broken rule) and checks the budget per level and that the
// planner predicted exactly these counts and this makespan.
ScheduleCost check_plan(ThreeLevelSchedule& s) {
  const ScheduleCost cost = simulate(s);
  const ScheduleCost& p = s.predicted_cost();
  const std::string where = s.name() + ", l = " + std::to_string(s.steps());
  EXPECT_EQ(cost.advances, p.advances) << where;
  EXPECT_EQ(cost.stores, p.stores) << where;
  EXPECT_EQ(cost.host_stores, p.host_stores) << where;
  EXPECT_EQ(cost.disk_stores, p.disk_stores) << where;
  EXPECT_EQ(cost.restores, p.restores) << where;
  EXPECT_EQ(cost.host_restores, p.host_restores) << where;
  EXPECT_EQ(cost.disk_restores, p.disk_restores) << where;
  EXPECT_EQ(cost.reverses, s.steps()) << where;
  EXPECT_EQ(cost.frees, cost.stores) << where;
  EXPECT_EQ(cost.first_sweep_advances, s.steps() - 1) << where;
  EXPECT_LE(cost.peak_disk_slots, s.disk_slots()) << where;
  EXPECT_LE(cost.peak_host_slots, s.host_slots()) << where;
  EXPECT_LE(cost.peak_slots - cost.peak_disk_slots - cost.peak_host_slots, s.device_slots())
      << where;
  EXPECT_LE(cost.memory_slots_used, s.device_slots()) << where;
  EXPECT_LE(cost.host_slots_used, s.host_slots()) << where;
  EXPECT_LE(cost.disk_slots_used, s.disk_slots()) << where;
  EXPECT_EQ(cost.host_slots, s.host_slots()) << where;
  EXPECT_EQ(cost.disk_slots, s.disk_slots()) << where;
  EXPECT_EQ(predicted_time(cost, s.costs()), s.predicted_time()) << where;
  return cost;
}

TEST(ThreeLevelSchedule, EveryPlanIsValidAndCostsWhatItPredicts) {
  int nested = 0, device_disk = 0;
  for (const CostModel& costs : {gpu_like_costs(), odd_costs()})
    for (Index l : {1, 2, 3, 5, 8, 13, 31, 64, 150, 600})
      for (int K : {0, 1, 3})
        for (int H : {0, 2, 6})
          for (int D : {0, 3, 25}) {
            if (K + H == 0) continue;
            ThreeLevelSchedule s(l, K, H, D, costs);
            check_plan(s);
            (s.plan().method == detail::ThreeLevelPlan::Method::nested ? nested : device_disk)++;
          }
  EXPECT_GT(nested, 50);  // both kinds of plan are exercised
  EXPECT_GT(device_disk, 50);
}

TEST(ThreeLevelSchedule, LongHorizonsStayValidAndUseEveryLevel) {
  for (Index l : {20000, 100001}) {
    ThreeLevelSchedule s(l, 4, 16, 200, gpu_like_costs());
    const ScheduleCost cost = check_plan(s);
    EXPECT_EQ(s.plan().method, detail::ThreeLevelPlan::Method::nested) << l;
    EXPECT_GT(s.plan().super_step, 1) << l;
    EXPECT_GT(cost.disk_stores, 0) << l;
    EXPECT_GT(cost.host_stores, 0) << l;
    EXPECT_GT(cost.stores - cost.disk_stores - cost.host_stores, 0) << l;
  }
}

TEST(ThreeLevelSchedule, AnEmptyLevelGivesTheTwoLevelPlanOfTheOthers) {
  for (const CostModel& costs : {gpu_like_costs(), odd_costs()})
    for (Index l : {2, 7, 50, 300})
      for (int m : {1, 3, 6})
        for (int D : {0, 4, 30}) {
          // H = 0: the device level is the two-level plan's memory.
          const MultiLevelSchedule device_disk(l, m, D, costs);
          ThreeLevelSchedule no_host(l, m, 0, D, costs);
          EXPECT_LE(no_host.predicted_time(), device_disk.predicted_time()) << l << " " << m;
          // K = 0: the host level is the two-level plan's memory, at the host's costs.
          CostModel host_as_memory = costs;
          host_as_memory.write_time = costs.host_write_time;
          host_as_memory.read_time = costs.host_read_time;
          const MultiLevelSchedule host_disk(l, m, D, host_as_memory);
          ThreeLevelSchedule no_device(l, 0, m, D, costs);
          EXPECT_LE(no_device.predicted_time(), host_disk.predicted_time()) << l << " " << m;
          EXPECT_EQ(check_plan(no_device).stores,
                    check_plan(no_device).host_stores + check_plan(no_device).disk_stores);
          // Both levels: no worse than either two-level plan.
          ThreeLevelSchedule both(l, m, m, D, costs);
          EXPECT_LE(both.predicted_time(), device_disk.predicted_time()) << l << " " << m;
          EXPECT_LE(both.predicted_time(), host_disk.predicted_time()) << l << " " << m;
        }
}

// The least predicted time of any action sequence (recursive or not, a state held on several
// levels at once allowed) for l steps with K, H, D slots: Dijkstra over (current step, adjoint
// step, the steps held on each level). Snapshots of reversed steps are dropped for free.
double exhaustive_optimum(Index l, int K, int H, int D, const CostModel& c) {
  const std::array<int, 3> cap{K, H, D};
  const std::array<double, 3> write{c.write_time, c.host_write_time, c.disk_write_time};
  const std::array<double, 3> read{c.read_time, c.host_read_time, c.disk_read_time};
  using State = std::vector<int>;  // cur, adj, then per level: count, sorted steps
  const auto encode = [](int cur, int adj, const std::array<std::vector<int>, 3>& held) {
    State s{cur, adj};
    for (const auto& h : held) {
      s.push_back(static_cast<int>(h.size()));
      s.insert(s.end(), h.begin(), h.end());
    }
    return s;
  };
  const auto decode = [](const State& s, int& cur, int& adj,
                         std::array<std::vector<int>, 3>& held) {
    cur = s[0];
    adj = s[1];
    std::size_t i = 2;
    for (auto& h : held) {
      const int n = s[i++];
      h.assign(s.begin() + static_cast<std::ptrdiff_t>(i),
               s.begin() + static_cast<std::ptrdiff_t>(i) + n);
      i += static_cast<std::size_t>(n);
    }
  };
  std::map<State, double> dist;
  using Item = std::pair<double, State>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
  const auto relax = [&](const State& s, double d) {
    auto [it, fresh] = dist.emplace(s, d);
    if (!fresh && it->second <= d) return;
    it->second = d;
    queue.emplace(d, s);
  };
  relax(encode(0, static_cast<int>(l), {}), 0.0);
  while (!queue.empty()) {
    auto [d, s] = queue.top();
    queue.pop();
    if (dist[s] < d) continue;
    int cur = 0, adj = 0;
    std::array<std::vector<int>, 3> held;
    decode(s, cur, adj, held);
    if (adj == 0) return d;
    if (cur + 1 <= adj - 1) relax(encode(cur + 1, adj, held), d + c.step_time);
    if (cur == adj - 1) {  // reverse, then drop what is no longer needed
      auto next = held;
      for (auto& h : next) h.erase(std::remove(h.begin(), h.end(), cur), h.end());
      relax(encode(cur, adj - 1, next), d + c.step_time * (1.0 + c.adjoint_cost_factor));
    }
    for (std::size_t v = 0; v < 3; ++v) {
      const auto& h = held[v];
      if (static_cast<int>(h.size()) < cap[v] && cur < adj &&
          std::find(h.begin(), h.end(), cur) == h.end()) {
        auto next = held;
        next[v].insert(std::upper_bound(next[v].begin(), next[v].end(), cur), cur);
        relax(encode(cur, adj, next), d + write[v]);
      }
      for (std::size_t i = 0; i < h.size(); ++i) {
        if (h[i] != cur) relax(encode(h[i], adj, held), d + read[v]);  // restore
        auto next = held;
        next[v].erase(next[v].begin() + static_cast<std::ptrdiff_t>(i));
        relax(encode(cur, adj, next), d);  // free
      }
    }
  }
  return -1.0;  // unreachable: every budget with a memory slot can reverse
}

TEST(ThreeLevelSchedule, NeverBeatsAndStaysCloseToAnExhaustiveSearch) {
  double worst = 1.0;
  for (const CostModel& costs : {gpu_like_costs(), odd_costs()})
    for (Index l = 1; l <= 6; ++l)
      for (int K = 0; K <= 2; ++K)
        for (int H = 0; H <= 2; ++H)
          for (int D = 0; D <= 1; ++D) {
            if (K + H == 0) continue;
            ThreeLevelSchedule s(l, K, H, D, costs);
            check_plan(s);
            const double best = exhaustive_optimum(l, K, H, D, costs);
            ASSERT_GT(best, 0.0);
            EXPECT_GE(s.predicted_time(), best - 1e-9)
                << s.name() << " l = " << l << ": below the optimum, so its costing is wrong";
            worst = std::max(worst, s.predicted_time() / best);
          }
  std::cout << "worst plan / optimum for l <= 6: " << worst << "\n";
  EXPECT_LE(worst, 1.35);
}

TEST(ThreeLevelSchedule, RefusesBadInput) {
  const auto refused = [](auto make, const std::string& says) {
    try {
      make();
      ADD_FAILURE() << "accepted; expected an error saying '" << says << "'";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  const CostModel c = gpu_like_costs();
  refused([&] { ThreeLevelSchedule(10, 0, 0, 0, c); }, "no device and no host snapshots");
  refused([&] { ThreeLevelSchedule(10, 0, 0, 7, c); },
          "no device and no host snapshots (7 on disk)");
  refused([&] { ThreeLevelSchedule(10, -1, 2, 2, c); }, "device snapshots = -1");
  refused([&] { ThreeLevelSchedule(10, 2, -3, 2, c); }, "host snapshots = -3");
  refused([&] { ThreeLevelSchedule(10, 2, 2, -1, c); }, "disk snapshots = -1");
  refused([&] { ThreeLevelSchedule(0, 2, 2, 2, c); }, "steps l = 0");
  refused([&] { ThreeLevelSchedule(10, 1 << 27, 2, 2, c); }, "is more than the");
  CostModel bad = c;
  bad.host_read_time = -1.0;
  refused([&] { ThreeLevelSchedule(10, 2, 2, 2, bad); }, "host_read_time");
  refused([&] { PlanRequest::three_level(0, 0, 5, c).validate(); },
          "memory_slots = 0 with no host slots either (5 on disk)");
  refused([&] { PlanRequest::three_level(-2, 1, 5, c).validate(); }, "memory_slots = -2");
  refused([&] { PlanRequest::three_level(1, -1, 5, c).validate(); }, "host_slots = -1");
  refused([&] { ScheduleValidator(10, 4, "s", 3, 4); }, "host slots = 4");
}

TEST(ThreeLevelSchedule, ThePlanCarriesTheLevels) {
  const CheckpointPlan plan =
      plan_checkpoints(PlanRequest::three_level(3, 5, 20, gpu_like_costs()), 500);
  EXPECT_EQ(plan.family, &three_level_family());
  EXPECT_EQ(plan.name, "three-level(device = 3, host = 5, disk = 20)");
  // Device, host, disk: fastest first, tiling the slot range.
  ASSERT_EQ(plan.levels.size(), 3u);
  EXPECT_EQ(plan.levels[0].kind, LevelKind::memory);
  EXPECT_EQ(plan.levels[0].name, "device");
  EXPECT_EQ(plan.levels[1].kind, LevelKind::host);
  EXPECT_EQ(plan.levels[2].kind, LevelKind::disk);
  EXPECT_EQ(plan.levels[0].first_slot, 0);
  EXPECT_EQ(plan.level(LevelKind::host)->first_slot, 3);
  EXPECT_EQ(plan.level(LevelKind::disk)->first_slot, 8);
  EXPECT_EQ(plan.level(LevelKind::disk)->end_slot(), 28);
  EXPECT_EQ(plan.slots_on(LevelKind::memory), 3);
  EXPECT_EQ(plan.slots_on(LevelKind::host), 5);
  EXPECT_EQ(plan.slots_on(LevelKind::disk), 20);
  ThreeLevelSchedule s(500, 3, 5, 20, gpu_like_costs());
  const ScheduleCost cost = check_plan(s);
  EXPECT_EQ(plan.stores_on(LevelKind::host), cost.host_stores);
  EXPECT_EQ(plan.restores_on(LevelKind::host), cost.host_restores);
  EXPECT_EQ(plan.stores_on(LevelKind::disk), cost.disk_stores);
  EXPECT_EQ(plan.slots_used_on(LevelKind::host), cost.host_slots_used);
  EXPECT_EQ(plan.peak_slots_on(LevelKind::host), cost.peak_host_slots);
  EXPECT_EQ(plan.stores_on(LevelKind::memory), cost.stores - cost.host_stores - cost.disk_stores);
  EXPECT_EQ(plan.write_cost(*plan.level(LevelKind::host)), gpu_like_costs().host_write_time);
  EXPECT_GT(cost.host_stores, 0);
  EXPECT_GT(cost.stores - cost.host_stores - cost.disk_stores, 0);  // device stores
  EXPECT_NEAR(plan.predicted_time_ratio(1.5) * 500.0, s.predicted_time(), 1e-6);
  // The same plan from the schedule itself.
  const CheckpointPlan of = CheckpointPlan::of(s.clone(), three_level_family());
  EXPECT_EQ(of.slots_on(LevelKind::host), 5);
  EXPECT_EQ(of.level(LevelKind::host)->first_slot, 3);
  EXPECT_EQ(of.stores_on(LevelKind::host), cost.host_stores);
}

TEST(ScheduleValidator, CountsTheHostLevelApart) {
  // Slots: 0 device, 1–2 host, 3 disk.
  ScheduleValidator v(3, 4, "hand-written", /*memory_slots=*/3, /*host_slots=*/2);
  for (const Action& a :
       {Action::store(1, 0), Action::advance(1), Action::store(0, 1), Action::advance(2),
        Action::store(3, 2), Action::reverse(2), Action::free(3, 2), Action::restore(0, 1),
        Action::reverse(1), Action::free(0, 1), Action::restore(1, 0), Action::reverse(0),
        Action::free(1, 0), Action::done()})
    v.apply(a);
  const ScheduleCost& c = v.cost();
  EXPECT_EQ(c.host_stores, 1);
  EXPECT_EQ(c.host_restores, 1);
  EXPECT_EQ(c.disk_stores, 1);
  EXPECT_EQ(c.disk_restores, 0);
  EXPECT_EQ(c.stores, 3);
  EXPECT_EQ(c.memory_slots_used, 1);
  EXPECT_EQ(c.host_slots_used, 1);
  EXPECT_EQ(c.peak_host_slots, 1);
  CostModel m;
  m.write_time = 1.0;
  m.host_write_time = 10.0;
  m.disk_write_time = 100.0;
  m.host_read_time = 1000.0;
  m.adjoint_cost_factor = 0.0;
  // 1 advance + 1 advance; 3 reverses; device write 1, host write 10, disk write 100, host read.
  EXPECT_EQ(predicted_time(c, m), 2.0 + 3.0 + 1.0 + 10.0 + 100.0 + 1000.0);
}

}  // namespace
}  // namespace rwd
