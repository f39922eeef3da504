// rewind/store/multi_level_snapshot_store.hpp — one snapshot store over a list of storage levels,
// addressed as one slot range: level i holds the slots [first_slot(i), first_slot(i) + slots),
// the levels following each other fastest first, as a schedule numbers them
// (rwd::CheckpointPlan::levels, rewind/schedule/storage_level.hpp).
//
//   std::vector<rwd::SnapshotLevel<B, rwd::Carry>> levels;
//   levels.push_back({"memory", rwd::LevelKind::memory, 4,
//                     std::make_unique<rwd::MemorySnapshotStore<B, rwd::Carry>>(4, n)});
//   levels.push_back({"disk", rwd::LevelKind::disk, 100,
//                     std::make_unique<rwd::DiskSnapshotStore<B, rwd::Carry>>(100, n, disk)});
//   rwd::MultiLevelSnapshotStore<B, rwd::Carry> store(std::move(levels));
//   store.store(2, 10, y, carry);     // memory slot 2
//   store.store(4, 500, y, carry);    // disk slot 0 of the file
//
// The schedule decides the level of each snapshot; the store only routes: a slot goes to the
// level whose range holds it, at its offset in that range. A level's store may hold fewer slots
// than its range (only those the schedule uses are allocated) or none at all (no slot used);
// a slot past them is refused with the level's name. Prefetches reach every level (the fast ones
// ignore them). A run's progress (resumable runs, rewind/store/snapshot_store.hpp) is kept by the
// slowest level that has a store: the disk, when there is one. Statistics have one entry per
// level, in order and under the level's name (zero for a level with no store).
//
// rwd::make_snapshot_store builds one from a plan's levels; memory_and_disk_store and
// device_host_disk_store (below) build the two- and three-level layouts by hand.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "rewind/error.hpp"
#include "rewind/format.hpp"
#include "rewind/schedule/storage_level.hpp"
#include "rewind/store/disk_snapshot_store.hpp"
#include "rewind/store/host_snapshot_store.hpp"
#include "rewind/store/memory_snapshot_store.hpp"
#include "rewind/store/snapshot_store.hpp"

namespace rwd {

// One level of a MultiLevelSnapshotStore: its part of the slot range and the store serving it.
template <VectorBackend B, class Meta>
struct SnapshotLevel {
  std::string name;                               // for messages ("memory", "device", "host", …)
  LevelKind kind = LevelKind::memory;             // what kind of store serves it
  int slots = 0;                                  // its part of the slot range
  std::unique_ptr<SnapshotStore<B, Meta>> store;  // its first store->slots() slots; null: none
};

template <VectorBackend B, class Meta>
class MultiLevelSnapshotStore final : public SnapshotStore<B, Meta> {
 public:
  using Vector = typename B::Vector;
  using Level = SnapshotLevel<B, Meta>;

  // Refuses a level with a negative slot count, a store holding more slots than its level's
  // range, and a store of no slot at all.
  explicit MultiLevelSnapshotStore(std::vector<Level> levels) : levels_(std::move(levels)) {
    int first = 0;
    for (const Level& level : levels_) {
      if (level.slots < 0)
        detail::fail<InvalidArgument>("multi-level snapshot store: ", level.slots, " ", level.name,
                                      " slots (need >= 0)");
      if (level.store && level.store->slots() > level.slots)
        detail::fail<InvalidArgument>("multi-level snapshot store: the ", level.name,
                                      " level's store holds ", level.store->slots(),
                                      " slots, more than its ", level.slots);
      first_slots_.push_back(first);
      first += level.slots;
    }
    slots_ = first;
    if (slots_ < 1)
      detail::fail<InvalidArgument>("multi-level snapshot store: no slot on any of its ",
                                    levels_.size(), " levels");
    for (std::size_t i = levels_.size(); i-- > 0;)
      if (levels_[i].store) {
        progress_ = levels_[i].store.get();
        break;
      }
  }

