// The entry points through which rewind::store reaches the disk level (declared in
// rewind/store/disk_level.hpp, referenced weakly there). rewind::disk's CMake target names
// rewind_disk_level_open to the linker (-u), which takes this file from the static library into
// every program that links rewind::disk.
#include <filesystem>

#include "hdf5_disk_level.hpp"
#include "rewind/store/disk_cost_probe.hpp"
#include "rewind/store/disk_level.hpp"
#include "rewind/store/snapshot_ranks.hpp"
#include "rewind/types.hpp"

extern "C" {

rwd::DiskLevel* rewind_disk_level_open(int slots, const rwd::ProcessSlice& where,
                                       const rwd::DiskStoreOptions& options, int meta_size) {
  return rwd::make_hdf5_disk_level(slots, where, options, meta_size).release();
}

void rewind_disk_level_measure_costs(const std::filesystem::path& path, rwd::Index state_size,
                                     int meta_size, int samples, rwd::DiskCosts* costs) {
  *costs = rwd::measure_hdf5_disk_costs(path, state_size, meta_size, samples);
}

}  // extern "C"
