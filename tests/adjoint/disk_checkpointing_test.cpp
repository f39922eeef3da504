// The checkpointed driver with snapshots on disk: the same gradient as in memory, disk reads
// started ahead of time, and every storage fault during a run — a corrupted snapshot, a full
// disk, a removed file, a missing directory — stopping the run with a StorageError naming it,
// the file removed afterwards, never a gradient.
#include <gtest/gtest.h>

#include <functional>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/disk/hdf5_snapshot_file.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/error_message.hpp"
#include "support/scratch_directory.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using test::ScratchDirectory;

// Lorenz-96 that calls `hook(rhs calls so far)` before every right-hand side: a way to damage the
// snapshot file in the middle of a run.
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

// The message of the StorageError that `f` throws (a test failure if it throws nothing or
// something else).
template <class F>
std::string storage_error(F&& f) {
  return testing::error_message<StorageError>(std::forward<F>(f));
}

struct Lorenz96Run {
  HookedLorenz96 problem;
  ExplicitRungeKutta<HookedLorenz96> stepper{problem, ButcherTableau::rk4(),
                                             StepControl::fixed(0.0, 0.01, 400)};
  B::Vector y0 = problem.inner.default_initial_state();
  B::Vector theta = problem.inner.default_parameters();
  Objective<B> objective = Objective<B>::terminal_squared_norm();
};

TEST(DiskCheckpointing, SameGradientAsMemoryAndReadsArePrefetched) {
  ScratchDirectory scratch;
  Lorenz96Run s;
  CheckpointedAdjoint memory_driver(s.stepper, s.objective);
  const auto in_memory = memory_driver.run(s.y0, s.theta, revolve_schedule(6));
  CheckpointOptions options;
  options.disk.directory = scratch.path();
  CheckpointedAdjoint disk_driver(s.stepper, s.objective, options);
  const auto on_disk = disk_driver.run(s.y0, s.theta, rwd::on_disk(revolve_schedule(6)));
  EXPECT_EQ(on_disk.loss, in_memory.loss);
  EXPECT_TRUE(on_disk.grad_y0 == in_memory.grad_y0);
  EXPECT_TRUE(on_disk.grad_theta == in_memory.grad_theta);
  const Summary& summary = on_disk.summary;
  EXPECT_EQ(summary.stores, in_memory.summary.stores);
  EXPECT_EQ(summary.storage.stores_on(LevelKind::disk), summary.stores);
  EXPECT_EQ(summary.storage.restores_on(LevelKind::disk), summary.restores);
  EXPECT_GT(summary.storage.io.prefetch_hits, summary.storage.restores_on(LevelKind::disk) / 2)
      << summary.full();
  EXPECT_EQ(summary.storage.io.bytes_written, summary.storage.stores_on(LevelKind::disk) *
                                                  (40 * 8 + static_cast<Index>(sizeof(Carry))));
  EXPECT_TRUE(summary.storage.asynchronous);
  EXPECT_GT(summary.storage.io.staging_bytes, 0);
  EXPECT_NE(summary.full().find("snapshot file"), std::string::npos);
  EXPECT_NE(summary.brief().find("disk"), std::string::npos);
  EXPECT_TRUE(scratch.files().empty());
}

TEST(DiskCheckpointing, KeptFileIsInspectableAndIntact) {
  ScratchDirectory scratch;
  Lorenz96Run s;
  CheckpointOptions options;
  options.disk.file = scratch / "kept.h5";
  options.disk.keep_file = true;
  CheckpointedAdjoint driver(s.stepper, s.objective, options);
  const auto result = driver.run(s.y0, s.theta, rwd::on_disk(revolve_schedule(5)));
  EXPECT_EQ(result.summary.storage.file, (scratch / "kept.h5").string());
  auto file = Hdf5SnapshotFile::open(scratch / "kept.h5");
  EXPECT_EQ(file.slots(), 5);
  EXPECT_EQ(file.state_size(), 40);
  EXPECT_EQ(file.meta_size(), static_cast<int>(sizeof(Carry)));
  for (int slot = 0; slot < file.slots(); ++slot) {
    EXPECT_EQ(file.verify(slot), "") << slot;
    EXPECT_GE(file.record(slot).step, 0) << slot;
  }
  EXPECT_EQ(file.record(0).step, 0);  // y_0 always sits in the first slot of revolve
}

