// Resumable checkpointed runs: a run stopped at any point of its forward or reverse sweep — by a
// stop request (what SIGINT/SIGTERM do), or by an error thrown from inside a step — continues
// from its snapshot file and ends with the gradient of an uninterrupted run, bit for bit, over
// any number of interruptions; a file of another configuration is refused naming the
// difference; the file stays while the run is unfinished and goes when it completes.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/interrupt.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "rewind/schedule/online_schedule.hpp"
#include "rewind/schedule/schedules.hpp"
#include "rewind/warning.hpp"
#include "support/error_message.hpp"
#include "support/scratch_directory.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using test::ScratchDirectory;

// Lorenz-96 that calls `hook(rhs calls so far)` before every right-hand side.
struct HookedLorenz96 {
  using Backend = B;
  using Vector = B::Vector;
  Lorenz96<> inner{40};
  mutable Index calls = 0;
  std::function<void(Index)> hook;
  Index state_size() const { return inner.state_size(); }
  Index parameter_size() const { return inner.parameter_size(); }
  void rhs(double t, const Vector& y, const Vector& th, Vector& f) const {
    if (hook) hook(calls);
    ++calls;
    inner.rhs(t, y, th, f);
  }
  void vjp(double t, const Vector& y, const Vector& th, const Vector& v, Vector& oy,
           Vector& ot) const {
    inner.vjp(t, y, th, v, oy, ot);
  }
};

struct Lorenz96Run {
  HookedLorenz96 problem;
  ExplicitRungeKutta<HookedLorenz96> stepper{problem, ButcherTableau::rk4(),
                                             StepControl::fixed(0.0, 0.01, 300)};
  B::Vector y0 = problem.inner.default_initial_state();
  B::Vector theta = problem.inner.default_parameters();
  Objective<B> objective = Objective<B>::terminal_squared_norm();
};

// The same problem with adaptive steps (Dormand–Prince): a run of unknown length, which runs the
// online schedule — on disk, resumable — with no counting sweep.
struct AdaptiveLorenz96Run {
  HookedLorenz96 problem;
  ExplicitRungeKutta<HookedLorenz96> stepper{problem, ButcherTableau::dormand_prince(),
                                             StepControl::adaptive(0.0, 1.5, 1e-7, 1e-9)};
  B::Vector y0 = problem.inner.default_initial_state();
  B::Vector theta = problem.inner.default_parameters();
  Objective<B> objective = Objective<B>::terminal_squared_norm();
};

CostModel slow_disk() {
  CostModel costs;
  costs.adjoint_cost_factor = 1.5;
  costs.disk_write_time = 3.0;
  costs.disk_read_time = 2.0;
  return costs;
}

// Three levels: device copies cheap, host copies dearer, the disk dearest.
CostModel three_levels() {
  CostModel costs = slow_disk();
  costs.write_time = costs.read_time = 0.01;
  costs.host_write_time = 0.3;
  costs.host_read_time = 0.2;
  return costs;
}

Index files_in(const std::filesystem::path& directory) {
  Index count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(directory)) ++count;
  return count;
}

void expect_same_bits(const CheckpointedResult<B::Vector>& a,
                      const CheckpointedResult<B::Vector>& b) {
  EXPECT_EQ(a.loss, b.loss);
  EXPECT_TRUE(a.grad_y0 == b.grad_y0);
  EXPECT_TRUE(a.grad_theta == b.grad_theta);
  EXPECT_TRUE(a.y_final == b.y_final);
}

// Options of a resumable run with its snapshot file in `directory`.
CheckpointOptions resumable_in(const std::filesystem::path& directory) {
  CheckpointOptions options;
  options.disk.directory = directory;
  options.disk.resume = true;
  return options;
}

struct Interruption {
  Index at_call;  // rhs call (counted from the start of that attempt) at which to stop
  bool crash;     // throw from inside the step instead of requesting a stop
};

