// Resumable runs of a state split across MPI ranks (run by ctest under mpiexec with 1–4 ranks):
// a stop requested on one rank only stops every rank at the same step boundary (none is left in
// a halo exchange), and the run continues from the ranks' files to the gradient of an
// uninterrupted run, bit for bit, over many stops in both sweeps; ranks whose newest progress
// records differ (a kill while some had written the next one) continue from the newest record
// they share; a rank's missing file is refused on every rank, naming the rank; a file shared by
// the ranks cannot be made resumable. (Another rank count: tests/cli/check_resume.py, which
// starts the tool with other counts — one process holds one layout of the state at a time.)
#include <gtest/gtest.h>
#include <mpi.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "distributed_test_support.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/disk/hdf5_snapshot_file.hpp"
#include "rewind/distributed/distributed_gray_scott.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/interrupt.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/shared_scratch_directory.hpp"

namespace rwd {
namespace {

using B = DistributedBackend;
using test::HookedGrayScott;
using test::local_values;
using test::same_bits;
using test::world;

constexpr Index kSteps = 40;

struct SplitRun {
  DistributedGrayScott problem{16, world()};
  HookedGrayScott hooked{problem, {}};
  ExplicitRungeKutta<HookedGrayScott> stepper{hooked, ButcherTableau::rk4(),
                                              StepControl::fixed(0.0, 1.0, kSteps)};
  DistributedVector y0 = problem.default_initial_state(1);
  DistributedVector theta = DistributedGrayScott::default_parameters();
  Objective<B> objective = Objective<B>::terminal_squared_norm();
};

CheckpointOptions resumable_in(const std::filesystem::path& directory) {
  CheckpointOptions options;
  options.disk.directory = directory;
  options.disk.resume = true;
  options.drift_policy = DriftPolicy::fail;
  options.progress_interval_seconds = 0.0;  // a record at every disk store and restore
  return options;
}

void expect_same_gradient(const CheckpointedResult<DistributedVector>& a,
                          const CheckpointedResult<DistributedVector>& b) {
  EXPECT_TRUE(same_bits(a.loss, b.loss));
  EXPECT_TRUE(same_bits(local_values(a.grad_y0), local_values(b.grad_y0)));
  EXPECT_TRUE(same_bits(local_values(a.grad_theta), local_values(b.grad_theta)));
  EXPECT_TRUE(same_bits(local_values(a.y_final), local_values(b.y_final)));
}

// The same run, not resumable and never stopped.
CheckpointedResult<DistributedVector> uninterrupted(SplitRun& s, const Planner& planner,
                                                    const std::filesystem::path& directory) {
  CheckpointOptions options;
  options.disk.directory = directory;
  return CheckpointedAdjoint(s.stepper, s.objective, options).run(s.y0, s.theta, planner);
}

// Runs `planner` resumably in `directory`; on rank `stopper` only, a stop is requested after
// right-hand side `at_call` of each attempt listed, then a last attempt runs to the end.
CheckpointedResult<DistributedVector> run_stopped(SplitRun& s, const Planner& planner,
                                                  const std::filesystem::path& directory,
                                                  int stopper, const std::vector<Index>& at_calls,
                                                  Index* resumed_attempts) {
  const CheckpointOptions options = resumable_in(directory);
  for (const Index at_call : at_calls) {
    clear_stop_request();
    s.hooked.calls = 0;
    s.hooked.hook = [&, at_call](Index call) {
      if (call == at_call && world().rank() == stopper) request_stop(0);
    };
    CheckpointedAdjoint driver(s.stepper, s.objective, options);
    bool stopped = false;
    try {
      const auto result = driver.run(s.y0, s.theta, planner);
      ADD_FAILURE() << "no stop before call " << at_call << " of an attempt";
      return result;
    } catch (const Interrupted& e) {
      stopped = true;
      EXPECT_NE(std::string(e.what()).find("run it again with resume"), std::string::npos)
          << e.what();
    }
    EXPECT_TRUE(stopped);
    // Every rank stopped at the same place: each agrees with rank 0 on how many right-hand
    // sides this attempt evaluated.
    std::int64_t calls = s.hooked.calls;
    std::int64_t calls_of_rank0 = calls;
    MPI_Bcast(&calls_of_rank0, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    EXPECT_EQ(calls, calls_of_rank0) << "rank " << world().rank();
  }
  clear_stop_request();
  s.hooked.hook = {};
  CheckpointedAdjoint driver(s.stepper, s.objective, options);
  const auto result = driver.run(s.y0, s.theta, planner);
  if (resumed_attempts && result.resumed_at_action >= 0) ++*resumed_attempts;
  return result;
}

TEST(DistributedResume, AStopOnOneRankStopsEveryRankAndTheRunEndsOnTheUninterruptedBits) {
  SplitRun s;
  const Planner planner = on_disk(revolve_schedule(5));
  test::SharedScratchDirectory scratch;
  const auto reference = uninterrupted(s, planner, scratch.path());

  // One attempt per stop, each on another rank, spread over both sweeps (the forward sweep
  // evaluates 4·40 = 160 right-hand sides; revolve(5) re-evaluates more in the reverse one).
  const std::vector<Index> stops = {3, 70, 150, 200, 260, 45, 120, 90};
  Index resumed = 0;
  for (std::size_t i = 0; i < stops.size(); ++i) {
    SCOPED_TRACE("stop before right-hand side " + std::to_string(stops[i]));
    const int stopper = static_cast<int>(i) % world().size();
    const auto result = run_stopped(s, planner, scratch.path(), stopper, {stops[i]}, &resumed);
    expect_same_gradient(result, reference);
    EXPECT_TRUE(result.drift.bitwise_identical());
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_TRUE(scratch.files().empty()) << "the files go once the run completes";
  }
  EXPECT_EQ(resumed, static_cast<Index>(stops.size()));

  // Many stops of one run in a row, from rank 0 and the last rank in turn.
  const auto result = run_stopped(s, planner, scratch.path(), world().size() - 1,
                                  {30, 30, 30, 30, 30, 30}, &resumed);
  expect_same_gradient(result, reference);
}

TEST(DistributedResume, RanksWhoseNewestRecordsDifferContinueFromTheOneTheyShare) {
  SplitRun s;
  const Planner planner = on_disk(revolve_schedule(5));
  test::SharedScratchDirectory scratch;
  const auto reference = uninterrupted(s, planner, scratch.path());
  // Stopped well into the reverse sweep: every rank holds its two newest records.
  {
    clear_stop_request();
    s.hooked.calls = 0;
    s.hooked.hook = [](Index call) {
      if (call == 230 && world().rank() == 0) request_stop(0);
    };
    CheckpointedAdjoint driver(s.stepper, s.objective, resumable_in(scratch.path()));
    EXPECT_THROW(driver.run(s.y0, s.theta, planner), Interrupted);
  }
  // What a kill during the next record leaves: the last rank's newest record torn (erased),
  // the others' intact — the ranks must go back to the record before it.
  const int torn = world().size() - 1;
  std::uint64_t newest = 0;
  const std::filesystem::path own =
      scratch / (world().size() > 1 ? "rewind-resume.rank" + std::to_string(world().rank()) + ".h5"
                                    : std::string("rewind-resume.h5"));
  {
    Hdf5SnapshotFile file = Hdf5SnapshotFile::reopen(own);
    const auto records = file.progress_records();
    ASSERT_EQ(records.size(), 2u);
    newest = records.back().sequence;
    if (world().rank() == torn) file.continue_after_progress(newest - 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  clear_stop_request();
  s.hooked.hook = {};
  CheckpointedAdjoint driver(s.stepper, s.objective, resumable_in(scratch.path()));
  const auto result = driver.run(s.y0, s.theta, planner);
  EXPECT_GE(result.resumed_at_action, 0);
  expect_same_gradient(result, reference);
  EXPECT_TRUE(result.drift.bitwise_identical());
}

TEST(DistributedResume, AMissingRankFileIsRefusedOnEveryRank) {
  if (world().size() < 2) GTEST_SKIP() << "needs a state split across at least two ranks";
  SplitRun s;
  const Planner planner = on_disk(revolve_schedule(5));
  test::SharedScratchDirectory scratch;
  const auto stop_at = [&](Index at_call) {
    clear_stop_request();
    s.hooked.calls = 0;
    s.hooked.hook = [at_call](Index call) {
      if (call == at_call && world().rank() == 0) request_stop(0);
    };
    CheckpointedAdjoint driver(s.stepper, s.objective, resumable_in(scratch.path()));
    EXPECT_THROW(driver.run(s.y0, s.theta, planner), Interrupted);
    clear_stop_request();
    s.hooked.hook = {};
  };
  const auto refusal = [&]() {
    std::string message;
    try {
      CheckpointedAdjoint(s.stepper, s.objective, resumable_in(scratch.path()))
          .run(s.y0, s.theta, planner);
    } catch (const StorageError& e) {
      message = e.what();
    }
    return message;
  };

  // The last rank's file goes missing (another node, a cleaned scratch directory).
  stop_at(100);
  const int last = world().size() - 1;
  const std::filesystem::path lost =
      scratch / ("rewind-resume.rank" + std::to_string(last) + ".h5");
  std::filesystem::path moved = lost;
  moved += ".aside";
  if (world().rank() == last) std::filesystem::rename(lost, moved);
  MPI_Barrier(MPI_COMM_WORLD);
  std::string message = refusal();
  EXPECT_NE(message.find("rank " + std::to_string(last) + " of " + std::to_string(world().size()) +
                         " has no snapshot file"),
            std::string::npos)
      << message;
  MPI_Barrier(MPI_COMM_WORLD);
  if (world().rank() == last) std::filesystem::rename(moved, lost);
  MPI_Barrier(MPI_COMM_WORLD);

  MPI_Barrier(MPI_COMM_WORLD);
  // The files were left alone by the refusal: the run still continues to its end.
  CheckpointedAdjoint driver(s.stepper, s.objective, resumable_in(scratch.path()));
  const auto result = driver.run(s.y0, s.theta, planner);
  EXPECT_GE(result.resumed_at_action, 0);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_TRUE(scratch.files().empty());
}

TEST(DistributedResume, ASharedFileCannotBeMadeResumable) {
  SplitRun s;
  test::SharedScratchDirectory scratch;
  CheckpointOptions options = resumable_in(scratch.path());
  options.disk.rank_files = RankFiles::shared;
  std::string message;
  try {
    CheckpointedAdjoint(s.stepper, s.objective, options)
        .run(s.y0, s.theta, on_disk(revolve_schedule(5)));
  } catch (const InvalidArgument& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("use one file per rank"), std::string::npos) << message;
}

}  // namespace
}  // namespace rwd