  int slots() const override { return slots_; }
  int levels() const { return static_cast<int>(levels_.size()); }
  const Level& level(int i) const { return levels_.at(static_cast<std::size_t>(i)); }
  int first_slot(int i) const { return first_slots_.at(static_cast<std::size_t>(i)); }
  // The store of the first level of `kind`, or nullptr (none, or none allocated).
  const SnapshotStore<B, Meta>* store_of(LevelKind kind) const {
    for (const Level& level : levels_)
      if (level.kind == kind) return level.store.get();
    return nullptr;
  }

  void store(int slot, Index step, const Vector& state, const Meta& meta) override {
    const Route at = route(slot);
    at.store->store(at.slot, step, state, meta);
  }
  void restore(int slot, Index step, Vector& state, Meta& meta) override {
    const Route at = route(slot);
    at.store->restore(at.slot, step, state, meta);
  }
  void free(int slot) override {
    const Route at = route(slot);
    at.store->free(at.slot);
  }
  void prefetch(int slot, Index step) override {
    const Route at = route(slot);
    at.store->prefetch(at.slot, step);
  }
  void finish() override {
    for (Level& level : levels_)
      if (level.store) level.store->finish();
  }

  bool resumable() const override { return progress_ && progress_->resumable(); }
  bool persists(int slot) const override {
    const Route at = route(slot);
    return at.store->persists(at.slot);
  }
  std::vector<std::byte> saved_progress() const override {
    return progress_ ? progress_->saved_progress() : std::vector<std::byte>{};
  }
  bool adopt(int slot, Index step) override {
    const Route at = route(slot);
    return at.store->adopt(at.slot, step);
  }
  void save_progress(std::span<const std::byte> progress) override {
    if (progress_) progress_->save_progress(progress);
  }
  bool progress_due(bool interval_passed) override {
    return progress_ ? progress_->progress_due(interval_passed) : interval_passed;
  }
  void complete() override {
    if (progress_) progress_->complete();
  }

  // One entry per level, fastest first, each named as its level; the file and its I/O are the
  // disk level's.
  SnapshotStoreStatistics statistics() const override {
    SnapshotStoreStatistics total;
    for (const Level& level : levels_) {
      if (!level.store) {
        total.levels.push_back(LevelStatistics{level.name, level.kind});
        continue;
      }
      SnapshotStoreStatistics one = level.store->statistics();
      if (one.levels.size() == 1) one.levels.front().name = level.name;
      total.levels.insert(total.levels.end(), one.levels.begin(), one.levels.end());
      if (total.file.empty()) {
        total.file = one.file;
        total.asynchronous = one.asynchronous;
        total.io = one.io;
      }
    }
    return total;
  }

 private:
  struct Route {
    SnapshotStore<B, Meta>* store;
    int slot;  // in the level's store
  };

  // The level store and local slot of `slot`; refuses one outside the range, and one on a level
  // of which no slot was allocated.
  Route route(int slot) const {
    if (slot < 0 || slot >= slots_)
      detail::fail<InvalidArgument>("snapshot slot ", slot, " is outside [0, ", slots_, ")");
    std::size_t i = levels_.size() - 1;
    while (slot < first_slots_[i]) --i;
    const Level& level = levels_[i];
    if (!level.store)
      detail::fail<InvalidArgument>("snapshot slot ", slot, " is on the ", level.name,
                                    " level, of which no slot was allocated");
    return Route{level.store.get(), slot - first_slots_[i]};
  }

