// DiskSnapshotStore, with background I/O and without: snapshots (state and metadata) come back bit
// for bit; the file is created with the store and removed with it (or kept, closed and readable,
// with keep_file); the slot bookkeeping refuses every misuse — also a restore into a state of the
// wrong size, after which the store still works — with an InvalidArgument; the statistics count
// stores, restores, peak bytes and the disk traffic exactly; a prefetched snapshot is the one
// restored and counts as a hit, a prefetch of what the slot does not hold is ignored, and a freed
// or re-stored slot never serves its old prefetch; and a background write that fails (a file-size
// limit, as on a full disk) is rethrown by finish() as a StorageError naming the slot, never read
// back as data.
#include "rewind/store/disk_snapshot_store.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/carry.hpp"
#include "rewind/disk/hdf5_snapshot_file.hpp"
#include "rewind/error.hpp"
#include "support/error_message.hpp"
#include "support/scratch_directory.hpp"
#include "support/snapshot_data.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Store = DiskSnapshotStore<B, Carry>;
using test::ScratchDirectory;
using testing::contains;
using testing::error_message;
using testing::same_bits;

constexpr Index kSize = 500;
constexpr std::int64_t kBytes = kSize * 8 + static_cast<std::int64_t>(sizeof(Carry));

B::Vector state_of(Index step) {
  return testing::snapshot_state(kSize, step);
}
Carry carry_of(Index step) {
  return testing::snapshot_carry(step);
}

// Restores y_step from `slot` and checks it against state_of(step) and carry_of(step).
void expect_snapshot(SnapshotStore<B, Carry>& store, int slot, Index step) {
  testing::expect_snapshot(store, slot, step, kSize);
}

// Snapshots in a fresh file in `directory`.
DiskStoreOptions in(const std::filesystem::path& directory, bool asynchronous = true) {
  DiskStoreOptions options;
  options.directory = directory;
  options.asynchronous = asynchronous;
  return options;
}

class DiskSnapshotStoreTest : public ::testing::TestWithParam<bool> {
 protected:
  DiskStoreOptions options() const { return in(scratch_.path(), GetParam()); }
  ScratchDirectory scratch_;
};

TEST_P(DiskSnapshotStoreTest, RoundTripIsBitForBit) {
  Store store(4, kSize, options());
  for (int slot = 0; slot < 4; ++slot)
    store.store(slot, 10 * slot + 1, state_of(10 * slot + 1), carry_of(10 * slot + 1));
  for (int round = 0; round < 2; ++round)
    for (int slot : {3, 0, 2, 1}) expect_snapshot(store, slot, 10 * slot + 1);
  // A freed slot takes a new snapshot, the others are untouched.
  store.free(2);
  store.store(2, 77, state_of(77), carry_of(77));
  expect_snapshot(store, 2, 77);
  expect_snapshot(store, 1, 11);
  store.finish();
  EXPECT_EQ(store.statistics().restores_on(LevelKind::disk), 10);
}

TEST_P(DiskSnapshotStoreTest, StoreCopiesTheState) {
  Store store(1, kSize, options());
  B::Vector y = state_of(5);
  Carry carry = carry_of(5);
  store.store(0, 5, y, carry);
  y.setConstant(-1.0);  // the caller keeps integrating while the write is queued
  carry.t = 99.0;
  expect_snapshot(store, 0, 5);
}

struct OddMeta {
  unsigned char tag[3];
};

TEST_P(DiskSnapshotStoreTest, SmallTriviallyCopyableMetadata) {
  DiskSnapshotStore<B, OddMeta> store(2, kSize, options());
  EXPECT_EQ(store.bytes_per_snapshot(), kSize * 8 + 3);
  store.store(1, 4, state_of(4), OddMeta{{0x00, 0xff, 0x5a}});
  B::Vector y(kSize);
  OddMeta meta{{1, 2, 3}};
  store.restore(1, 4, y, meta);
  EXPECT_EQ(meta.tag[0], 0x00);
  EXPECT_EQ(meta.tag[1], 0xff);
  EXPECT_EQ(meta.tag[2], 0x5a);
  EXPECT_TRUE(same_bits(y, state_of(4)));
}