// Runs `planner` with resume in `directory`, interrupted as listed (one interruption per
// attempt), then once more to the end; returns the final result.
template <class Run>
CheckpointedResult<B::Vector> run_interrupted(Run& s, const Planner& planner,
                                              const std::filesystem::path& directory,
                                              const std::vector<Interruption>& interruptions) {
  CheckpointOptions options = resumable_in(directory);
  options.drift_policy = DriftPolicy::fail;
  options.progress_interval_seconds = 0.0;  // a record at every disk store and restore
  for (const Interruption& stop : interruptions) {
    clear_stop_request();
    s.problem.calls = 0;
    s.problem.hook = [stop](Index call) {
      if (call != stop.at_call) return;
      if (stop.crash) throw std::runtime_error("the process dies here");
      request_stop(0);
    };
    CheckpointedAdjoint driver(s.stepper, s.objective, options);
    bool stopped = false;
    try {
      driver.run(s.y0, s.theta, planner);
    } catch (const Interrupted& e) {
      stopped = !stop.crash;
      EXPECT_NE(std::string(e.what()).find("run it again with resume"), std::string::npos)
          << e.what();
    } catch (const std::runtime_error& e) {
      stopped = stop.crash;
    }
    EXPECT_TRUE(stopped) << "no interruption at rhs call " << stop.at_call;
    EXPECT_EQ(files_in(directory), 1) << "the snapshot file must stay for the next attempt";
  }
  clear_stop_request();
  s.problem.hook = nullptr;
  CheckpointedAdjoint driver(s.stepper, s.objective, options);
  auto result = driver.run(s.y0, s.theta, planner);
  EXPECT_EQ(result.drift.mismatched_steps, 0);
  EXPECT_EQ(files_in(directory), 0) << "a completed run removes its file";
  return result;
}

struct Case {
  const char* name;
  Planner planner;
};

std::vector<Case> resumable_plans() {
  return {
      {"revolve(6) on disk", on_disk(revolve_schedule(6))},
      {"two-level 2 memory + 4 disk", two_level_schedule(2, 4, slow_disk())},
      {"three-level 1 device + 2 host + 4 disk", three_level_schedule(1, 2, 4, three_levels())}};
}

// The three-level case above resumes a plan that keeps snapshots on every level: a kill loses
// the device and host ones, which the resumed run rebuilds.
TEST(ResumedRun, TheThreeLevelCaseKeepsSnapshotsOnEveryLevel) {
  const CheckpointPlan plan =
      plan_checkpoints(PlanRequest::three_level(1, 2, 4, three_levels()), 300);
  EXPECT_GE(plan.slots_used_on(LevelKind::memory), 1);
  EXPECT_GE(plan.slots_used_on(LevelKind::host), 1);
  EXPECT_GE(plan.slots_used_on(LevelKind::disk), 1);
}

TEST(ResumedRun, OneInterruptionAnywhereGivesTheUninterruptedBits) {
  Lorenz96Run s;
  CheckpointedAdjoint reference_driver(s.stepper, s.objective);
  const auto reference = reference_driver.run(s.y0, s.theta, revolve_schedule(6));
  // RK4: 4 rhs calls per step; the run makes ~300 forward steps, then recomputes and reverses.
  s.problem.calls = 0;
  CheckpointOptions memory;
  CheckpointedAdjoint counting(s.stepper, s.objective, memory);
  counting.run(s.y0, s.theta, revolve_schedule(6));
  const Index total_calls = s.problem.calls;
  ScratchDirectory scratch;
  for (const Case& c : resumable_plans()) {
    SCOPED_TRACE(c.name);
    for (Index k = 1; k < 24; ++k) {
      const Index at = k * total_calls / 24;
      SCOPED_TRACE("stopped at rhs call " + std::to_string(at));
      const auto resumed = run_interrupted(s, c.planner, scratch.path(), {{at, k % 3 == 0}});
      expect_same_bits(resumed, reference);
      EXPECT_GT(resumed.resumed_at_action, 0);
    }
  }
}

TEST(ResumedRun, ManyInterruptionsInARowGiveTheUninterruptedBits) {
  Lorenz96Run s;
  CheckpointedAdjoint reference_driver(s.stepper, s.objective);
  const auto reference = reference_driver.run(s.y0, s.theta, revolve_schedule(6));
  ScratchDirectory scratch;
  for (const Case& c : resumable_plans()) {
    SCOPED_TRACE(c.name);
    std::vector<Interruption> stops;
    for (Index k = 0; k < 12; ++k) stops.push_back({150 + 37 * k, k % 4 == 3});
    const auto resumed = run_interrupted(s, c.planner, scratch.path(), stops);
    expect_same_bits(resumed, reference);
  }
}

