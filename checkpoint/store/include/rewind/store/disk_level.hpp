// rewind/store/disk_level.hpp — the disk level of a snapshot store, whatever the backend: slots
// of host values and metadata bytes in an HDF5 file, written behind and read ahead. Its
// implementation is a part of its own, rewind::disk (checkpoint/disk/, which links HDF5), that a
// program links only when it keeps snapshots on disk:
//
//   target_link_libraries(my_program PRIVATE rewind::rewind rewind::disk)
//
//   if (!rwd::disk_level_linked()) ...                          // rewind::disk not linked
//   std::unique_ptr<rwd::DiskLevel> disk = rwd::open_disk_level(slots, where, options, 40);
//
// Why a part of its own: the HDF5 library (and, in a build with MPI, Open MPI behind parallel
// HDF5) would otherwise be linked into, and loaded by, every program that can choose a store
// from a plan, also one whose plans never leave memory. rewind::store reaches the disk level
// through two entry points that rewind::disk defines (below) and that rewind::store references
// weakly: a program without rewind::disk links, and asking it for a disk level — a plan with a
// disk level (rwd::make_snapshot_store, before any store is made), a DiskSnapshotStore, a disk
// cost measurement — throws rwd::StorageError saying that rewind::disk is not linked. Linking
// rewind::disk (its CMake target adds `-u rewind_disk_level_open`, so the entry points are
// taken from the static library although nothing calls them by name) makes them available.
//
// Users of a backend's vectors take DiskSnapshotStore (rewind/store/disk_snapshot_store.hpp),
// which copies states to and from the host values of this level.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include "rewind/error.hpp"
#include "rewind/store/disk_cost_probe.hpp"
#include "rewind/store/snapshot_ranks.hpp"
#include "rewind/store/snapshot_store.hpp"
#include "rewind/types.hpp"

namespace rwd {

struct DiskStoreOptions {
  // Where the snapshot file goes: `file` if given, else a fresh name in `directory`
  // ("rewind-snapshots-<pid>-<random>.h5"). One of the two is required.
  std::filesystem::path directory;
  std::filesystem::path file;
  bool asynchronous = true;   // background write-behind and read-ahead
  int staging_buffers = 2;    // host copies of a snapshot for the background thread
  int compression_level = 0;  // 0 none, 1–9 shuffle + deflate
  bool keep_file = false;     // leave the file in place at the end (closed, inspectable)
  // States split across ranks: one file per rank, or one file shared by every rank (then
  // `directory` or `file` must name the same place on every rank). One file per rank is the
  // default: on Gray–Scott at 10^6 unknowns, 2 ranks, each snapshot operation was an order of
  // magnitude faster than on the shared file (MPI-IO) and is written behind under
  // MPI_THREAD_FUNNELED (bench/results/disk_tier_across_ranks.md).
  RankFiles rank_files = RankFiles::one_per_rank;
  // Resumable runs (see the header): continue the file of a killed run with the same identity.
  bool resume = false;
  std::string identity;             // the run's configuration, as text ("key = value" lines)
  std::int64_t progress_bytes = 0;  // the largest progress record the run writes

  // The file this configuration writes to (a fresh name per call when only a directory is given).
  // rank ≥ 0: the file of that rank when each rank has its own ("<stem>.rank<K><extension>").
  std::filesystem::path choose_file(int rank = -1) const {
    if (!file.empty()) {
      if (rank < 0) return file;
      std::filesystem::path own = file;
      own.replace_filename(file.stem().string() + ".rank" + std::to_string(rank) +
                           file.extension().string());
      return own;
    }
    if (directory.empty())
      detail::fail<InvalidArgument>("disk snapshots need a directory or a file name");
    if (resume)  // the same name for every attempt
      return directory / (rank < 0 ? std::string("rewind-resume.h5")
                                   : "rewind-resume.rank" + std::to_string(rank) + ".h5");
    static std::atomic<unsigned> counter{0};
    std::random_device device;
    char name[80];
    if (rank < 0)
      std::snprintf(name, sizeof name, "rewind-snapshots-%ld-%08x-%u.h5",
                    static_cast<long>(::getpid()), device(), counter++);
    else
      std::snprintf(name, sizeof name, "rewind-snapshots-%ld-%08x-%u.rank%d.h5",
                    static_cast<long>(::getpid()), device(), counter++, rank);
    return directory / name;
  }
};

// Copies one snapshot into the host buffers of the disk level: the state's values and the
// metadata's bytes (sizes: the values given to DiskLevel::store and the level's meta size).
struct HostSnapshotSource {
  void (*copy)(const void* context, std::span<double> state, std::span<std::byte> meta) = nullptr;
  const void* context = nullptr;
};

// Copies one snapshot out of the host buffers of the disk level.
struct HostSnapshotTarget {
  void (*copy)(void* context, std::span<const double> state,
               std::span<const std::byte> meta) = nullptr;
  void* context = nullptr;
};

// The disk level: `slots()` slots, each one snapshot of `values` doubles and the level's meta
// size in bytes, in one HDF5 file (its layout: rewind/disk/hdf5_snapshot_file.hpp). The
// operations and their errors are those of rwd::SnapshotStore (rewind/store/snapshot_store.hpp),
// with the state as host values; with ranks (a ProcessSlice with ranks), every operation —
// opening included — is collective and ends in one agreement (agree_across_ranks), the copies
// of the state included.
class DiskLevel {
 public:
  virtual ~DiskLevel() = default;