  std::vector<Level> levels_;
  std::vector<int> first_slots_;
  int slots_ = 0;
  SnapshotStore<B, Meta>* progress_ = nullptr;  // the slowest level with a store
};

// Bytes the device and host levels may take; 0: what the machine has free now (the device:
// cudaMemGetInfo for CUDA vectors, else — a simulated device — the same host memory as the host
// level: then the two levels together must fit in it).
struct SnapshotLevelLimits {
  std::int64_t device_bytes = 0;
  std::int64_t host_bytes = 0;
};

namespace detail {

inline std::int64_t available_host_bytes() {
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::int64_t>(pages) * page : INT64_MAX;
}

// Free device memory for a backend whose vectors are CUDA device memory; nullopt otherwise.
template <VectorBackend B>
std::optional<std::int64_t> free_device_bytes() {
#if defined(__CUDACC__) && THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
  if constexpr (std::is_same_v<typename B::Vector, thrust::device_vector<double>>) {
    std::size_t free = 0, total = 0;
    cuda_check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    return static_cast<std::int64_t>(free);
  }
#endif
  return std::nullopt;
}

// Refuses `device` device-level and `host` host-level snapshots of `held_values` values (and a
// Meta each) that do not fit in what the levels can hold (`limits`, else the free memory now),
// naming the numbers.
template <VectorBackend B, class Meta>
void check_levels_fit(int device, int host, Index held_values, const SnapshotLevelLimits& limits) {
  const double per = static_cast<double>(held_values) * sizeof(double) + sizeof(Meta);
  const double device_bytes = per * device, host_bytes = per * host;
  const std::optional<std::int64_t> on_device = free_device_bytes<B>();
  const double host_free = static_cast<double>(available_host_bytes());
  const auto refuse = [&](const char* what, int n, double need, double have, const char* limit) {
    if (need > have)
      fail<InvalidArgument>("three-level snapshot store: ", n, " ", what, " snapshots of ",
                            format_bytes(per), " need ", format_bytes(need), ", more than the ",
                            format_bytes(have), " the ", what, " level has (", limit, ")");
  };
  refuse("device", device, device_bytes,
         limits.device_bytes > 0 ? static_cast<double>(limits.device_bytes)
         : on_device             ? static_cast<double>(*on_device)
                                 : host_free,
         limits.device_bytes > 0 ? "SnapshotLevelLimits::device_bytes" : "free memory now");
  refuse("host", host, host_bytes,
         limits.host_bytes > 0 ? static_cast<double>(limits.host_bytes) : host_free,
         limits.host_bytes > 0 ? "SnapshotLevelLimits::host_bytes" : "free memory now");
  if (!on_device && limits.device_bytes == 0 && limits.host_bytes == 0)
    refuse("device and host", device + host, device_bytes + host_bytes, host_free,
           "one host memory holds both here");
}

}  // namespace detail

// The store of one level: `allocated` slots of the level's kind (none when 0). where: the values
// of a state this process holds and, split across processes, the ranks (rwd::process_slice).
template <VectorBackend B, class Meta>
std::unique_ptr<SnapshotStore<B, Meta>> make_level_store(LevelKind kind, int allocated,
                                                         Index state_size,
                                                         const DiskStoreOptions& disk_options,
                                                         const ProcessSlice& where) {
  if (allocated <= 0) return nullptr;
  switch (kind) {
    case LevelKind::memory:
      return std::make_unique<MemorySnapshotStore<B, Meta>>(allocated, state_size);
    case LevelKind::host:
      return std::make_unique<HostSnapshotStore<B, Meta>>(allocated, state_size,
                                                          where.slice.values());
    case LevelKind::disk:
      return std::make_unique<DiskSnapshotStore<B, Meta>>(allocated, where, disk_options);
  }
  return nullptr;
}

// Memory slots [0, memory) in front of disk slots [memory, memory + disk) of one HDF5 file, the
// slot convention of two-level schedules (rwd::MultiLevelSchedule). With no disk slots no file is
// made and no directory needed. held_values: the values of a state this process writes to disk
// (−1: state_size).
template <VectorBackend B, class Meta>
MultiLevelSnapshotStore<B, Meta> memory_and_disk_store(int memory, int disk, Index state_size,
                                                       const DiskStoreOptions& disk_options,
                                                       Index held_values = -1) {
  if (memory < 0 || disk < 0 || memory + disk < 1)
    detail::fail<InvalidArgument>("two-level snapshot store: ", memory, " memory and ", disk,
                                  " disk slots (need >= 0 each, >= 1 in all)");
  const ProcessSlice where{StateSlice::whole_state(held_values < 0 ? state_size : held_values),
                           nullptr};
  std::vector<SnapshotLevel<B, Meta>> levels;
  levels.push_back(
      {"memory", LevelKind::memory, memory,
       make_level_store<B, Meta>(LevelKind::memory, memory, state_size, disk_options, where)});
  levels.push_back(
      {"disk", LevelKind::disk, disk,
       make_level_store<B, Meta>(LevelKind::disk, disk, state_size, disk_options, where)});
  return MultiLevelSnapshotStore<B, Meta>(std::move(levels));
}

// The slot ranges of the three levels of device_host_disk_store, and how many of the device and
// host slots to allocate (−1: all).
struct ThreeLevelSlots {
  int device = 0;
  int host = 0;
  int disk = 0;
  int device_allocated = -1;
  int host_allocated = -1;
};

// Device slots [0, device) in the backend's memory (a GPU's device memory; host RAM for Eigen,
// the "simulated device level" of Thrust's CPP system), [device, device + host) in host memory
// (HostSnapshotStore: pinned, copies on their own CUDA stream under nvcc), the rest in the HDF5
// snapshot file: the slot convention of rwd::ThreeLevelSchedule. Before anything is allocated or
// a file created, every count is checked and the device and host slots against what their levels
// can hold (`limits`): slots that do not fit are refused with the numbers, nothing is left on
// disk.
template <VectorBackend B, class Meta>
MultiLevelSnapshotStore<B, Meta> device_host_disk_store(const ThreeLevelSlots& s, Index state_size,
                                                        const DiskStoreOptions& disk_options,
                                                        const ProcessSlice& where,
                                                        const SnapshotLevelLimits& limits = {}) {
  const auto count = [](const char* what, int n) {
    if (n < 0)
      detail::fail<InvalidArgument>("three-level snapshot store: ", n, " ", what,
                                    " slots (need >= 0)");
  };
  count("device", s.device);
  count("host", s.host);
  count("disk", s.disk);
  if (s.device + s.host < 1)
    detail::fail<InvalidArgument>("three-level snapshot store: no device and no host slots (",
                                  s.disk, " on disk): the state being replayed needs one");
  const int device = s.device_allocated < 0 ? s.device : s.device_allocated;
  const int host = s.host_allocated < 0 ? s.host : s.host_allocated;
  if (device > s.device || host > s.host)
    detail::fail<InvalidArgument>("three-level snapshot store: allocating ", device, " device and ",
                                  host, " host slots of ", s.device, " and ", s.host);
  detail::check_levels_fit<B, Meta>(device, host, where.slice.values(), limits);
  std::vector<SnapshotLevel<B, Meta>> levels;
  levels.push_back(
      {"device", LevelKind::memory, s.device,
       make_level_store<B, Meta>(LevelKind::memory, device, state_size, disk_options, where)});
  levels.push_back(
      {"host", LevelKind::host, s.host,
       make_level_store<B, Meta>(LevelKind::host, host, state_size, disk_options, where)});
  levels.push_back(
      {"disk", LevelKind::disk, s.disk,
       make_level_store<B, Meta>(LevelKind::disk, s.disk, state_size, disk_options, where)});
  return MultiLevelSnapshotStore<B, Meta>(std::move(levels));
}

// The same for a state this process holds whole.
template <VectorBackend B, class Meta>
MultiLevelSnapshotStore<B, Meta> device_host_disk_store(const ThreeLevelSlots& slots,
                                                        Index state_size,
                                                        const DiskStoreOptions& disk_options = {},
                                                        const SnapshotLevelLimits& limits = {}) {
  return device_host_disk_store<B, Meta>(slots, state_size, disk_options,
                                         ProcessSlice{StateSlice::whole_state(state_size), nullptr},
                                         limits);
}

}  // namespace rwd
