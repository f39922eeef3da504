// rewind/adjoint/detail/sweep_store.hpp — the snapshot store of a checkpointed sweep, set up from
// its plan in one place: memory slots in a MemorySnapshotStore kept from run to run while the
// slot count and state size stay the same; a plan with host or disk levels in the store its levels
// make (rwd::make_snapshot_store); the restore lookaheads that start their reads early. Internal to
// rwd::CheckpointedAdjoint.
#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/carry.hpp"
#include "rewind/error.hpp"
#include "rewind/schedule/checkpoint_plan.hpp"
#include "rewind/schedule/online_schedule.hpp"
#include "rewind/store/disk_snapshot_store.hpp"
#include "rewind/store/host_snapshot_store.hpp"
#include "rewind/store/memory_snapshot_store.hpp"
#include "rewind/store/multi_level_snapshot_store.hpp"
#include "rewind/store/restore_lookahead.hpp"
#include "rewind/store/snapshot_store.hpp"
#include "rewind/store/store_for_plan.hpp"

namespace rwd::detail {

// The memory store of the last memory-only run, kept for the next: a store of many slots
// (store-all with stages holds l·s states) costs more to allocate and first touch than the
// forward sweep that fills it, so it is allocated again only when the slots or the state size
// change — as StoreAllAdjoint keeps its stored states. Emptied (reset) before each run.
template <class B>
class MemoryStoreCache {
 public:
  MemorySnapshotStore<B, Carry>& get(int slots, Index state_size) {
    slots = std::max(slots, 1);
    if (store_ && store_->slots() == slots && store_->state_size() == state_size) {
      store_->reset();
    } else {
      store_.reset();  // the old one goes first: never both at once
      store_ = std::make_unique<MemorySnapshotStore<B, Carry>>(slots, state_size);
    }
    return *store_;
  }

 private:
  std::unique_ptr<MemorySnapshotStore<B, Carry>> store_;
};

// The store a sweep runs on, and what reads ahead of it.
template <class B>
struct SweepStore {
  std::unique_ptr<SnapshotStore<B, Carry>> own;  // a store with a host or disk level
  SnapshotStore<B, Carry>* store = nullptr;      // `own`, or the reused memory store
  // The reused memory store, whose slots stage snapshots are computed into directly.
  MemorySnapshotStore<B, Carry>* in_place = nullptr;
  // One per level outside memory, slowest first (rwd::make_restore_lookaheads).
  std::vector<RestoreLookahead> lookaheads;

  SnapshotStore<B, Carry>* operator->() const { return store; }

  // Starts the reads that action number `index` will need (call before executing it).
  void prefetch_before(Index index) {
    for (RestoreLookahead& lookahead : lookaheads)
      if (const auto fetch = lookahead.before(index)) store->prefetch(fetch->slot, fetch->step);
  }
  // Moves the lookaheads past action number `index` without prefetching (a resumed run skipping
  // the actions an earlier process did).
  void skip_before(Index index) {
    for (RestoreLookahead& lookahead : lookaheads) lookahead.before(index);
  }
};

// The store of a planned sweep: memory-only plans reuse the cached memory store, others get
// the store the plan asks for (rwd::make_snapshot_store), checked against `levels` first.
template <class B>
SweepStore<B> open_planned_store(const CheckpointPlan& plan, Index state_size,
                                 const DiskStoreOptions& disk, const ProcessSlice& slice,
                                 const SnapshotLevelLimits& levels, MemoryStoreCache<B>& memory) {
  SweepStore<B> out;
  if (!plan.level(LevelKind::host) && plan.slots_used_on(LevelKind::disk) == 0) {
    out.store = out.in_place =
        &memory.get(static_cast<int>(plan.slots_used_on(LevelKind::memory)), state_size);
  } else {
    out.own = make_snapshot_store<B, Carry>(plan, state_size, disk, slice, levels);
    out.store = out.own.get();
  }
  out.lookaheads = make_restore_lookaheads(plan);
  return out;
}

// The store of the online schedule: every snapshot in memory, or every one in the disk level
// (whose reads start ahead once the run's end is known).
template <class B>
SweepStore<B> open_online_store(const OnlineSchedule& online, bool on_disk, Index state_size,
                                const DiskStoreOptions& disk, const ProcessSlice& slice,
                                MemoryStoreCache<B>& memory) {
  SweepStore<B> out;
  if (!on_disk) {
    out.store = out.in_place = &memory.get(online.slots(), state_size);
    return out;
  }
  out.own = make_level_store<B, Carry>(LevelKind::disk, online.slots(), state_size, disk, slice);
  out.store = out.own.get();
  return out;
}

}  // namespace rwd::detail

// The stores of the Eigen backend, which most programs run on, are compiled once, in
// rewind::adjoint (src/adjoint/src/eigen_sweep_store.cpp), instead of in every program that
// instantiates a checkpointed driver: only where the code is compiled changes, not what it does.
namespace rwd {
extern template class MemorySnapshotStore<EigenBackend, Carry>;
extern template class HostSnapshotStore<EigenBackend, Carry>;
extern template class DiskSnapshotStore<EigenBackend, Carry>;
extern template class MultiLevelSnapshotStore<EigenBackend, Carry>;
extern template std::unique_ptr<SnapshotStore<EigenBackend, Carry>>
make_level_store<EigenBackend, Carry>(LevelKind, int, Index, const DiskStoreOptions&,
                                      const ProcessSlice&);
extern template std::unique_ptr<SnapshotStore<EigenBackend, Carry>>
make_snapshot_store<EigenBackend, Carry>(const CheckpointPlan&, Index, const DiskStoreOptions&,
                                         const ProcessSlice&, const SnapshotLevelLimits&);
namespace detail {
extern template class MemoryStoreCache<EigenBackend>;
extern template struct SweepStore<EigenBackend>;
extern template SweepStore<EigenBackend> open_planned_store<EigenBackend>(
    const CheckpointPlan&, Index, const DiskStoreOptions&, const ProcessSlice&,
    const SnapshotLevelLimits&, MemoryStoreCache<EigenBackend>&);
extern template SweepStore<EigenBackend> open_online_store<EigenBackend>(
    const OnlineSchedule&, bool, Index, const DiskStoreOptions&, const ProcessSlice&,
    MemoryStoreCache<EigenBackend>&);
}  // namespace detail
}  // namespace rwd