TEST(DiskCheckpointing, CorruptedSnapshotStopsTheRun) {
  ScratchDirectory scratch;
  Lorenz96Run s;
  const double marker = s.y0[17];
  s.problem.hook = [&](Index calls) {
    if (calls != 800) return;  // well into the first sweep: y_0 is on disk by now
    for (const auto& file : scratch.files()) {
      const std::int64_t offset = test::find_double(file, marker);
      if (offset > 0) test::flip_bit(file, offset + 3);
    }
  };
  CheckpointOptions options;
  options.disk.directory = scratch.path();
  options.disk.asynchronous = false;  // deterministic: nothing read ahead before the damage
  CheckpointedAdjoint driver(s.stepper, s.objective, options);
  const std::string message =
      storage_error([&] { driver.run(s.y0, s.theta, rwd::on_disk(revolve_schedule(4))); });
  EXPECT_NE(message.find("checksum mismatch"), std::string::npos) << message;
  EXPECT_NE(message.find("y_0"), std::string::npos) << message;
  EXPECT_TRUE(scratch.files().empty()) << "the file is removed on error too";
}

TEST(DiskCheckpointing, FullDiskStopsTheRun) {
  ScratchDirectory scratch;
  Lorenz96Run s;
  std::optional<test::FileSizeLimit> limit;
  s.problem.hook = [&](Index calls) {
    if (calls == 400) limit.emplace(16 * 1024);  // the header fits; later slots do not
  };
  CheckpointOptions options;
  options.disk.directory = scratch.path();
  CheckpointedAdjoint driver(s.stepper, s.objective, options);
  const std::string message =
      storage_error([&] { driver.run(s.y0, s.theta, rwd::on_disk(revolve_schedule(200))); });
  limit.reset();
  EXPECT_NE(message.find("file size limit"), std::string::npos) << message;
  EXPECT_TRUE(scratch.files().empty());
}

TEST(DiskCheckpointing, RemovedFileStopsTheRun) {
  ScratchDirectory scratch;
  Lorenz96Run s;
  s.problem.hook = [&](Index calls) {
    if (calls == 600)
      for (const auto& file : scratch.files()) std::filesystem::remove(file);
  };
  CheckpointOptions options;
  options.disk.directory = scratch.path();
  CheckpointedAdjoint driver(s.stepper, s.objective, options);
  const std::string message =
      storage_error([&] { driver.run(s.y0, s.theta, rwd::on_disk(revolve_schedule(8))); });
  EXPECT_NE(message.find("was removed while the run was using it"), std::string::npos) << message;
}

TEST(DiskCheckpointing, BadDirectoryIsRefusedBeforeAnyWork) {
  ScratchDirectory scratch;
  Lorenz96Run s;
  CheckpointOptions options;
  options.disk.directory = scratch / "missing";
  CheckpointedAdjoint driver(s.stepper, s.objective, options);
  const std::string message =
      storage_error([&] { driver.run(s.y0, s.theta, rwd::on_disk(revolve_schedule(8))); });
  EXPECT_NE(message.find("does not exist"), std::string::npos) << message;
  EXPECT_EQ(s.problem.calls, 0);

  CheckpointedAdjoint no_directory(s.stepper, s.objective);
  EXPECT_THROW(no_directory.run(s.y0, s.theta, rwd::on_disk(revolve_schedule(8))), InvalidArgument);
  EXPECT_EQ(s.problem.calls, 0);
}

}  // namespace
}  // namespace rwd
