// rewind/schedule/storage_level.hpp — one storage level of a checkpointing plan: where its slots
// lie in the schedule's slot range, how many a store must provide, and what the schedule does
// there. The home of levels: a plan (rwd::CheckpointPlan::levels), the store built from it
// (rwd::make_snapshot_store) and the read-ahead for its slower levels all work from one list.
//
//   const rwd::CheckpointPlan plan = rwd::plan_checkpoints(request, steps);
//   for (const rwd::StorageLevel& level : plan.levels)        // fastest first
//     std::printf("%s: slots [%lld, %lld), %lld used\n", level.name.c_str(), level.first_slot,
//                 level.end_slot(), level.slots_used);
//   if (const rwd::StorageLevel* disk = plan.level(rwd::LevelKind::disk)) ...
//
// Design. A schedule addresses one slot range [0, c); a level is a contiguous part of it, and the
// levels of a plan tile the range in order, fastest first: single-level schedules have one
// (memory, or disk when every snapshot goes to disk), two-level schedules memory then disk,
// three-level schedules device, host, disk (rwd::Schedule::memory_slots() and host_slots() say
// where each begins). A level is named by its kind — what kind of store serves it — and by a
// name a report prints ("memory", "device", "host", "disk", or a user's own). Counts the
// simulation could not give (closed forms) are std::nullopt, never a guessed 0. What a snapshot
// costs on a level is the plan's cost model's (CheckpointPlan::write_cost / read_cost), kept in
// one place: the planners and the time prediction read the same numbers.
#pragma once

#include <optional>
#include <string>

#include "rewind/types.hpp"

namespace rwd {

// What kind of store serves a level. memory: the backend's own memory (a GPU's device memory for
// device vectors; the fastest level); host: host memory behind a device; disk: the HDF5 snapshot
// file.
enum class LevelKind { memory, host, disk };

// "memory", "host", "disk".
const char* level_kind_name(LevelKind kind);

struct StorageLevel {
  LevelKind kind = LevelKind::memory;
  std::string name = "memory";  // what reports call it ("device" for a three-level plan's first)
  Index first_slot = 0;         // the level holds slots [first_slot, first_slot + slots)
  Index slots = 0;              // the schedule's slots on this level (its budget there)
  // Slots a store must provide: the highest slot of the level the schedule uses, counted from
  // first_slot, plus one (from the simulation; every slot of the budget for the closed forms).
  Index slots_used = 0;
  std::optional<Index> stores;      // snapshots stored into the level (unknown: nullopt)
  std::optional<Index> restores;    // restored from it
  std::optional<Index> peak_slots;  // most snapshots held on the level at once

  Index end_slot() const { return first_slot + slots; }
  bool holds(Index slot) const { return slot >= first_slot && slot < end_slot(); }
};

}  // namespace rwd
