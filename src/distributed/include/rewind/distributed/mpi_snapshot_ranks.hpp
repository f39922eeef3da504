// rewind/distributed/mpi_snapshot_ranks.hpp — the ranks of a snapshot store (rwd::SnapshotRanks,
// rewind/store/snapshot_ranks.hpp) over an MPI communicator: the agreement that stops every rank
// when one fails, the broadcast of the shared file's name and run id, and HDF5's MPI-IO driver.
//
//   auto ranks = std::make_shared<rwd::MpiSnapshotRanks>(rwd::Communicator::world());
//   rwd::DiskSnapshotStore<B, rwd::Carry> store(slots, {slice, ranks}, disk_options);
//
// The drivers never build one: rwd::DistributedBackend::process_slice hands it to the store
// with the state's row slice. The shared file's MPI-IO runs on a duplicate of the communicator
// (HDF5 duplicates it), so its calls never match the halo exchanges' by accident.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "rewind/distributed/communicator.hpp"
#include "rewind/store/snapshot_ranks.hpp"

namespace rwd {

class MpiSnapshotRanks final : public SnapshotRanks {
 public:
  explicit MpiSnapshotRanks(Communicator comm) : comm_(comm) {}

  int rank() const override { return comm_.rank(); }
  int size() const override { return comm_.size(); }
  Failure first_failure(char kind, const std::string& message) const override;
  std::string broadcast(const std::string& text) const override;
  std::vector<std::int64_t> all_gather(std::span<const std::int64_t> mine) const override;
  void use_mpi_io(std::int64_t file_access) const override;
  // MPI_Query_thread: MPI_THREAD_MULTIPLE (rwd::MpiSession(argc, argv, MPI_THREAD_MULTIPLE)).
  bool other_threads_may_communicate() const override;

 private:
  Communicator comm_;
};

}  // namespace rwd
