// rewind/store/disk_snapshot_store.hpp — snapshots in an HDF5 file (Hdf5SnapshotFile),
// written behind and read ahead by a background thread (SnapshotFileIo).
//
//   rwd::DiskStoreOptions disk{.directory = "/scratch"};
//   rwd::DiskSnapshotStore<rwd::EigenBackend, rwd::Carry> store(/*slots=*/100, n, disk);
//   store.store(7, 1700, y, carry);      // returns once y is copied to a staging buffer
//   store.prefetch(7, 1700);             // read it in the background
//   store.restore(7, 1700, y, carry);    // verified: checksum, run id, step
//   store.finish();                      // all writes done, errors rethrown
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
// One process only: a state split across ranks is refused.
//
// Threads: the background I/O thread of a shared file makes MPI-IO calls while the driver's
// thread exchanges halos, which MPI allows only under MPI_THREAD_MULTIPLE; when the ranks do not
// provide it (rwd::MpiSession asks for MPI_THREAD_FUNNELED by default) a shared file is written
// and read on the driver's thread instead (statistics().asynchronous says which). Files of one
// rank make no MPI calls and keep the background thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <unistd.h>

#include "rewind/backend/backend.hpp"
#include "rewind/error.hpp"
#include "rewind/store/hdf5_snapshot_file.hpp"
#include "rewind/store/snapshot_file_io.hpp"
#include "rewind/store/snapshot_ranks.hpp"
#include "rewind/store/snapshot_slots.hpp"
#include "rewind/store/snapshot_store.hpp"
#include "rewind/types.hpp"
#include "rewind/warning.hpp"

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
  // default: on Gray–Scott at 10^6 unknowns, 2 ranks, each snapshot operation was 12–20× faster
  // than on the shared file (MPI-IO) and is written behind under MPI_THREAD_FUNNELED
  // (bench/results/disk_tier_across_ranks.md).
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
    if (resume) return directory / "rewind-resume.h5";  // the same name for every attempt
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
      : keep_file_(options.keep_file),
        resume_(options.resume),
        slots_(std::max(slots, 0), "disk snapshot slot"),
        ranks_(where.ranks) {
    const bool split = ranks_ && ranks_->size() > 1;
    const bool shared = ranks_ && options.rank_files == RankFiles::shared;
    if (resume_ && split)
      detail::fail<InvalidArgument>(
          "a run whose state is split across ranks cannot be resumed yet (its progress would "
          "have to be agreed by every rank): run it without resume");
    if (resume_) {
      open_to_resume(slots, where.slice.values(), options);
      return;
    }
    std::optional<Hdf5SnapshotFile> file;
    try {
      // The file: each rank's own, or one that rank 0 names for every rank (a fresh name in
      // the shared directory).
      std::filesystem::path path;
      agree_across_ranks(ranks_.get(), [&] {
        if (!shared || ranks_->rank() == 0)
          path = options.choose_file(split && !shared ? ranks_->rank() : -1);
      });
      if (shared) path = ranks_->broadcast(path.string());
      // A rank that failed to create its file makes every rank stop; those that did remove
      // theirs (below). create_shared agrees inside, and throws on every rank alike.
      agree_across_ranks(ranks_.get(), [&] {
        SnapshotFileOptions file_options;
        file_options.compression_level = options.compression_level;
        const int meta_size = static_cast<int>(sizeof(Meta));
        if (shared)
          file.emplace(Hdf5SnapshotFile::create_shared(path, slots, where.slice, meta_size, *ranks_,
                                                       file_options));
        else
          file.emplace(
              Hdf5SnapshotFile::create(path, slots, where.slice.values(), meta_size, file_options));
      });
      path_ = file->path();
      SnapshotIoOptions io_options{.asynchronous = options.asynchronous,
                                   .staging_buffers = options.staging_buffers};
      if (shared && !ranks_->other_threads_may_communicate()) io_options.asynchronous = false;
      agree_across_ranks(ranks_.get(), [&] {
        io_options.validate();
        io_ = std::make_unique<SnapshotFileIo>(std::move(*file), io_options);
      });
    } catch (...) {
      if (file) file->remove();  // closes (collectively, for a shared file) and deletes
      if (io_) {
        io_.reset();
        std::error_code ignored;
        std::filesystem::remove(path_, ignored);
      }
      throw;
    }
  }

  DiskSnapshotStore(const DiskSnapshotStore&) = delete;
  DiskSnapshotStore& operator=(const DiskSnapshotStore&) = delete;

  // Stops the I/O thread; removes the file unless it is to be kept (then closes it cleanly): kept
  // on request, or when a resumable run did not complete.
  ~DiskSnapshotStore() override {
    if (!io_) return;
    if (keep_file_ || (resume_ && !completed_)) {
      try {
        io_->finish();  // the I/O thread is idle afterwards, error or not
        io_->file().close();
      } catch (...) {  // an error was already reported by the call that saw it
      }
      io_.reset();
    } else {
      io_.reset();  // joins the I/O thread and closes the file
      std::error_code ignored;
      std::filesystem::remove(path_, ignored);
    }
  }

  int slots() const override { return slots_.size(); }
  const std::filesystem::path& path() const { return path_; }
  const std::string& run_id() const { return io_->file().run_id(); }
  std::int64_t bytes_per_snapshot() const { return io_->file().bytes_per_snapshot(); }

  void store(int slot, Index step, const Vector& state, const Meta& meta) override {
    agree_across_ranks(ranks_.get(), [&] { store_here(slot, step, state, meta); });
  }
  void restore(int slot, Index step, Vector& state, Meta& meta) override {
    agree_across_ranks(ranks_.get(), [&] { restore_here(slot, step, state, meta); });
  }
  void free(int slot) override {
    agree_across_ranks(ranks_.get(), [&] {
      const std::size_t s = slots_.check_free(slot);
      io_->discard(slot);
      slots_.freed(s);
    });
  }
  void prefetch(int slot, Index step) override {
    agree_across_ranks(ranks_.get(), [&] {
      if (slots_.holds(slot, step)) io_->prefetch(slot, step);
    });
  }
  void finish() override {
    agree_across_ranks(ranks_.get(), [&] { io_->finish(); });
  }

  bool resumable() const override { return resume_; }
  bool persists(int slot) const override { return resume_ && slot >= 0 && slot < slots_.size(); }
  std::vector<std::byte> saved_progress() const override { return saved_progress_; }
  bool adopt(int slot, Index step) override {
    if (!resume_) return false;
    const std::size_t s = slots_.check_store(slot, step);
    io_->finish();  // the I/O thread is idle: the file is ours to read here
    if (!io_->file().holds(slot, step)) return false;
    slots_.adopted(s, step);
    return true;
  }
  void save_progress(std::span<const std::byte> progress) override {
    if (resume_) io_->save_progress(progress);
  }
  void complete() override { completed_ = true; }
  // Whether the file was left by an earlier process of this run (and reopened).
  bool resumed() const { return resumed_; }

  SnapshotStoreStatistics statistics() const override {
    SnapshotStoreStatistics statistics;
    statistics.disk_stores = slots_.stores();
    statistics.disk_restores = slots_.restores();
    statistics.peak_disk_bytes = slots_.peak_in_use() * io_->file().bytes_per_snapshot();
    statistics.file = path_.string();
    statistics.asynchronous = io_->asynchronous();
    statistics.io = io_->statistics();
    return statistics;
  }

 private:
  // This rank's part of store() and restore(), before the agreement.
  void store_here(int slot, Index step, const Vector& state, const Meta& meta) {
    const std::size_t s = slots_.check_store(slot, step);
    if (host_size<B>(state) != io_->file().state_size())
      detail::fail<InvalidArgument>("snapshot of ", host_size<B>(state),
                                    " values for a store of size ", io_->file().state_size());
    StagingBuffer& buffer = io_->begin_write();
    B::copy_to_host(state, std::span<double>(buffer.state));
    std::memcpy(buffer.meta.data(), &meta, sizeof(Meta));
    io_->submit_write(buffer, slot, step);
    slots_.stored(s, step);
  }

  void restore_here(int slot, Index step, Vector& state, Meta& meta) {
    slots_.check_restore(slot, step);
    // Checked before the read: a copy that throws below would keep the staging buffer held, and
    // with every buffer held no later store or restore could run.
    if (host_size<B>(state) != io_->file().state_size())
      detail::fail<InvalidArgument>("restoring y_", step, " from disk snapshot slot ", slot,
                                    " into a state of ", host_size<B>(state),
                                    " values; the store holds ", io_->file().state_size());
    const StagingBuffer& buffer = io_->read(slot, step);
    B::copy_from_host(std::span<const double>(buffer.state), state);
    std::memcpy(&meta, buffer.meta.data(), sizeof(Meta));
    io_->release(buffer);
    slots_.restored();
  }

  // The file of a resumable run: reopened when an earlier process of the same identity left it,
  // else created with the identity and room for progress records.
  void open_to_resume(int slots, Index state_size, const DiskStoreOptions& options) {
    const std::filesystem::path path = options.choose_file();
    std::error_code error;
    std::optional<Hdf5SnapshotFile> file;
    if (std::filesystem::exists(std::filesystem::symlink_status(path, error))) {
      // The file only ever appears under this name complete (see below), so one that cannot be
      // opened was damaged afterwards: refused, never deleted — it is the user's to judge.
      try {
        file.emplace(Hdf5SnapshotFile::reopen(path));
      } catch (const StorageError& unreadable) {
        detail::fail<StorageError>("cannot resume from ", path.string(), ": ", unreadable.what(),
                                   "; remove it to start the run afresh");
      }
    }
    if (file) {
      const std::string difference =
          describe_identity_difference(file->identity(), options.identity);
      if (!difference.empty())
        detail::fail<StorageError>("cannot resume from ", path.string(),
                                   ": it was written by another run configuration (", difference,
                                   "); remove it, or run in another directory");
      if (file->slots() != slots || file->state_size() != state_size ||
          file->meta_size() != static_cast<int>(sizeof(Meta)) ||
          file->progress_capacity() != options.progress_bytes)
        detail::fail<StorageError>("cannot resume from ", path.string(), ": it holds ",
                                   file->slots(), " slots of ", file->state_size(),
                                   " values, this run needs ", slots, " of ", state_size);
      saved_progress_ = file->read_progress();
      resumed_ = true;
    } else {
      // Created under a temporary name and given the real one only once complete and synced:
      // a process killed during the creation leaves "<name>.creating", which holds nothing
      // of value and is removed by the next attempt; it is never mistaken for a run's file.
      std::filesystem::path creating = path;
      creating += ".creating";
      if (std::filesystem::exists(std::filesystem::symlink_status(creating, error))) {
        warn("snapshot file", "removing ", creating.string(),
             ", left by a run killed while it was creating its file");
        std::filesystem::remove(creating, error);
      }
      file.emplace(Hdf5SnapshotFile::create(creating, slots, state_size,
                                            static_cast<int>(sizeof(Meta)),
                                            {.compression_level = options.compression_level,
                                             .identity = options.identity,
                                             .progress_bytes = options.progress_bytes}));
      try {
        file->publish_as(path);
      } catch (...) {
        file->remove();
        throw;
      }
    }
    path_ = file->path();
    const SnapshotIoOptions io_options{.asynchronous = options.asynchronous,
                                       .staging_buffers = options.staging_buffers};
    io_options.validate();
    io_ = std::make_unique<SnapshotFileIo>(std::move(*file), io_options);
  }

  // Empty when the two identities agree, else the first line that differs, in words.
  static std::string describe_identity_difference(const std::string& in_file,
                                                  const std::string& now) {
    if (in_file == now) return {};
    const auto lines = [](const std::string& text) {
      std::vector<std::string> out;
      std::size_t start = 0;
      while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        out.push_back(text.substr(start, end - start));
        start = end + 1;
      }
      return out;
    };
    const std::vector<std::string> a = lines(in_file), b = lines(now);
    for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
      const std::string x = i < a.size() ? a[i] : "(nothing)";
      const std::string y = i < b.size() ? b[i] : "(nothing)";
      if (x != y) return "the file says '" + x + "', this run '" + y + "'";
    }
    return "the identities differ";
  }

  bool keep_file_;
  bool resume_ = false;
  bool resumed_ = false;
  bool completed_ = false;
  std::vector<std::byte> saved_progress_;
  std::filesystem::path path_;
  std::unique_ptr<SnapshotFileIo> io_;
  detail::SnapshotSlots slots_;
  std::shared_ptr<const SnapshotRanks> ranks_;  // null: one process
};

}  // namespace rwd