TEST_P(DiskSnapshotStoreTest, FileLivesAsLongAsTheStore) {
  std::filesystem::path path;
  {
    Store store(3, kSize, options());
    path = store.path();
    EXPECT_EQ(path.parent_path(), scratch_.path());
    EXPECT_EQ(path.filename().string().rfind("rewind-snapshots-", 0), 0u) << path;
    EXPECT_EQ(path.extension(), ".h5");
    EXPECT_TRUE(std::filesystem::exists(path));
    EXPECT_EQ(store.run_id().size(), 32u);
    store.store(0, 0, state_of(0), carry_of(0));
    // Two stores in one directory never share a file.
    Store other(1, kSize, options());
    EXPECT_NE(other.path(), path);
    EXPECT_EQ(scratch_.files().size(), 2u);
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(scratch_.files().empty());
}

TEST_P(DiskSnapshotStoreTest, KeptFileIsClosedAndReadable) {
  DiskStoreOptions kept = options();
  kept.file = scratch_ / "kept.h5";
  kept.keep_file = true;
  std::string run_id;
  {
    Store store(3, kSize, kept);
    EXPECT_EQ(store.path(), scratch_ / "kept.h5");
    run_id = store.run_id();
    store.store(0, 4, state_of(4), carry_of(4));
    store.store(2, 9, state_of(9), carry_of(9));
  }  // no finish(): the destructor waits for the writes
  auto file = Hdf5SnapshotFile::open(scratch_ / "kept.h5");
  EXPECT_EQ(file.run_id(), run_id);
  EXPECT_EQ(file.slots(), 3);
  EXPECT_EQ(file.state_size(), kSize);
  EXPECT_EQ(file.meta_size(), static_cast<int>(sizeof(Carry)));
  EXPECT_EQ(file.record(0).step, 4);
  EXPECT_EQ(file.record(1).step, -1);
  EXPECT_EQ(file.record(2).step, 9);
  for (int slot = 0; slot < 3; ++slot) EXPECT_EQ(file.verify(slot), "") << slot;
}

TEST_P(DiskSnapshotStoreTest, ExistingFileIsRefused) {
  DiskStoreOptions named = options();
  named.file = scratch_ / "taken.h5";
  { std::ofstream(scratch_ / "taken.h5") << "someone else's"; }
  const std::string message = error_message<StorageError>([&] { Store(2, kSize, named); });
  EXPECT_TRUE(contains(message, "already exists")) << message;
  EXPECT_EQ(test::read_bytes(scratch_ / "taken.h5").size(), 14u);  // untouched
}

TEST_P(DiskSnapshotStoreTest, BadOptionsAreRefusedBeforeAFileIsMade) {
  EXPECT_EQ(error_message<InvalidArgument>([&] { Store(2, kSize, in("", GetParam())); }),
            "disk snapshots need a directory or a file name");
  DiskStoreOptions no_buffers = options();
  no_buffers.staging_buffers = 0;
  EXPECT_EQ(error_message<InvalidArgument>([&] { Store(2, kSize, no_buffers); }),
            "staging_buffers = 0 must lie in [1, 64]");
  DiskStoreOptions missing = options();
  missing.directory = scratch_ / "missing";
  EXPECT_TRUE(
      contains(error_message<StorageError>([&] { Store(2, kSize, missing); }), "does not exist"));
  EXPECT_THROW(Store(0, kSize, options()), InvalidArgument);
  EXPECT_THROW(Store(2, 0, options()), InvalidArgument);
  EXPECT_TRUE(scratch_.files().empty());
}

TEST_P(DiskSnapshotStoreTest, SlotMisuseIsRefused) {
  Store store(3, kSize, options());
  B::Vector y = state_of(1);
  Carry carry = carry_of(1);
  for (int slot : {-1, 3}) {
    const std::string expected =
        "disk snapshot slot " + std::to_string(slot) + " is outside [0, 3)";
    EXPECT_EQ(error_message<InvalidArgument>([&] { store.store(slot, 1, y, carry); }), expected);
    EXPECT_EQ(error_message<InvalidArgument>([&] { store.restore(slot, 1, y, carry); }), expected);
    EXPECT_EQ(error_message<InvalidArgument>([&] { store.free(slot); }), expected);
    EXPECT_EQ(error_message<InvalidArgument>([&] { store.prefetch(slot, 1); }), expected);
  }
  EXPECT_EQ(error_message<InvalidArgument>([&] { store.restore(1, 4, y, carry); }),
            "disk snapshot slot 1 is empty; cannot restore y_4");
  EXPECT_EQ(error_message<InvalidArgument>([&] { store.free(1); }),
            "disk snapshot slot 1 is already free");
  store.store(1, 17, state_of(17), carry_of(17));
  EXPECT_EQ(error_message<InvalidArgument>([&] { store.store(1, 18, state_of(18), carry_of(18)); }),
            "disk snapshot slot 1 holds y_17; free it before storing y_18");
  EXPECT_EQ(error_message<InvalidArgument>([&] { store.restore(1, 18, y, carry); }),
            "disk snapshot slot 1 holds y_17, not y_18");
  EXPECT_EQ(
      error_message<InvalidArgument>([&] { store.store(0, 2, B::Vector::Zero(kSize - 1), carry); }),
      "snapshot of 499 values for a store of size 500");
  // The refused calls changed nothing: slot 1 still holds y_17, slot 0 is still free.
  expect_snapshot(store, 1, 17);
  store.store(0, 2, state_of(2), carry_of(2));
  store.free(1);
  EXPECT_EQ(error_message<InvalidArgument>([&] { store.restore(1, 17, y, carry); }),
            "disk snapshot slot 1 is empty; cannot restore y_17");
  store.finish();
  const SnapshotStoreStatistics statistics = store.statistics();
  EXPECT_EQ(statistics.stores_on(LevelKind::disk), 2);
  EXPECT_EQ(statistics.restores_on(LevelKind::disk), 1);
  EXPECT_EQ(statistics.io.writes, 2);
  EXPECT_EQ(statistics.io.reads, 1);
}

// A restore into a state of the wrong size is refused, and leaves the store usable: the staging
// buffer it read into goes back to the pool (inline I/O has only one).
TEST_P(DiskSnapshotStoreTest, RestoreIntoAWrongSizedStateIsRefused) {
  Store store(2, kSize, options());
  store.store(0, 3, state_of(3), carry_of(3));
  for (int attempt = 0; attempt < 3; ++attempt) {
    B::Vector small = B::Vector::Constant(kSize - 1, 7.0);
    Carry carry = carry_of(1);
    const std::string message =
        error_message<InvalidArgument>([&] { store.restore(0, 3, small, carry); });
    EXPECT_TRUE(contains(message, "499")) << message;
    EXPECT_TRUE(contains(message, "500")) << message;
    EXPECT_EQ(small, B::Vector::Constant(kSize - 1, 7.0));
    EXPECT_TRUE(same_bits(carry, carry_of(1)));
  }
  store.store(1, 4, state_of(4), carry_of(4));
  expect_snapshot(store, 0, 3);
  expect_snapshot(store, 1, 4);
  store.finish();
  EXPECT_EQ(store.statistics().restores_on(LevelKind::disk), 2);
}

TEST_P(DiskSnapshotStoreTest, StatisticsCountStoresRestoresAndTraffic) {
  DiskStoreOptions three_buffers = options();
  three_buffers.staging_buffers = 3;
  Store store(5, kSize, three_buffers);
  EXPECT_EQ(store.bytes_per_snapshot(), kBytes);
  // Hold at most 3 at once across 20 stores; restore every other one.
  for (Index step = 0; step < 20; ++step) {
    const int slot = static_cast<int>(step % 3);
    if (step >= 3) store.free(slot);
    store.store(slot, step, state_of(step), carry_of(step));
    if (step % 2 == 0) expect_snapshot(store, slot, step);
  }
  store.finish();
  const SnapshotStoreStatistics statistics = store.statistics();
  EXPECT_EQ(statistics.stores_on(LevelKind::disk), 20);
  EXPECT_EQ(statistics.restores_on(LevelKind::disk), 10);
  EXPECT_EQ(statistics.peak_bytes_on(LevelKind::disk), 3 * kBytes);
  EXPECT_EQ(statistics.stores_on(LevelKind::memory), 0);
  EXPECT_EQ(statistics.restores_on(LevelKind::memory), 0);
  EXPECT_EQ(statistics.peak_bytes_on(LevelKind::memory), 0);
  EXPECT_EQ(statistics.file, store.path().string());
  EXPECT_EQ(statistics.asynchronous, GetParam());
  EXPECT_EQ(statistics.io.writes, 20);
  EXPECT_EQ(statistics.io.reads, 10);
  EXPECT_EQ(statistics.io.bytes_written, 20 * kBytes);
  EXPECT_EQ(statistics.io.bytes_read, 10 * kBytes);
  EXPECT_EQ(statistics.io.prefetch_hits, 0);
  EXPECT_EQ(statistics.io.prefetch_misses, 10);
  // Synchronous I/O needs one staging buffer, background I/O the number asked for.
  EXPECT_EQ(statistics.io.staging_bytes, (GetParam() ? 3 : 1) * kBytes);
  EXPECT_GT(statistics.io.write_seconds, 0.0);
  EXPECT_GT(statistics.io.read_seconds, 0.0);
}

TEST_P(DiskSnapshotStoreTest, CompressedRoundTrip) {
  DiskStoreOptions compressed = options();
  compressed.compression_level = 6;
  Store store(2, kSize, compressed);
  store.store(1, 8, state_of(8), carry_of(8));
  expect_snapshot(store, 1, 8);
}

INSTANTIATE_TEST_SUITE_P(Io, DiskSnapshotStoreTest, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Background" : "Inline";
                         });

