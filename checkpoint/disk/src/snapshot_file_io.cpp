// SnapshotFileIo (rewind/disk/snapshot_file_io.hpp).
#include "rewind/disk/snapshot_file_io.hpp"

#include <chrono>
#include <utility>

#include "rewind/error.hpp"
#include "rewind/format.hpp"

namespace rwd {
namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

void SnapshotIoOptions::validate() const {
  if (staging_buffers < 1 || staging_buffers > 64)
    detail::fail<InvalidArgument>("staging_buffers = ", staging_buffers, " must lie in [1, 64]");
}

SnapshotFileIo::SnapshotFileIo(Hdf5SnapshotFile file, const SnapshotIoOptions& options)
    : file_(std::move(file)), options_(options) {
  options_.validate();
  if (!file_.writable())
    detail::fail<InvalidArgument>("snapshot I/O needs a file opened for writing, not ",
                                  file_.path().string());
  // Synchronous I/O never has more than one snapshot in flight.
  const int count = options_.asynchronous ? options_.staging_buffers : 1;
  buffers_.resize(static_cast<std::size_t>(count));
  for (StagingBuffer& buffer : buffers_) {
    buffer.state.assign(static_cast<std::size_t>(file_.state_size()), 0.0);
    buffer.meta.assign(static_cast<std::size_t>(file_.meta_size()), std::byte{0});
  }
  statistics_.staging_bytes = count * file_.bytes_per_snapshot();
  if (options_.asynchronous) thread_ = std::thread([this] { run_thread(); });
}

SnapshotFileIo::~SnapshotFileIo() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
}

void SnapshotFileIo::rethrow_if_failed() const {
  if (error_) std::rethrow_exception(error_);
}

StagingBuffer* SnapshotFileIo::take_free_buffer(std::unique_lock<std::mutex>& lock) {
  const auto start = Clock::now();
  bool waited = false;
  for (;;) {
    rethrow_if_failed();
    for (StagingBuffer& buffer : buffers_)
      if (buffer.status == StagingBuffer::Status::free) {
        if (waited) {
          const double waited_s = seconds_since(start);
          statistics_.wait_seconds += waited_s;
          statistics_.buffer_wait_seconds += waited_s;
        }
        return &buffer;
      }
    // Waiting helps only if a request is in flight; otherwise give up a finished prefetch.
    bool in_flight = false;
    for (StagingBuffer& buffer : buffers_)
      in_flight = in_flight || buffer.status == StagingBuffer::Status::write_queued ||
                  buffer.status == StagingBuffer::Status::read_queued;
    if (!in_flight) {
      for (StagingBuffer& buffer : buffers_)
        if (buffer.status == StagingBuffer::Status::read_done) {
          buffer.status = StagingBuffer::Status::free;
          buffer.error = nullptr;
          if (waited) {
            const double waited_s = seconds_since(start);
            statistics_.wait_seconds += waited_s;
            statistics_.buffer_wait_seconds += waited_s;
          }
          return &buffer;
        }
      detail::fail<InvalidArgument>("snapshot I/O: every staging buffer is held by the caller");
    }
    waited = true;
    changed_.wait(lock);
  }
}

StagingBuffer& SnapshotFileIo::begin_write() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (const StagingBuffer& buffer : buffers_)
    if (buffer.status == StagingBuffer::Status::filling)
      detail::fail<InvalidArgument>("snapshot I/O: begin_write() twice without submit_write()");
  StagingBuffer* buffer = take_free_buffer(lock);
  buffer->status = StagingBuffer::Status::filling;
  return *buffer;
}

void SnapshotFileIo::submit_write(StagingBuffer& buffer, int slot, Index step) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (buffer.status != StagingBuffer::Status::filling)
    detail::fail<InvalidArgument>(
        "snapshot I/O: submit_write() of a buffer not from begin_write()");
  if (slot < 0 || slot >= file_.slots()) {
    buffer.status = StagingBuffer::Status::free;
    detail::fail<InvalidArgument>("snapshot I/O: slot ", slot, " outside [0, ", file_.slots(), ")");
  }
  // Earlier reads of this slot are stale once it is overwritten.
  for (StagingBuffer& other : buffers_) {
    if (&other == &buffer || other.slot != slot) continue;
    if (other.status == StagingBuffer::Status::read_done)
      other.status = StagingBuffer::Status::free;
    if (other.status == StagingBuffer::Status::read_queued) other.slot = -1;  // freed when done
  }
  buffer.slot = slot;
  buffer.step = step;
  buffer.status = StagingBuffer::Status::write_queued;
  if (options_.asynchronous) {
    queue_.push_back(&buffer);
    lock.unlock();
    changed_.notify_all();
    return;
  }
  lock.unlock();
  perform(buffer);
  rethrow_if_failed();
}

