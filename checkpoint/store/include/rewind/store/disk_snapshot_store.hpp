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
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <unistd.h>

#include "rewind/backend/backend.hpp"
#include "rewind/error.hpp"
#include "rewind/store/hdf5_snapshot_file.hpp"
#include "rewind/store/snapshot_file_io.hpp"
#include "rewind/store/snapshot_slots.hpp"
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

  // The file this configuration writes to (a fresh name per call when only a directory is given).
  std::filesystem::path choose_file() const {
    if (!file.empty()) return file;
    if (directory.empty())
      detail::fail<InvalidArgument>("disk snapshots need a directory or a file name");
    static std::atomic<unsigned> counter{0};
    std::random_device device;
    char name[80];
    std::snprintf(name, sizeof name, "rewind-snapshots-%ld-%08x-%u.h5",
                  static_cast<long>(::getpid()), device(), counter++);
    return directory / name;
  }
};

template <VectorBackend B, class Meta>
class DiskSnapshotStore final : public SnapshotStore<B, Meta> {
  static_assert(std::is_trivially_copyable_v<Meta>, "snapshot metadata must be trivially copyable");

 public:
  using Vector = typename B::Vector;

  // state_size: the values of one snapshot this process writes (rwd::host_size: the whole state,
  // or a rank's own rows on a backend split across processes, each rank with its own file).
  // (A slot count below 1 is refused by Hdf5SnapshotFile::create, in the file's words.)
  DiskSnapshotStore(int slots, Index state_size, const DiskStoreOptions& options)
      : keep_file_(options.keep_file), slots_(std::max(slots, 0), "disk snapshot slot") {
    SnapshotIoOptions io_options{.asynchronous = options.asynchronous,
                                 .staging_buffers = options.staging_buffers};
    io_options.validate();
    auto file = Hdf5SnapshotFile::create(options.choose_file(), slots, state_size,
                                         static_cast<int>(sizeof(Meta)),
                                         {.compression_level = options.compression_level});
    path_ = file.path();
    try {
      io_ = std::make_unique<SnapshotFileIo>(std::move(file), io_options);
    } catch (...) {
      std::error_code ignored;
      std::filesystem::remove(path_, ignored);
      throw;
    }
  }

  DiskSnapshotStore(const DiskSnapshotStore&) = delete;
  DiskSnapshotStore& operator=(const DiskSnapshotStore&) = delete;

  // Stops the I/O thread; removes the file unless it is to be kept (then closes it cleanly).
  ~DiskSnapshotStore() override {
    if (!io_) return;
    if (keep_file_) {
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

  void restore(int slot, Index step, Vector& state, Meta& meta) override {
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

  void free(int slot) override {
    const std::size_t s = slots_.check_free(slot);
    io_->discard(slot);
    slots_.freed(s);
  }

  void prefetch(int slot, Index step) override {
    if (slots_.holds(slot, step)) io_->prefetch(slot, step);
  }

  void finish() override { io_->finish(); }

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
  bool keep_file_;
  std::filesystem::path path_;
  std::unique_ptr<SnapshotFileIo> io_;
  detail::SnapshotSlots slots_;
};

}  // namespace rwd
