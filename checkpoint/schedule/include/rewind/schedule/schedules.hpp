// rewind/schedule/schedules.hpp — schedule factories for CheckpointedAdjoint::run.
//
//   driver.run(y0, theta, rwd::revolve_schedule(20));   // binomial, 20 snapshots
//   driver.run(y0, theta, rwd::uniform_schedule(100));  // a snapshot every 100 steps
//   driver.run(y0, theta, rwd::store_all_schedule());   // every state
//   driver.run(y0, theta, rwd::on_disk(rwd::revolve_schedule(20)));  // revolve, snapshots on disk
//   driver.run(y0, theta, rwd::two_level_schedule(4, 100, costs));   // 4 in memory, 100 on disk
//
// A factory makes the schedule once the number of steps is known (after the counting sweep of
// an adaptive run).
#pragma once

#include <algorithm>
#include <functional>
#include <memory>

#include "rewind/schedule/disk_only_schedule.hpp"
#include "rewind/schedule/multilevel_schedule.hpp"
#include "rewind/schedule/revolve_schedule.hpp"
#include "rewind/schedule/schedule_simulator.hpp"
#include "rewind/schedule/schedule.hpp"
#include "rewind/schedule/store_all_schedule.hpp"
#include "rewind/schedule/uniform_schedule.hpp"
#include "rewind/error.hpp"

namespace rwd {

using ScheduleFactory = std::function<std::unique_ptr<Schedule>(Index steps)>;

inline ScheduleFactory revolve_schedule(int snapshots) {
  if (snapshots < 1) detail::fail<InvalidArgument>("revolve needs >= 1 snapshot, got ", snapshots);
  return [snapshots](Index steps) { return std::make_unique<RevolveSchedule>(steps, snapshots); };
}

inline ScheduleFactory uniform_schedule(Index interval) {
  if (interval < 1) detail::fail<InvalidArgument>("uniform interval = ", interval, " must be >= 1");
  return [interval](Index steps) {
    return std::make_unique<UniformSchedule>(steps, std::min(interval, steps));
  };
}

inline ScheduleFactory store_all_schedule() {
  return [](Index steps) { return std::make_unique<StoreAllSchedule>(steps); };
}

// The same schedule with every snapshot in the disk level (CheckpointOptions::disk says where).
inline ScheduleFactory on_disk(ScheduleFactory factory) {
  if (!factory) detail::fail<InvalidArgument>("on_disk needs a schedule factory");
  return [factory = std::move(factory)](Index steps) -> std::unique_ptr<Schedule> {
    return std::make_unique<DiskOnlySchedule>(factory(steps));
  };
}

// The same schedule with every snapshot in memory: the actions of a two-level schedule without
// its disk I/O (the reference of the disk benchmarks).
inline ScheduleFactory in_memory(ScheduleFactory factory) {
  if (!factory) detail::fail<InvalidArgument>("in_memory needs a schedule factory");
  return [factory = std::move(factory)](Index steps) -> std::unique_ptr<Schedule> {
    return std::make_unique<MemoryOnlySchedule>(factory(steps));
  };
}

// Two levels: `memory` snapshots in memory and `disk` in the snapshot file
// (CheckpointOptions::disk), placed to minimise the predicted time under `costs`
// (rwd::MultiLevelSchedule; costs.step_time and the disk times in any one unit).
inline ScheduleFactory two_level_schedule(int memory, int disk, const CostModel& costs) {
  if (memory < 1) detail::fail<InvalidArgument>("two-level schedule: ", memory, " memory snapshots (need >= 1)");
  if (disk < 0) detail::fail<InvalidArgument>("two-level schedule: ", disk, " disk snapshots (need >= 0)");
  costs.validate();
  return [memory, disk, costs](Index steps) -> std::unique_ptr<Schedule> {
    return std::make_unique<MultiLevelSchedule>(steps, memory, disk, costs);
  };
}

}  // namespace rwd
