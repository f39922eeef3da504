// The three-level planner (rewind/schedule/three_level_plan.hpp): the device + disk two-level
// plan, and the host + disk two-level plan over super-steps reversed by device revolve, each
// costed exactly from its counts; the cheaper one is kept.
#include "rewind/schedule/three_level_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/schedule/checked_arithmetic.hpp"
#include "rewind/schedule/multilevel_plan.hpp"
#include "rewind/schedule/revolve_cost.hpp"

namespace rwd::detail {
namespace {

// Device revolve over x steps from a state just restored or reached (x ≥ 1): its advances,
// stores (y_start's included) and restores. One step is a bare reverse.
struct Leaf {
  Index advances = 0;
  Index stores = 0;
  Index restores = 0;
};
Leaf leaf(Index x, int device) {
  if (x < 2) return {};
  return {revolve_advances(x, device), revolve_stores(x, device), x - 1};
}

// The time of reversing k steps by device revolve, in the run's time unit.
double leaf_time(Index k, int device, const CostModel& costs) {
  const Leaf f = leaf(k, device);
  return costs.step_time * (static_cast<double>(f.advances) +
                            static_cast<double>(k) * (1.0 + costs.adjoint_cost_factor)) +
         costs.write_time * static_cast<double>(f.stores) +
         costs.read_time * static_cast<double>(f.restores);
}

// The super-step level's cost model: one of its steps is k steps; one of its reverse steps is the
// device revolve over k steps; its memory is the host level.
CostModel outer_costs(Index k, int device, const CostModel& costs) {
  CostModel outer;
  outer.step_time = costs.step_time * static_cast<double>(k);
  outer.adjoint_cost_factor = std::max(0.0, leaf_time(k, device, costs) / outer.step_time - 1.0);
  outer.write_time = costs.host_write_time;
  outer.read_time = costs.host_read_time;
  outer.disk_write_time = costs.disk_write_time;
  outer.disk_read_time = costs.disk_read_time;
  return outer;
}

void require_level(const char* level, int count) {
  if (count < 0)
    fail<InvalidArgument>("three-level schedule: ", level, " snapshots = ", count, " must be >= 0");
  if (count > kMaxLevelSnapshots)
    fail<InvalidArgument>("three-level schedule: ", level, " snapshots = ", count,
                          " is more than the ", kMaxLevelSnapshots, " a level may have");
}

// Candidates planned in full after screening, besides k = 1.
constexpr std::size_t kFullPlans = 3;

// The super-step lengths screened: every k ≤ 16, then 10 % apart up to l (and l itself); with no
// device level only k = 1.
std::vector<Index> candidate_super_steps(Index steps, int device) {
  std::vector<Index> ks{1};
  if (device < 1) return ks;
  for (Index k = 2; k <= std::min<Index>(steps, 16); ++k) ks.push_back(k);
  for (double x = 16.0 * 1.1; x < static_cast<double>(steps); x *= 1.1)
    ks.push_back(static_cast<Index>(std::ceil(x)));
  ks.push_back(steps);
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  return ks;
}

// A cheap estimate of the nested plan with super-steps of k: its super-step level planned by the
// two-level super-step plan alone (closed form) for a few of its own super-step lengths, instead
// of the full two-level planner. An upper bound of what plan_two_level achieves for most k.
double screen(Index steps, int device, int host, int disk, Index k, const CostModel& costs) {
  const Index L = (steps - 1) / k + 1;
  double best = std::numeric_limits<double>::infinity();
  const auto consider = [&](Index k2) {
    if (k2 < 1 || k2 > L || (disk < 1 && k2 != L)) return;
    const ScheduleCost outer = super_step_counts(L, host, disk, k2);
    best =
        std::min(best, predicted_time(nested_counts(steps, device, host, disk, k, outer), costs));
  };
  consider(L);
  for (Index k2 = 1; k2 <= std::min<Index>(L, 32); ++k2) consider(k2);
  for (double x = 32.0 * 1.2; x < static_cast<double>(L); x *= 1.2) consider(static_cast<Index>(x));
  return best;
}

}  // namespace

ScheduleCost nested_counts(Index steps, int device, int host, int disk, Index k,
                           const ScheduleCost& outer) {
  const Index L = (steps - 1) / k + 1;
  const Index last = steps - (L - 1) * k;
  const Leaf full = leaf(k, device), tail = leaf(last, device);
  const char* what = "three-level counts";
  ScheduleCost c;
  c.steps = steps;
  c.slots = device + host + disk;
  c.disk_slots = disk;
  c.host_slots = host;
  // The super-step level never advances through its last super-step (it reverses it).
  c.advances = checked_add(checked_add(checked_mul(k, outer.advances, what),
                                       checked_mul(L - 1, full.advances, what), what),
                           tail.advances, what);
  c.first_sweep_advances = steps - 1;
  c.recomputed_steps = c.advances - c.first_sweep_advances;
  const Index device_stores = checked_add(checked_mul(L - 1, full.stores, what), tail.stores, what);
  const Index device_restores = (L - 1) * full.restores + tail.restores;
  c.stores = checked_add(device_stores, outer.stores, what);
  c.restores = device_restores + outer.restores;
  c.reverses = steps;
  c.frees = c.stores;
  c.disk_stores = outer.disk_stores;
  c.disk_restores = outer.disk_restores;
  c.host_stores = outer.stores - outer.disk_stores;
  c.host_restores = outer.restores - outer.disk_restores;
  return c;
}

ThreeLevelPlan plan_three_level(Index steps, int device, int host, int disk,
                                const CostModel& costs) {
  if (steps < 1) fail<InvalidArgument>("three-level schedule: steps l = ", steps, " must be >= 1");
  require_level("device", device);
  require_level("host", host);
  require_level("disk", disk);
  if (device + host < 1)
    fail<InvalidArgument>("three-level schedule: no device and no host snapshots (", disk,
                          " on disk): the state being replayed needs a device or host slot; "
                          "give device >= 1 or host >= 1");
  costs.validate();

  ThreeLevelPlan best;
  best.steps = steps;
  best.device = device;
  best.host = host;
  best.disk = disk;
  best.predicted_time = std::numeric_limits<double>::infinity();

  if (device >= 1) {  // the two-level plan on device and disk: memory I/O at the device's costs
    auto outer = std::make_shared<MultiLevelSchedule>(steps, device, disk, costs);
    ScheduleCost c = outer->predicted_cost();
    c.slots = device + host + disk;
    c.host_slots = host;
    best.method = ThreeLevelPlan::Method::device_disk;
    best.super_step = 1;
    best.super_steps = steps;
    best.counts = c;
    best.predicted_time = predicted_time(c, costs);
    best.outer_costs = costs;
    best.outer = std::move(outer);
  }
  if (host >= 1) {  // nested: the best super-step, by exact predicted time
    // Screen every candidate k with the closed-form estimate, then plan the few best in full
    // (a full two-level plan costs orders of magnitude more than the estimate; measured in
    // bench/results/code_comments.md).
    std::vector<std::pair<double, Index>> screened;
    const std::vector<Index> ks = candidate_super_steps(steps, device);
    for (const Index k : ks) screened.emplace_back(screen(steps, device, host, disk, k, costs), k);
    std::sort(screened.begin(), screened.end());
    std::vector<Index> chosen{1};  // the host + disk two-level plan is always a candidate
    for (std::size_t i = 0; i < screened.size() && chosen.size() < 1 + kFullPlans; ++i)
      if (screened[i].second != 1) chosen.push_back(screened[i].second);
    Index best_k = 0;
    for (const Index k : chosen) {
      const Index L = (steps - 1) / k + 1;
      const TwoLevelPlan p = plan_two_level(L, host, disk, outer_costs(k, device, costs));
      const ScheduleCost c = nested_counts(steps, device, host, disk, k, p.counts);
      const double t = predicted_time(c, costs);
      if (t < best.predicted_time) {
        best.predicted_time = t;
        best.counts = c;
        best_k = k;
      }
    }
    if (best_k > 0) {
      const Index L = (steps - 1) / best_k + 1;
      best.method = ThreeLevelPlan::Method::nested;
      best.super_step = best_k;
      best.super_steps = L;
      best.outer_costs = outer_costs(best_k, device, costs);
      best.outer = std::make_shared<MultiLevelSchedule>(L, host, disk, best.outer_costs);
    }
  }
  return best;
}

}  // namespace rwd::detail
