// rewind/disk/hdf5_snapshot_file.hpp — snapshots in one HDF5 file: fixed slots, each a
// state vector of doubles plus a few bytes of metadata, every slot checksummed.
//
//   auto file = rwd::Hdf5SnapshotFile::create("/scratch/run.h5", /*slots=*/100,
//                                             /*state size=*/1 << 20, /*meta size=*/40);
//   file.write(3, /*step=*/1700, state, meta);    // state: span<const double>, meta: bytes
//   file.read(3, /*expected step=*/1700, state, meta);  // verified, or rwd::StorageError
//   file.remove();
//
// Layout (format_version 1; readable with h5dump and h5py):
//   /states   float64 [slots × state_size], chunked one slot per chunk (a slot wider than 2^27
//             values spans several chunks), optionally shuffle + deflate; written and read
//             straight through (no chunk cache), so an error surfaces at the write that caused it.
//   /slots    compound [slots]: step (int64; −1 = never written), checksum (uint64),
//             run_id (32-character string), meta (uint8 [meta_size], absent when 0).
//   attributes of /: format = "rewind snapshots", format_version, run_id, slots, state_size,
//             meta_size, compression_level, checksum (what the checksum covers), created (UTC).
// The checksum is XXH3-64 of the state's bytes seeded with XXH3-64 of (meta bytes, step, slot,
// run id): a flipped bit anywhere in a snapshot, a snapshot read from the wrong slot or step, or
// one written by another run all fail it.
//
// A file shared by every rank of a run whose states are split across processes (create_shared,
// format_version 2) holds the whole state in /states, each rank writing and reading only its
// hyperslab (its StateSlice, through MPI-IO), and /slots is [slots × ranks]: each rank records
// its own step, metadata and checksum, of its own values, seeded with the rank too — so a
// damaged slice is named by rank, and no rank ever waits on another's record. The attributes
// add ranks and rank_slices (offset, run length, runs, stride per rank), so that one process
// can verify every rank's slice (`rewind inspect`). Opened with open(), such a file reads as
// rank 0's view: state_size() and read() are rank 0's slice; verify() checks every rank.
//
// Nothing is silent. create() refuses an existing file (naming the run that left it), a missing
// or unwritable directory, and a disk without room for every slot, before anything is written.
// write() reports a full disk or a file-size limit as such; read() checks that the file is still
// the one this object created (not removed, not replaced), that the slot was written by this run
// and holds the expected step, and the checksum. Every failure is an rwd::StorageError whose
// message names the file, the slot and the step.
//
// Resumable runs (format_version 1 and a /progress dataset): a caller that wants to continue a
// killed run creates the file with an identity (opaque text naming the run's configuration,
// stored as the attribute run_identity) and room for a progress record (progress_bytes). It then
// writes progress records — opaque bytes saying how far the run got — after the snapshots they
// depend on; a later process reopens the file with reopen(), compares identity(), takes the
// newest intact record from read_progress() and the snapshots that still hold what it says
// (holds()). Crash safety: every dataset of such a file is allocated when it is created and
// flushed then, so later writes change raw data in place and never HDF5's metadata; a process
// killed at any instant leaves a file that opens. /progress holds two records written in turn,
// each with a sequence number, its length and an XXH3-64 checksum, so a record torn by a kill is
// skipped and the one before it is used. (Compressed chunks move at every write, which is
// metadata: resumable files are uncompressed.)
//
// One object must not be used from two threads at once (the asynchronous store gives it to one
// I/O thread). This folder knows nothing about what the metadata means.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "rewind/store/snapshot_ranks.hpp"
#include "rewind/types.hpp"

