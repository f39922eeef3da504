// Lorenz-96 split across MPI ranks (rwd::DistributedLorenz96 over rwd::DistributedBackend), run
// by ctest under mpiexec with 1, 2, 3 and 4 ranks: the ring's halos against the serial stencil,
// dJ/dF summed in the serial order across rank boundaries that cut its blocks, and gradients
// under every schedule and with 1 or 2 threads the same bits as the one-process
// Lorenz96<EigenBackend> gradient — hence the same for every rank count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "distributed_test_support.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/distributed/distributed_lorenz96.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/parallel.hpp"
#include "rewind/problems/lorenz96.hpp"
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

// This rank's stretch of a serial vector of N values.
std::vector<double> my_part(const DistributedLorenz96& problem, const V& serial) {
  const Index length = problem.layout().row_length();
  const Index first = problem.layout().first_row() * length;
  const Index count = problem.layout().local_rows() * length;
  return std::vector<double>(serial.data() + first, serial.data() + first + count);
}

// A state off the equilibrium everywhere, so every neighbour matters and the run is chaotic.
V lively_state(const Lorenz96<>& serial) {
  V y = serial.default_initial_state();
  for (Index i = 0; i < y.size(); ++i) y[i] += 0.5 * std::sin(1.3 * static_cast<double>(i));
  return y;
}

TEST(DistributedLorenz96, RowLengthDependsOnNOnly) {
  EXPECT_EQ(DistributedLorenz96::row_length_for(40), 2);
  EXPECT_EQ(DistributedLorenz96::row_length_for(10000), 4);  // ⌈10000/4096⌉ = 3 ∤ 10000
  EXPECT_EQ(DistributedLorenz96::row_length_for(131072), 32);
  EXPECT_EQ(DistributedLorenz96::row_length_for(1000000), 250);
  EXPECT_EQ(DistributedLorenz96::row_length_for(37), 37);  // prime: one row
  EXPECT_THROW(DistributedLorenz96::row_length_for(3), InvalidArgument);
}

TEST(DistributedLorenz96, HalosAndForcingSumGiveTheSerialBitsBitForBit) {
  // 10000: rows of 4; over 3 ranks the boundaries (3332, 6664) cut the 4096-blocks, over 4 the
  // third rank lies inside block 1 (5000 … 7500), carried in and out. 42: rows of 2, 21 rows.
  // 8: rows of 2, so at 4 ranks each holds 2 values and every stencil reaches into both halos.
  for (const Index n : {Index{10000}, Index{42}, Index{8}}) {
    SCOPED_TRACE("N = " + std::to_string(n));
    const Lorenz96<> serial(n);
    const DistributedLorenz96 problem(n, world());
    const V y = lively_state(serial);
    const V theta = serial.default_parameters(7.5);
    V a = V::Zero(n);
    for (Index i = 0; i < n; ++i) a[i] = std::sin(0.37 * static_cast<double>(i));
    V f = V::Zero(n), out_y = V::Zero(n), out_theta = V::Zero(1);
    serial.rhs(0.0, y, theta, f);
    serial.vjp(0.0, y, theta, a, out_y, out_theta);

    DistributedVector dy = B::zeros(n), da = B::zeros(n), df = B::zeros(n), dout = B::zeros(n);
    B::copy_from_host(my_part(problem, y), dy);
    B::copy_from_host(my_part(problem, a), da);
    const DistributedVector dtheta = DistributedLorenz96::default_parameters(7.5);
    DistributedVector dout_theta = B::zeros(1);
    problem.rhs(0.0, dy, dtheta, df);
    problem.vjp(0.0, dy, dtheta, da, dout, dout_theta);
    EXPECT_TRUE(same_bits(local_values(df), my_part(problem, f))) << "rhs";
    EXPECT_TRUE(same_bits(local_values(dout), my_part(problem, out_y))) << "vjp, state part";
    EXPECT_TRUE(same_bits(dout_theta.local[0], out_theta[0]))
        << "dF: " << dout_theta.local[0] << " vs " << out_theta[0];
    EXPECT_TRUE(same_bits(local_values(problem.default_initial_state(8.0, 0.3)),
                          my_part(problem, serial.default_initial_state(8.0, 0.3))));
  }
  EXPECT_EQ(DistributedLorenz96::parameter_names(), Lorenz96<>::parameter_names());
  EXPECT_EQ(DistributedLorenz96::default_parameters().local[0],
            Lorenz96<>::default_parameters()[0]);
}

