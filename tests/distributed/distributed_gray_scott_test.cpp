// Gray–Scott split across MPI ranks (rwd::DistributedGrayScott over rwd::DistributedBackend),
// run by ctest under mpiexec with 1, 2, 3 and 4 ranks: the halo exchange against the serial
// stencil, and gradients under every schedule the same bits as the one-process
// GrayScott<EigenBackend> gradient — hence the same for every rank count. Each rank checks its
// own rows; θ's gradient must be the same on every rank. Snapshots on disk: one file per rank,
// and one file shared by every rank (each rank its hyperslab).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "distributed_test_support.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/disk/hdf5_snapshot_file.hpp"
#include "rewind/distributed/distributed_gray_scott.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/scratch_directory.hpp"
#include "support/shared_scratch_directory.hpp"

namespace rwd {
namespace {

using test::local_values;
using test::same_bits;
using test::slow_disk;
using test::ThreadCountGuard;
using test::world;

using V = Eigen::VectorXd;
using B = DistributedBackend;

// This rank's rows of a serial [u; v] vector, in the distributed local order.
std::vector<double> my_rows(const DistributedGrayScott& problem, const V& serial) {
  const Index n = problem.grid_size(), cells = n * n;
  const Index first = problem.layout().first_row() * n;
  const Index count = problem.layout().local_rows() * n;
  std::vector<double> rows(serial.data() + first, serial.data() + first + count);
  rows.insert(rows.end(), serial.data() + cells + first, serial.data() + cells + first + count);
  return rows;
}

TEST(DistributedGrayScott, HaloExchangeGivesTheSerialStencilBitForBit) {
  const Index n = 37;  // rows that do not split evenly over 2, 3 or 4 ranks
  const GrayScott<> serial(n);
  const DistributedGrayScott problem(n, world());
  // A state with structure everywhere: the seeded square grown by a few steps, plus the seed's
  // noise on every cell, so every neighbour matters.
  V y = serial.default_initial_state(3), f = V::Zero(serial.state_size());
  const V theta = serial.default_parameters();
  for (int k = 0; k < 20; ++k) {
    serial.rhs(0.0, y, theta, f);
    y += 0.5 * f;
  }
  V a = V::Zero(y.size());
  for (Index i = 0; i < a.size(); ++i) a[i] = std::sin(0.37 * static_cast<double>(i));
  V out_y = V::Zero(y.size()), out_theta = V::Zero(4);
  serial.rhs(0.0, y, theta, f);
  serial.vjp(0.0, y, theta, a, out_y, out_theta);

  DistributedVector dy = B::zeros(serial.state_size()), da = B::zeros(serial.state_size());
  B::copy_from_host(my_rows(problem, y), dy);
  B::copy_from_host(my_rows(problem, a), da);
  DistributedVector df = B::zeros(serial.state_size()), dout = B::zeros(serial.state_size());
  DistributedVector dtheta = DistributedGrayScott::default_parameters(), dout_theta = B::zeros(4);
  problem.rhs(0.0, dy, dtheta, df);
  problem.vjp(0.0, dy, dtheta, da, dout, dout_theta);
  EXPECT_TRUE(same_bits(local_values(df), my_rows(problem, f))) << "rhs";
  EXPECT_TRUE(same_bits(local_values(dout), my_rows(problem, out_y))) << "vjp, state part";
  for (int j = 0; j < 4; ++j)
    EXPECT_TRUE(same_bits(dout_theta.local[j], out_theta[j]))
        << "vjp, parameter " << j << ": " << dout_theta.local[j] << " vs " << out_theta[j];
  // The initial state too.
  EXPECT_TRUE(same_bits(local_values(problem.default_initial_state(3)),
                        my_rows(problem, serial.default_initial_state(3))));
}

TEST(DistributedGrayScott, GradientIsTheSerialGradientBitForBitUnderEverySchedule) {
  const Index n = 32, steps = 40;
  const GrayScott<> serial(n);
  const StepControl control = StepControl::fixed(0.0, 1.0, steps);
  ExplicitRungeKutta serial_stepper(serial, ButcherTableau::rk4(), control);
  StoreAllAdjoint serial_driver(serial_stepper, Objective<EigenBackend>::terminal_squared_norm());
  const auto reference =
      serial_driver.run(serial.default_initial_state(1), serial.default_parameters());

  const DistributedGrayScott problem(n, world());
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), control);
  const auto objective = Objective<B>::terminal_squared_norm();
  const DistributedVector y0 = problem.default_initial_state(1);
  const DistributedVector theta = DistributedGrayScott::default_parameters();
  std::vector<std::pair<std::string, CheckpointedResult<DistributedVector>>> runs;
  test::ScratchDirectory scratch;
  test::SharedScratchDirectory shared;
  for (const auto& [name, planner] : std::vector<std::pair<std::string, Planner>>{
           {"revolve c=3", revolve_schedule(3)},
           {"revolve c=7", revolve_schedule(7)},
           {"uniform k=5", uniform_schedule(5)},
           {"store-all schedule", store_all_schedule()},
           {"revolve c=4 on disk", on_disk(revolve_schedule(4))},
           {"two-level 2+4 disk", two_level_schedule(2, 4, slow_disk())},
           {"revolve c=4 on disk, shared file", on_disk(revolve_schedule(4))},
           {"two-level 2+4 disk, shared file", two_level_schedule(2, 4, slow_disk())}}) {
    CheckpointOptions options;
    options.drift_policy = DriftPolicy::fail;
    if (name.find("shared") == std::string::npos) {
      options.disk.directory = scratch.path();  // each rank its own file (and its own directory)
      options.disk.rank_files = RankFiles::one_per_rank;
    } else {
      options.disk.directory = shared.path();  // one file, every rank its hyperslab
      options.disk.rank_files = RankFiles::shared;
    }
    CheckpointedAdjoint driver(stepper, objective, options);
    runs.emplace_back(name, driver.run(y0, theta, planner));
    EXPECT_TRUE(shared.files().empty()) << "the shared file is removed after the run";
  }
  double first_loss = 0.0;
  for (const auto& [name, r] : runs) {
    SCOPED_TRACE(name);
    EXPECT_EQ(r.summary.steps, steps);
    EXPECT_EQ(r.summary.backend, "distributed");
    EXPECT_TRUE(same_bits(local_values(r.grad_y0), my_rows(problem, reference.grad_y0)));
    EXPECT_TRUE(same_bits(local_values(r.y_final), my_rows(problem, reference.y_final)));
    ASSERT_EQ(r.grad_theta.local.size(), 4);
    for (int j = 0; j < 4; ++j)
      EXPECT_TRUE(same_bits(r.grad_theta.local[j], reference.grad_theta[j]))
          << "dJ/dtheta[" << j << "] " << r.grad_theta.local[j] << " vs "
          << reference.grad_theta[j];
    EXPECT_EQ(r.drift.first_drift_step, -1);
    // Each rank holds (and reports) only its own rows of every snapshot.
    const std::int64_t held = problem.layout().local_size() * 8 + sizeof(Carry);
    if (name.find("disk") == std::string::npos) {
      EXPECT_LE(r.summary.storage.peak_bytes_on(LevelKind::memory), (steps + 1) * held);
      EXPECT_EQ(r.summary.storage.peak_bytes_on(LevelKind::memory) % held, 0)
          << r.summary.storage.peak_bytes_on(LevelKind::memory);
    } else {
      EXPECT_GT(r.summary.storage.stores_on(LevelKind::disk), 0);
    }
    EXPECT_TRUE(scratch.files().empty()) << "the snapshot files are removed after the run";
    if (&r == &runs.front().second) first_loss = r.loss;
    EXPECT_TRUE(same_bits(r.loss, first_loss)) << "every schedule, the same loss";
  }
  // The loss (½|y_N|², a distributed dot product) folds one partial per grid row of u, then of
  // v, in row order — here recomputed by hand from the serial final state: every rank count
  // gives these bits.
  const V& yN = reference.y_final;
  double expected = 0.0;
  for (Index row = 0; row < 2 * n; ++row) {
    double lane[4] = {0.0, 0.0, 0.0, 0.0};
    for (Index c = 0; c < n; ++c) lane[c % 4] += yN[row * n + c] * yN[row * n + c];
    expected = expected + ((lane[0] + lane[1]) + (lane[2] + lane[3]));
  }
  EXPECT_TRUE(same_bits(first_loss, 0.5 * expected)) << first_loss << " vs " << 0.5 * expected;
}