namespace rwd {

struct SnapshotFileOptions {
  // 0: no compression (the default: snapshots of floating-point states rarely shrink much and the
  // write is on the critical path); 1–9: byte shuffle followed by deflate at that level.
  int compression_level = 0;
  // Resumable runs: the run's identity (opaque text, stored as the attribute run_identity) and
  // the largest progress record it will write (0: no /progress dataset).
  std::string identity;
  std::int64_t progress_bytes = 0;
};

// What one slot holds, as recorded in /slots.
struct SnapshotSlotRecord {
  int slot = -1;
  Index step = -1;  // −1: never written
  std::uint64_t checksum = 0;
  std::string run_id;
  int rank = 0;                   // the rank that wrote it (0 in a file of one process)
  std::int64_t stored_bytes = 0;  // bytes the state occupies in the file (after compression)
};

class Hdf5SnapshotFile {
 public:
  // Creates `path` for `slots` snapshots of `state_size` doubles and `meta_size` metadata bytes,
  // under a fresh random run id. Throws StorageError (existing file, directory missing or not
  // writable, not enough free space) or InvalidArgument (sizes) before writing anything.
  static Hdf5SnapshotFile create(const std::filesystem::path& path, int slots, Index state_size,
                                 int meta_size, const SnapshotFileOptions& options = {});
  // Collective over `ranks`: creates one file shared by every rank, for `slots` snapshots of a
  // state of slice.global_size values of which this rank holds `slice`. Rank 0 checks the path
  // and the directory for all; any failure is thrown on every rank alike. Compression is refused
  // (HDF5 filters need collective writes); every later write() and read() is this rank's alone
  // (independent MPI-IO), and close() is collective again.
  static Hdf5SnapshotFile create_shared(const std::filesystem::path& path, int slots,
                                        const StateSlice& slice, int meta_size,
                                        const SnapshotRanks& ranks,
                                        const SnapshotFileOptions& options = {});
  // Opens an existing snapshot file read-only (inspection, tests). Throws StorageError if it is
  // missing, not HDF5, or not a rewind snapshot file.
  static Hdf5SnapshotFile open(const std::filesystem::path& path) { return open(path, false); }
  // Opens an existing file of one process for writing, to continue the run that created it:
  // same run id, every slot's record as that run left it. Throws StorageError as open() does, and
  // for a file shared by ranks or without a /progress dataset (not made resumable).
  static Hdf5SnapshotFile reopen(const std::filesystem::path& path);

  Hdf5SnapshotFile(Hdf5SnapshotFile&& other) noexcept;
  Hdf5SnapshotFile& operator=(Hdf5SnapshotFile&& other) noexcept;
  Hdf5SnapshotFile(const Hdf5SnapshotFile&) = delete;
  Hdf5SnapshotFile& operator=(const Hdf5SnapshotFile&) = delete;
  ~Hdf5SnapshotFile();  // closes the file (never removes it; see remove())

  const std::filesystem::path& path() const { return path_; }
  const std::string& run_id() const { return run_id_; }
  int slots() const { return slots_; }
  // The values of one snapshot this process writes and reads (its slice in a shared file).
  Index state_size() const { return state_size_; }
  // The values of the whole state (state_size() unless the file is shared by several ranks).
  Index global_state_size() const { return slice_.global_size; }
  const StateSlice& slice() const { return slice_; }
  bool shared() const { return rank_ >= 0; }
  int ranks() const { return ranks_; }
  int meta_size() const { return meta_size_; }
  int compression_level() const { return compression_level_; }
  bool writable() const { return writable_; }
  // The identity given at creation (SnapshotFileOptions::identity); empty if none.
  const std::string& identity() const { return identity_; }
  // The largest progress record the file takes (0: not resumable).
  std::int64_t progress_capacity() const { return progress_capacity_; }
  // Uncompressed bytes of one snapshot: the state and its metadata.
  std::int64_t bytes_per_snapshot() const {
    return state_size_ * static_cast<std::int64_t>(sizeof(double)) + meta_size_;
  }