TEST(DiskSnapshotStore, PrefetchedSnapshotIsRestoredAndCountsAHit) {
  ScratchDirectory scratch;
  Store store(4, kSize, in(scratch.path()));
  for (int slot = 0; slot < 4; ++slot)
    store.store(slot, slot + 100, state_of(slot + 100), carry_of(slot + 100));
  store.finish();  // both staging buffers free: the prefetch is sure to start
  store.prefetch(2, 102);
  store.prefetch(2, 102);  // asking twice reads once
  expect_snapshot(store, 2, 102);
  SnapshotIoStatistics io = store.statistics().io;
  EXPECT_EQ(io.prefetch_hits, 1);
  EXPECT_EQ(io.prefetch_misses, 0);
  EXPECT_EQ(io.reads, 1);

  // Prefetches that do not match what the slot holds are ignored: an empty slot is impossible
  // here, so a wrong step; the restore reads afresh.
  store.prefetch(3, 7);
  expect_snapshot(store, 3, 103);
  io = store.statistics().io;
  EXPECT_EQ(io.prefetch_hits, 1);
  EXPECT_EQ(io.prefetch_misses, 1);
  EXPECT_EQ(io.reads, 2);
}

// With one staging buffer, a prefetch that was wrongly started would take the buffer from the
// one that matters.
TEST(DiskSnapshotStore, PrefetchOfWhatTheSlotDoesNotHoldIsIgnored) {
  ScratchDirectory scratch;
  DiskStoreOptions one_buffer = in(scratch.path());
  one_buffer.staging_buffers = 1;
  Store store(3, kSize, one_buffer);
  store.store(0, 5, state_of(5), carry_of(5));
  store.store(1, 6, state_of(6), carry_of(6));
  store.finish();
  store.prefetch(0, 4);  // the slot holds y_5
  store.prefetch(2, 6);  // the slot is empty
  store.prefetch(1, 6);
  expect_snapshot(store, 1, 6);
  const SnapshotIoStatistics io = store.statistics().io;
  EXPECT_EQ(io.prefetch_hits, 1);
  EXPECT_EQ(io.prefetch_misses, 0);
  EXPECT_EQ(io.reads, 1);
}

