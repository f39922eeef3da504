// Disk snapshots of a state split across MPI ranks, when something goes wrong (run by ctest under
// mpiexec with 1–4 ranks), in both layouts — one file per rank and one file shared by every rank:
// a slice damaged on disk on one rank only, mid-run, must stop every rank with the same rwd
// error naming that rank, the slot and the step (no rank left waiting in a halo exchange, no
// gradient returned), and a snapshot directory that is missing or not a directory must be
// refused on every rank before any step is taken.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <string>

#include "distributed_test_support.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/distributed/distributed_gray_scott.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/scratch_directory.hpp"
#include "support/shared_scratch_directory.hpp"

namespace rwd {
namespace {

using B = DistributedBackend;
using test::HookedGrayScott;

Communicator world() {
  return Communicator::world();
}

class DiskFaults : public ::testing::TestWithParam<RankFiles> {};

TEST_P(DiskFaults, ACorruptedSliceOnOneRankStopsEveryRankNamingRankSlotAndStep) {
  const int victim = world().size() - 1;
  const DistributedGrayScott problem(24, world());
  HookedGrayScott hooked{problem, {}};
  ExplicitRungeKutta stepper(hooked, ButcherTableau::rk4(), StepControl::fixed(0.0, 1.0, 30));
  // A marker in the victim's rows of y_0 (a legitimate initial value), found on disk below.
  DistributedVector y0 = problem.default_initial_state(1);
  const double marker = 0.8123456789012345;
  if (world().rank() == victim) y0.local[y0.local.size() / 4] = marker;

  test::SharedScratchDirectory scratch;
  bool damaged = false;
  hooked.hook = [&](Index calls) {
    // Well into the first sweep (y_0 was written at the start, is read back only in the
    // reverse sweep): the victim flips one bit of its slice of y_0.
    if (calls != 40 || world().rank() != victim) return;
    for (const auto& file : scratch.files()) {
      const std::int64_t offset = test::find_double(file, marker);
      if (offset > 0) {
        test::flip_bit(file, offset + 3);
        damaged = true;
      }
    }
  };
  CheckpointOptions options;
  options.disk.directory = scratch.path();
  options.disk.rank_files = GetParam();
  options.disk.asynchronous = false;  // deterministic: nothing read ahead before the damage
  CheckpointedAdjoint driver(stepper, Objective<B>::terminal_squared_norm(), options);
  std::string message;
  bool gradient_returned = false;
  try {
    driver.run(y0, DistributedGrayScott::default_parameters(), on_disk(revolve_schedule(4)));
    gradient_returned = true;
  } catch (const StorageError& e) {
    message = e.what();
  }
  if (world().rank() == victim) {
    EXPECT_TRUE(damaged) << "the marker was not found on disk";
  }
  EXPECT_FALSE(gradient_returned) << "rank " << world().rank() << " returned a gradient";
  const std::string rank =
      "rank " + std::to_string(victim) + " of " + std::to_string(world().size()) + ":";
  EXPECT_EQ(message.rfind(rank, 0), 0u) << message;
  EXPECT_NE(message.find("y_0 from slot 0"), std::string::npos) << message;
  EXPECT_NE(message.find("checksum mismatch"), std::string::npos) << message;
  // Every rank saw the very same message.
  const int length = static_cast<int>(message.size());
  int longest = 0;
  MPI_Allreduce(&length, &longest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  std::string first = message;
  first.resize(static_cast<std::size_t>(longest));
  MPI_Bcast(first.data(), longest, MPI_CHAR, 0, MPI_COMM_WORLD);
  EXPECT_EQ(first, message);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_TRUE(scratch.files().empty()) << "the snapshot files are removed on error too";

  // Nothing is left half-done: the next run works on every rank.
  hooked.hook = {};
  const auto r =
      driver.run(problem.default_initial_state(1), DistributedGrayScott::default_parameters(),
                 on_disk(revolve_schedule(4)));
  EXPECT_EQ(r.summary.reversed_steps, 30);
}

TEST_P(DiskFaults, ABadSnapshotDirectoryIsRefusedOnEveryRankBeforeAnyWork) {
  const DistributedGrayScott problem(16, world());
  HookedGrayScott hooked{problem, {}};
  ExplicitRungeKutta stepper(hooked, ButcherTableau::rk4(), StepControl::fixed(0.0, 1.0, 10));
  test::SharedScratchDirectory scratch;
  const std::filesystem::path not_a_directory = scratch / "plain-file";
  if (world().rank() == 0) std::ofstream(not_a_directory) << "x";
  MPI_Barrier(MPI_COMM_WORLD);
  for (const std::filesystem::path& directory :
       {scratch / "missing", not_a_directory / "below-a-file"}) {
    SCOPED_TRACE(directory.string());
    CheckpointOptions options;
    options.disk.directory = directory;
    options.disk.rank_files = GetParam();
    CheckpointedAdjoint driver(stepper, Objective<B>::terminal_squared_norm(), options);
    hooked.calls = 0;
    std::string message;
    try {
      driver.run(problem.default_initial_state(1), DistributedGrayScott::default_parameters(),
                 on_disk(revolve_schedule(3)));
    } catch (const StorageError& e) {
      message = e.what();
    }
    EXPECT_EQ(message.rfind("rank 0 of " + std::to_string(world().size()) + ":", 0), 0u) << message;
    EXPECT_NE(message.find("snapshot directory"), std::string::npos) << message;
    EXPECT_EQ(hooked.calls, 0) << "no step before the refusal";
  }
}

TEST_P(DiskFaults, ADirectoryMissingOnOneRankOnlyStopsEveryRank) {
  // Each rank names its own directory; only the last rank's is missing. Every rank refuses, and
  // the files the others had created are removed.
  if (GetParam() == RankFiles::shared) GTEST_SKIP() << "a shared file has one directory";
  const int victim = world().size() - 1;
  const DistributedGrayScott problem(16, world());
  HookedGrayScott hooked{problem, {}};
  ExplicitRungeKutta stepper(hooked, ButcherTableau::rk4(), StepControl::fixed(0.0, 1.0, 10));
  test::ScratchDirectory own;  // each rank its own
  CheckpointOptions options;
  options.disk.directory = world().rank() == victim ? own / "missing" : own.path();
  options.disk.rank_files = RankFiles::one_per_rank;
  CheckpointedAdjoint driver(stepper, Objective<B>::terminal_squared_norm(), options);
  std::string message;
  try {
    driver.run(problem.default_initial_state(1), DistributedGrayScott::default_parameters(),
               on_disk(revolve_schedule(3)));
  } catch (const StorageError& e) {
    message = e.what();
  }
  EXPECT_EQ(message.rfind("rank " + std::to_string(victim) + " of ", 0), 0u) << message;
  EXPECT_NE(message.find("does not exist"), std::string::npos) << message;
  EXPECT_EQ(hooked.calls, 0);
  EXPECT_TRUE(own.files().empty()) << "a rank that had created its file removed it";
}

INSTANTIATE_TEST_SUITE_P(RankFiles, DiskFaults,
                         ::testing::Values(RankFiles::one_per_rank, RankFiles::shared),
                         [](const auto& info) {
                           return info.param == RankFiles::shared ? std::string("SharedFile")
                                                                  : std::string("FilePerRank");
                         });

}  // namespace
}  // namespace rwd
