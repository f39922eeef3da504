// rewind/store/three_level_snapshot_store.hpp — device, host and disk slots addressed as one
// range, the slot convention of three-level schedules (rwd::ThreeLevelSchedule): slots
// [0, device) in the backend's memory (a GPU's device memory; host RAM for Eigen, the "simulated
// device level" of Thrust's CPP system), [device, device + host) in host memory
// (HostSnapshotStore: pinned, copies on their own CUDA stream under nvcc), and the rest in the
// HDF5 snapshot file (DiskSnapshotStore: background writes and read-ahead).
//
//   rwd::ThreeLevelSnapshotStore<B, rwd::Carry> store({.device = 4, .host = 64, .disk = 1000}, n,
//                                                     {.directory = "/scratch"});
//   store.store(2, 10, y, carry);     // device slot 2
//   store.store(5, 40, y, carry);     // host slot 1
//   store.store(70, 900, y, carry);   // disk slot 2 of the file
//
// The schedule decides the level of each snapshot; the store only routes. Before anything is
// allocated or a file created, the device and host slots are checked against what the levels
// can hold (SnapshotLevelLimits): slots that do not fit are refused with the numbers, nothing
// is left on disk.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include <unistd.h>

#include "rewind/error.hpp"
#include "rewind/format.hpp"
#include "rewind/store/disk_snapshot_store.hpp"
#include "rewind/store/host_snapshot_store.hpp"
#include "rewind/store/memory_snapshot_store.hpp"
#include "rewind/store/snapshot_store.hpp"

namespace rwd {

// The slot ranges of the three levels, and how many of the device and host slots to allocate
// (−1: all; a plan allocates only the slots its schedule uses, rwd::make_snapshot_store).
struct ThreeLevelSlots {
  int device = 0;
  int host = 0;
  int disk = 0;
  int device_allocated = -1;
  int host_allocated = -1;
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

}  // namespace detail

template <VectorBackend B, class Meta>
class ThreeLevelSnapshotStore final : public SnapshotStore<B, Meta> {
 public:
  using Vector = typename B::Vector;

  // where: the values of a state this process holds and, split across processes, the ranks
  // (rwd::process_slice; see DiskSnapshotStore).
  ThreeLevelSnapshotStore(const ThreeLevelSlots& slots, Index state_size,
                          const DiskStoreOptions& disk_options, const ProcessSlice& where,
                          const SnapshotLevelLimits& limits = {})
      : device_slots_(slots.device), host_slots_(slots.host) {
    check_fits(slots, where.slice.values(), limits);
    const int device = slots.device_allocated < 0 ? slots.device : slots.device_allocated;
    const int host = slots.host_allocated < 0 ? slots.host : slots.host_allocated;
    if (device > 0) device_.emplace(device, state_size);
    if (host > 0) host_.emplace(host, state_size, where.slice.values());
    if (slots.disk > 0)
      disk_ = std::make_unique<DiskSnapshotStore<B, Meta>>(slots.disk, where, disk_options);
    disk_slots_ = slots.disk;
  }
  ThreeLevelSnapshotStore(const ThreeLevelSlots& slots, Index state_size,
                          const DiskStoreOptions& disk_options = {},
                          const SnapshotLevelLimits& limits = {})
      : ThreeLevelSnapshotStore(slots, state_size, disk_options,
                                ProcessSlice{StateSlice::whole_state(state_size), nullptr},
                                limits) {}

  int slots() const override { return device_slots_ + host_slots_ + disk_slots_; }
  int device_slots() const { return device_slots_; }
  int host_slots() const { return host_slots_; }
  const DiskSnapshotStore<B, Meta>* disk() const { return disk_.get(); }