TEST(DiskSnapshotStore, FreeGivesBackTheBufferOfAPrefetch) {
  ScratchDirectory scratch;
  DiskStoreOptions one_buffer = in(scratch.path());
  one_buffer.staging_buffers = 1;
  Store store(2, kSize, one_buffer);
  store.store(0, 5, state_of(5), carry_of(5));
  store.store(1, 6, state_of(6), carry_of(6));
  store.finish();
  store.prefetch(0, 5);
  store.finish();  // read, and waiting in the only buffer
  store.free(0);   // never to be restored
  store.prefetch(1, 6);
  expect_snapshot(store, 1, 6);
  EXPECT_EQ(store.statistics().io.prefetch_hits, 1);
  EXPECT_EQ(store.statistics().io.prefetch_misses, 0);
}

TEST(DiskSnapshotStore, PrefetchOfAFreedSlotNeverServesTheOldSnapshot) {
  ScratchDirectory scratch;
  Store store(2, kSize, in(scratch.path()));
  store.store(0, 5, state_of(5), carry_of(5));
  store.prefetch(0, 5);
  store.free(0);
  // The same step with other values: only the new write may be served.
  B::Vector other = state_of(6);
  Carry other_carry = carry_of(6);
  other_carry.step = 5;
  store.store(0, 5, other, other_carry);
  B::Vector y(kSize);
  Carry carry;
  store.restore(0, 5, y, carry);
  EXPECT_TRUE(same_bits(y, other));
  EXPECT_TRUE(same_bits(carry, other_carry));
  EXPECT_EQ(store.statistics().io.prefetch_hits, 0);

  // And a prefetch after the new store is a hit with the new data.
  store.prefetch(0, 5);
  store.restore(0, 5, y, carry);
  EXPECT_TRUE(same_bits(y, other));
  EXPECT_EQ(store.statistics().io.prefetch_hits, 1);
}

