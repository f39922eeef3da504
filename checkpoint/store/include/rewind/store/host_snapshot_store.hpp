// rewind/store/host_snapshot_store.hpp — snapshots in host memory, for a backend whose vectors
// may live elsewhere (a GPU): the host level of a MultiLevelSnapshotStore, between the device
// level and the disk.
//
//   rwd::HostSnapshotStore<rwd::ThrustBackend, MyMeta> store(/*slots=*/64, /*state size=*/n);
//   store.store(3, /*step=*/17, y, meta);   // y_17 copied out to host slot 3
//   store.prefetch(3, 17);                   // the restore below will want it: start the copy
//   store.restore(3, 17, y, meta);           // and back into the backend's vector
//
// Slots are one host allocation made up front (B::copy_to_host / B::copy_from_host move the
// values; a rank's own rows on a backend split across processes). Compiled by nvcc for the CUDA
// Thrust backend the allocation is pinned (cudaHostAlloc), and copies run on the store's own
// CUDA stream: a store copies the state into a device staging buffer (a device-to-device copy on
// the compute stream) and the PCIe copy to the host slot runs behind the computation that
// follows; prefetch starts the copy of a host slot into a device buffer ahead of its restore,
// which then only waits for it (events order each copy against the compute stream). Everywhere
// else the copies are synchronous, the same structure with nothing to overlap. Misuse is refused
// as in MemorySnapshotStore; a failed CUDA call is an rwd::StorageError.
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "rewind/backend/backend.hpp"
#include "rewind/error.hpp"
#include "rewind/store/host_copy_stream.hpp"
#include "rewind/store/snapshot_slots.hpp"
#include "rewind/store/snapshot_store.hpp"
#include "rewind/types.hpp"

namespace rwd {

template <VectorBackend B, class Meta>
class HostSnapshotStore final : public SnapshotStore<B, Meta> {
  static_assert(std::is_trivially_copyable_v<Meta>, "snapshot metadata must be trivially copyable");

 public:
  using Vector = typename B::Vector;

  // held_values: the values of a state this process holds (rwd::host_size; −1: state_size).
  HostSnapshotStore(int slots, Index state_size, Index held_values = -1)
      : state_size_(state_size),
        held_(held_values < 0 ? state_size : held_values),
        slots_(validated(slots, state_size), "host snapshot slot"),
        meta_(static_cast<std::size_t>(slots)),
        copies_(slots, held_, state_size) {}

  int slots() const override { return slots_.size(); }
  bool occupied(int slot) const { return slots_.occupied(slot); }
  std::int64_t bytes_per_snapshot() const {
    return held_ * static_cast<std::int64_t>(sizeof(double)) +
           static_cast<std::int64_t>(sizeof(Meta));
  }
  // Whether copies overlap compute (pinned memory, own CUDA stream).
  static constexpr bool asynchronous() { return detail::HostCopyStream<B>::asynchronous; }

  void store(int slot, Index step, const Vector& state, const Meta& meta) override {
    const std::size_t s = slots_.check_store(slot, step);
    if (step < 0) detail::fail<InvalidArgument>("snapshot of step ", step, " < 0");
    if (B::size(state) != state_size_)
      detail::fail<InvalidArgument>("snapshot of ", B::size(state), " values for a store of size ",
                                    state_size_);
    copies_.to_host(state, s);
    meta_[s] = meta;
    slots_.stored(s, step);
  }

  void restore(int slot, Index step, Vector& state, Meta& meta) override {
    const std::size_t s = slots_.check_restore(slot, step);
    copies_.from_host(s, state);
    meta = meta_[s];
    slots_.restored();
  }

  void free(int slot) override { slots_.freed(slots_.check_free(slot)); }

  void prefetch(int slot, Index step) override {
    if (slot < 0 || slot >= slots() || !slots_.holds(slot, step)) return;  // a hint only
    copies_.prefetch(static_cast<std::size_t>(slot));
  }

  void finish() override { copies_.synchronize(); }

  SnapshotStoreStatistics statistics() const override {
    SnapshotStoreStatistics statistics;
    LevelStatistics& host = statistics.level_entry(LevelKind::host);
    host.stores = slots_.stores();
    host.restores = slots_.restores();
    host.peak_bytes = slots_.peak_in_use() * bytes_per_snapshot();
    host.prefetches = copies_.prefetch_hits();
    return statistics;
  }

 private:
  static int validated(int slots, Index state_size) {
    if (slots < 1)
      detail::fail<InvalidArgument>("host snapshot store needs >= 1 slot, got ", slots);
    if (state_size < 0) detail::fail<InvalidArgument>("state size ", state_size, " must be >= 0");
    return slots;
  }

  Index state_size_;
  Index held_;
  detail::SnapshotSlots slots_;
  std::vector<Meta> meta_;
  detail::HostCopyStream<B> copies_;
};

}  // namespace rwd
