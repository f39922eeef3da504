// rewind/store/disk_cost_probe.hpp — how long one snapshot write and one read take on the
// disk a run will use, measured at start-up so a two-level schedule can weigh disk I/O against
// recomputation.
//
//   rwd::DiskCosts costs = rwd::measure_disk_costs("/scratch", /*state size=*/1 << 20,
//                                                  /*meta size=*/40);
//   model.disk_write_time = costs.write_seconds / step_seconds;   // in steps
//
// Writes and reads `samples` snapshots of random data through a scratch Hdf5SnapshotFile in the
// directory (the same path a run's snapshots take: HDF5, checksum, no chunk cache) and removes
// it. Reads come from the page cache when the file is small — as a run's prefetched reads mostly
// do. The medians are returned, so one slow sample does not dominate.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "rewind/types.hpp"

namespace rwd {

struct DiskCosts {
  double write_seconds = 0.0;  // one snapshot write (median)
  double read_seconds = 0.0;   // one verified snapshot read (median)
  std::int64_t snapshot_bytes = 0;
  double write_bytes_per_second() const {
    return write_seconds > 0 ? snapshot_bytes / write_seconds : 0.0;
  }
  double read_bytes_per_second() const {
    return read_seconds > 0 ? snapshot_bytes / read_seconds : 0.0;
  }
};

// Throws StorageError if the directory cannot take the scratch file.
DiskCosts measure_disk_costs(const std::filesystem::path& directory, Index state_size,
                             int meta_size, int samples = 5);

// Removes the scratch files of measure_disk_costs in `directory` that a process killed while
// measuring left behind: those last written before `started` whose process is not running on
// this machine (a probe in progress rewrites its file every few milliseconds). For a resumable
// run, whose directory holds its snapshot file across attempts: the next attempt calls it once
// its own measurement (and every rank's) is over. Returns the files removed.
std::vector<std::filesystem::path> remove_abandoned_disk_probes(
    const std::filesystem::path& directory, std::filesystem::file_time_type started);

}  // namespace rwd
