// rewind/store/tiered_snapshot_store.hpp — a few memory slots in front of many disk slots,
// addressed as one range: slots [0, memory) live in memory, [memory, memory + disk) on disk.
//
//   rwd::TieredSnapshotStore<rwd::EigenBackend, rwd::Carry> store(/*memory=*/4, /*disk=*/100, n,
//                                                                 {.directory = "/scratch"});
//   store.store(2, 10, y, carry);     // memory slot 2
//   store.store(4, 500, y, carry);    // disk slot 0 of the file
//
// This is the slot convention of two-level schedules (Schedule::memory_slots()): the schedule
// decides which level each snapshot goes to; the store only routes. With no disk slots it is a
// memory store and creates no file.
#pragma once

#include <memory>
#include <optional>

#include "rewind/error.hpp"
#include "rewind/store/disk_snapshot_store.hpp"
#include "rewind/store/memory_snapshot_store.hpp"
#include "rewind/store/snapshot_store.hpp"

namespace rwd {

template <VectorBackend B, class Meta>
class TieredSnapshotStore final : public SnapshotStore<B, Meta> {
 public:
  using Vector = typename B::Vector;

  // held_values: the values of a state this process writes to disk (rwd::host_size; a rank's own
  // rows on a backend split across processes); -1 means state_size.
  TieredSnapshotStore(int memory_slots, int disk_slots, Index state_size,
                      const DiskStoreOptions& disk_options, Index held_values = -1)
      : TieredSnapshotStore(
            memory_slots, disk_slots, state_size, disk_options,
            ProcessSlice{StateSlice::whole_state(held_values < 0 ? state_size : held_values),
                         nullptr}) {}

  // where: the values of a state this process writes to disk, and the ranks of a state split
  // across processes (rwd::process_slice; see DiskSnapshotStore).
  TieredSnapshotStore(int memory_slots, int disk_slots, Index state_size,
                      const DiskStoreOptions& disk_options, const ProcessSlice& where)
      : memory_slots_(memory_slots) {
    if (memory_slots < 0 || disk_slots < 0 || memory_slots + disk_slots < 1)
      detail::fail<InvalidArgument>("tiered snapshot store: ", memory_slots, " memory and ",
                                    disk_slots, " disk slots (need >= 0 each, >= 1 in all)");
    if (memory_slots > 0) memory_.emplace(memory_slots, state_size);
    if (disk_slots > 0)
      disk_ = std::make_unique<DiskSnapshotStore<B, Meta>>(disk_slots, where, disk_options);
  }

  int slots() const override { return memory_slots_ + (disk_ ? disk_->slots() : 0); }
  int memory_slots() const { return memory_slots_; }
  const DiskSnapshotStore<B, Meta>* disk() const { return disk_.get(); }

  void store(int slot, Index step, const Vector& state, const Meta& meta) override {
    if (on_disk(slot))
      disk_->store(slot - memory_slots_, step, state, meta);
    else
      memory_->store(slot, step, state, meta);
  }
  void restore(int slot, Index step, Vector& state, Meta& meta) override {
    if (on_disk(slot))
      disk_->restore(slot - memory_slots_, step, state, meta);
    else
      memory_->restore(slot, step, state, meta);
  }
  void free(int slot) override {
    if (on_disk(slot))
      disk_->free(slot - memory_slots_);
    else
      memory_->free(slot);
  }
  void prefetch(int slot, Index step) override {
    if (on_disk(slot)) disk_->prefetch(slot - memory_slots_, step);
  }
  void finish() override {
    if (disk_) disk_->finish();
  }

  bool resumable() const override { return disk_ && disk_->resumable(); }
  bool persists(int slot) const override {
    return on_disk(slot) && disk_->persists(slot - memory_slots_);
  }
  std::vector<std::byte> saved_progress() const override {
    return disk_ ? disk_->saved_progress() : std::vector<std::byte>{};
  }
  bool adopt(int slot, Index step) override {
    return on_disk(slot) && disk_->adopt(slot - memory_slots_, step);
  }
  void save_progress(std::span<const std::byte> progress) override {
    if (disk_) disk_->save_progress(progress);
  }
  bool progress_due(bool interval_passed) override {
    return disk_ ? disk_->progress_due(interval_passed) : interval_passed;
  }
  void complete() override {
    if (disk_) disk_->complete();
  }

  SnapshotStoreStatistics statistics() const override {
    SnapshotStoreStatistics statistics = disk_ ? disk_->statistics() : SnapshotStoreStatistics{};
    if (memory_) {
      const SnapshotStoreStatistics memory = memory_->statistics();
      statistics.memory_stores = memory.memory_stores;
      statistics.memory_restores = memory.memory_restores;
      statistics.peak_memory_bytes = memory.peak_memory_bytes;
    }
    return statistics;
  }

 private:
  bool on_disk(int slot) const {
    if (slot < 0 || slot >= slots())
      detail::fail<InvalidArgument>("snapshot slot ", slot, " is outside [0, ", slots(), ")");
    return slot >= memory_slots_;
  }

  int memory_slots_;
  std::optional<MemorySnapshotStore<B, Meta>> memory_;
  std::unique_ptr<DiskSnapshotStore<B, Meta>> disk_;
};

}  // namespace rwd