  virtual int slots() const = 0;
  virtual const std::filesystem::path& path() const = 0;
  virtual const std::string& run_id() const = 0;
  // Bytes of one snapshot: its values and its metadata (uncompressed).
  virtual std::int64_t bytes_per_snapshot() const = 0;

  // Stores y_step in `slot`: `values` is the state's size on the host (refused unless it is the
  // level's), `source` copies it and its metadata into the staging buffer of the write.
  virtual void store(int slot, Index step, Index values, const HostSnapshotSource& source) = 0;
  // Restores y_step from `slot` into a state of `values` host values through `target`.
  virtual void restore(int slot, Index step, Index values, const HostSnapshotTarget& target) = 0;
  virtual void free(int slot) = 0;
  virtual void prefetch(int slot, Index step) = 0;
  virtual void finish() = 0;

  virtual bool resumable() const = 0;
  virtual bool persists(int slot) const = 0;
  virtual std::vector<std::byte> saved_progress() const = 0;
  virtual bool adopt(int slot, Index step) = 0;
  virtual void save_progress(std::span<const std::byte> progress) = 0;
  virtual bool progress_due(bool interval_passed) = 0;
  virtual void complete() = 0;
  // Whether the file was left by an earlier process of this run (and reopened).
  virtual bool resumed() const = 0;

  virtual SnapshotStoreStatistics statistics() const = 0;
};

// Whether this program links rewind::disk, so that snapshots can go to disk.
bool disk_level_linked();

// Throws rwd::StorageError unless rewind::disk is linked; `what` names what wanted the disk
// level ("schedule 'revolve(c = 4) on disk' keeps up to 4 snapshots on disk"), for the message.
void require_disk_level(std::string_view what);

// Opens the disk level of `slots` slots of this process's values of a state (where.slice) and
// `meta_size` metadata bytes each, as DiskStoreOptions says (a fresh file, or the file of a
// resumable run). Throws rwd::StorageError when rewind::disk is not linked, and what the level
// throws (a missing or unwritable directory, an existing file, a disk too small for every slot)
// before anything is written.
std::unique_ptr<DiskLevel> open_disk_level(int slots, const ProcessSlice& where,
                                           const DiskStoreOptions& options, int meta_size);

namespace detail {
// measure_disk_costs' measurement through a scratch file at `path` (removed again); throws
// rwd::StorageError when rewind::disk is not linked.
void measure_disk_costs_at(const std::filesystem::path& path, Index state_size, int meta_size,
                           int samples, DiskCosts& costs);
}  // namespace detail

}  // namespace rwd

// The entry points rewind::disk defines (checkpoint/disk/src/disk_level_entry_points.cpp);
// rewind::store references them weakly. C linkage, so that rewind::disk's CMake target can name
// them to the linker (-u); errors are thrown as C++ exceptions as everywhere in rewind.
extern "C" {
// A new disk level, owned by the caller (rwd::open_disk_level wraps it).
rwd::DiskLevel* rewind_disk_level_open(int slots, const rwd::ProcessSlice& where,
                                       const rwd::DiskStoreOptions& options, int meta_size);
// The measurement of rwd::measure_disk_costs through a scratch file at `path` (removed again),
// into *costs.
void rewind_disk_level_measure_costs(const std::filesystem::path& path, rwd::Index state_size,
                                     int meta_size, int samples, rwd::DiskCosts* costs);
}
