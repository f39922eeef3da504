// Heat2D split across MPI ranks (rwd::DistributedHeat2D over rwd::DistributedBackend), run by
// ctest under mpiexec with 1, 2, 3 and 4 ranks: the halo exchange and the walls against the
// serial stencil, and gradients under every schedule and with 1 or 2 threads the same bits as the
// one-process Heat2D<EigenBackend> gradient — hence the same for every rank count. Each rank
// checks its own rows; θ's gradient must be the same on every rank.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "distributed_test_support.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/distributed/distributed_heat2d.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/parallel.hpp"
#include "rewind/problems/heat2d.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/scratch_directory.hpp"

namespace rwd {
namespace {

using test::local_values;
using test::same_bits;
using test::slow_disk;
using test::ThreadCountGuard;
using test::world;

using V = Eigen::VectorXd;
using B = DistributedBackend;

// This rank's rows of a serial vector of n² values.
std::vector<double> my_rows(const DistributedHeat2D& problem, const V& serial) {
  const Index n = problem.grid_size();
  const Index first = problem.layout().first_row() * n;
  const Index count = problem.layout().local_rows() * n;
  return std::vector<double>(serial.data() + first, serial.data() + first + count);
}

TEST(DistributedHeat2D, HaloExchangeAndWallsGiveTheSerialStencilBitForBit) {
  const Index n = 37;  // rows that do not split evenly over 2, 3 or 4 ranks
  const Heat2D<> serial(n);
  const DistributedHeat2D problem(n, world());
  // A state with structure everywhere (the bump, spread by a few steps, plus noise on every cell)
  // and a strong heater, so every neighbour, both walls and the heater's rows matter.
  V y = serial.default_initial_state(3, 0.05), f = V::Zero(serial.state_size());
  V theta(2);
  theta << 0.2, 0.3;
  for (int k = 0; k < 5; ++k) {
    serial.rhs(0.0, y, theta, f);
    y += 0.5 * f;
  }
  V a = V::Zero(y.size());
  for (Index i = 0; i < a.size(); ++i) a[i] = std::sin(0.37 * static_cast<double>(i));
  V out_y = V::Zero(y.size()), out_theta = V::Zero(2);
  serial.rhs(0.0, y, theta, f);
  serial.vjp(0.0, y, theta, a, out_y, out_theta);

  DistributedVector dy = B::zeros(serial.state_size()), da = B::zeros(serial.state_size());
  B::copy_from_host(my_rows(problem, y), dy);
  B::copy_from_host(my_rows(problem, a), da);
  DistributedVector df = B::zeros(serial.state_size()), dout = B::zeros(serial.state_size());
  DistributedVector dtheta = DistributedHeat2D::default_parameters(0.2, 0.3);
  DistributedVector dout_theta = B::zeros(2);
  problem.rhs(0.0, dy, dtheta, df);
  problem.vjp(0.0, dy, dtheta, da, dout, dout_theta);
  EXPECT_TRUE(same_bits(local_values(df), my_rows(problem, f))) << "rhs";
  EXPECT_TRUE(same_bits(local_values(dout), my_rows(problem, out_y))) << "vjp, state part";
  for (int j = 0; j < 2; ++j)
    EXPECT_TRUE(same_bits(dout_theta.local[j], out_theta[j]))
        << "vjp, parameter " << j << ": " << dout_theta.local[j] << " vs " << out_theta[j];
  // The initial state and the defaults too.
  EXPECT_TRUE(same_bits(local_values(problem.default_initial_state(3, 0.05)),
                        my_rows(problem, serial.default_initial_state(3, 0.05))));
  EXPECT_TRUE(same_bits(local_values(problem.default_initial_state()),
                        my_rows(problem, serial.default_initial_state())));
  const V serial_theta = Heat2D<>::default_parameters();
  const DistributedVector distributed_theta = DistributedHeat2D::default_parameters();
  EXPECT_TRUE(same_bits(local_values(distributed_theta),
                        std::vector<double>(serial_theta.data(), serial_theta.data() + 2)));
  EXPECT_EQ(DistributedHeat2D::parameter_names(), Heat2D<>::parameter_names());
  EXPECT_EQ(problem.state_size(), n * n);
  EXPECT_EQ(problem.parameter_size(), 2);
}

// The serial reference (one process, one thread, every snapshot in memory) and the distributed
// gradient under six schedules with `threads` threads per rank: loss, this rank's rows of
// dJ/dy0 and y_N, and dJ/dθ must be the reference's bits.
void expect_serial_bits_under_every_schedule(Index n, Index steps, int threads) {
  SCOPED_TRACE("n = " + std::to_string(n) + ", " + std::to_string(threads) + " threads");
  ThreadCountGuard guard;
  if (threads > 1 && !kThreadsAvailable) GTEST_SKIP() << "built without OpenMP";
  set_thread_count(1);
  const Heat2D<> serial(n);
  const StepControl control = StepControl::fixed(0.0, 1.0, steps);
  ExplicitRungeKutta serial_stepper(serial, ButcherTableau::rk4(), control);
  StoreAllAdjoint serial_driver(serial_stepper, Objective<EigenBackend>::terminal_squared_norm());
  const auto reference =
      serial_driver.run(serial.default_initial_state(1), serial.default_parameters());

  set_thread_count(threads);
  const DistributedHeat2D problem(n, world());
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), control);
  const auto objective = Objective<B>::terminal_squared_norm();
  const DistributedVector y0 = problem.default_initial_state(1);
  const DistributedVector theta = DistributedHeat2D::default_parameters();
  test::ScratchDirectory scratch;
  double first_loss = 0.0;
  bool first = true;
  for (const auto& [name, planner] : std::vector<std::pair<std::string, Planner>>{
           {"revolve c=3", revolve_schedule(3)},
           {"revolve c=7", revolve_schedule(7)},
           {"uniform k=5", uniform_schedule(5)},
           {"store-all schedule", store_all_schedule()},
           {"revolve c=4 on disk", on_disk(revolve_schedule(4))},
           {"two-level 2+4 disk", two_level_schedule(2, 4, slow_disk())}}) {
    SCOPED_TRACE(name);
    CheckpointOptions options;
    options.drift_policy = DriftPolicy::fail;
    options.disk.directory = scratch.path();  // each rank its own file
    CheckpointedAdjoint driver(stepper, objective, options);
    const auto r = driver.run(y0, theta, planner);
    EXPECT_EQ(r.summary.steps, steps);
    EXPECT_EQ(r.summary.backend, "distributed");
    EXPECT_TRUE(same_bits(local_values(r.grad_y0), my_rows(problem, reference.grad_y0)));
    EXPECT_TRUE(same_bits(local_values(r.y_final), my_rows(problem, reference.y_final)));
    ASSERT_EQ(r.grad_theta.local.size(), 2);
    for (int j = 0; j < 2; ++j)
      EXPECT_TRUE(same_bits(r.grad_theta.local[j], reference.grad_theta[j]))
          << "dJ/dtheta[" << j << "] " << r.grad_theta.local[j] << " vs "
          << reference.grad_theta[j];
    EXPECT_EQ(r.drift.first_drift_step, -1);
    if (name.find("disk") != std::string::npos) {
      EXPECT_GT(r.summary.storage.stores_on(LevelKind::disk), 0);
    }
    EXPECT_TRUE(scratch.files().empty()) << "the snapshot files are removed after the run";
    if (first) first_loss = r.loss;
    first = false;
    EXPECT_TRUE(same_bits(r.loss, first_loss)) << "every schedule, the same loss";
  }
  // The loss (½|y_N|², a distributed dot product) folds one partial per grid row in row order —
  // recomputed here by hand from the serial final state: every rank count gives these bits.
  const V& yN = reference.y_final;
  double expected = 0.0;
  for (Index row = 0; row < n; ++row) {
    double lane[4] = {0.0, 0.0, 0.0, 0.0};
    for (Index c = 0; c < n; ++c) lane[c % 4] += yN[row * n + c] * yN[row * n + c];
    expected = expected + ((lane[0] + lane[1]) + (lane[2] + lane[3]));
  }
  EXPECT_TRUE(same_bits(first_loss, 0.5 * expected)) << first_loss << " vs " << 0.5 * expected;
  // Both parameters carry gradient (the heater's too).
  EXPECT_NE(reference.grad_theta[0], 0.0);
  EXPECT_NE(reference.grad_theta[1], 0.0);
}

