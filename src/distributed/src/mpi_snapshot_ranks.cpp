// src/distributed/src/mpi_snapshot_ranks.cpp — see rewind/distributed/mpi_snapshot_ranks.hpp.
#include "rewind/distributed/mpi_snapshot_ranks.hpp"

#include <hdf5.h>

#include <climits>

#include "rewind/error.hpp"

namespace rwd {
namespace {

void check(int status, const char* call) {
  if (status != MPI_SUCCESS) detail::fail<Error>(call, " failed (MPI error ", status, ")");
}

}  // namespace

SnapshotRanks::Failure MpiSnapshotRanks::first_failure(char kind,
                                                       const std::string& message) const {
  // The lowest failing rank (size() when none), then its kind and message from it.
  const int mine = kind != 0 ? comm_.rank() : comm_.size();
  int first = comm_.size();
  check(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm_.handle()), "MPI_Allreduce");
  Failure failure;
  if (first == comm_.size()) return failure;
  failure.rank = first;
  int header[2] = {kind, static_cast<int>(message.size())};
  check(MPI_Bcast(header, 2, MPI_INT, first, comm_.handle()), "MPI_Bcast");
  failure.kind = static_cast<char>(header[0]);
  failure.message = comm_.rank() == first ? message : std::string(header[1], '\0');
  check(MPI_Bcast(failure.message.data(), header[1], MPI_CHAR, first, comm_.handle()), "MPI_Bcast");
  return failure;
}

std::string MpiSnapshotRanks::broadcast(const std::string& text) const {
  int length = comm_.rank() == 0 ? static_cast<int>(text.size()) : 0;
  check(MPI_Bcast(&length, 1, MPI_INT, 0, comm_.handle()), "MPI_Bcast");
  std::string out = comm_.rank() == 0 ? text : std::string(static_cast<std::size_t>(length), '\0');
  check(MPI_Bcast(out.data(), length, MPI_CHAR, 0, comm_.handle()), "MPI_Bcast");
  return out;
}

std::vector<std::int64_t> MpiSnapshotRanks::all_gather(std::span<const std::int64_t> mine) const {
  std::vector<std::int64_t> all(mine.size() * static_cast<std::size_t>(comm_.size()));
  check(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_INT64_T, all.data(),
                      static_cast<int>(mine.size()), MPI_INT64_T, comm_.handle()),
        "MPI_Allgather");
  return all;
}

void MpiSnapshotRanks::use_mpi_io(std::int64_t file_access) const {
  if (H5Pset_fapl_mpio(file_access, comm_.handle(), MPI_INFO_NULL) < 0)
    detail::fail<StorageError>("HDF5 refused the MPI-IO file driver (H5Pset_fapl_mpio)");
}

bool MpiSnapshotRanks::other_threads_may_communicate() const {
  int provided = MPI_THREAD_SINGLE;
  check(MPI_Query_thread(&provided), "MPI_Query_thread");
  return provided >= MPI_THREAD_MULTIPLE;
}

}  // namespace rwd
