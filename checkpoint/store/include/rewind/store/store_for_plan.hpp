// rewind/store/store_for_plan.hpp — the snapshot store a checkpointing plan needs, and the
// read-ahead that serves its slower levels.
//
//   rwd::CheckpointPlan plan = rwd::plan_checkpoints(request, steps);
//   auto store = rwd::make_snapshot_store<B, rwd::Carry>(plan, n, {.directory = "/scratch"});
//   std::vector<rwd::RestoreLookahead> ahead = rwd::make_restore_lookaheads(plan);
//
// One store per level of the plan (CheckpointPlan::levels: memory — the backend's, a GPU's
// device memory —, host or disk), each allocating only the slots the schedule uses there, joined
// in a MultiLevelSnapshotStore that routes every slot to the level whose range holds it; a plan
// of one level gets that level's store alone. A plan with a host level keeps device and host
// memory apart: their slots are checked against `limits` before anything is allocated. Nothing
// here plans: the slot counts come from the plan (rewind/schedule/checkpoint_plan.hpp), so the
// schedule is never rebuilt.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/schedule/checkpoint_plan.hpp"
#include "rewind/store/disk_level.hpp"
#include "rewind/store/multi_level_snapshot_store.hpp"
#include "rewind/store/restore_lookahead.hpp"
#include "rewind/store/snapshot_store.hpp"

namespace rwd {

// where: the values of a state this process holds and, for a state split across processes, the
// ranks (rwd::process_slice of the state), what a disk level writes per snapshot.
template <VectorBackend B, class Meta>
std::unique_ptr<SnapshotStore<B, Meta>> make_snapshot_store(
    const CheckpointPlan& plan, Index state_size, const DiskStoreOptions& disk_options,
    const ProcessSlice& where, const SnapshotLevelLimits& limits = {}) {
  if (plan.levels.empty())
    detail::fail<InvalidArgument>("schedule '", plan.name, "': a plan without storage levels");
  const Index disk = plan.slots_used_on(LevelKind::disk);
  if (disk > 0 && disk_options.directory.empty() && disk_options.file.empty())
    detail::fail<InvalidArgument>("schedule '", plan.name, "' keeps up to ", disk,
                                  " snapshots on disk: set the snapshot directory "
                                  "(CheckpointOptions::disk.directory)");
  if (disk > 0)
    require_disk_level("schedule '" + plan.name + "' keeps up to " + std::to_string(disk) +
                       " snapshots on disk");
  if (plan.level(LevelKind::host))
    detail::check_levels_fit<B, Meta>(static_cast<int>(plan.slots_used_on(LevelKind::memory)),
                                      static_cast<int>(plan.slots_used_on(LevelKind::host)),
                                      where.slice.values(), limits);
  if (plan.levels.size() == 1) {
    const StorageLevel& only = plan.levels.front();
    return make_level_store<B, Meta>(only.kind,
                                     static_cast<int>(std::max<Index>(only.slots_used, 1)),
                                     state_size, disk_options, where);
  }
  std::vector<SnapshotLevel<B, Meta>> levels;
  for (const StorageLevel& level : plan.levels)
    levels.push_back({level.name, level.kind, static_cast<int>(level.slots),
                      make_level_store<B, Meta>(level.kind, static_cast<int>(level.slots_used),
                                                state_size, disk_options, where)});
  return std::make_unique<MultiLevelSnapshotStore<B, Meta>>(std::move(levels));
}

// held_values: the values of a state this process holds (-1: all state_size of them).
template <VectorBackend B, class Meta>
std::unique_ptr<SnapshotStore<B, Meta>> make_snapshot_store(const CheckpointPlan& plan,
                                                            Index state_size,
                                                            const DiskStoreOptions& disk_options,
                                                            Index held_values = -1) {
  return make_snapshot_store<B, Meta>(
      plan, state_size, disk_options,
      ProcessSlice{StateSlice::whole_state(held_values < 0 ? state_size : held_values), nullptr});
}

// One scout per level outside memory that the schedule uses (host, disk), each announcing the
// restores from its level's slots ahead of time, slowest level first (its reads take longest);
// empty for a plan whose snapshots all live in memory.
inline std::vector<RestoreLookahead> make_restore_lookaheads(const CheckpointPlan& plan) {
  std::vector<RestoreLookahead> scouts;
  for (auto level = plan.levels.rbegin(); level != plan.levels.rend(); ++level) {
    if (level->kind == LevelKind::memory || level->slots_used == 0) continue;
    scouts.emplace_back(plan.schedule(), static_cast<int>(level->first_slot),
                        static_cast<int>(level->end_slot()));
  }
  return scouts;
}

}  // namespace rwd
