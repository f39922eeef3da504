// rewind/disk/snapshot_file_io.hpp — writes and reads of an Hdf5SnapshotFile, either on a
// background I/O thread (write-behind and read-ahead) or inline on the caller's thread.
//
//   rwd::SnapshotFileIo io(std::move(file), {.asynchronous = true, .staging_buffers = 2});
//   rwd::StagingBuffer& out = io.begin_write();     // waits only if every buffer is busy
//   copy the state into out.state, its metadata into out.meta;
//   io.submit_write(out, /*slot=*/3, /*step=*/1700);   // returns at once; the thread writes
//   io.prefetch(3, 1700);                            // a hint: read it now, in the background
//   const rwd::StagingBuffer& in = io.read(3, 1700);   // waits for the prefetch (or reads now)
//   copy in.state / in.meta out, then io.release(in);
//   io.save_progress(bytes);                         // after the writes queued before it
//   io.finish();                                     // waits for every write; rethrows errors
//
// Why staging buffers: the caller's state keeps changing after a store, so a background write
// needs its own copy; a fixed pool of `staging_buffers` host buffers (allocated up front) bounds
// that memory, and a store waits for a free buffer when the disk falls behind — the wait is
// measured and reported, never hidden. Requests run in submission order on one thread, so a read
// queued after a write of the same slot sees that write.
//
// Errors: a failed write or read on the I/O thread is kept and rethrown (as the StorageError it
// was) by the next call on the caller's thread; after an error every call rethrows it. Nothing is
// ever read back from a write that failed.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "rewind/disk/hdf5_snapshot_file.hpp"
#include "rewind/store/snapshot_io_statistics.hpp"
#include "rewind/types.hpp"

namespace rwd {

struct SnapshotIoOptions {
  bool asynchronous = true;  // false: every write and read runs inline (for comparison)
  int staging_buffers = 2;   // host copies of one snapshot each; ≥ 1 (≥ 2 to overlap a write
                             // and a prefetch)
  void validate() const;
};

// One host copy of a snapshot: the state values and the metadata bytes.
struct StagingBuffer {
  std::vector<double> state;
  std::vector<std::byte> meta;

 private:
  friend class SnapshotFileIo;
  enum class Status { free, filling, write_queued, read_queued, read_done, held, progress_queued };
  Status status = Status::free;
  int slot = -1;
  Index step = -1;
  std::exception_ptr error;  // of a failed read into this buffer
};

class SnapshotFileIo {
 public:
  SnapshotFileIo(Hdf5SnapshotFile file, const SnapshotIoOptions& options = {});
  SnapshotFileIo(const SnapshotFileIo&) = delete;
  SnapshotFileIo& operator=(const SnapshotFileIo&) = delete;
  // Stops the thread after the queued requests; never throws (call finish() to see errors).
  ~SnapshotFileIo();

  // A free buffer to fill with the snapshot to write; waits (and counts the wait) when all are
  // busy. Exactly one buffer is being filled at a time.
  StagingBuffer& begin_write();
  // Queues (or, synchronously, performs) the write of a buffer from begin_write() into `slot`.
  void submit_write(StagingBuffer& buffer, int slot, Index step);

  // Starts reading `slot` (expected to hold y_step) into a free buffer, if one is free; returns
  // whether a read was started. A hint only: read() works without it.
  bool prefetch(int slot, Index step);
  // The verified snapshot of y_step in `slot`: a prefetched buffer when there is one, otherwise
  // read now. The buffer stays the caller's until release().
  const StagingBuffer& read(int slot, Index step);
  void release(const StagingBuffer& buffer);
  // Forgets a prefetch of `slot` (its snapshot is being discarded).
  void discard(int slot);

  // Queues a progress record of a resumable run (Hdf5SnapshotFile::write_progress) behind every
  // write submitted before it, so that the file never records progress its snapshots do not
  // back; synchronously, writes it now. Waits while the previous record is still queued.
  void save_progress(std::span<const std::byte> progress);
  // Whether a progress record handed to save_progress is still waiting for the I/O thread or
  // being written (false once written, and after a failed write: save_progress rethrows it).
  bool progress_pending() const;

  // Waits until every queued request has run; rethrows the first error.
  void finish();

  const SnapshotIoStatistics& statistics() const { return statistics_; }
  const Hdf5SnapshotFile& file() const { return file_; }
  Hdf5SnapshotFile& file() { return file_; }
  bool asynchronous() const { return options_.asynchronous; }

 private:
  StagingBuffer* take_free_buffer(std::unique_lock<std::mutex>& lock);
  void perform(StagingBuffer& buffer);  // the I/O of one request; records errors
  void run_thread();
  void rethrow_if_failed() const;

  Hdf5SnapshotFile file_;
  SnapshotIoOptions options_;
  std::vector<StagingBuffer> buffers_;
  StagingBuffer progress_;  // the queued progress record (its bytes in .meta)
  SnapshotIoStatistics statistics_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<StagingBuffer*> queue_;
  bool busy_ = false;  // the thread is performing a request
  bool stopping_ = false;
  std::exception_ptr error_;  // first failed write
  std::thread thread_;
};

}  // namespace rwd
