// A MultiLevelSnapshotStore of memory and disk (rwd::memory_and_disk_store, the two-level
// layout): slots below the memory slots go to memory, the others to disk slot
// (slot − memory slots) of one file (checked in the kept file), both come back bit for bit and
// are counted per level; without disk slots no file is made and no directory is needed; a
// prefetch reaches the disk level only; misuse is an InvalidArgument on either level; and a real
// two-level schedule (MultiLevelSchedule) runs through it with exactly the stores, restores and
// peak bytes per level that a replay of its action stream predicts.
#include "rewind/store/multi_level_snapshot_store.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/carry.hpp"
#include "rewind/disk/hdf5_snapshot_file.hpp"
#include "rewind/error.hpp"
#include "rewind/schedule/multilevel_schedule.hpp"
#include "support/error_message.hpp"
#include "support/scratch_directory.hpp"
#include "support/snapshot_data.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Store = MultiLevelSnapshotStore<B, Carry>;

Store tiered(int memory, int disk, Index size, const DiskStoreOptions& options) {
  return memory_and_disk_store<B, Carry>(memory, disk, size, options);
}
using test::ScratchDirectory;
using testing::contains;
using testing::error_message;
using testing::same_bits;

constexpr Index kSize = 200;
constexpr std::int64_t kBytes = kSize * 8 + static_cast<std::int64_t>(sizeof(Carry));

B::Vector state_of(Index step) {
  return testing::snapshot_state(kSize, step);
}
Carry carry_of(Index step) {
  return testing::snapshot_carry(step);
}

void expect_snapshot(Store& store, int slot, Index step) {
  testing::expect_snapshot(store, slot, step, kSize);
}

DiskStoreOptions in(const std::filesystem::path& directory) {
  DiskStoreOptions options;
  options.directory = directory;
  return options;
}

TEST(MemoryAndDiskStore, RoutesSlotsByLevel) {
  ScratchDirectory scratch;
  DiskStoreOptions kept;
  kept.file = scratch / "tiered.h5";
  kept.keep_file = true;
  {
    Store store = tiered(2, 3, kSize, kept);
    EXPECT_EQ(store.slots(), 5);
    ASSERT_EQ(store.levels(), 2);
    EXPECT_EQ(store.level(0).name, "memory");
    EXPECT_EQ(store.level(0).slots, 2);
    EXPECT_EQ(store.first_slot(1), 2);
    ASSERT_NE(store.store_of(LevelKind::disk), nullptr);
    EXPECT_EQ(store.store_of(LevelKind::disk)->slots(), 3);
    for (int slot = 0; slot < 5; ++slot)
      store.store(slot, 100 + slot, state_of(100 + slot), carry_of(100 + slot));
    for (int slot : {4, 1, 2, 0, 3}) expect_snapshot(store, slot, 100 + slot);
    expect_snapshot(store, 3, 103);
    store.finish();
    const SnapshotStoreStatistics statistics = store.statistics();
    EXPECT_EQ(statistics.stores_on(LevelKind::memory), 2);
    EXPECT_EQ(statistics.restores_on(LevelKind::memory), 2);
    EXPECT_EQ(statistics.stores_on(LevelKind::disk), 3);
    EXPECT_EQ(statistics.restores_on(LevelKind::disk), 4);
    EXPECT_EQ(statistics.peak_bytes_on(LevelKind::memory), 2 * kBytes);
    EXPECT_EQ(statistics.peak_bytes_on(LevelKind::disk), 3 * kBytes);
    EXPECT_EQ(statistics.file, (scratch / "tiered.h5").string());
    EXPECT_TRUE(statistics.asynchronous);
    EXPECT_EQ(statistics.io.writes, 3);
    EXPECT_EQ(statistics.io.reads, 4);
  }
  // Slot 2 + k of the store is slot k of the file; memory snapshots never reach it.
  auto file = Hdf5SnapshotFile::open(scratch / "tiered.h5");
  ASSERT_EQ(file.slots(), 3);
  std::vector<double> state(kSize);
  std::vector<std::byte> meta(sizeof(Carry));
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(file.record(k).step, 102 + k);
    file.read(k, 102 + k, state, meta);
    const B::Vector expected = state_of(102 + k);
    EXPECT_EQ(std::memcmp(state.data(), expected.data(), sizeof(double) * kSize), 0);
    const Carry carry = carry_of(102 + k);
    EXPECT_EQ(std::memcmp(meta.data(), &carry, sizeof(Carry)), 0);
  }
}