// The serial reference (one process, one thread, every snapshot in memory) and the distributed
// gradient under six schedules with `threads` threads per rank, from a lively state.
void expect_serial_bits_under_every_schedule(Index n, Index steps, int threads) {
  SCOPED_TRACE("N = " + std::to_string(n) + ", " + std::to_string(threads) + " threads");
  ThreadCountGuard guard;
  if (threads > 1 && !kThreadsAvailable) GTEST_SKIP() << "built without OpenMP";
  set_thread_count(1);
  const Lorenz96<> serial(n);
  const StepControl control = StepControl::fixed(0.0, 0.01, steps);
  ExplicitRungeKutta serial_stepper(serial, ButcherTableau::rk4(), control);
  StoreAllAdjoint serial_driver(serial_stepper, Objective<EigenBackend>::terminal_squared_norm());
  const V serial_y0 = lively_state(serial);
  const auto reference = serial_driver.run(serial_y0, serial.default_parameters());

  set_thread_count(threads);
  const DistributedLorenz96 problem(n, world());
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), control);
  const auto objective = Objective<B>::terminal_squared_norm();
  DistributedVector y0 = B::zeros(n);
  B::copy_from_host(my_part(problem, serial_y0), y0);
  const DistributedVector theta = DistributedLorenz96::default_parameters();
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
    options.disk.directory = scratch.path();
    CheckpointedAdjoint driver(stepper, objective, options);
    const auto r = driver.run(y0, theta, planner);
    EXPECT_EQ(r.summary.steps, steps);
    EXPECT_TRUE(same_bits(local_values(r.grad_y0), my_part(problem, reference.grad_y0)));
    EXPECT_TRUE(same_bits(local_values(r.y_final), my_part(problem, reference.y_final)));
    ASSERT_EQ(r.grad_theta.local.size(), 1);
    EXPECT_TRUE(same_bits(r.grad_theta.local[0], reference.grad_theta[0]))
        << "dJ/dF " << r.grad_theta.local[0] << " vs " << reference.grad_theta[0];
    EXPECT_EQ(r.drift.first_drift_step, -1);
    if (name.find("disk") != std::string::npos) {
      EXPECT_GT(r.summary.storage.stores_on(LevelKind::disk), 0);
    }
    EXPECT_TRUE(scratch.files().empty());
    if (first) first_loss = r.loss;
    first = false;
    EXPECT_TRUE(same_bits(r.loss, first_loss)) << "every schedule, the same loss";
  }
  // The loss folds one partial per row of L values (four lanes inside a row), rows in order.
  const V& yN = reference.y_final;
  const Index length = problem.layout().row_length();
  double expected = 0.0;
  for (Index row = 0; row < n / length; ++row) {
    double lane[4] = {0.0, 0.0, 0.0, 0.0};
    for (Index c = 0; c < length; ++c) lane[c % 4] += yN[row * length + c] * yN[row * length + c];
    expected = expected + ((lane[0] + lane[1]) + (lane[2] + lane[3]));
  }
  EXPECT_TRUE(same_bits(first_loss, 0.5 * expected)) << first_loss << " vs " << 0.5 * expected;
}

TEST(DistributedLorenz96, GradientIsTheSerialGradientBitForBitUnderEverySchedule) {
  // 200 RK4 steps of 0.01 from a state off the equilibrium: chaotic, moving at every step.
  {
    const Lorenz96<> serial(10000);
    ExplicitRungeKutta stepper(serial, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 200));
    const V theta = serial.default_parameters();
    V y = lively_state(serial), before = y;
    Carry carry = stepper.initial_carry(y, theta);
    while (!stepper.finished(carry)) {
      before = y;
      stepper.step(y, carry, theta);
    }
    EXPECT_GT((y - before).norm() / y.norm(), 1e-3) << "the run has settled";
  }
  for (int threads : {1, 2}) expect_serial_bits_under_every_schedule(10000, 200, threads);
}

TEST(DistributedLorenz96, ThreadedRangesGiveTheSerialGradientBitForBit) {
  // 2^17 variables: at 4 ranks 32768 each, enough for the element-wise loops and the vector
  // operations to run on 2 threads (detail::kParallelMinElements).
  for (int threads : {1, 2}) expect_serial_bits_under_every_schedule(131072, 12, threads);
}

TEST(DistributedLorenz96, MoreRanksThanRowsIsRefusedBeforeAnyWork) {
  if (world().size() < 2) GTEST_SKIP() << "needs 2 ranks or more";
  try {
    DistributedLorenz96 problem(37, world());  // prime: one row of 37
    FAIL() << "a ring of one row was split across " << world().size() << " ranks";
  } catch (const InvalidArgument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("1 rows"), std::string::npos) << message;
    EXPECT_NE(message.find(std::to_string(world().size()) + " ranks"), std::string::npos)
        << message;
  }
}

}  // namespace
}  // namespace rwd