TEST(DistributedGrayScott, SharedSnapshotFileHoldsTheWholeStateAndVerifiesEveryRank) {
  // A kept shared file read back by one process: /states rows are the serial states (the ranks'
  // hyperslabs put together), and every rank's slice of every slot verifies.
  const Index n = 20, steps = 12;
  const GrayScott<> serial(n);
  const StepControl control = StepControl::fixed(0.0, 1.0, steps);
  const DistributedGrayScott problem(n, world());
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), control);
  test::SharedScratchDirectory shared;
  CheckpointOptions options;
  options.disk.file = shared / "kept.h5";
  options.disk.keep_file = true;
  options.disk.rank_files = RankFiles::shared;
  CheckpointedAdjoint driver(stepper, Objective<B>::terminal_squared_norm(), options);
  driver.run(problem.default_initial_state(1), DistributedGrayScott::default_parameters(),
             on_disk(revolve_schedule(3)));
  MPI_Barrier(MPI_COMM_WORLD);
  if (world().rank() == 0) {
    Hdf5SnapshotFile file = Hdf5SnapshotFile::open(shared / "kept.h5");
    EXPECT_TRUE(file.shared());
    EXPECT_EQ(file.ranks(), world().size());
    EXPECT_EQ(file.global_state_size(), serial.state_size());
    for (int slot = 0; slot < file.slots(); ++slot) EXPECT_EQ(file.verify(slot), "") << slot;
    EXPECT_EQ(file.record(0).step, 0);  // y_0 sits in revolve's first slot
    // Rank 0's view of slot 0 is rank 0's rows of y_0.
    std::vector<double> mine(static_cast<std::size_t>(file.state_size()));
    std::vector<std::byte> meta(sizeof(Carry));
    file.read(0, 0, mine, meta);
    const V y0 = serial.default_initial_state(1);
    const Index rows0 = file.slice().run_length;
    std::vector<double> expected(y0.data(), y0.data() + rows0);
    expected.insert(expected.end(), y0.data() + n * n, y0.data() + n * n + rows0);
    EXPECT_TRUE(same_bits(mine, expected));
    file.close();
    std::filesystem::remove(shared / "kept.h5");
  }
}