TEST(MemoryAndDiskStore, WithoutDiskSlotsMakesNoFile) {
  ScratchDirectory scratch;
  Store store = tiered(3, 0, kSize, in(scratch.path()));
  EXPECT_EQ(store.slots(), 3);
  EXPECT_EQ(store.store_of(LevelKind::disk), nullptr);
  EXPECT_TRUE(scratch.files().empty());
  for (int slot = 0; slot < 3; ++slot) store.store(slot, slot, state_of(slot), carry_of(slot));
  store.prefetch(1, 1);
  expect_snapshot(store, 1, 1);
  store.free(1);
  store.finish();
  const SnapshotStoreStatistics statistics = store.statistics();
  EXPECT_EQ(statistics.stores_on(LevelKind::memory), 3);
  EXPECT_EQ(statistics.restores_on(LevelKind::memory), 1);
  EXPECT_EQ(statistics.peak_bytes_on(LevelKind::memory), 3 * kBytes);
  ASSERT_EQ(statistics.levels.size(), 2u);  // the disk level is there, with nothing on it
  EXPECT_EQ(statistics.levels[1].name, "disk");
  EXPECT_EQ(statistics.stores_on(LevelKind::disk), 0);
  EXPECT_EQ(statistics.peak_bytes_on(LevelKind::disk), 0);
  EXPECT_EQ(statistics.file, "");
  EXPECT_FALSE(statistics.asynchronous);
  EXPECT_EQ(statistics.io.staging_bytes, 0);
  EXPECT_TRUE(scratch.files().empty());
  // No disk level, so no directory is needed either.
  Store no_directory = tiered(2, 0, kSize, DiskStoreOptions{});
  no_directory.store(0, 4, state_of(4), carry_of(4));
  expect_snapshot(no_directory, 0, 4);
}

TEST(MemoryAndDiskStore, WithoutMemorySlotsEverythingIsOnDisk) {
  ScratchDirectory scratch;
  {
    Store store = tiered(0, 2, kSize, in(scratch.path()));
    EXPECT_EQ(store.slots(), 2);
    EXPECT_EQ(store.level(0).slots, 0);
    EXPECT_EQ(store.store_of(LevelKind::memory), nullptr);
    const auto* disk =
        dynamic_cast<const DiskSnapshotStore<B, Carry>*>(store.store_of(LevelKind::disk));
    ASSERT_NE(disk, nullptr);
    EXPECT_EQ(scratch.files().size(), 1u);
    EXPECT_EQ(scratch.files()[0], disk->path());
    store.store(0, 3, state_of(3), carry_of(3));
    store.store(1, 4, state_of(4), carry_of(4));
    expect_snapshot(store, 0, 3);
    store.finish();
    const SnapshotStoreStatistics statistics = store.statistics();
    EXPECT_EQ(statistics.stores_on(LevelKind::memory), 0);
    EXPECT_EQ(statistics.restores_on(LevelKind::memory), 0);
    EXPECT_EQ(statistics.peak_bytes_on(LevelKind::memory), 0);
    EXPECT_EQ(statistics.stores_on(LevelKind::disk), 2);
    EXPECT_EQ(statistics.restores_on(LevelKind::disk), 1);
    EXPECT_EQ(statistics.peak_bytes_on(LevelKind::disk), 2 * kBytes);
  }
  EXPECT_TRUE(scratch.files().empty());
}

TEST(MemoryAndDiskStore, PrefetchReachesTheDiskLevelOnly) {
  ScratchDirectory scratch;
  Store store = tiered(1, 2, kSize, in(scratch.path()));
  for (int slot = 0; slot < 3; ++slot)
    store.store(slot, 10 + slot, state_of(10 + slot), carry_of(10 + slot));
  store.finish();         // both staging buffers free
  store.prefetch(0, 10);  // memory: nothing to read
  EXPECT_EQ(store.statistics().io.reads, 0);
  expect_snapshot(store, 0, 10);
  store.prefetch(2, 12);  // disk slot 1
  expect_snapshot(store, 2, 12);
  const SnapshotIoStatistics io = store.statistics().io;
  EXPECT_EQ(io.prefetch_hits, 1);
  EXPECT_EQ(io.prefetch_misses, 0);
  EXPECT_EQ(io.reads, 1);
}

TEST(MemoryAndDiskStore, MisuseIsRefusedOnBothLevels) {
  ScratchDirectory scratch;
  Store store = tiered(2, 3, kSize, in(scratch.path()));
  B::Vector y = state_of(1);
  Carry carry = carry_of(1);
  for (int slot : {-1, 5}) {
    const std::string expected = "snapshot slot " + std::to_string(slot) + " is outside [0, 5)";
    EXPECT_EQ(error_message<InvalidArgument>([&] { store.store(slot, 1, y, carry); }), expected);
    EXPECT_EQ(error_message<InvalidArgument>([&] { store.restore(slot, 1, y, carry); }), expected);
    EXPECT_EQ(error_message<InvalidArgument>([&] { store.free(slot); }), expected);
    EXPECT_EQ(error_message<InvalidArgument>([&] { store.prefetch(slot, 1); }), expected);
  }
  for (int slot : {1, 3}) {  // memory, disk
    const std::string level = "slot " + std::to_string(slot);
    EXPECT_TRUE(contains(error_message<InvalidArgument>([&] { store.restore(slot, 7, y, carry); }),
                         "is empty; cannot restore y_7"))
        << level;
    EXPECT_TRUE(
        contains(error_message<InvalidArgument>([&] { store.free(slot); }), "is already free"))
        << level;
    store.store(slot, 7, state_of(7), carry_of(7));
    EXPECT_TRUE(contains(error_message<InvalidArgument>([&] { store.store(slot, 8, y, carry); }),
                         "holds y_7; free it before storing y_8"))
        << level;
    EXPECT_TRUE(contains(error_message<InvalidArgument>([&] { store.restore(slot, 8, y, carry); }),
                         "holds y_7, not y_8"))
        << level;
    EXPECT_TRUE(contains(error_message<InvalidArgument>(
                             [&] { store.store(slot - 1, 9, B::Vector::Zero(3), carry); }),
                         "snapshot of 3 values for a store of size 200"))
        << level;
    expect_snapshot(store, slot, 7);
  }
  store.finish();
  const SnapshotStoreStatistics statistics = store.statistics();
  EXPECT_EQ(statistics.stores_on(LevelKind::memory), 1);
  EXPECT_EQ(statistics.stores_on(LevelKind::disk), 1);
  EXPECT_EQ(statistics.restores_on(LevelKind::memory), 1);
  EXPECT_EQ(statistics.restores_on(LevelKind::disk), 1);
}

