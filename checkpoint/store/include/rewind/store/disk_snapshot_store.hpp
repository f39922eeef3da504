// rewind/store/disk_snapshot_store.hpp — snapshots of a backend's states in an HDF5 file,
// written behind and read ahead by a background thread: the disk level (rwd::DiskLevel, in
// rewind::disk) behind the SnapshotStore interface.
//
//   rwd::DiskStoreOptions disk{.directory = "/scratch"};
//   rwd::DiskSnapshotStore<rwd::EigenBackend, rwd::Carry> store(/*slots=*/100, n, disk);
//   store.store(7, 1700, y, carry);      // returns once y is copied to a staging buffer
//   store.prefetch(7, 1700);             // read it in the background
//   store.restore(7, 1700, y, carry);    // verified: checksum, run id, step
//   store.finish();                      // all writes done, errors rethrown
//
// The program must link rewind::disk (rewind/store/disk_level.hpp says why); without it the
// constructor throws rwd::StorageError saying so.
//
// The file is created when the store is constructed — so a missing or read-only directory, an
// existing file or a disk too small for every slot fails before any work — and removed when the
// store is destroyed, on success and on error alike, unless `keep_file` is set (then it is closed
// and left for `rewind inspect`). States go through host staging buffers (B::copy_to_host), so
// the store works for device vectors too.
//
// States split across processes (MPI ranks; a ProcessSlice with ranks, from the backend through
// rwd::process_slice): each rank writes only its own values, either to a file of its own
// (RankFiles::one_per_rank: a ".rank<K>" suffix on a given file name) or to its hyperslab of one
// file shared by every rank (RankFiles::shared, Hdf5SnapshotFile::create_shared). Every operation
// — construction included — ends in an agreement across ranks (agree_across_ranks), so a failure
// on one rank (a damaged slice, a full disk, a missing directory) is thrown on every rank with
// the failing rank's message; no rank runs on into a collective the others never reach.
// Resumable runs (`resume`): the file is "rewind-resume.h5" in the directory (or the given file)
// and carries the run's `identity` and room for progress records of `progress_bytes`. If it
// exists, the store reopens it instead of refusing it — after checking that it was written by a
// run of the same identity, else a StorageError names the first difference — and hands back its
// newest progress record (saved_progress) and, slot by slot, the snapshots still intact (adopt).
// A new file is created as "<name>.creating" and renamed once complete and synced, so the name
// a later attempt looks for never holds a half-made file; one that cannot be opened is refused.
// The file stays when the run does not complete (an error, a signal, a kill), so that the same
// command can continue; it is removed once the run has completed (complete()), unless kept.
// States split across ranks: each rank has its own resumable file ("rewind-resume.rank<K>.h5",
// its identity naming the rank count and the rank's slice); progress records are agreed (see
// progress_due), a resumed run continues from the newest record every rank holds, and a snapshot
// is adopted only where every rank's slice of it is intact. A file shared by the ranks is refused.
//
// Threads: the background I/O thread of a shared file makes MPI-IO calls while the driver's
// thread exchanges halos, which MPI allows only under MPI_THREAD_MULTIPLE; when the ranks do not
// provide it (rwd::MpiSession asks for MPI_THREAD_FUNNELED by default) a shared file is written
// and read on the driver's thread instead (statistics().asynchronous says which). Files of one
// rank make no MPI calls and keep the background thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "rewind/backend/backend.hpp"
#include "rewind/store/disk_level.hpp"
#include "rewind/store/snapshot_ranks.hpp"
#include "rewind/store/snapshot_store.hpp"
#include "rewind/types.hpp"

namespace rwd {

template <VectorBackend B, class Meta>
class DiskSnapshotStore final : public SnapshotStore<B, Meta> {
  static_assert(std::is_trivially_copyable_v<Meta>, "snapshot metadata must be trivially copyable");

 public:
  using Vector = typename B::Vector;

  // state_size: the values of one snapshot (a whole state, one process).
  // (A slot count below 1 is refused by Hdf5SnapshotFile::create, in the file's words.)
  DiskSnapshotStore(int slots, Index state_size, const DiskStoreOptions& options)
      : DiskSnapshotStore(slots, ProcessSlice{StateSlice::whole_state(state_size), nullptr},
                          options) {}

  // where: this process's values of a state (rwd::process_slice) and, for a state split across
  // ranks, the ranks — then this constructor is collective, and so is every call below.
  DiskSnapshotStore(int slots, const ProcessSlice& where, const DiskStoreOptions& options)
      : level_(open_disk_level(slots, where, options, static_cast<int>(sizeof(Meta)))) {}

  DiskSnapshotStore(const DiskSnapshotStore&) = delete;
  DiskSnapshotStore& operator=(const DiskSnapshotStore&) = delete;

  int slots() const override { return level_->slots(); }
  const std::filesystem::path& path() const { return level_->path(); }
  const std::string& run_id() const { return level_->run_id(); }
  std::int64_t bytes_per_snapshot() const { return level_->bytes_per_snapshot(); }

  void store(int slot, Index step, const Vector& state, const Meta& meta) override {
    const Snapshot<const Vector, const Meta> from{state, meta};
    level_->store(slot, step, host_size<B>(state), {&copy_to_host, &from});
  }
  void restore(int slot, Index step, Vector& state, Meta& meta) override {
    Snapshot<Vector, Meta> into{state, meta};
    level_->restore(slot, step, host_size<B>(state), {&copy_from_host, &into});
  }
  void free(int slot) override { level_->free(slot); }
  void prefetch(int slot, Index step) override { level_->prefetch(slot, step); }
  void finish() override { level_->finish(); }

  bool resumable() const override { return level_->resumable(); }
  bool persists(int slot) const override { return level_->persists(slot); }
  std::vector<std::byte> saved_progress() const override { return level_->saved_progress(); }
  // With ranks: a snapshot is adopted only where every rank's slice of it is intact — the
  // others are recomputed, which every rank must do together.
  bool adopt(int slot, Index step) override { return level_->adopt(slot, step); }
  void save_progress(std::span<const std::byte> progress) override {
    level_->save_progress(progress);
  }
  bool progress_due(bool interval_passed) override { return level_->progress_due(interval_passed); }
  void complete() override { level_->complete(); }
  // Whether the file was left by an earlier process of this run (and reopened).
  bool resumed() const { return level_->resumed(); }

  SnapshotStoreStatistics statistics() const override { return level_->statistics(); }

 private:
  template <class V, class M>
  struct Snapshot {
    V& state;
    M& meta;
  };

  static void copy_to_host(const void* context, std::span<double> state,
                           std::span<std::byte> meta) {
    const auto& from = *static_cast<const Snapshot<const Vector, const Meta>*>(context);
    B::copy_to_host(from.state, state);
    std::memcpy(meta.data(), &from.meta, sizeof(Meta));
  }
  static void copy_from_host(void* context, std::span<const double> state,
                             std::span<const std::byte> meta) {
    auto& into = *static_cast<Snapshot<Vector, Meta>*>(context);
    B::copy_from_host(state, into.state);
    std::memcpy(&into.meta, meta.data(), sizeof(Meta));
  }

  std::unique_ptr<DiskLevel> level_;
};

}  // namespace rwd
