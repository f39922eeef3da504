// rwd::DiskLevel in an HDF5 snapshot file (Hdf5SnapshotFile) through SnapshotFileIo: the disk
// level of every snapshot store (rewind/store/disk_level.hpp, rewind/store/disk_snapshot_store.hpp
// for what it does and promises), compiled once here for every backend — the backends' states
// reach it as host values through the store's copies.
#include "hdf5_disk_level.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "rewind/disk/hdf5_snapshot_file.hpp"
#include "rewind/disk/snapshot_file_io.hpp"
#include "rewind/error.hpp"
#include "rewind/store/snapshot_ranks.hpp"
#include "rewind/store/snapshot_slots.hpp"
#include "rewind/warning.hpp"

namespace rwd {
namespace {

class Hdf5DiskLevel final : public DiskLevel {
 public:
  Hdf5DiskLevel(int slots, const ProcessSlice& where, const DiskStoreOptions& options,
                int meta_size)
      : meta_size_(meta_size),
        keep_file_(options.keep_file),
        resume_(options.resume),
        slots_(std::max(slots, 0), "disk snapshot slot"),
        ranks_(where.ranks) {
    const bool split = ranks_ && ranks_->size() > 1;
    const bool shared = ranks_ && options.rank_files == RankFiles::shared;
    if (resume_ && shared)
      detail::fail<InvalidArgument>(
          "a run whose ranks share one snapshot file cannot be resumed (each rank keeps its own "
          "progress records): use one file per rank (RankFiles::one_per_rank, the default)");
    if (resume_) {
      open_to_resume(slots, where, options);
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
        if (shared)
          file.emplace(Hdf5SnapshotFile::create_shared(path, slots, where.slice, meta_size_,
                                                       *ranks_, file_options));
        else
          file.emplace(Hdf5SnapshotFile::create(path, slots, where.slice.values(), meta_size_,
                                                file_options));
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

  Hdf5DiskLevel(const Hdf5DiskLevel&) = delete;
  Hdf5DiskLevel& operator=(const Hdf5DiskLevel&) = delete;

  // Stops the I/O thread; removes the file unless it is to be kept (then closes it cleanly): kept
  // on request, or when a resumable run did not complete.
  ~Hdf5DiskLevel() override {
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
  const std::filesystem::path& path() const override { return path_; }
  const std::string& run_id() const override { return io_->file().run_id(); }
  std::int64_t bytes_per_snapshot() const override { return io_->file().bytes_per_snapshot(); }

  void store(int slot, Index step, Index values, const HostSnapshotSource& source) override {
    agree_across_ranks(ranks_.get(), [&] { store_here(slot, step, values, source); });
  }
  void restore(int slot, Index step, Index values, const HostSnapshotTarget& target) override {
    agree_across_ranks(ranks_.get(), [&] { restore_here(slot, step, values, target); });
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
  // With ranks: a snapshot is adopted only where every rank's slice of it is intact — the
  // others are recomputed, which every rank must do together.
  bool adopt(int slot, Index step) override {
    if (!resume_) return false;
    std::size_t s = 0;
    bool intact = false;
    agree_across_ranks(ranks_.get(), [&] {
      s = slots_.check_store(slot, step);
      io_->finish();  // the I/O thread is idle: the file is ours to read here
      intact = io_->file().holds(slot, step);
    });
    if (split()) {
      const std::int64_t mine = intact ? 1 : 0;
      for (const std::int64_t each : ranks_->all_gather(std::span(&mine, 1)))
        intact = intact && each != 0;
    }
    if (!intact) return false;
    slots_.adopted(s, step);
    return true;
  }
  void save_progress(std::span<const std::byte> progress) override {
    if (resume_) io_->save_progress(progress);
  }
  bool progress_due(bool interval_passed) override {
    if (!resume_) return false;
    if (!split()) return interval_passed;
    const std::int64_t mine[2] = {interval_passed ? 1 : 0, io_->progress_pending() ? 1 : 0};
    const std::vector<std::int64_t> all = ranks_->all_gather(mine);
    bool due = all[0] != 0;  // rank 0's clock
    for (std::size_t r = 0; r < all.size(); r += 2) due = due && all[r + 1] == 0;
    return due;
  }
  void complete() override { completed_ = true; }
  bool resumed() const override { return resumed_; }

  SnapshotStoreStatistics statistics() const override {
    SnapshotStoreStatistics statistics;
    LevelStatistics& disk = statistics.level_entry(LevelKind::disk);
    disk.stores = slots_.stores();
    disk.restores = slots_.restores();
    disk.peak_bytes = slots_.peak_in_use() * io_->file().bytes_per_snapshot();
    statistics.file = path_.string();
    statistics.asynchronous = io_->asynchronous();
    statistics.io = io_->statistics();
    return statistics;
  }

 private:
  // This rank's part of store() and restore(), before the agreement.
  void store_here(int slot, Index step, Index values, const HostSnapshotSource& source) {
    const std::size_t s = slots_.check_store(slot, step);
    if (values != io_->file().state_size())
      detail::fail<InvalidArgument>("snapshot of ", values, " values for a store of size ",
                                    io_->file().state_size());
    StagingBuffer& buffer = io_->begin_write();
    source.copy(source.context, std::span<double>(buffer.state), std::span<std::byte>(buffer.meta));
    io_->submit_write(buffer, slot, step);
    slots_.stored(s, step);
  }

  void restore_here(int slot, Index step, Index values, const HostSnapshotTarget& target) {
    slots_.check_restore(slot, step);
    // Checked before the read: a copy that throws below would keep the staging buffer held, and
    // with every buffer held no later store or restore could run.
    if (values != io_->file().state_size())
      detail::fail<InvalidArgument>("restoring y_", step, " from disk snapshot slot ", slot,
                                    " into a state of ", values, " values; the store holds ",
                                    io_->file().state_size());
    const StagingBuffer& buffer = io_->read(slot, step);
    target.copy(target.context, std::span<const double>(buffer.state),
                std::span<const std::byte>(buffer.meta));
    io_->release(buffer);
    slots_.restored();
  }

  bool split() const { return ranks_ && ranks_->size() > 1; }

  // The file of a resumable run: reopened when an earlier process of the same identity left it,
  // else created with the identity and room for progress records. The ranks of a split state
  // each have a file of their own, whose identity adds the rank count and the rank's slice; they
  // continue from the newest progress record that every rank holds (see progress_due).
  void open_to_resume(int slots, const ProcessSlice& where, const DiskStoreOptions& given) {
    DiskStoreOptions options = given;
    if (ranks_) {  // first, so that another rank count is the difference named
      // A rank count even for one rank: its reductions are the distributed backend's, whose
      // last bits differ from one process's, so neither may continue the other's file.
      const StateSlice& slice = where.slice;
      std::ostringstream own;
      own << "ranks = " << ranks_->size() << '\n';
      if (split())
        own << "rank = " << ranks_->rank() << "\nslice = " << slice.runs << " runs of "
            << slice.run_length << " values from " << slice.offset << " every " << slice.stride
            << " of " << slice.global_size << '\n';
      options.identity = own.str() + options.identity;
    }
    const Index state_size = where.slice.values();
    const std::filesystem::path path = options.choose_file(split() ? ranks_->rank() : -1);
    std::optional<Hdf5SnapshotFile> file;
    std::vector<Hdf5SnapshotFile::ProgressRecord> records;
    agree_across_ranks(ranks_.get(), [&] {
      std::error_code error;
      if (!std::filesystem::exists(std::filesystem::symlink_status(path, error))) {
        // The files of this directory's run under another process count (one process's file,
        // or rank files) would be neither continued nor removed by a fresh start: refused.
        if (!options.file.empty()) return;
        const std::filesystem::path other =
            options.directory / (split() ? "rewind-resume.h5" : "rewind-resume.rank0.h5");
        if (std::filesystem::exists(std::filesystem::symlink_status(other, error)))
          detail::fail<StorageError>(
              "cannot resume in ", options.directory.string(), ": it holds ", other.string(),
              split() ? ", left by a run in one process" : ", left by a run split across ranks",
              "; run it again as it was started (the same number of processes), or remove its "
              "rewind-resume*.h5 files to start afresh");
        return;
      }
      // The file only ever appears under this name complete (see below), so one that cannot be
      // opened was damaged afterwards: refused, never deleted — it is the user's to judge.
      try {
        file.emplace(Hdf5SnapshotFile::reopen(path));
      } catch (const StorageError& unreadable) {
        detail::fail<StorageError>("cannot resume from ", path.string(), ": ", unreadable.what(),
                                   "; remove it to start the run afresh");
      }
      const std::string difference =
          describe_identity_difference(file->identity(), options.identity);
      if (!difference.empty())
        detail::fail<StorageError>("cannot resume from ", path.string(),
                                   ": it was written by another run configuration (", difference,
                                   "); remove it, or run in another directory");
      if (file->slots() != slots || file->state_size() != state_size ||
          file->meta_size() != meta_size_ || file->progress_capacity() != options.progress_bytes)
        detail::fail<StorageError>("cannot resume from ", path.string(), ": it holds ",
                                   file->slots(), " slots of ", file->state_size(),
                                   " values, this run needs ", slots, " of ", state_size);
      records = file->progress_records();
    });
    const std::uint64_t resume_from = agreed_progress(path, file.has_value(), records);
    agree_across_ranks(ranks_.get(), [&] {
      if (file) {
        for (Hdf5SnapshotFile::ProgressRecord& record : records)
          if (record.sequence == resume_from) saved_progress_ = std::move(record.payload);
        if (!records.empty() && resume_from < records.back().sequence)
          file->continue_after_progress(resume_from);
        resumed_ = true;
        return;
      }
      // Created under a temporary name and given the real one only once complete and synced:
      // a process killed during the creation leaves "<name>.creating", which holds nothing
      // of value and is removed by the next attempt; it is never mistaken for a run's file.
      std::error_code error;
      std::filesystem::path creating = path;
      creating += ".creating";
      if (std::filesystem::exists(std::filesystem::symlink_status(creating, error))) {
        warn("snapshot file", "removing ", creating.string(),
             ", left by a run killed while it was creating its file");
        std::filesystem::remove(creating, error);
      }
      file.emplace(Hdf5SnapshotFile::create(creating, slots, state_size, meta_size_,
                                            {.compression_level = options.compression_level,
                                             .identity = options.identity,
                                             .progress_bytes = options.progress_bytes}));
      try {
        file->publish_as(path);
      } catch (...) {
        file->remove();
        throw;
      }
    });
    path_ = file->path();
    const SnapshotIoOptions io_options{.asynchronous = options.asynchronous,
                                       .staging_buffers = options.staging_buffers};
    io_options.validate();
    io_ = std::make_unique<SnapshotFileIo>(std::move(*file), io_options);
  }

  // The sequence number of the progress record to continue from (0: start afresh): this
  // process's newest, or for a split state the newest that every rank holds. Collective.
  std::uint64_t agreed_progress(
      const std::filesystem::path& path, bool have_file,
      const std::vector<Hdf5SnapshotFile::ProgressRecord>& records) const {
    if (!split()) return records.empty() ? 0 : records.back().sequence;
    // Per rank: whether it has a file, and the sequence numbers of its (at most two) records.
    std::int64_t mine[3] = {have_file ? 1 : 0, 0, 0};
    for (std::size_t i = 0; i < records.size() && i < 2; ++i)
      mine[1 + i] = static_cast<std::int64_t>(records[i].sequence);
    const std::vector<std::int64_t> all = ranks_->all_gather(mine);
    const int ranks = ranks_->size();
    bool any_record = false;
    for (int r = 0; r < ranks; ++r) any_record = any_record || all[3 * r + 1] > 0;
    if (!any_record) return 0;  // killed before the first record: every rank starts afresh
    for (int r = 0; r < ranks; ++r)
      if (all[3 * r] == 0)
        detail::fail<StorageError>(
            "cannot resume from ", path.parent_path().string(), ": rank ", r, " of ", ranks,
            " has no snapshot file there while other ranks hold the run's progress (was it "
            "started with other ranks or on another node?); remove the rewind-resume.rank*.h5 "
            "files to start the run afresh");
    const auto holds = [&](int r, std::int64_t sequence) {
      return all[3 * r + 1] == sequence || all[3 * r + 2] == sequence;
    };
    std::int64_t best = 0;
    for (int c = 1; c <= 2; ++c) {
      const std::int64_t candidate = all[static_cast<std::size_t>(c)];
      bool everywhere = candidate > best;
      for (int r = 0; everywhere && r < ranks; ++r) everywhere = holds(r, candidate);
      if (everywhere) best = candidate;
    }
    // No record in common: fine only while no rank got past its first (record 1 is written
    // after every rank created its file): every rank then starts afresh, erasing its record 1.
    bool past_first = false;
    for (int r = 0; r < ranks; ++r)
      past_first = past_first || all[3 * r + 1] > 1 || all[3 * r + 2] > 1;
    if (best == 0 && past_first)
      detail::fail<StorageError>(
          "cannot resume from ", path.parent_path().string(),
          ": the ranks' snapshot files hold no progress record in common (rank 0 holds record ",
          all[1], " and ", all[2],
          "); remove the rewind-resume.rank*.h5 files to start the run afresh");
    return static_cast<std::uint64_t>(best);
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

  int meta_size_;  // bytes of one snapshot's metadata
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

}  // namespace

std::unique_ptr<DiskLevel> make_hdf5_disk_level(int slots, const ProcessSlice& where,
                                                const DiskStoreOptions& options, int meta_size) {
  return std::make_unique<Hdf5DiskLevel>(slots, where, options, meta_size);
}

}  // namespace rwd