TEST(MemoryAndDiskStore, ConstructorRefusesBadSlotCounts) {
  ScratchDirectory scratch;
  EXPECT_EQ(error_message<InvalidArgument>([&] { tiered(0, 0, kSize, in(scratch.path())); }),
            "two-level snapshot store: 0 memory and 0 disk slots (need >= 0 each, >= 1 in all)");
  EXPECT_EQ(error_message<InvalidArgument>([&] { tiered(-1, 2, kSize, in(scratch.path())); }),
            "two-level snapshot store: -1 memory and 2 disk slots (need >= 0 each, >= 1 in all)");
  EXPECT_EQ(error_message<InvalidArgument>([&] { tiered(2, -1, kSize, in(scratch.path())); }),
            "two-level snapshot store: 2 memory and -1 disk slots (need >= 0 each, >= 1 in all)");
  EXPECT_EQ(error_message<InvalidArgument>([&] { tiered(2, 1, kSize, DiskStoreOptions{}); }),
            "disk snapshots need a directory or a file name");
  EXPECT_TRUE(scratch.files().empty());
}

// Runs a two-level schedule's actions through the store, with y_n = state_of(n), and compares
// the store's statistics with counts taken from the action stream itself.
TEST(MemoryAndDiskStore, TwoLevelScheduleRunsThrough) {
  CostModel costs;
  costs.adjoint_cost_factor = 2.0;
  costs.disk_write_time = 1.5;
  costs.disk_read_time = 1.5;
  MultiLevelSchedule schedule(150, 3, 6, costs);
  const int memory = schedule.memory_slots();
  ASSERT_EQ(memory, 3);
  ScratchDirectory scratch;
  Store store = tiered(memory, schedule.slots() - memory, kSize, in(scratch.path()));

  Index current = 0, stores[2] = {0, 0}, restores[2] = {0, 0};
  int held[2] = {0, 0}, peak[2] = {0, 0};
  for (Action action = schedule.next(); action.kind != ActionKind::done; action = schedule.next()) {
    const int level = action.slot >= memory ? 1 : 0;
    switch (action.kind) {
      case ActionKind::advance:
        current = action.step;
        break;
      case ActionKind::store:
        ASSERT_EQ(action.step, current);
        store.store(action.slot, current, state_of(current), carry_of(current));
        ++stores[level];
        peak[level] = std::max(peak[level], ++held[level]);
        break;
      case ActionKind::restore:
        expect_snapshot(store, action.slot, action.step);
        current = action.step;
        ++restores[level];
        break;
      case ActionKind::free:
        store.free(action.slot);
        --held[level];
        break;
      case ActionKind::reverse:
      case ActionKind::store_stages:  // revolve stores states only
      case ActionKind::done:
        break;
    }
  }
  store.finish();
  ASSERT_GT(stores[1], 0) << "the schedule should use its disk level";
  ASSERT_GT(restores[1], 0) << "the schedule should read its disk level";
  const SnapshotStoreStatistics statistics = store.statistics();
  EXPECT_EQ(statistics.stores_on(LevelKind::memory), stores[0]);
  EXPECT_EQ(statistics.restores_on(LevelKind::memory), restores[0]);
  EXPECT_EQ(statistics.stores_on(LevelKind::disk), stores[1]);
  EXPECT_EQ(statistics.restores_on(LevelKind::disk), restores[1]);
  EXPECT_EQ(statistics.peak_bytes_on(LevelKind::memory), peak[0] * kBytes);
  EXPECT_EQ(statistics.peak_bytes_on(LevelKind::disk), peak[1] * kBytes);
  EXPECT_EQ(statistics.io.writes, stores[1]);
  EXPECT_EQ(statistics.io.reads, restores[1]);
  // And the counts agree with the schedule's own plan.
  EXPECT_EQ(stores[0] + stores[1], schedule.predicted_cost().stores);
  EXPECT_EQ(stores[1], schedule.predicted_cost().disk_stores);
  EXPECT_EQ(restores[1], schedule.predicted_cost().disk_restores);
}

}  // namespace
}  // namespace rwd
