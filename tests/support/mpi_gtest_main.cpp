// main() for tests run under mpiexec: MPI around GoogleTest, and only rank 0's console output
// (every rank still runs every test; a failure on any rank fails the job through its exit code).
#include <gtest/gtest.h>

#include "rewind/distributed/communicator.hpp"

int main(int argc, char** argv) {
  rwd::MpiSession mpi(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  const rwd::Communicator world = rwd::Communicator::world();
  if (world.rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    // Other ranks print only failures, prefixed by the rank, through the default printer's
    // failure lines (kept) — the full per-test chatter would be repeated once per rank.
    delete listeners.Release(listeners.default_result_printer());
  }
  const int status = RUN_ALL_TESTS();
  // A failure on any rank fails every rank's exit status, so mpiexec reports it whoever failed.
  const bool failed = world.any(status != 0);
  return failed ? 1 : 0;
}