TEST(DistributedGrayScott, ANonFiniteValueOnOneRankStopsEveryRank) {
  // Finiteness checks are collectives: a NaN in the last rank's rows only must make every rank
  // refuse the run, the same way — none may go on into a collective the others never reach.
  const DistributedGrayScott problem(24, world());
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 1.0, 10));
  DistributedVector y0 = problem.default_initial_state(1);
  if (world().rank() == world().size() - 1) y0.local[y0.local.size() / 2] = std::nan("");
  CheckpointedAdjoint driver(stepper, Objective<B>::terminal_squared_norm());
  EXPECT_THROW(driver.run(y0, DistributedGrayScott::default_parameters(), revolve_schedule(3)),
               InvalidArgument);
  // And the run goes on working afterwards on every rank (no collective left half-done).
  const auto r = driver.run(problem.default_initial_state(1),
                            DistributedGrayScott::default_parameters(), revolve_schedule(3));
  EXPECT_EQ(r.summary.reversed_steps, 10);
}

TEST(DistributedGrayScott, MoreRanksThanRowsIsRefusedBeforeAnyWork) {
  if (world().size() < 2) GTEST_SKIP() << "needs 2 ranks or more";
  try {
    DistributedGrayScott problem(world().size() - 1, world());
    FAIL() << "a grid of fewer rows than ranks was accepted";
  } catch (const InvalidArgument& e) {
    // (GrayScott itself refuses n < 3 first; either message names the rule.)
    SUCCEED() << e.what();
  }
}

}  // namespace
}  // namespace rwd