// A run of unknown length: the online schedule with its snapshots on disk, stopped or crashed
// anywhere in either sweep — before and after it has found its end — continues to the bits of
// the uninterrupted run (itself bitwise store-all), with no counting sweep in any attempt.
TEST(ResumedRun, AnOnlineRunOfUnknownLengthOnDiskResumes) {
  AdaptiveLorenz96Run s;
  StoreAllAdjoint store_all(s.stepper, s.objective);
  const auto expected = store_all.run(s.y0, s.theta);
  const Index l = expected.summary.steps;
  ASSERT_GT(l, 40);
  CheckpointedAdjoint counting(s.stepper, s.objective);
  s.problem.calls = 0;
  const auto uninterrupted = counting.run(s.y0, s.theta, revolve_schedule(5));
  const Index total_calls = s.problem.calls;
  EXPECT_EQ(uninterrupted.summary.schedule, OnlineSchedule(5).name());
  EXPECT_TRUE(uninterrupted.grad_theta == expected.grad_theta);
  ScratchDirectory scratch;
  const Planner planner = on_disk(revolve_schedule(5));
  for (Index k = 1; k < 16; ++k) {
    const Index at = k * total_calls / 16;
    SCOPED_TRACE("stopped at rhs call " + std::to_string(at));
    const auto resumed = run_interrupted(s, planner, scratch.path(), {{at, k % 3 == 0}});
    EXPECT_EQ(resumed.summary.schedule, OnlineSchedule(5).name());
    EXPECT_EQ(resumed.counting_steps, 0);
    EXPECT_EQ(resumed.summary.steps, l);
    expect_same_bits(resumed, uninterrupted);
    EXPECT_GT(resumed.resumed_at_action, 0);
  }
  std::vector<Interruption> stops;
  for (Index k = 0; k < 10; ++k) stops.push_back({total_calls / 25 + 7 * k, k % 4 == 3});
  expect_same_bits(run_interrupted(s, planner, scratch.path(), stops), uninterrupted);
}

// Once an online run on disk knows its end, its reverse sweep's disk reads are started ahead,
// as a planned schedule's are — the same bits as without any file.
TEST(OnlineOnDisk, ReadsAheadOnceTheEndIsKnown) {
  AdaptiveLorenz96Run s;
  CheckpointedAdjoint in_memory(s.stepper, s.objective);
  const auto expected = in_memory.run(s.y0, s.theta, revolve_schedule(5));
  ScratchDirectory scratch;
  CheckpointOptions options;
  options.disk.directory = scratch.path();
  CheckpointedAdjoint on_file(s.stepper, s.objective, options);
  const auto result = on_file.run(s.y0, s.theta, on_disk(revolve_schedule(5)));
  expect_same_bits(result, expected);
  const SnapshotStoreStatistics& storage = result.summary.storage;
  EXPECT_GT(storage.restores_on(LevelKind::disk), 10);
  EXPECT_EQ(storage.restores_on(LevelKind::memory), 0);
  // Most restores were started ahead (92 of 110 here; none before the end was known, and none
  // right after the store it reads).
  EXPECT_GE(storage.io.prefetch_hits, storage.restores_on(LevelKind::disk) * 3 / 4)
      << storage.io.prefetch_hits << " of " << storage.restores_on(LevelKind::disk)
      << " restores read ahead";
  EXPECT_EQ(files_in(scratch.path()), 0);
}

TEST(ResumedRun, AnOnlineRunInMemoryIsRefused) {
  AdaptiveLorenz96Run s;
  ScratchDirectory scratch;
  CheckpointedAdjoint driver(s.stepper, s.objective, resumable_in(scratch.path()));
  const std::string message = testing::error_message<InvalidArgument>(
      [&] { driver.run(s.y0, s.theta, revolve_schedule(5)); });
  EXPECT_NE(message.find("put them on disk"), std::string::npos) << message;
  EXPECT_EQ(files_in(scratch.path()), 0);
}

TEST(ResumedRun, WithoutResumeAStopKeepsNothing) {
  Lorenz96Run s;
  ScratchDirectory scratch;
  CheckpointOptions options;
  options.disk.directory = scratch.path();
  clear_stop_request();
  s.problem.hook = [](Index call) {
    if (call == 500) request_stop(0);
  };
  CheckpointedAdjoint driver(s.stepper, s.objective, options);
  const std::string message = testing::error_message<Interrupted>(
      [&] { driver.run(s.y0, s.theta, on_disk(revolve_schedule(6))); });
  EXPECT_NE(message.find("nothing was kept"), std::string::npos) << message;
  // Honoured at the next step boundary, inside revolve's long first advance: rhs call 500 is the
  // first stage of the step from y_125 to y_126.
  EXPECT_NE(message.find("in the forward sweep (at step 126 of 300)"), std::string::npos)
      << message;
  EXPECT_EQ(files_in(scratch.path()), 0);
  clear_stop_request();
}

