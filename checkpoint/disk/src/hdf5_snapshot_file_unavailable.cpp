// Hdf5SnapshotFile in a build without HDF5 (REWIND_WITH_HDF5=OFF, e.g. a GPU machine with only
// the CUDA toolkit): memory snapshots work as always, and a plan that asks for a disk level is
// refused when its file would be created or opened, with this explanation — never silently kept
// in memory instead.
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "rewind/disk/hdf5_snapshot_file.hpp"
#include "rewind/error.hpp"

namespace rwd {
namespace {

[[noreturn]] void unavailable(const std::filesystem::path& path) {
  detail::fail<StorageError>("snapshot file ", path.string(),
                             ": this build of rewind has no HDF5 (configured with "
                             "REWIND_WITH_HDF5=OFF), so snapshots cannot go to disk; use memory "
                             "snapshots or rebuild with HDF5");
}

}  // namespace

Hdf5SnapshotFile Hdf5SnapshotFile::create(const std::filesystem::path& path, int, Index, int,
                                          const SnapshotFileOptions&) {
  unavailable(path);
}
Hdf5SnapshotFile Hdf5SnapshotFile::create_shared(const std::filesystem::path& path, int,
                                                 const StateSlice&, int, const SnapshotRanks&,
                                                 const SnapshotFileOptions&) {
  unavailable(path);
}
Hdf5SnapshotFile Hdf5SnapshotFile::open(const std::filesystem::path& path, bool) {
  unavailable(path);
}
Hdf5SnapshotFile Hdf5SnapshotFile::reopen(const std::filesystem::path& path) {
  unavailable(path);
}

// No file can be created or opened, so the members below never run on an object; they exist so
// that code written for both builds links.
Hdf5SnapshotFile::Hdf5SnapshotFile(Hdf5SnapshotFile&&) noexcept {}
Hdf5SnapshotFile& Hdf5SnapshotFile::operator=(Hdf5SnapshotFile&&) noexcept {
  return *this;
}
Hdf5SnapshotFile::~Hdf5SnapshotFile() = default;
void Hdf5SnapshotFile::write(int, Index, std::span<const double>, std::span<const std::byte>) {
  unavailable(path_);
}
void Hdf5SnapshotFile::read(int, Index, std::span<double>, std::span<std::byte>) {
  unavailable(path_);
}
SnapshotSlotRecord Hdf5SnapshotFile::record(int, int) const {
  unavailable(path_);
}
std::string Hdf5SnapshotFile::verify(int) const {
  unavailable(path_);
}
void Hdf5SnapshotFile::write_progress(std::span<const std::byte>) {
  unavailable(path_);
}
std::vector<std::byte> Hdf5SnapshotFile::read_progress() const {
  unavailable(path_);
}
bool Hdf5SnapshotFile::holds(int, Index) const {
  unavailable(path_);
}
void Hdf5SnapshotFile::publish_as(const std::filesystem::path& final_path) {
  unavailable(final_path);
}
void Hdf5SnapshotFile::close() {}
bool Hdf5SnapshotFile::remove() noexcept {
  return false;
}

}  // namespace rwd