bool SnapshotFileIo::prefetch(int slot, Index step) {
  std::unique_lock<std::mutex> lock(mutex_);
  rethrow_if_failed();
  if (!options_.asynchronous) return false;
  for (StagingBuffer& buffer : buffers_)
    if (buffer.slot == slot && buffer.step == step &&
        (buffer.status == StagingBuffer::Status::read_queued ||
         buffer.status == StagingBuffer::Status::read_done))
      return true;
  StagingBuffer* free_buffer = nullptr;
  for (StagingBuffer& buffer : buffers_)
    if (buffer.status == StagingBuffer::Status::free) {
      free_buffer = &buffer;
      break;
    }
  if (!free_buffer) return false;
  free_buffer->slot = slot;
  free_buffer->step = step;
  free_buffer->error = nullptr;
  free_buffer->status = StagingBuffer::Status::read_queued;
  queue_.push_back(free_buffer);
  lock.unlock();
  changed_.notify_all();
  return true;
}

const StagingBuffer& SnapshotFileIo::read(int slot, Index step) {
  std::unique_lock<std::mutex> lock(mutex_);
  rethrow_if_failed();
  StagingBuffer* found = nullptr;
  for (StagingBuffer& buffer : buffers_)
    if (buffer.slot == slot && buffer.step == step &&
        (buffer.status == StagingBuffer::Status::read_queued ||
         buffer.status == StagingBuffer::Status::read_done)) {
      found = &buffer;
      break;
    }
  if (found) {
    ++statistics_.prefetch_hits;
  } else {
    ++statistics_.prefetch_misses;
    found = take_free_buffer(lock);
    found->slot = slot;
    found->step = step;
    found->error = nullptr;
    found->status = StagingBuffer::Status::read_queued;
    if (options_.asynchronous) {
      queue_.push_back(found);
      changed_.notify_all();
    } else {
      lock.unlock();
      perform(*found);
      lock.lock();
    }
  }
  if (found->status == StagingBuffer::Status::read_queued) {
    const auto start = Clock::now();
    changed_.wait(lock, [found] { return found->status != StagingBuffer::Status::read_queued; });
    const double waited_s = seconds_since(start);
    statistics_.wait_seconds += waited_s;
    statistics_.read_wait_seconds += waited_s;
  }
  if (found->error) {
    std::exception_ptr error = std::exchange(found->error, nullptr);
    found->status = StagingBuffer::Status::free;
    std::rethrow_exception(error);
  }
  found->status = StagingBuffer::Status::held;
  return *found;
}

void SnapshotFileIo::release(const StagingBuffer& buffer) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (StagingBuffer& own : buffers_)
    if (&own == &buffer) {
      if (own.status != StagingBuffer::Status::held)
        detail::fail<InvalidArgument>("snapshot I/O: release() of a buffer not from read()");
      own.status = StagingBuffer::Status::free;
      changed_.notify_all();
      return;
    }
  detail::fail<InvalidArgument>("snapshot I/O: release() of a foreign buffer");
}

void SnapshotFileIo::discard(int slot) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (StagingBuffer& buffer : buffers_) {
    if (buffer.slot != slot) continue;
    if (buffer.status == StagingBuffer::Status::read_done) {
      buffer.status = StagingBuffer::Status::free;
      buffer.error = nullptr;
    } else if (buffer.status == StagingBuffer::Status::read_queued) {
      buffer.slot = -1;
    }
  }
  changed_.notify_all();
}