TEST(ResumedRun, AFileOfAnotherConfigurationIsRefusedNamingTheDifference) {
  Lorenz96Run s;
  ScratchDirectory scratch;
  CheckpointOptions options = resumable_in(scratch.path());
  options.disk.identity = "problem = lorenz96\n";
  clear_stop_request();
  s.problem.hook = [](Index call) {
    if (call == 700) request_stop(0);
  };
  {
    CheckpointedAdjoint driver(s.stepper, s.objective, options);
    EXPECT_THROW(driver.run(s.y0, s.theta, on_disk(revolve_schedule(6))), Interrupted);
  }
  clear_stop_request();
  s.problem.hook = nullptr;
  {  // other parameters
    B::Vector other = s.theta;
    other[0] += 1e-3;
    CheckpointedAdjoint driver(s.stepper, s.objective, options);
    const std::string message = testing::error_message<StorageError>(
        [&] { driver.run(s.y0, other, on_disk(revolve_schedule(6))); });
    EXPECT_NE(message.find("theta hash"), std::string::npos) << message;
  }
  {  // another budget
    CheckpointedAdjoint driver(s.stepper, s.objective, options);
    const std::string message = testing::error_message<StorageError>(
        [&] { driver.run(s.y0, s.theta, on_disk(revolve_schedule(5))); });
    EXPECT_NE(message.find("schedule"), std::string::npos) << message;
  }
  {  // the caller's own identity
    CheckpointOptions other = options;
    other.disk.identity = "problem = lorenz96 modified\n";
    CheckpointedAdjoint driver(s.stepper, s.objective, other);
    const std::string message = testing::error_message<StorageError>(
        [&] { driver.run(s.y0, s.theta, on_disk(revolve_schedule(6))); });
    EXPECT_NE(message.find("problem = lorenz96 modified"), std::string::npos) << message;
  }
  EXPECT_EQ(files_in(scratch.path()), 1) << "a refused resume leaves the file alone";
  // The right configuration still continues it.
  CheckpointedAdjoint driver(s.stepper, s.objective, options);
  const auto resumed = driver.run(s.y0, s.theta, on_disk(revolve_schedule(6)));
  CheckpointedAdjoint reference_driver(s.stepper, s.objective);
  expect_same_bits(resumed, reference_driver.run(s.y0, s.theta, revolve_schedule(6)));
}

TEST(ResumedRun, AHalfCreatedFileIsReplacedAndADamagedOneRefused) {
  Lorenz96Run s;
  ScratchDirectory scratch;
  CheckpointOptions options = resumable_in(scratch.path());
  const std::filesystem::path file = scratch.path() / "rewind-resume.h5";
  std::filesystem::path creating = file;
  creating += ".creating";
  const auto write_garbage = [](const std::filesystem::path& path) {
    std::ofstream out(path, std::ios::binary);
    out << "\x89HDF\r\n\x1a\n and then nothing a process killed mid-creation would finish";
  };
  // A process killed while creating its file leaves only the temporary name: the next attempt
  // removes it (saying so) and runs from the start to the uninterrupted bits.
  write_garbage(creating);
  std::vector<std::string> warnings;
  {
    ScopedWarningHandler capture([&](const Warning& w) { warnings.push_back(w.message); });
    CheckpointedAdjoint driver(s.stepper, s.objective, options);
    const auto result = driver.run(s.y0, s.theta, on_disk(revolve_schedule(6)));
    CheckpointedAdjoint reference_driver(s.stepper, s.objective);
    expect_same_bits(result, reference_driver.run(s.y0, s.theta, revolve_schedule(6)));
  }
  const auto about_creation = std::count_if(warnings.begin(), warnings.end(), [](const auto& w) {
    return w.find("killed while it was creating") != std::string::npos;
  });
  EXPECT_EQ(about_creation, 1) << "the removal of the half-created file must be said";
  EXPECT_EQ(files_in(scratch.path()), 0);
  // Under the real name only a complete file ever appears; one HDF5 cannot open was damaged
  // later, and is refused and left in place, never deleted.
  write_garbage(file);
  CheckpointedAdjoint driver(s.stepper, s.objective, options);
  const std::string message = testing::error_message<StorageError>(
      [&] { driver.run(s.y0, s.theta, on_disk(revolve_schedule(6))); });
  EXPECT_NE(message.find("cannot resume from"), std::string::npos) << message;
  EXPECT_NE(message.find("remove it to start the run afresh"), std::string::npos) << message;
  EXPECT_TRUE(std::filesystem::exists(file));
  EXPECT_EQ(files_in(scratch.path()), 1);
}

TEST(ResumedRun, NeedsSnapshotsOnDisk) {
  Lorenz96Run s;
  ScratchDirectory scratch;
  CheckpointOptions options = resumable_in(scratch.path());
  CheckpointedAdjoint driver(s.stepper, s.objective, options);
  const std::string message = testing::error_message<InvalidArgument>(
      [&] { driver.run(s.y0, s.theta, revolve_schedule(6)); });
  EXPECT_NE(message.find("put snapshots on disk"), std::string::npos) << message;
}

}  // namespace
}  // namespace rwd