  void store(int slot, Index step, const Vector& state, const Meta& meta) override {
    switch (level(slot)) {
      case 0:
        return device_->store(slot, step, state, meta);
      case 1:
        return host_->store(slot - device_slots_, step, state, meta);
      default:
        return disk_->store(slot - device_slots_ - host_slots_, step, state, meta);
    }
  }
  void restore(int slot, Index step, Vector& state, Meta& meta) override {
    switch (level(slot)) {
      case 0:
        return device_->restore(slot, step, state, meta);
      case 1:
        return host_->restore(slot - device_slots_, step, state, meta);
      default:
        return disk_->restore(slot - device_slots_ - host_slots_, step, state, meta);
    }
  }
  void free(int slot) override {
    switch (level(slot)) {
      case 0:
        return device_->free(slot);
      case 1:
        return host_->free(slot - device_slots_);
      default:
        return disk_->free(slot - device_slots_ - host_slots_);
    }
  }
  void prefetch(int slot, Index step) override {
    const int at = level(slot);
    if (at == 1) host_->prefetch(slot - device_slots_, step);
    if (at == 2) disk_->prefetch(slot - device_slots_ - host_slots_, step);
  }
  void finish() override {
    if (host_) host_->finish();
    if (disk_) disk_->finish();
  }

  bool resumable() const override { return disk_ && disk_->resumable(); }
  bool persists(int slot) const override {
    return disk_ && level(slot) == 2 && disk_->persists(slot - device_slots_ - host_slots_);
  }
  std::vector<std::byte> saved_progress() const override {
    return disk_ ? disk_->saved_progress() : std::vector<std::byte>{};
  }
  bool adopt(int slot, Index step) override {
    return disk_ && level(slot) == 2 && disk_->adopt(slot - device_slots_ - host_slots_, step);
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
    if (device_) {
      const SnapshotStoreStatistics device = device_->statistics();
      statistics.memory_stores = device.memory_stores;
      statistics.memory_restores = device.memory_restores;
      statistics.peak_memory_bytes = device.peak_memory_bytes;
    }
    if (host_) {
      const SnapshotStoreStatistics host = host_->statistics();
      statistics.host_stores = host.host_stores;
      statistics.host_restores = host.host_restores;
      statistics.host_prefetches = host.host_prefetches;
      statistics.peak_host_bytes = host.peak_host_bytes;
    }
    return statistics;
  }

 private:
  // 0 device, 1 host, 2 disk; refuses a slot outside the range or one whose level has none
  // allocated.
  int level(int slot) const {
    if (slot < 0 || slot >= slots())
      detail::fail<InvalidArgument>("snapshot slot ", slot, " is outside [0, ", slots(), ")");
    const int at = slot < device_slots_ ? 0 : slot < device_slots_ + host_slots_ ? 1 : 2;
    if ((at == 0 && !device_) || (at == 1 && !host_))
      detail::fail<InvalidArgument>("snapshot slot ", slot, " is on the ",
                                    at == 0 ? "device" : "host",
                                    " level, of which no slot was allocated");
    return at;
  }

  // Every count valid, and the device and host slots within what their levels can hold.
  static void check_fits(const ThreeLevelSlots& s, Index held_values,
                         const SnapshotLevelLimits& limits) {
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
      detail::fail<InvalidArgument>("three-level snapshot store: allocating ", device,
                                    " device and ", host, " host slots of ", s.device, " and ",
                                    s.host);
    const double per = static_cast<double>(held_values) * sizeof(double) + sizeof(Meta);
    const double device_bytes = per * device, host_bytes = per * host;
    const std::optional<std::int64_t> on_device = detail::free_device_bytes<B>();
    const double host_free = static_cast<double>(detail::available_host_bytes());
    const auto refuse = [&](const char* what, int n, double need, double have, const char* limit) {
      if (need > have)
        detail::fail<InvalidArgument>("three-level snapshot store: ", n, " ", what,
                                      " snapshots of ", format_bytes(per), " need ",
                                      format_bytes(need), ", more than the ", format_bytes(have),
                                      " the ", what, " level has (", limit, ")");
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

  int device_slots_;
  int host_slots_;
  int disk_slots_ = 0;
  std::optional<MemorySnapshotStore<B, Meta>> device_;
  std::optional<HostSnapshotStore<B, Meta>> host_;
  std::unique_ptr<DiskSnapshotStore<B, Meta>> disk_;
};

}  // namespace rwd
