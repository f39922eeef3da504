// rewind/store/snapshot_store.hpp — the interface every snapshot store implements: slots
// addressed by index, each holding one state vector, the step it belongs to and a small
// trivially copyable metadata record.
//
//   std::unique_ptr<rwd::SnapshotStore<B, Meta>> store = ...;   // memory, disk or several levels
//   store->store(slot, step, y, meta);
//   store->prefetch(slot, step);           // a hint: the snapshot will be restored soon
//   store->restore(slot, step, y, meta);   // the step is checked: a mix-up is an error
//   store->free(slot);
//   store->finish();                       // waits for background writes, reports their errors
//
// Resumable runs: a store whose disk level was made resumable (DiskStoreOptions::resume) keeps
// its file when the run does not complete, records progress (opaque bytes from the driver)
// behind the snapshots it depends on, and, when it finds the file of a killed run of the same
// identity, hands back that run's newest progress record and adopts the snapshots still intact.
//
// Implementations: MemorySnapshotStore (backend memory), DiskSnapshotStore (an HDF5 file through
// a background I/O thread; the program links rewind::disk), HostSnapshotStore (host memory behind a
// device) and MultiLevelSnapshotStore (one slot range over a list of those, e.g. memory slots in
// front of disk slots, or device, host and disk slots). A store is pure storage: it knows nothing
// about schedules or what the metadata means. Misuse — a slot out of range, a store into an
// occupied slot, a restore of an empty one or of the wrong step — is an rwd::InvalidArgument; an
// I/O failure is an rwd::StorageError. Neither ever yields wrong data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "rewind/backend/backend.hpp"
#include "rewind/schedule/storage_level.hpp"
#include "rewind/store/snapshot_io_statistics.hpp"
#include "rewind/types.hpp"

namespace rwd {

// What one level of a store did (MultiLevelSnapshotStore gives one per level, fastest first; a
// store of one level gives one).
struct LevelStatistics {
  std::string name = "memory";  // the level's name ("memory", "device", "host", "disk")
  LevelKind kind = LevelKind::memory;
  Index stores = 0;
  Index restores = 0;
  // Restores whose copy was started ahead: the host level's (CUDA copy stream); the disk's are
  // io.prefetch_hits.
  Index prefetches = 0;
  // Snapshots held on the level at once, in bytes (states + metadata; uncompressed on disk).
  std::int64_t peak_bytes = 0;
};

// What a store did: the counts of each level, and the disk level's file and traffic. A store
// made from a plan (rwd::make_snapshot_store) has one entry per level of the plan, in its order.
struct SnapshotStoreStatistics {
  std::vector<LevelStatistics> levels;  // fastest first
  std::string file;                     // the snapshot file, empty without a disk level
  bool asynchronous = false;            // disk I/O on a background thread
  SnapshotIoStatistics io;              // disk traffic and timing; zero without a disk level

  // The first level of that kind, or nullptr.
  const LevelStatistics* level(LevelKind kind) const {
    for (const LevelStatistics& each : levels)
      if (each.kind == kind) return &each;
    return nullptr;
  }
  // Summed over the levels of that kind (0 without one). memory: the backend's own memory — a
  // device's, when there is a host level behind it.
  Index stores_on(LevelKind kind) const { return sum(kind, &LevelStatistics::stores); }
  Index restores_on(LevelKind kind) const { return sum(kind, &LevelStatistics::restores); }
  Index prefetches_on(LevelKind kind) const { return sum(kind, &LevelStatistics::prefetches); }
  std::int64_t peak_bytes_on(LevelKind kind) const {
    return sum(kind, &LevelStatistics::peak_bytes);
  }
  // The entry of a level of that kind, added (named after the kind) if there is none yet.
  LevelStatistics& level_entry(LevelKind kind) {
    for (LevelStatistics& each : levels)
      if (each.kind == kind) return each;
    levels.push_back(LevelStatistics{level_kind_name(kind), kind});
    return levels.back();
  }

 private:
  template <class T>
  T sum(LevelKind kind, T LevelStatistics::*field) const {
    T total = 0;
    for (const LevelStatistics& each : levels)
      if (each.kind == kind) total += each.*field;
    return total;
  }
};

template <VectorBackend B, class Meta>
class SnapshotStore {
 public:
  using Vector = typename B::Vector;

  virtual ~SnapshotStore() = default;

  virtual int slots() const = 0;
  // Copies y_step and its metadata into a free slot.
  virtual void store(int slot, Index step, const Vector& state, const Meta& meta) = 0;
  // Copies the snapshot of y_step held in `slot` into state and meta; the slot keeps it.
  virtual void restore(int slot, Index step, Vector& state, Meta& meta) = 0;
  // Empties the slot.
  virtual void free(int slot) = 0;
  // The snapshot of y_step in `slot` will be restored soon: a store that can fetch it ahead of
  // time starts now. Never required for correctness.
  virtual void prefetch(int /*slot*/, Index /*step*/) {}
  // Waits for every background operation and rethrows the first failure.
  virtual void finish() {}
  virtual SnapshotStoreStatistics statistics() const = 0;

  // Resumable runs (all no-ops for a store without a resumable disk level).
  // Whether the store can be resumed after its process dies: it has a resumable disk level.
  virtual bool resumable() const { return false; }
  // Whether `slot` outlives the process (a disk slot of a resumable store).
  virtual bool persists(int /*slot*/) const { return false; }
  // The newest progress record left by an earlier process of this run (for a split state, the
  // newest one every rank holds); empty for a fresh start.
  virtual std::vector<std::byte> saved_progress() const { return {}; }
  // Takes the free `slot` as holding y_step if the earlier process left it there intact
  // (checksum, run, step); false otherwise, and the slot stays free.
  virtual bool adopt(int /*slot*/, Index /*step*/) { return false; }
  // Records progress after every store so far (written behind them, in order).
  virtual void save_progress(std::span<const std::byte> /*progress*/) {}
  // Whether to record progress now, given whether this process's interval has passed. One
  // process: exactly that. The ranks of a split state (collective): rank 0's clock decides, and
  // only once every rank has written its previous record — so every rank always holds the
  // record before its newest one, and the ranks of a killed run share one (saved_progress).
  virtual bool progress_due(bool interval_passed) { return interval_passed; }
  // The run completed: the file of a resumable run is removed at the end (unless kept).
  virtual void complete() {}

 protected:
  SnapshotStore() = default;
  SnapshotStore(const SnapshotStore&) = default;
  SnapshotStore& operator=(const SnapshotStore&) = default;
};

}  // namespace rwd