TEST(DistributedHeat2D, LiveRunGradientIsTheSerialGradientBitForBitUnderEverySchedule) {
  // n = 32, 300 RK4 steps of dt = 1: about the decay time n² / (2π²κ) ≈ 260 steps, so the field
  // is still moving at the end (checked below), not a steady state that hides wrong gradients.
  const Index n = 32, steps = 300;
  {
    const Heat2D<> serial(n);
    ExplicitRungeKutta stepper(serial, ButcherTableau::rk4(), StepControl::fixed(0.0, 1.0, steps));
    const V theta = serial.default_parameters();
    V y = serial.default_initial_state(1), before = y;
    Carry carry = stepper.initial_carry(y, theta);
    while (!stepper.finished(carry)) {
      before = y;
      stepper.step(y, carry, theta);
    }
    // The last step still changes the field by more than 10^-3 of its size.
    EXPECT_GT((y - before).norm() / y.norm(), 1e-3) << "the run has settled: pick fewer steps";
  }
  for (int threads : {1, 2}) expect_serial_bits_under_every_schedule(n, steps, threads);
}

TEST(DistributedHeat2D, ThreadedRowsGiveTheSerialGradientBitForBit) {
  // 512 rows: at 4 ranks still 128 per rank (65536 values), enough for the row loops, the
  // parameter fold and the vector operations to run on 2 threads (detail::kParallelMinElements).
  for (int threads : {1, 2}) expect_serial_bits_under_every_schedule(512, 12, threads);
}

TEST(DistributedHeat2D, MoreRanksThanRowsIsRefusedBeforeAnyWork) {
  if (world().size() < 2) GTEST_SKIP() << "needs 2 ranks or more";
  const Index n = world().size() - 1;
  try {
    DistributedHeat2D problem(n, world());
    FAIL() << "a grid of fewer rows than ranks was accepted";
  } catch (const InvalidArgument& e) {
    // Below 3 rows Heat2D's own check answers first; from 3 rows on, the layout's names both.
    const std::string message = e.what();
    if (n >= Heat2D<>::kMinGridSize) {
      EXPECT_NE(message.find(std::to_string(n) + " rows"), std::string::npos) << message;
      EXPECT_NE(message.find(std::to_string(world().size()) + " ranks"), std::string::npos)
          << message;
    } else {
      EXPECT_NE(message.find("grid size"), std::string::npos) << message;
    }
  }
}

}  // namespace
}  // namespace rwd
