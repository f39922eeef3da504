// rewind/store/snapshot_io_statistics.hpp — what a snapshot store's disk traffic cost, and
// how much of it overlapped computation.
#pragma once

#include <cstdint>

#include "rewind/types.hpp"

namespace rwd {

// Disk traffic and where its time went. `write_seconds`/`read_seconds` are the time spent inside
// HDF5 (on whichever thread); `wait_seconds` is the time the caller was blocked on the disk:
// waiting for a free buffer, for a read, or in finish(). Hidden time is the difference.
struct SnapshotIoStatistics {
  Index writes = 0;
  Index reads = 0;
  Index prefetch_hits = 0;    // reads served by a prefetch started earlier
  Index prefetch_misses = 0;  // reads that had to start when they were needed
  std::int64_t bytes_written = 0;
  std::int64_t bytes_read = 0;
  double write_seconds = 0.0;
  double read_seconds = 0.0;
  double wait_seconds = 0.0;         // all of the caller's waits; of which:
  double read_wait_seconds = 0.0;    //   for a read (prefetched or not) to complete
  double buffer_wait_seconds = 0.0;  // for a free staging buffer (the disk fell behind)
  std::int64_t staging_bytes = 0;    // host memory of the staging buffers
  Index progress_writes = 0;         // progress records of a resumable run (in bytes_written)

  double io_seconds() const { return write_seconds + read_seconds; }
  // Disk time that overlapped computation: io_seconds − wait_seconds, at least 0.
  double hidden_seconds() const {
    const double hidden = io_seconds() - wait_seconds;
    return hidden > 0.0 ? hidden : 0.0;
  }
};

}  // namespace rwd
