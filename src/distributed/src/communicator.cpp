// src/distributed/src/communicator.cpp — see rewind/distributed/communicator.hpp.
#include "rewind/distributed/communicator.hpp"

#include <numeric>
#include <vector>

#include "rewind/error.hpp"

namespace rwd {
namespace {

// MPI's default error handler aborts the whole job with MPI's own message, which is what a
// failed collective must do (no rank left waiting); the checks here catch rewind's own misuse.
void check(int status, const char* call) {
  if (status != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(status, text, &length);
    detail::fail<Error>(call, " failed: ", std::string(text, static_cast<std::size_t>(length)));
  }
}

}  // namespace

MpiSession::MpiSession(int& argc, char**& argv, int thread_level) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised) detail::fail<InvalidArgument>("MpiSession: MPI is already initialised");
  if (thread_level != MPI_THREAD_FUNNELED && thread_level != MPI_THREAD_MULTIPLE)
    detail::fail<InvalidArgument>("MpiSession: thread level ", thread_level,
                                  " is neither MPI_THREAD_FUNNELED nor MPI_THREAD_MULTIPLE");
  int provided = 0;
  check(MPI_Init_thread(&argc, &argv, thread_level, &provided), "MPI_Init_thread");
  if (provided < thread_level)
    detail::fail<Error>("MPI provides thread level ", provided, "; rewind asked for ", thread_level,
                        thread_level == MPI_THREAD_FUNNELED
                            ? " (MPI_THREAD_FUNNELED: OpenMP threads inside a rank)"
                            : " (MPI_THREAD_MULTIPLE: shared snapshot files written behind)");
}

MpiSession::~MpiSession() {
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (!finalised) MPI_Finalize();
}

Communicator Communicator::world() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised)
    detail::fail<InvalidArgument>(
        "Communicator::world: MPI is not initialised (make an "
        "rwd::MpiSession first)");
  return Communicator(MPI_COMM_WORLD);
}

Communicator::Communicator(MPI_Comm comm) : comm_(comm) {
  check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
}

void Communicator::all_gather(std::span<const double> mine, std::span<const int> counts,
                              std::span<double> all) const {
  if (static_cast<int>(counts.size()) != size_ ||
      counts[static_cast<std::size_t>(rank_)] != static_cast<int>(mine.size()))
    detail::fail<InvalidArgument>("all_gather: counts do not match the ranks or this rank's data");
  thread_local std::vector<int> displacements;
  displacements.resize(counts.size());
  std::exclusive_scan(counts.begin(), counts.end(), displacements.begin(), 0);
  if (static_cast<std::size_t>(displacements.back() + counts.back()) != all.size())
    detail::fail<InvalidArgument>("all_gather: the output has ", all.size(),
                                  " values; the counts add up to ",
                                  displacements.back() + counts.back());
  check(MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(),
                       counts.data(), displacements.data(), MPI_DOUBLE, comm_),
        "MPI_Allgatherv");
}

bool Communicator::any(bool mine) const {
  int local = mine ? 1 : 0, global = 0;
  check(MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_LOR, comm_), "MPI_Allreduce");
  return global != 0;
}

void Communicator::exchange(int to, std::span<const double> send, int from,
                            std::span<double> receive, int tag) const {
  check(MPI_Sendrecv(send.data(), static_cast<int>(send.size()), MPI_DOUBLE, to, tag,
                     receive.data(), static_cast<int>(receive.size()), MPI_DOUBLE, from, tag, comm_,
                     MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
}

}  // namespace rwd