  // Writes a snapshot of y_step into `slot` (overwriting what it held) with its checksum.
  void write(int slot, Index step, std::span<const double> state, std::span<const std::byte> meta);
  // Reads `slot` into the buffers after checking file identity, run id, step and checksum.
  void read(int slot, Index expected_step, std::span<double> state, std::span<std::byte> meta);

  // The slot's record (rank `rank`'s in a shared file), without reading its state.
  SnapshotSlotRecord record(int slot, int rank = 0) const;
  // Reads the slot and recomputes its checksum: empty if intact (or never written), otherwise
  // why not. For inspection; read() does this and more. Every rank's slice of a shared file.
  std::string verify(int slot) const;

  // Records how far the run got: replaces the older of the two records. The bytes are opaque
  // here; at most progress_capacity() of them.
  void write_progress(std::span<const std::byte> progress);
  // The newest intact progress record; empty when none was written (or both are damaged).
  std::vector<std::byte> read_progress() const;
  // A progress record that passed its checksum, and its sequence number (1 for the first).
  struct ProgressRecord {
    std::uint64_t sequence = 0;
    std::vector<std::byte> payload;
  };
  // Every intact progress record, oldest first (at most two).
  std::vector<ProgressRecord> progress_records() const;
  // Makes record `sequence` the newest: a newer one is erased (its header zeroed and flushed),
  // and the next write_progress numbers its record sequence + 1. For the ranks of a split state,
  // which continue from the newest record every rank holds: a rank that got one record further
  // before the kill must not keep it, or a later attempt could pair it with another rank's
  // record of the same number written after a different action.
  void continue_after_progress(std::uint64_t sequence);
  // Whether `slot` holds an intact snapshot of y_step written by this file's run (its record
  // names the step and the run, and the checksum matches). Never throws for a damaged slot.
  bool holds(int slot, Index step) const;

  // Gives a file that was created under a temporary name its final name, in one step: its
  // bytes are forced to stable storage (fsync), then it is linked under `final_path` and the
  // temporary name removed, then the directory is synced. A process killed before this leaves
  // only the temporary name, which no later run mistakes for a file it could continue. Throws
  // StorageError when `final_path` already exists (never replaced) or the file system refuses.
  void publish_as(const std::filesystem::path& final_path);

  // Flushes and closes; an error while flushing (a full disk) throws StorageError. Idempotent.
  void close();
  // Closes and deletes the file. Never throws; returns false if the file could not be removed.
  bool remove() noexcept;

 private:
  Hdf5SnapshotFile() = default;
  void check_slot(int slot, const char* operation) const;
  void check_file_in_place(const char* operation, int slot, Index step) const;
  void initialise(std::int64_t file_access);  // datasets and attributes of a new file
  void read_state(int slot, const StateSlice& slice, std::span<double> state) const;
  void release() noexcept;
  static Hdf5SnapshotFile open(const std::filesystem::path& path, bool for_writing);

  std::filesystem::path path_;
  std::string run_id_;
  std::string created_;
  std::string identity_;
  std::int64_t progress_capacity_ = 0;
  mutable std::uint64_t progress_sequence_ = 0;  // of the newest record written or found
  int slots_ = 0;
  StateSlice slice_;                     // this process's values of the state
  int rank_ = -1;                        // this process's rank in a shared file, else −1
  int ranks_ = 1;                        // ranks sharing the file
  std::vector<StateSlice> rank_slices_;  // every rank's slice (shared files)
  Index state_size_ = 0;
  int meta_size_ = 0;
  int compression_level_ = 0;
  bool writable_ = false;
  Index chunk_width_ = 0;  // values per chunk along a slot
  // HDF5 identifiers (hid_t is int64_t); −1 when closed.
  std::int64_t file_ = -1, states_ = -1, records_ = -1, record_type_ = -1, progress_ = -1;
  // Identity of the file this object created, to notice removal or replacement.
  std::uint64_t device_ = 0, inode_ = 0;
};

}  // namespace rwd
