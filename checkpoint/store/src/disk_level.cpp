// The disk level as rewind::store reaches it (rewind/store/disk_level.hpp): through the entry
// points of rewind::disk, referenced weakly, so that a program without rewind::disk links (and
// neither links nor loads HDF5) and is told, when it asks for a disk level, what it lacks.
#include "rewind/store/disk_level.hpp"

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "rewind/error.hpp"

// Weak: resolved to the definitions of rewind::disk when the program links it, else null.
#pragma weak rewind_disk_level_open
#pragma weak rewind_disk_level_measure_costs

namespace rwd {

bool disk_level_linked() {
  return &rewind_disk_level_open != nullptr && &rewind_disk_level_measure_costs != nullptr;
}

void require_disk_level(std::string_view what) {
  if (!disk_level_linked())
    detail::fail<StorageError>(
        what,
        ", but this program does not link rewind's disk level: link the CMake target "
        "rewind::disk (target_link_libraries(<program> PRIVATE rewind::disk)), or plan without "
        "a disk level");
}

std::unique_ptr<DiskLevel> open_disk_level(int slots, const ProcessSlice& where,
                                           const DiskStoreOptions& options, int meta_size) {
  require_disk_level("a disk snapshot store of " + std::to_string(slots) + " slots");
  return std::unique_ptr<DiskLevel>(rewind_disk_level_open(slots, where, options, meta_size));
}

namespace detail {

void measure_disk_costs_at(const std::filesystem::path& path, Index state_size, int meta_size,
                           int samples, DiskCosts& costs) {
  require_disk_level("measuring the disk's costs in " + path.parent_path().string());
  rewind_disk_level_measure_costs(path, state_size, meta_size, samples, &costs);
}

}  // namespace detail
}  // namespace rwd