void SnapshotFileIo::save_progress(std::span<const std::byte> progress) {
  std::unique_lock<std::mutex> lock(mutex_);
  rethrow_if_failed();
  if (options_.asynchronous)
    changed_.wait(lock,
                  [this] { return progress_.status != StagingBuffer::Status::progress_queued; });
  rethrow_if_failed();
  progress_.meta.assign(progress.begin(), progress.end());
  progress_.status = StagingBuffer::Status::progress_queued;
  if (options_.asynchronous) {
    queue_.push_back(&progress_);
    lock.unlock();
    changed_.notify_all();
    return;
  }
  lock.unlock();
  perform(progress_);
  rethrow_if_failed();
}

bool SnapshotFileIo::progress_pending() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return progress_.status == StagingBuffer::Status::progress_queued;
}

void SnapshotFileIo::finish() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (options_.asynchronous && (!queue_.empty() || busy_)) {
    const auto start = Clock::now();
    changed_.wait(lock, [this] { return queue_.empty() && !busy_; });
    statistics_.wait_seconds += seconds_since(start);
  }
  rethrow_if_failed();
}

void SnapshotFileIo::perform(StagingBuffer& buffer) {
  if (&buffer == &progress_) {
    bool skipped = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      skipped = error_ != nullptr;  // a record after a failed write would claim too much
    }
    std::exception_ptr error;
    const auto start = Clock::now();
    if (!skipped) {
      try {
        file_.write_progress(buffer.meta);
      } catch (...) {
        error = std::current_exception();
      }
    }
    const double elapsed = seconds_since(start);
    std::lock_guard<std::mutex> lock(mutex_);
    statistics_.write_seconds += elapsed;
    if (!options_.asynchronous) statistics_.wait_seconds += elapsed;
    if (!skipped && !error) {
      ++statistics_.progress_writes;
      statistics_.bytes_written += static_cast<std::int64_t>(buffer.meta.size());
    }
    if (error && !error_) error_ = error;
    buffer.status = StagingBuffer::Status::free;
    changed_.notify_all();
    return;
  }
  bool writing = false, skipped = false;
  int slot = -1;
  Index step = -1;
  {
    // The caller may orphan a queued read (slot = −1) concurrently: read the request under the
    // lock. A write after a failed write is pointless (the run is ending): skip it.
    std::lock_guard<std::mutex> lock(mutex_);
    writing = buffer.status == StagingBuffer::Status::write_queued;
    slot = buffer.slot;
    step = buffer.step;
    skipped = (writing && error_ != nullptr) || slot < 0;
  }
  std::exception_ptr error;
  const auto start = Clock::now();
  if (!skipped) {
    try {
      if (writing)
        file_.write(slot, step, buffer.state, buffer.meta);
      else
        file_.read(slot, step, buffer.state, buffer.meta);
    } catch (...) {
      error = std::current_exception();
    }
  }
  const double elapsed = seconds_since(start);
  // The error is moved, never copied, into what the caller's thread reads: this thread keeps no
  // reference to the exception after the lock is released, so the caller's thread alone destroys
  // it (ThreadSanitizer cannot see libstdc++'s reference count, and reported the destruction here
  // racing the caller's what()).
  std::lock_guard<std::mutex> lock(mutex_);
  const auto bytes = file_.bytes_per_snapshot();
  if (writing) {
    if (!skipped) {
      statistics_.write_seconds += elapsed;
      if (!options_.asynchronous) statistics_.wait_seconds += elapsed;
      if (!error) {
        ++statistics_.writes;
        statistics_.bytes_written += bytes;
      }
    }
    if (error && !error_) error_ = std::move(error);
    buffer.status = StagingBuffer::Status::free;
  } else {
    statistics_.read_seconds += elapsed;
    if (!options_.asynchronous) statistics_.wait_seconds += elapsed;
    if (!error && !skipped) {
      ++statistics_.reads;
      statistics_.bytes_read += bytes;
    }
    buffer.error = std::move(error);
    if (buffer.slot < 0) {  // orphaned: its slot was overwritten or discarded meanwhile
      buffer.status = StagingBuffer::Status::free;
      buffer.error = nullptr;
    } else {
      buffer.status = StagingBuffer::Status::read_done;
    }
  }
  changed_.notify_all();
}

void SnapshotFileIo::run_thread() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left to do
    StagingBuffer* buffer = queue_.front();
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    perform(*buffer);
    lock.lock();
    busy_ = false;
    changed_.notify_all();
  }
}

}  // namespace rwd
