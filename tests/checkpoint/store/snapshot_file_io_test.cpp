// SnapshotFileIo, the background I/O queue of the disk store, on its own and inline: the staging
// buffers are allocated once (their number and staging_bytes stay fixed however many snapshots
// pass through) and reused; requests run in submission order, so a read right after a write sees
// it; a prefetch is served to the read that follows (a hit), is declined when no buffer is free,
// and is never served once its slot was discarded or overwritten; misuse of the buffers is an
// InvalidArgument; a failed read is the caller's alone, while a failed write (a file-size limit)
// is rethrown as a StorageError by finish() and by every later call; the destructor completes
// the queued writes; inline I/O counts all of its time as waiting.
#include "rewind/disk/snapshot_file_io.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "rewind/disk/hdf5_snapshot_file.hpp"
#include "rewind/error.hpp"
#include "support/error_message.hpp"
#include "support/scratch_directory.hpp"
#include "support/snapshot_data.hpp"

namespace rwd {
namespace {

using test::ScratchDirectory;
using testing::contains;
using testing::error_message;

constexpr Index kSize = 300;
constexpr int kMeta = 12;
constexpr std::int64_t kBytes = kSize * 8 + kMeta;
constexpr int kSlots = 4;

std::vector<double> state_of(Index step) {
  return testing::snapshot_values(kSize, step);
}
std::vector<std::byte> meta_of(Index step) {
  return testing::snapshot_meta(kMeta, step);
}

SnapshotIoOptions io_options(bool asynchronous, int staging_buffers) {
  SnapshotIoOptions options;
  options.asynchronous = asynchronous;
  options.staging_buffers = staging_buffers;
  return options;
}

// Writes y_step (state_of, meta_of) into `slot` through a staging buffer.
StagingBuffer& write(SnapshotFileIo& io, int slot, Index step) {
  StagingBuffer& buffer = io.begin_write();
  buffer.state = state_of(step);
  buffer.meta = meta_of(step);
  io.submit_write(buffer, slot, step);
  return buffer;
}

// Reads y_step from `slot`, checks it against state_of/meta_of and releases the buffer.
void expect_read(SnapshotFileIo& io, int slot, Index step) {
  const StagingBuffer& buffer = io.read(slot, step);
  EXPECT_EQ(buffer.state, state_of(step)) << "slot " << slot << ", y_" << step;
  EXPECT_EQ(buffer.meta, meta_of(step)) << "slot " << slot << ", y_" << step;
  io.release(buffer);
}

class SnapshotFileIoTest : public ::testing::TestWithParam<bool> {
 protected:
  SnapshotFileIo make_io(int staging_buffers = 2) {
    return SnapshotFileIo(Hdf5SnapshotFile::create(scratch_ / "io.h5", kSlots, kSize, kMeta),
                          io_options(GetParam(), staging_buffers));
  }
  ScratchDirectory scratch_;
};

TEST_P(SnapshotFileIoTest, StagingBuffersAreAllocatedOnceAndReused) {
  SnapshotFileIo io = make_io(3);
  const int expected_buffers = GetParam() ? 3 : 1;  // inline I/O needs only one
  EXPECT_EQ(io.statistics().staging_bytes, expected_buffers * kBytes);
  EXPECT_EQ(io.asynchronous(), GetParam());
  std::set<const StagingBuffer*> buffers;
  std::set<const double*> storage;
  for (Index step = 0; step < 200; ++step) {
    StagingBuffer& buffer = io.begin_write();
    ASSERT_EQ(buffer.state.size(), static_cast<std::size_t>(kSize));
    ASSERT_EQ(buffer.meta.size(), static_cast<std::size_t>(kMeta));
    buffers.insert(&buffer);
    storage.insert(buffer.state.data());
    // Fill in place: the buffer's memory is reused, never reallocated.
    const std::vector<double> state = state_of(step);
    const std::vector<std::byte> meta = meta_of(step);
    std::memcpy(buffer.state.data(), state.data(), state.size() * sizeof(double));
    std::memcpy(buffer.meta.data(), meta.data(), meta.size());
    io.submit_write(buffer, static_cast<int>(step % kSlots), step);
    if (step % 50 == 49) expect_read(io, static_cast<int>(step % kSlots), step);
  }
  io.finish();
  EXPECT_GE(buffers.size(), 1u);
  EXPECT_LE(buffers.size(), static_cast<std::size_t>(expected_buffers));
  EXPECT_EQ(storage.size(), buffers.size());
  if (!GetParam()) {
    EXPECT_EQ(buffers.size(), 1u);
  }
  const SnapshotIoStatistics& statistics = io.statistics();
  EXPECT_EQ(statistics.staging_bytes, expected_buffers * kBytes);
  EXPECT_EQ(statistics.writes, 200);
  EXPECT_EQ(statistics.bytes_written, 200 * kBytes);
  EXPECT_EQ(statistics.reads, 4);
  EXPECT_EQ(statistics.bytes_read, 4 * kBytes);
  // The file holds the last write of every slot.
  for (int slot = 0; slot < kSlots; ++slot) expect_read(io, slot, 196 + slot);
}

TEST_P(SnapshotFileIoTest, ReadRightAfterAWriteSeesIt) {
  SnapshotFileIo io = make_io();
  for (Index step = 0; step < 40; ++step) {
    write(io, static_cast<int>(step % 2), step);
    expect_read(io, static_cast<int>(step % 2), step);  // queued behind the write
  }
  io.finish();
  EXPECT_EQ(io.statistics().writes, 40);
  EXPECT_EQ(io.statistics().reads, 40);
  EXPECT_EQ(io.statistics().prefetch_misses, 40);
}

TEST_P(SnapshotFileIoTest, MisuseOfTheBuffersIsRefused) {
  SnapshotFileIo io = make_io(1);
  StagingBuffer& first = io.begin_write();
  EXPECT_EQ(error_message<InvalidArgument>([&] { io.begin_write(); }),
            "snapshot I/O: begin_write() twice without submit_write()");
  first.state = state_of(1);
  first.meta = meta_of(1);
  EXPECT_EQ(error_message<InvalidArgument>([&] { io.submit_write(first, kSlots, 1); }),
            "snapshot I/O: slot 4 outside [0, 4)");
  // The refused buffer went back to the pool (the only one there is).
  StagingBuffer& again = write(io, 0, 1);
  EXPECT_EQ(&again, &first);
  EXPECT_EQ(error_message<InvalidArgument>([&] { io.submit_write(again, 0, 1); }),
            "snapshot I/O: submit_write() of a buffer not from begin_write()");
  StagingBuffer foreign;
  EXPECT_EQ(error_message<InvalidArgument>([&] { io.submit_write(foreign, 0, 1); }),
            "snapshot I/O: submit_write() of a buffer not from begin_write()");
  EXPECT_EQ(error_message<InvalidArgument>([&] { io.release(foreign); }),
            "snapshot I/O: release() of a foreign buffer");
  io.finish();
  EXPECT_EQ(error_message<InvalidArgument>([&] { io.release(first); }),
            "snapshot I/O: release() of a buffer not from read()");
  // The caller holds the only buffer: a write cannot wait for it.
  const StagingBuffer& held = io.read(0, 1);
  EXPECT_EQ(error_message<InvalidArgument>([&] { io.begin_write(); }),
            "snapshot I/O: every staging buffer is held by the caller");
  io.release(held);
  write(io, 1, 2);
  expect_read(io, 1, 2);
  io.finish();
  EXPECT_EQ(io.statistics().writes, 2);
}

TEST_P(SnapshotFileIoTest, FailedReadIsTheCallersAlone) {
  SnapshotFileIo io = make_io(1);
  write(io, 0, 5);
  EXPECT_TRUE(contains(error_message<StorageError>([&] { io.read(1, 5); }), "never written"));
  EXPECT_TRUE(contains(error_message<StorageError>([&] { io.read(0, 6); }), "holds y_5 instead"));
  io.prefetch(1, 3);
  EXPECT_TRUE(contains(error_message<StorageError>([&] { io.read(1, 3); }), "never written"));
  // The queue goes on, and the one buffer came back each time.
  io.finish();
  write(io, 1, 3);
  expect_read(io, 1, 3);
  expect_read(io, 0, 5);
  io.finish();
  EXPECT_EQ(io.statistics().writes, 2);
  EXPECT_EQ(io.statistics().reads, 2);  // only the reads that succeeded
}

TEST_P(SnapshotFileIoTest, FailedWriteIsRethrownByEveryLaterCall) {
  std::string message;
  {
    SnapshotFileIo io = make_io();
    write(io, 0, 0);
    io.finish();
    {
      test::FileSizeLimit limit(4096);  // the header fits, slot 3 does not
      message = error_message<StorageError>([&] {
        write(io, 3, 1);  // background: queued; inline: fails here
        io.finish();
      });
    }
    EXPECT_TRUE(contains(message, "file size limit")) << message;
    EXPECT_TRUE(contains(message, "writing y_1 to slot 3")) << message;
    EXPECT_TRUE(contains(message, (scratch_ / "io.h5").string())) << message;
    EXPECT_EQ(error_message<StorageError>([&] { io.finish(); }), message);
    EXPECT_EQ(error_message<StorageError>([&] { io.begin_write(); }), message);
    EXPECT_EQ(error_message<StorageError>([&] { io.prefetch(0, 0); }), message);
    EXPECT_EQ(error_message<StorageError>([&] { io.read(0, 0); }), message);
    EXPECT_EQ(error_message<StorageError>([&] { io.read(3, 1); }), message);
    EXPECT_EQ(io.statistics().writes, 1);
    EXPECT_EQ(io.statistics().bytes_written, kBytes);
    EXPECT_EQ(io.statistics().reads, 0);
  }
  // The failed write left no snapshot behind.
  auto file = Hdf5SnapshotFile::open(scratch_ / "io.h5");
  EXPECT_EQ(file.record(0).step, 0);
  EXPECT_EQ(file.record(3).step, -1);
}

TEST_P(SnapshotFileIoTest, DestructorCompletesQueuedWrites) {
  std::string run_id;
  {
    SnapshotFileIo io = make_io();
    run_id = io.file().run_id();
    for (Index step = 0; step < 12; ++step) write(io, static_cast<int>(step % kSlots), step);
  }
  auto file = Hdf5SnapshotFile::open(scratch_ / "io.h5");
  EXPECT_EQ(file.run_id(), run_id);
  std::vector<double> state(kSize);
  std::vector<std::byte> meta(kMeta);
  for (int slot = 0; slot < kSlots; ++slot) {
    EXPECT_EQ(file.record(slot).step, 8 + slot);
    EXPECT_EQ(file.verify(slot), "");
    file.read(slot, 8 + slot, state, meta);
    EXPECT_EQ(state, state_of(8 + slot));
    EXPECT_EQ(meta, meta_of(8 + slot));
  }
}

INSTANTIATE_TEST_SUITE_P(Io, SnapshotFileIoTest, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Background" : "Inline";
                         });

TEST(SnapshotFileIo, OptionsAreValidated) {
  for (int count : {0, -1, 65}) {
    EXPECT_EQ(error_message<InvalidArgument>([&] { io_options(true, count).validate(); }),
              "staging_buffers = " + std::to_string(count) + " must lie in [1, 64]");
  }
  EXPECT_NO_THROW(io_options(true, 1).validate());
  EXPECT_NO_THROW(io_options(true, 64).validate());
  ScratchDirectory scratch;
  EXPECT_THROW(SnapshotFileIo(Hdf5SnapshotFile::create(scratch / "a.h5", kSlots, kSize, kMeta),
                              io_options(true, 0)),
               InvalidArgument);
}

TEST(SnapshotFileIo, ReadOnlyFileIsRefused) {
  ScratchDirectory scratch;
  Hdf5SnapshotFile::create(scratch / "r.h5", kSlots, kSize, kMeta).close();
  const std::string message = error_message<InvalidArgument>(
      [&] { SnapshotFileIo io(Hdf5SnapshotFile::open(scratch / "r.h5")); });
  EXPECT_EQ(message,
            "snapshot I/O needs a file opened for writing, not " + (scratch / "r.h5").string());
}

TEST(SnapshotFileIo, PrefetchedReadIsAHit) {
  ScratchDirectory scratch;
  SnapshotFileIo io(Hdf5SnapshotFile::create(scratch / "p.h5", kSlots, kSize, kMeta),
                    io_options(true, 2));
  for (int slot = 0; slot < kSlots; ++slot) write(io, slot, 10 + slot);
  io.finish();  // both buffers free
  EXPECT_TRUE(io.prefetch(2, 12));
  EXPECT_TRUE(io.prefetch(2, 12));  // already under way: no second read
  expect_read(io, 2, 12);
  EXPECT_EQ(io.statistics().prefetch_hits, 1);
  EXPECT_EQ(io.statistics().prefetch_misses, 0);
  EXPECT_EQ(io.statistics().reads, 1);
  // Two prefetches at once, read in the other order.
  EXPECT_TRUE(io.prefetch(0, 10));
  EXPECT_TRUE(io.prefetch(3, 13));
  expect_read(io, 3, 13);
  expect_read(io, 0, 10);
  EXPECT_EQ(io.statistics().prefetch_hits, 3);
  EXPECT_EQ(io.statistics().prefetch_misses, 0);
  EXPECT_EQ(io.statistics().reads, 3);
  EXPECT_EQ(io.statistics().bytes_read, 3 * kBytes);
}

TEST(SnapshotFileIo, PrefetchWithoutAFreeBufferIsDeclined) {
  ScratchDirectory scratch;
  SnapshotFileIo io(Hdf5SnapshotFile::create(scratch / "d.h5", kSlots, kSize, kMeta),
                    io_options(true, 1));
  write(io, 0, 10);
  write(io, 1, 11);
  io.finish();
  EXPECT_TRUE(io.prefetch(0, 10));
  EXPECT_FALSE(io.prefetch(1, 11));  // the only buffer is taken
  // The read of slot 1 takes the buffer back from the unused prefetch.
  expect_read(io, 1, 11);
  expect_read(io, 0, 10);
  EXPECT_EQ(io.statistics().prefetch_hits, 0);
  EXPECT_EQ(io.statistics().prefetch_misses, 2);
}

TEST(SnapshotFileIo, InlineIoDeclinesPrefetches) {
  ScratchDirectory scratch;
  SnapshotFileIo io(Hdf5SnapshotFile::create(scratch / "s.h5", kSlots, kSize, kMeta),
                    io_options(false, 4));
  write(io, 0, 10);
  EXPECT_FALSE(io.prefetch(0, 10));
  expect_read(io, 0, 10);
  EXPECT_EQ(io.statistics().prefetch_hits, 0);
  EXPECT_EQ(io.statistics().prefetch_misses, 1);
}

// `settled`: the prefetch has completed before the slot changes (else it may still be queued).
TEST(SnapshotFileIo, DiscardedPrefetchIsNeverServed) {
  for (bool settled : {false, true}) {
    SCOPED_TRACE(settled ? "prefetch completed" : "prefetch queued");
    ScratchDirectory scratch;
    SnapshotFileIo io(Hdf5SnapshotFile::create(scratch / "x.h5", kSlots, kSize, kMeta),
                      io_options(true, 2));
    write(io, 0, 10);
    io.finish();
    ASSERT_TRUE(io.prefetch(0, 10));
    if (settled) io.finish();
    io.discard(0);
    // The slot takes another snapshot of the same step: only the new one may be read.
    StagingBuffer& buffer = io.begin_write();
    buffer.state = state_of(77);
    buffer.meta = meta_of(77);
    io.submit_write(buffer, 0, 10);
    const StagingBuffer& read = io.read(0, 10);
    EXPECT_EQ(read.state, state_of(77));
    EXPECT_EQ(read.meta, meta_of(77));
    io.release(read);
    EXPECT_EQ(io.statistics().prefetch_hits, 0);
    EXPECT_EQ(io.statistics().prefetch_misses, 1);
  }
}

TEST(SnapshotFileIo, DiscardFreesTheBufferOfACompletedPrefetch) {
  ScratchDirectory scratch;
  SnapshotFileIo io(Hdf5SnapshotFile::create(scratch / "f.h5", kSlots, kSize, kMeta),
                    io_options(true, 1));
  write(io, 0, 10);
  write(io, 1, 11);
  io.finish();
  ASSERT_TRUE(io.prefetch(0, 10));
  io.finish();  // read, waiting in the only buffer
  io.discard(0);
  EXPECT_TRUE(io.prefetch(1, 11));  // the buffer is free again
  expect_read(io, 1, 11);
  EXPECT_EQ(io.statistics().prefetch_hits, 1);
}

TEST(SnapshotFileIo, OverwriteOrphansAnEarlierPrefetch) {
  for (bool settled : {false, true}) {
    SCOPED_TRACE(settled ? "prefetch completed" : "prefetch queued");
    ScratchDirectory scratch;
    SnapshotFileIo io(Hdf5SnapshotFile::create(scratch / "o.h5", kSlots, kSize, kMeta),
                      io_options(true, 2));
    write(io, 0, 10);
    io.finish();
    ASSERT_TRUE(io.prefetch(0, 10));
    if (settled) io.finish();
    write(io, 0, 20);  // without a discard
    expect_read(io, 0, 20);
    const std::string message = error_message<StorageError>([&] { io.read(0, 10); });
    EXPECT_TRUE(contains(message, "holds y_20 instead")) << message;
    EXPECT_EQ(io.statistics().prefetch_hits, 0);
    io.finish();
  }
}

TEST(SnapshotFileIo, InlineIoCountsAllOfItsTimeAsWaiting) {
  ScratchDirectory scratch;
  SnapshotFileIo io(Hdf5SnapshotFile::create(scratch / "t.h5", kSlots, kSize, kMeta),
                    io_options(false, 1));
  for (Index step = 0; step < 8; ++step) {
    write(io, static_cast<int>(step % kSlots), step);
    expect_read(io, static_cast<int>(step % kSlots), step);
  }
  io.finish();
  const SnapshotIoStatistics& statistics = io.statistics();
  EXPECT_GT(statistics.write_seconds, 0.0);
  EXPECT_GT(statistics.read_seconds, 0.0);
  EXPECT_NEAR(statistics.wait_seconds, statistics.io_seconds(), 1e-12);
  EXPECT_NEAR(statistics.hidden_seconds(), 0.0, 1e-12);
  EXPECT_EQ(statistics.buffer_wait_seconds, 0.0);
  EXPECT_EQ(statistics.read_wait_seconds, 0.0);
}

}  // namespace
}  // namespace rwd
