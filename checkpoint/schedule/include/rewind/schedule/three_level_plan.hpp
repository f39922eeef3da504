// rewind/schedule/three_level_plan.hpp — the planner behind ThreeLevelSchedule
// (rewind/schedule/three_level_schedule.hpp): which composition of the two-level plan and memory
// revolve places snapshots on the device, host and disk levels with the least predicted time.
//
//   rwd::CostModel costs{.adjoint_cost_factor = 2.0, .write_time = 0.01, .read_time = 0.01,
//                        .disk_write_time = 20, .disk_read_time = 20,
//                        .host_write_time = 0.5, .host_read_time = 0.5};   // in forward steps
//   rwd::detail::ThreeLevelPlan plan = rwd::detail::plan_three_level(100000, 4, 64, 1000, costs);
//   plan.method;      // nested: two-level (host, disk) over super-steps, device revolve inside
//   plan.super_step;  // k
//   plan.counts;      // what simulating the schedule counts, exactly, per level
//
// Most users want ThreeLevelSchedule, which runs a plan; this header is public for tests and
// tools that compare plans. What is optimal and what is not is said in three_level_schedule.hpp.
#pragma once

#include <memory>

#include "rewind/schedule/multilevel_schedule.hpp"
#include "rewind/schedule/schedule_simulator.hpp"
#include "rewind/types.hpp"

namespace rwd::detail {

struct ThreeLevelPlan {
  enum class Method {
    device_disk,  // the two-level plan with the device level as its memory; host unused
    nested,       // the two-level plan (host as memory, disk) over super-steps of k steps, each
                  // reversed by revolve on the device level (k = 1: no device snapshots)
  };
  Method method = Method::device_disk;
  Index steps = 0;
  int device = 0;
  int host = 0;
  int disk = 0;
  Index super_step = 1;   // nested: k
  Index super_steps = 0;  // nested: L = ⌈l/k⌉; device_disk: l
  // The two-level schedule the plan runs: over l steps (device_disk) or L super-steps (nested, in
  // units of k steps, with the costs of outer_costs). A prototype: the schedule clones it.
  std::shared_ptr<const MultiLevelSchedule> outer;
  // nested: the cost model of the super-step level, in the same time unit as the run's: a step
  // costs k steps, a reverse step the device revolve over k steps, host I/O is its memory I/O.
  CostModel outer_costs;
  // The counts the schedule produces per level (device = stores − host − disk); peaks and the
  // action count are not predicted (left 0).
  ScheduleCost counts;
  double predicted_time = 0.0;  // rwd::predicted_time(counts, the run's costs)
};

// Validates (l ≥ 1; device, host, disk ≥ 0 and ≤ kMaxLevelSnapshots; device + host ≥ 1; costs)
// and plans: the better, by exact predicted time, of the device_disk plan (device ≥ 1) and the
// nested plan for the best super-step k among the candidates tried (host ≥ 1).
ThreeLevelPlan plan_three_level(Index steps, int device, int host, int disk,
                                const CostModel& costs);

// The counts of the nested plan with super-steps of k steps, given the two-level plan's counts
// over the ⌈l/k⌉ super-steps (its memory level is the host).
ScheduleCost nested_counts(Index steps, int device, int host, int disk, Index super_step,
                           const ScheduleCost& outer);

}  // namespace rwd::detail