TEST(DiskSnapshotStore, BackgroundWriteFailureIsRethrownByFinish) {
  ScratchDirectory scratch;
  std::string message;
  {
    Store store(8, kSize, in(scratch.path()));
    store.store(0, 0, state_of(0), carry_of(0));
    store.finish();
    {
      test::FileSizeLimit limit(4096);              // the header fits, slot 7 does not
      store.store(7, 1, state_of(1), carry_of(1));  // returns: the write is queued
      message = error_message<StorageError>([&] { store.finish(); });
    }
    EXPECT_TRUE(contains(message, "file size limit")) << message;
    EXPECT_TRUE(contains(message, "slot 7")) << message;
    EXPECT_TRUE(contains(message, "y_1")) << message;
    EXPECT_TRUE(contains(message, store.path().string())) << message;
    // After the failure every call reports it; nothing is read back from the failed write.
    B::Vector y(kSize);
    Carry carry;
    EXPECT_EQ(error_message<StorageError>([&] { store.restore(7, 1, y, carry); }), message);
    EXPECT_EQ(error_message<StorageError>([&] { store.restore(0, 0, y, carry); }), message);
    EXPECT_EQ(error_message<StorageError>([&] { store.store(1, 2, state_of(2), carry_of(2)); }),
              message);
    EXPECT_EQ(error_message<StorageError>([&] { store.finish(); }), message);
    EXPECT_EQ(store.statistics().io.writes, 1);
  }
  EXPECT_TRUE(scratch.files().empty()) << "the file is removed on error too";
}

TEST(DiskSnapshotStore, InlineWriteFailureIsThrownByStore) {
  ScratchDirectory scratch;
  Store store(8, kSize, in(scratch.path(), false));
  std::string message;
  {
    test::FileSizeLimit limit(4096);
    message = error_message<StorageError>([&] { store.store(7, 1, state_of(1), carry_of(1)); });
  }
  EXPECT_TRUE(contains(message, "file size limit")) << message;
  EXPECT_TRUE(contains(message, "slot 7")) << message;
  EXPECT_EQ(error_message<StorageError>([&] { store.finish(); }), message);
  EXPECT_EQ(store.statistics().stores_on(LevelKind::disk), 0);
}

}  // namespace
}  // namespace rwd
