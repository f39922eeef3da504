// rewind/store/memory_snapshot_store.hpp — snapshots in the backend's own memory (host RAM
// for Eigen, device memory for Thrust/CUDA), in slots allocated once, up front.
//
//   rwd::MemorySnapshotStore<rwd::EigenBackend, MyMeta> store(/*slots=*/20, /*state size=*/n);
//   store.store(3, /*step=*/17, y, meta);     // copy y_17 and its metadata into slot 3
//   store.restore(3, /*step=*/17, y, meta);   // and back
//   store.free(3);
//
// A snapshot is a state vector, its step and a small trivially copyable metadata record (the
// adjoint driver stores the integrator's carry there; this folder knows nothing about what it
// means). No allocation happens after construction, so a reverse sweep never touches the heap.
// Misuse — an out-of-range slot, storing into an occupied slot, restoring an empty one or the
// wrong step, a state of the wrong size — is an error, never a silent overwrite.
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "rewind/backend/backend.hpp"
#include "rewind/error.hpp"
#include "rewind/store/snapshot_slots.hpp"
#include "rewind/store/snapshot_store.hpp"
#include "rewind/types.hpp"

namespace rwd {

template <VectorBackend B, class Meta>
class MemorySnapshotStore final : public SnapshotStore<B, Meta> {
  static_assert(std::is_trivially_copyable_v<Meta>, "snapshot metadata must be trivially copyable");

 public:
  using Vector = typename B::Vector;

  MemorySnapshotStore(int slots, Index state_size)
      : state_size_(state_size), slots_(validated(slots, state_size), "snapshot slot") {
    states_.reserve(static_cast<std::size_t>(slots));
    for (int s = 0; s < slots; ++s) states_.push_back(B::zeros(state_size));
    meta_.resize(static_cast<std::size_t>(slots));
    // The values this process holds per snapshot (a rank's own rows on a backend split across
    // processes): what the byte counts report.
    held_values_ = states_.empty() ? state_size : host_size<B>(states_.front());
  }

  // Empties every slot and zeroes the statistics, keeping the memory: a driver that runs again
  // with the same slots reuses its store instead of allocating (and first touching) it anew.
  void reset() { slots_.reset(); }

  int slots() const override { return slots_.size(); }
  Index state_size() const { return state_size_; }
  bool occupied(int slot) const { return slots_.occupied(slot); }
  int slots_in_use() const { return slots_.in_use(); }
  int peak_slots_in_use() const { return slots_.peak_in_use(); }
  // Bytes this process holds for one snapshot: its values of the state and the metadata.
  std::int64_t bytes_per_snapshot() const {
    return held_values_ * static_cast<std::int64_t>(sizeof(double)) +
           static_cast<std::int64_t>(sizeof(Meta));
  }
  std::int64_t peak_bytes() const { return slots_.peak_in_use() * bytes_per_snapshot(); }
  // Memory reserved by the store (every slot is allocated up front).
  std::int64_t reserved_bytes() const { return slots() * bytes_per_snapshot(); }

  void store(int slot, Index step, const Vector& state, const Meta& meta) override {
    const std::size_t s = slots_.check_store(slot, step);
    if (step < 0) detail::fail<InvalidArgument>("snapshot of step ", step, " < 0");
    if (B::size(state) != state_size_)
      detail::fail<InvalidArgument>("snapshot of ", B::size(state), " values for a store of size ",
                                    state_size_);
    B::copy(state, states_[s]);
    meta_[s] = meta;
    slots_.stored(s, step);
  }

  void restore(int slot, Index step, Vector& state, Meta& meta) override {
    const std::size_t s = slots_.check_restore(slot, step);
    B::copy(states_[s], state);
    meta = meta_[s];
    slots_.restored();
  }

  void free(int slot) override { slots_.freed(slots_.check_free(slot)); }

  // In place, for values a caller writes straight into the store (the adjoint driver's stage
  // snapshots: a step's stage values are written where they are kept, and read from there by
  // its reverse step — no copy by the store on either side, with the same checks as store and
  // restore).
  //
  // The vectors of the `count` slots from `first`, each free (checked); fill them, then record
  // each with stored_in_place.
  std::span<Vector> free_slots_for_writing(int first, int count, Index step) {
    check_run(first, count);
    for (int i = 0; i < count; ++i) slots_.check_store(first + i, step);
    return std::span<Vector>(states_.data() + first, static_cast<std::size_t>(count));
  }
  // Records that slot `slot`, filled through free_slots_for_writing, now holds y_step's values.
  void stored_in_place(int slot, Index step, const Meta& meta) {
    const std::size_t s = slots_.check_store(slot, step);
    if (step < 0) detail::fail<InvalidArgument>("snapshot of step ", step, " < 0");
    meta_[s] = meta;
    slots_.stored(s, step);
  }
  // The vectors of the `count` slots from `first`, each holding y_step (checked, each counted as
  // a restore); `meta` gets the first one's metadata. Valid until those slots are freed.
  std::span<const Vector> held_slots(int first, int count, Index step, Meta& meta) {
    check_run(first, count);
    for (int i = 0; i < count; ++i) {
      slots_.check_restore(first + i, step);
      slots_.restored();
    }
    meta = meta_[static_cast<std::size_t>(first)];
    return std::span<const Vector>(states_.data() + first, static_cast<std::size_t>(count));
  }

  SnapshotStoreStatistics statistics() const override {
    SnapshotStoreStatistics statistics;
    LevelStatistics& memory = statistics.level_entry(LevelKind::memory);
    memory.stores = slots_.stores();
    memory.restores = slots_.restores();
    memory.peak_bytes = peak_bytes();
    return statistics;
  }

 private:
  // The slot count, once it and the state size are known to be valid.
  static int validated(int slots, Index state_size) {
    if (slots < 1) detail::fail<InvalidArgument>("snapshot store needs >= 1 slot, got ", slots);
    if (state_size < 0) detail::fail<InvalidArgument>("state size ", state_size, " must be >= 0");
    return slots;
  }

  void check_run(int first, int count) const {
    if (count < 1 || first < 0 || first > slots() - count)
      detail::fail<InvalidArgument>("snapshot slots [", first, ", ", first + count,
                                    ") are not all in [0, ", slots(), ")");
  }

  Index state_size_;
  Index held_values_ = 0;
  detail::SnapshotSlots slots_;
  std::vector<Vector> states_;
  std::vector<Meta> meta_;
};

}  // namespace rwd
