// rewind/schedule/schedules.hpp — planners for CheckpointedAdjoint::run: what to plan, once the
// number of steps is known.
//
//   driver.run(y0, theta, rwd::revolve_schedule(20));   // binomial, 20 snapshots
//   driver.run(y0, theta, rwd::uniform_schedule(100));  // a snapshot every 100 steps
//   driver.run(y0, theta, rwd::store_all_schedule());   // every state
//   driver.run(y0, theta, rwd::on_disk(rwd::revolve_schedule(20)));  // revolve, snapshots on disk
//   driver.run(y0, theta, rwd::two_level_schedule(4, 100, costs));   // 4 in memory, 100 on disk
//   driver.run(y0, theta, rwd::three_level_schedule(4, 64, 1000, costs));  // device, host, disk
//   driver.run(y0, theta, rwd::custom_schedule([](rwd::Index l) { return my_schedule(l); }));
//   driver.run(y0, theta, rwd::stage_aware_schedule(20, 4));    // 20 units, RK4's 4 stages
//   driver.run(y0, theta, rwd::store_all_stages_schedule(4));   // every step's stages
//
// A planner is called once per run whose length is known (fixed steps, or after a counting sweep);
// revolve_schedule also names an online budget, so a run of unknown length (adaptive steps, a
// stop condition) runs rwd::OnlineSchedule with no counting sweep. A planner returns a
// rwd::CheckpointPlan (rewind/schedule/checkpoint_plan.hpp), from which the driver, the snapshot
// store and the read-ahead scout all take what they need. With a known number of steps, plan
// yourself and hand the plan over: driver.run(y0, theta, rwd::plan_checkpoints(request, l)).
#pragma once

#include <functional>
#include <memory>
#include <utility>

#include "rewind/error.hpp"
#include "rewind/schedule/checkpoint_plan.hpp"
#include "rewind/schedule/disk_only_schedule.hpp"
#include "rewind/schedule/schedule.hpp"
#include "rewind/schedule/stage_aware_schedule.hpp"
#include "rewind/schedule/store_all_stages_schedule.hpp"

