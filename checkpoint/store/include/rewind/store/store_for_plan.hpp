// rewind/store/store_for_plan.hpp — the snapshot store a checkpointing plan needs, and the
// read-ahead that serves its disk level.
//
//   rwd::CheckpointPlan plan = rwd::plan_checkpoints(request, steps);
//   auto store = rwd::make_snapshot_store<B, rwd::Carry>(plan, n, {.directory = "/scratch"});
//   auto lookahead = rwd::make_restore_lookahead(plan);   // empty without a disk level
//
// Memory slots [0, plan.memory_slots_used) live in a MemorySnapshotStore allocated up front;
// when the plan has a disk level, a TieredSnapshotStore puts plan.disk_slots_used slots after
// them in an HDF5 file (disk_options say where and how). A three-level plan gets a
// ThreeLevelSnapshotStore: its device slots in the backend's memory, host slots from
// plan.first_host_slot, disk slots from plan.first_disk_slot, only the used ones allocated, all
// checked against `limits` first; make_host_restore_lookahead announces its host restores.
// Nothing here plans: the slot counts come from the plan (rewind/schedule/checkpoint_plan.hpp),
// so the schedule is never rebuilt.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>

#include "rewind/error.hpp"
#include "rewind/schedule/checkpoint_plan.hpp"
#include "rewind/store/disk_snapshot_store.hpp"
#include "rewind/store/memory_snapshot_store.hpp"
#include "rewind/store/restore_lookahead.hpp"
#include "rewind/store/snapshot_store.hpp"
#include "rewind/store/three_level_snapshot_store.hpp"
#include "rewind/store/tiered_snapshot_store.hpp"

namespace rwd {

// where: the values of a state this process holds and, for a state split across processes, the
// ranks (rwd::process_slice of the state), what a disk level writes per snapshot.
template <VectorBackend B, class Meta>
std::unique_ptr<SnapshotStore<B, Meta>> make_snapshot_store(
    const CheckpointPlan& plan, Index state_size, const DiskStoreOptions& disk_options,
    const ProcessSlice& where, const SnapshotLevelLimits& limits = {}) {
  const int memory = static_cast<int>(plan.memory_slots_used);
  const int disk = static_cast<int>(plan.disk_slots_used);
  if (plan.kind == ScheduleKind::three_level || plan.host_slots_used > 0) {
    if (disk > 0 && disk_options.directory.empty() && disk_options.file.empty())
      detail::fail<InvalidArgument>("schedule '", plan.name, "' keeps up to ", disk,
                                    " snapshots on disk: set the snapshot directory "
                                    "(CheckpointOptions::disk.directory)");
    ThreeLevelSlots slots;
    slots.device = static_cast<int>(plan.first_host_slot);
    slots.host = static_cast<int>(plan.first_disk_slot - plan.first_host_slot);
    slots.disk = disk;
    slots.device_allocated = memory;
    slots.host_allocated = static_cast<int>(plan.host_slots_used);
    return std::make_unique<ThreeLevelSnapshotStore<B, Meta>>(slots, state_size, disk_options,
                                                              where, limits);
  }
  if (disk == 0)
    return std::make_unique<MemorySnapshotStore<B, Meta>>(std::max(memory, 1), state_size);
  if (disk_options.directory.empty() && disk_options.file.empty())
    detail::fail<InvalidArgument>("schedule '", plan.name, "' keeps up to ", disk,
                                  " snapshots on disk: set the snapshot directory "
                                  "(CheckpointOptions::disk.directory)");
  // Disk slots are numbered after every memory slot the schedule has, used or not.
  return std::make_unique<TieredSnapshotStore<B, Meta>>(static_cast<int>(plan.first_disk_slot),
                                                        disk, state_size, disk_options, where);
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

// A scout that announces disk restores ahead of time; std::nullopt when the plan has no disk level.
inline std::optional<RestoreLookahead> make_restore_lookahead(const CheckpointPlan& plan) {
  if (plan.disk_slots_used == 0) return std::nullopt;
  return std::optional<RestoreLookahead>(std::in_place, plan.schedule(),
                                         static_cast<int>(plan.first_disk_slot));
}

// A second scout for the host level of a three-level plan (slots [first_host_slot,
// first_disk_slot)), so that host copies start early without holding back the disk's
// announcements; std::nullopt without a host level.
inline std::optional<RestoreLookahead> make_host_restore_lookahead(const CheckpointPlan& plan) {
  if (plan.host_slots_used == 0) return std::nullopt;
  return std::optional<RestoreLookahead>(std::in_place, plan.schedule(),
                                         static_cast<int>(plan.first_host_slot),
                                         static_cast<int>(plan.first_disk_slot));
}

}  // namespace rwd
