// rewind/store/snapshot_ranks.hpp — what the disk snapshot store needs when a state is split
// across processes (MPI ranks): where this process's values sit in the whole state, and a few
// collective calls. A distributed backend provides both (rewind::distributed implements
// SnapshotRanks over MPI); checkpoint/ never calls MPI itself.
//
//   rwd::ProcessSlice where = rwd::process_slice<B>(y0);   // whole state, no ranks: one process
//   rwd::DiskSnapshotStore<B, rwd::Carry> store(slots, where, {.directory = "/scratch",
//                                               .rank_files = rwd::RankFiles::shared});
//
// Why an interface here rather than the store in src/distributed: the store's logic (slots,
// staging buffers, the I/O thread, checksums, the file format) is the same for one process and
// for many; only four things differ — which values of the state this process writes (a
// StateSlice), how a failure on one rank reaches every rank (first_failure), how rank 0's run id
// and file name reach the others (broadcast, all_gather), and how HDF5 opens a file shared by
// every rank (use_mpi_io, which sets the MPI-IO driver on an HDF5 property list). Those are
// hooks; everything else is one code path, tested serially and under MPI alike.
//
// Failures: with ranks, every store operation ends in one agreement (agree_across_ranks below,
// one small all-reduce): if any rank failed, every rank throws the same rwd error, "rank K of N:
// <what rank K saw>" — the lowest failing rank's message, which names the slot and the step. No
// rank goes on into a halo exchange the failing rank never reaches, so nothing hangs, and no
// rank returns a gradient.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "rewind/backend/backend.hpp"
#include "rewind/error.hpp"
#include "rewind/types.hpp"

namespace rwd {

// This process's values of a state of `global_size` values: `runs` runs of `run_length` values,
// the first starting at `offset`, each `stride` values after the previous (a rank's rows of each
// field of a row-split state). Its values are the runs concatenated, in order.
struct StateSlice {
  Index global_size = 0;
  Index offset = 0;
  Index run_length = 0;
  Index runs = 1;
  Index stride = 0;

  Index values() const { return run_length * runs; }
  bool whole() const { return offset == 0 && values() == global_size; }
  static StateSlice whole_state(Index n) { return {n, 0, n, 1, n}; }
};

// How the files of a run split across ranks are laid out (DiskStoreOptions::rank_files).
enum class RankFiles {
  one_per_rank,  // each rank its own HDF5 file of its values (any file system, no MPI-IO)
  shared,        // one HDF5 file, /states of the whole state, each rank its hyperslab (MPI-IO)
};

inline const char* to_string(RankFiles files) {
  return files == RankFiles::shared ? "shared" : "one per rank";
}

class SnapshotRanks {
 public:
  virtual ~SnapshotRanks() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Collective. Every rank passes what failed on it (empty when nothing did) and its kind
  // ('S' StorageError, 'I' InvalidArgument, 'E' other); every rank gets the lowest failing rank,
  // its kind and its message, or rank −1 when no rank failed.
  struct Failure {
    int rank = -1;
    char kind = 0;
    std::string message;
  };
  virtual Failure first_failure(char kind, const std::string& message) const = 0;
  // Collective: rank 0's text on every rank.
  virtual std::string broadcast(const std::string& text) const = 0;
  // Collective: every rank's values (the same count on each), concatenated in rank order.
  virtual std::vector<std::int64_t> all_gather(std::span<const std::int64_t> mine) const = 0;
  // Sets an HDF5 file-access property list (an hid_t) to MPI-IO over these ranks.
  virtual void use_mpi_io(std::int64_t file_access) const = 0;
  // Whether threads other than the one driving the run may call MPI (MPI_THREAD_MULTIPLE): a
  // shared file is then written behind and read ahead on the I/O thread, else on the driver's.
  virtual bool other_threads_may_communicate() const = 0;
};

// Where a process's snapshots go: its slice of the state, and the ranks (null: one process).
struct ProcessSlice {
  StateSlice slice;
  std::shared_ptr<const SnapshotRanks> ranks;
};

// The ProcessSlice of a state vector: the backend's (B::process_slice) when it splits states
// across processes, else the whole state in one process.
template <VectorBackend B>
ProcessSlice process_slice(const typename B::Vector& x) {
  if constexpr (requires { B::process_slice(x); })
    return B::process_slice(x);
  else
    return {StateSlice::whole_state(host_size<B>(x)), nullptr};
}

namespace detail {
[[noreturn]] inline void throw_agreed_failure(const SnapshotRanks::Failure& failure, int ranks) {
  const std::string message = "rank " + std::to_string(failure.rank) + " of " +
                              std::to_string(ranks) + ": " + failure.message;
  if (failure.kind == 'S') throw StorageError(message);
  if (failure.kind == 'I') throw InvalidArgument(message);
  throw Error(message);
}
}  // namespace detail

// Runs `operation` on every rank and agrees on the outcome: when it threw on any rank, every
// rank throws "rank K of N: <message>" for the lowest failing rank K, as the error type it threw.
// Without ranks the operation simply runs. Every rank must call this in the same order.
template <class F>
void agree_across_ranks(const SnapshotRanks* ranks, F&& operation) {
  if (!ranks) {
    operation();
    return;
  }
  char kind = 0;
  std::string message;
  try {
    operation();
  } catch (const StorageError& e) {
    kind = 'S';
    message = e.what();
  } catch (const InvalidArgument& e) {
    kind = 'I';
    message = e.what();
  } catch (const std::exception& e) {
    kind = 'E';
    message = e.what();
  }
  const SnapshotRanks::Failure failure = ranks->first_failure(kind, message);
  if (failure.rank >= 0) detail::throw_agreed_failure(failure, ranks->size());
}

}  // namespace rwd
