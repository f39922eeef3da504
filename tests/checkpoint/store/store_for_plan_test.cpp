// rwd::make_snapshot_store and rwd::make_restore_lookaheads from a plan's levels: a plan of one
// level gets that level's store alone; a plan of several gets one MultiLevelSnapshotStore whose
// levels have the plan's ranges and allocate only the slots the schedule uses; a disk level
// without a directory and device or host slots beyond their limits are refused before any file
// exists; the lookaheads cover exactly the levels outside memory, slowest first, and a whole
// three-level plan runs through the store with its prefetches.
#include "rewind/store/store_for_plan.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/carry.hpp"
#include "rewind/error.hpp"
#include "support/error_message.hpp"
#include "support/gpu_like_costs.hpp"
#include "support/scratch_directory.hpp"
#include "support/snapshot_data.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using test::ScratchDirectory;
using testing::contains;
using testing::error_message;

constexpr Index kSize = 40;

DiskStoreOptions in(const ScratchDirectory& scratch) {
  DiskStoreOptions options;
  options.directory = scratch.path();
  return options;
}

TEST(StoreForPlan, OneLevelGetsItsOwnStore) {
  EXPECT_TRUE(disk_level_linked());  // this test links rewind::disk
  const CheckpointPlan plan = plan_checkpoints(PlanRequest::revolve(6), 100);
  const auto store = make_snapshot_store<B, Carry>(plan, kSize, DiskStoreOptions{});
  using Memory = MemorySnapshotStore<B, Carry>;
  EXPECT_NE(dynamic_cast<Memory*>(store.get()), nullptr);
  EXPECT_EQ(store->slots(), plan.levels[0].slots_used);
  EXPECT_TRUE(make_restore_lookaheads(plan).empty());

  PlanRequest request = PlanRequest::revolve(6);
  request.all_on_disk = true;
  const CheckpointPlan on_disk = plan_checkpoints(request, 100);
  ScratchDirectory scratch;
  const auto disk = make_snapshot_store<B, Carry>(on_disk, kSize, in(scratch));
  using Disk = DiskSnapshotStore<B, Carry>;
  EXPECT_NE(dynamic_cast<Disk*>(disk.get()), nullptr);
  EXPECT_EQ(make_restore_lookaheads(on_disk).size(), 1u);  // the disk level is the only one
}