namespace rwd {

// Plans `request` for the run's number of steps. A request in memory of a binomial family
// (revolve; ScheduleFamily::binomial_budget) also names its budget as the online budget (a run
// of unknown length runs online(c)).
inline Planner planner_for(PlanRequest request) {
  request.validate();
  std::optional<int> online;
  if (const std::optional<Index> budget = request.family->binomial_budget(request);
      budget && !request.all_on_disk)
    online = static_cast<int>(*budget);
  return Planner([request](Index steps) { return plan_checkpoints(request, steps); }, online);
}

// Revolve with c snapshots; a run of unknown length runs online(c) instead (OnlineSchedule).
inline Planner revolve_schedule(int snapshots) {
  if (snapshots < 1) detail::fail<InvalidArgument>("revolve needs >= 1 snapshot, got ", snapshots);
  return planner_for(PlanRequest::revolve(snapshots));
}

inline Planner uniform_schedule(Index interval) {
  if (interval < 1) detail::fail<InvalidArgument>("uniform interval = ", interval, " must be >= 1");
  return planner_for(PlanRequest::uniform(interval));
}

inline Planner store_all_schedule() {
  return planner_for(PlanRequest::store_all());
}

// Two levels: `memory` snapshots in memory and `disk` in the snapshot file
// (CheckpointOptions::disk), placed to minimise the predicted time under `costs`
// (rwd::MultiLevelSchedule; costs.step_time and the disk times in any one unit).
inline Planner two_level_schedule(int memory, int disk, const CostModel& costs) {
  if (memory < 1)
    detail::fail<InvalidArgument>("two-level schedule: ", memory, " memory snapshots (need >= 1)");
  if (disk < 0)
    detail::fail<InvalidArgument>("two-level schedule: ", disk, " disk snapshots (need >= 0)");
  return planner_for(PlanRequest::two_level(memory, disk, costs));
}

// Three levels: `device` snapshots in the backend's memory (a GPU's device memory), `host` in
// host memory (pinned under CUDA) and `disk` in the snapshot file, placed to minimise the
// predicted time under `costs` (rwd::ThreeLevelSchedule: write_time/read_time are device
// copies, host_write_time/host_read_time host copies). device + host >= 1.
inline Planner three_level_schedule(int device, int host, int disk, const CostModel& costs) {
  return planner_for(PlanRequest::three_level(device, host, disk, costs));
}

// A schedule of your own: `make(l)` builds it for l steps; it is simulated once to plan.
inline Planner custom_schedule(std::function<std::unique_ptr<Schedule>(Index steps)> make) {
  if (!make)
    detail::fail<InvalidArgument>("custom_schedule needs a function that makes a schedule");
  return [make = std::move(make)](Index steps) { return CheckpointPlan::of(make(steps)); };
}

// State and stage snapshots in `units` state-sized slots, a stage snapshot taking `stage_units`
// (the method's stages; rewind/schedule/stage_aware_schedule.hpp). Fixed-length runs only.
inline Planner stage_aware_schedule(int units, int stage_units) {
  if (units < 1)
    detail::fail<InvalidArgument>("stage-aware schedule: ", units, " units (need >= 1)");
  if (stage_units < 1)
    detail::fail<InvalidArgument>("stage-aware schedule: ", stage_units,
                                  " stage units (need >= 1)");
  return [units, stage_units](Index steps) {
    CheckpointPlan plan =
        CheckpointPlan::of(std::make_unique<StageAwareSchedule>(steps, units, stage_units));
    plan.budget = units;
    return plan;
  };
}

// The stages of every step: no step is re-run (l·stage_units slots).
inline Planner store_all_stages_schedule(int stage_units) {
  if (stage_units < 1)
    detail::fail<InvalidArgument>("store-all-stages: ", stage_units, " stage units (need >= 1)");
  return [stage_units](Index steps) {
    return CheckpointPlan::of(std::make_unique<StoreAllStagesSchedule>(steps, stage_units));
  };
}

// The same schedule with every snapshot in the disk level (CheckpointOptions::disk says where);
// for a run of unknown length, the online schedule's snapshots too (when the planner names one).
inline Planner on_disk(Planner planner) {
  if (!planner) detail::fail<InvalidArgument>("on_disk needs a planner");
  const std::optional<int> online = planner.online_snapshots();
  const OnlineRule rule = planner.online_rule();
  return Planner(
      [planner = std::move(planner)](Index steps) {
        CheckpointPlan inner = planner(steps);
        CheckpointPlan plan =
            CheckpointPlan::of(std::make_unique<DiskOnlySchedule>(inner.schedule()), *inner.family);
        plan.budget = inner.budget;
        plan.interval = inner.interval;
        plan.repetitions = inner.repetitions;
        return plan;
      },
      online, rule, /*online_on_disk=*/true);
}

// The same schedule with every snapshot in memory: the actions of a two-level schedule without
// its disk I/O (the reference of the disk benchmarks).
inline Planner in_memory(Planner planner) {
  if (!planner) detail::fail<InvalidArgument>("in_memory needs a planner");
  const std::optional<int> online = planner.online_snapshots();
  const OnlineRule rule = planner.online_rule();
  return Planner(
      [planner = std::move(planner)](Index steps) {
        CheckpointPlan inner = planner(steps);
        return CheckpointPlan::of(std::make_unique<MemoryOnlySchedule>(inner.schedule()),
                                  *inner.family);
      },
      online, rule);
}

// The same planner, whose online schedule (a run of unknown length) follows `rule` past β(c, 3).
inline Planner with_online_rule(Planner planner, OnlineRule rule) {
  if (!planner) detail::fail<InvalidArgument>("with_online_rule needs a planner");
  const std::optional<int> online = planner.online_snapshots();
  const bool on_disk = planner.online_on_disk();
  return Planner([planner = std::move(planner)](Index steps) { return planner(steps); }, online,
                 rule, on_disk);
}

}  // namespace rwd
