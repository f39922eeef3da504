// rewind/distributed/communicator.hpp — the MPI calls rewind makes, behind one small class.
//
//   rwd::MpiSession mpi(argc, argv);                 // MPI_Init_thread … MPI_Finalize
//   rwd::Communicator world = rwd::Communicator::world();
//   if (world.rank() == 0) std::cout << world.size() << " ranks\n";
//
// OpenMP threads inside a rank never call MPI (MPI_THREAD_FUNNELED): only the thread that runs
// the driver does. Every collective here is called by every rank in the same order — the
// schedule is pure integers, computed identically on every rank, so the drivers' calls line up.
#pragma once

#include <mpi.h>

#include <span>

namespace rwd {

// Initialises MPI for the lifetime of the object (once per process) and finalises it.
// thread_level: MPI_THREAD_FUNNELED (the default: only the driver's thread calls MPI) or
// MPI_THREAD_MULTIPLE, which lets a snapshot file shared by every rank be written behind on the
// store's I/O thread (rewind/store/disk_snapshot_store.hpp); fails if MPI provides less.
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv, int thread_level = MPI_THREAD_FUNNELED);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

class Communicator {
 public:
  // MPI_COMM_WORLD; MPI must be initialised.
  static Communicator world();
  explicit Communicator(MPI_Comm comm);

  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm handle() const { return comm_; }

  // Every rank's `mine` (counts[k] values from rank k), concatenated in rank order, into `all`
  // on every rank. counts has size() entries; all has their sum.
  void all_gather(std::span<const double> mine, std::span<const int> counts,
                  std::span<double> all) const;
  // Whether `mine` is true on any rank.
  bool any(bool mine) const;
  // Sends `send` to rank `to` while receiving `receive` from rank `from` (either may be this
  // rank, or MPI_PROC_NULL: nothing is sent, or nothing received and `receive` left as it is),
  // under `tag`.
  void exchange(int to, std::span<const double> send, int from, std::span<double> receive,
                int tag) const;

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

}  // namespace rwd