TEST(StoreForPlan, SeveralLevelsShareOneStoreWithThePlansRanges) {
  const CheckpointPlan plan =
      plan_checkpoints(PlanRequest::three_level(2, 4, 6, testing::gpu_like_costs()), 300);
  ASSERT_GT(plan.slots_used_on(LevelKind::disk), 0);
  ScratchDirectory scratch;
  const auto made = make_snapshot_store<B, Carry>(plan, kSize, in(scratch));
  using Levels = MultiLevelSnapshotStore<B, Carry>;
  const auto* store = dynamic_cast<Levels*>(made.get());
  ASSERT_NE(store, nullptr);
  ASSERT_EQ(store->levels(), 3);
  EXPECT_EQ(store->slots(), 12);
  for (int i = 0; i < 3; ++i) {
    const StorageLevel& level = plan.levels[static_cast<std::size_t>(i)];
    EXPECT_EQ(store->level(i).name, level.name);
    EXPECT_EQ(store->level(i).kind, level.kind);
    EXPECT_EQ(store->first_slot(i), level.first_slot);
    EXPECT_EQ(store->level(i).slots, level.slots);
    ASSERT_NE(store->level(i).store, nullptr);
    EXPECT_EQ(store->level(i).store->slots(), level.slots_used);  // only the used ones
  }
  EXPECT_EQ(scratch.files().size(), 1u);

  // Host, then disk would be fastest first; the scouts go slowest first.
  std::vector<RestoreLookahead> ahead = make_restore_lookaheads(plan);
  ASSERT_EQ(ahead.size(), 2u);

  // The whole schedule through the store: every announced fetch lies on a slow level, and every
  // level's counts are the plan's.
  const std::unique_ptr<Schedule> schedule = plan.schedule();
  B::Vector y = testing::snapshot_state(kSize, 0);
  Carry carry = testing::snapshot_carry(0);
  for (Index i = 0;; ++i) {
    for (RestoreLookahead& scout : ahead)
      if (const auto fetch = scout.before(i)) {
        EXPECT_GE(fetch->slot, plan.level(LevelKind::host)->first_slot);
        made->prefetch(fetch->slot, fetch->step);
      }
    const Action a = schedule->next();
    if (a.kind == ActionKind::done) break;
    if (a.kind == ActionKind::advance) {
      y = testing::snapshot_state(kSize, a.step);
      carry = testing::snapshot_carry(a.step);
    } else if (a.kind == ActionKind::store) {
      made->store(a.slot, a.step, y, carry);
    } else if (a.kind == ActionKind::restore) {
      made->restore(a.slot, a.step, y, carry);
      EXPECT_EQ(carry.step, a.step);
    } else if (a.kind == ActionKind::free) {
      made->free(a.slot);
    }
  }
  made->finish();
  const SnapshotStoreStatistics s = made->statistics();
  ASSERT_EQ(s.levels.size(), plan.levels.size());  // one entry per level of the plan, in order
  for (std::size_t i = 0; i < s.levels.size(); ++i) {
    EXPECT_EQ(s.levels[i].name, plan.levels[i].name);
    EXPECT_EQ(s.levels[i].kind, plan.levels[i].kind);
    EXPECT_EQ(s.levels[i].stores, plan.levels[i].stores);
    EXPECT_EQ(s.levels[i].restores, plan.levels[i].restores);
  }
  EXPECT_EQ(s.stores_on(LevelKind::memory), *plan.stores_on(LevelKind::memory));
  EXPECT_EQ(s.stores_on(LevelKind::host), *plan.stores_on(LevelKind::host));
  EXPECT_EQ(s.stores_on(LevelKind::disk), *plan.stores_on(LevelKind::disk));
  EXPECT_EQ(s.restores_on(LevelKind::memory), *plan.restores_on(LevelKind::memory));
  EXPECT_EQ(s.restores_on(LevelKind::host), *plan.restores_on(LevelKind::host));
  EXPECT_EQ(s.restores_on(LevelKind::disk), *plan.restores_on(LevelKind::disk));
  // Reads announced ahead were served by their prefetch (one may miss when both staging buffers
  // still hold writes).
  EXPECT_EQ(s.io.prefetch_hits + s.io.prefetch_misses, s.io.reads);
  EXPECT_GT(s.io.prefetch_hits, s.io.prefetch_misses);
}

TEST(StoreForPlan, RefusesWhatCannotBeHeldBeforeAnyFile) {
  CostModel costs = testing::gpu_like_costs();
  const CheckpointPlan two = plan_checkpoints(PlanRequest::two_level(2, 6, costs), 300);
  EXPECT_TRUE(contains(error_message<InvalidArgument>(
                           [&] { make_snapshot_store<B, Carry>(two, kSize, DiskStoreOptions{}); }),
                       "snapshots on disk: set the snapshot directory"));
  const CheckpointPlan three = plan_checkpoints(PlanRequest::three_level(2, 4, 6, costs), 300);
  ScratchDirectory scratch;
  SnapshotLevelLimits tiny;
  tiny.host_bytes = 10;
  const std::string message = error_message<InvalidArgument>([&] {
    make_snapshot_store<B, Carry>(three, kSize, in(scratch),
                                  ProcessSlice{StateSlice::whole_state(kSize), nullptr}, tiny);
  });
  EXPECT_TRUE(contains(message, "host snapshots of")) << message;
  EXPECT_TRUE(scratch.files().empty());
}

}  // namespace
}  // namespace rwd
