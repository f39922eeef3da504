// What rewind::disk's entry points build on (private to checkpoint/disk/).
#pragma once

#include <filesystem>
#include <memory>

#include "rewind/store/disk_cost_probe.hpp"
#include "rewind/store/disk_level.hpp"
#include "rewind/store/snapshot_ranks.hpp"
#include "rewind/types.hpp"

namespace rwd {

// The disk level in an HDF5 snapshot file (rwd::open_disk_level's contract).
std::unique_ptr<DiskLevel> make_hdf5_disk_level(int slots, const ProcessSlice& where,
                                                const DiskStoreOptions& options, int meta_size);

// Writes and reads `samples` snapshots of random data through a scratch Hdf5SnapshotFile at
// `path`, removed afterwards (rwd::measure_disk_costs' contract).
DiskCosts measure_hdf5_disk_costs(const std::filesystem::path& path, Index state_size,
                                  int meta_size, int samples);

}  // namespace rwd
