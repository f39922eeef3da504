// Stencil models loaded from plugins and split across MPI ranks
// (rwd::DistributedPluginStencilProblem), run by ctest under mpiexec with 1, 2, 3 and 4 ranks:
// rhs, jvp and the derived vjp against the one-process rwd::PluginStencilProblem bit for bit —
// Gray–Scott (periodic), the Brusselator (reflecting walls) and Lorenz-96 (a ring of cells),
// with 1 and 2 threads per rank;
// the initial state and the gradient through it (the Brusselator's depends on A and B); rk4
// gradients under store-all, revolve, disk and two-level stores with the one-process bits; and
// Lorenz-96 on a 1-D ring split by blocks of cells; and the refusals: a line with no equal blocks,
// more ranks than the stencil's reach allows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "distributed_test_support.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/distributed/distributed_plugin_stencil.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/parallel.hpp"
#include "rewind/plugin_stencil_model.hpp"
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

// A state with every entry distinct: entry i of the serial layout.
V varied_state(Index size, double scale) {
  V y(size);
  for (Index i = 0; i < size; ++i)
    y[i] = scale * (0.4 + 0.3 * std::sin(0.37 * static_cast<double>(i) + scale));
  return y;
}

// This rank's part of a whole-grid vector (the serial layout: field by field, slabs in order).
std::vector<double> own_part(const DistributedPluginStencilProblem& split, const V& whole) {
  const Index fields = split.plugin().field_count(), cells = whole.size() / fields;
  const Index slab = cells / split.grid_sizes()[0], local = split.local_slabs() * slab;
  std::vector<double> part;
  for (Index k = 0; k < fields; ++k)
    part.insert(part.end(), whole.data() + k * cells + split.first_slab() * slab,
                whole.data() + k * cells + split.first_slab() * slab + local);
  return part;
}
DistributedVector split_vector(const DistributedPluginStencilProblem& split, const V& whole) {
  DistributedVector x = B::zeros(split.state_size());
  const std::vector<double> part = own_part(split, whole);
  std::copy(part.begin(), part.end(), x.local.data());
  return x;
}

void expect_serial_products(const std::string& path, const std::vector<Index>& sizes, int threads) {
  SCOPED_TRACE(path + ", " + std::to_string(threads) +
               " threads, n_0 = " + std::to_string(sizes[0]));
  ThreadCountGuard guard;
  if (threads > 1 && !kThreadsAvailable) GTEST_SKIP() << "built without OpenMP";
  set_thread_count(threads);
  const StencilPlugin plugin = load_stencil_plugin(path);
  const PluginStencilProblem serial = plugin.on_grid(sizes);
  const DistributedPluginStencilProblem split(plugin, sizes, world());
  const Index n = serial.state_size();
  const V y = varied_state(n, 1.0), v = varied_state(n, -0.7), w = varied_state(n, 2.3);
  const V theta = plugin.default_parameters();
  V f = V::Zero(n), jw = V::Zero(n), out_y = V::Zero(n), out_theta = V::Zero(theta.size());
  serial.rhs(0.0, y, theta, f);
  serial.jvp(0.0, y, theta, w, jw);
  serial.vjp(0.0, y, theta, v, out_y, out_theta);

  const DistributedVector dtheta = split.default_parameters();
  DistributedVector df = B::zeros(n), djw = B::zeros(n), dout = B::zeros(n);
  DistributedVector dout_theta = B::zeros(theta.size());
  split.rhs(0.0, split_vector(split, y), dtheta, df);
  split.jvp(0.0, split_vector(split, y), dtheta, split_vector(split, w), djw);
  split.vjp(0.0, split_vector(split, y), dtheta, split_vector(split, v), dout, dout_theta);
  EXPECT_TRUE(same_bits(local_values(df), own_part(split, f))) << "rhs";
  EXPECT_TRUE(same_bits(local_values(djw), own_part(split, jw))) << "jvp";
  EXPECT_TRUE(same_bits(local_values(dout), own_part(split, out_y))) << "vjp, state part";
  for (Index j = 0; j < theta.size(); ++j)
    EXPECT_TRUE(same_bits(dout_theta.local[j], out_theta[j]))
        << "vjp, parameter " << j << ": " << dout_theta.local[j] << " vs " << out_theta[j];

  // The initial state is the serial one's slabs; the gradient through it is replicated.
  const V y0 = serial.initial_state(theta);
  EXPECT_TRUE(same_bits(local_values(split.initial_state(dtheta)), own_part(split, y0)));
  const V through = serial.total_parameter_gradient(theta, v, out_theta);
  const DistributedVector dthrough =
      split.total_parameter_gradient(dtheta, split_vector(split, v), dout_theta);
  for (Index j = 0; j < theta.size(); ++j)
    EXPECT_TRUE(same_bits(dthrough.local[j], through[j])) << "through y0, parameter " << j;
}

TEST(DistributedPluginStencil, ProductsAndInitialStateAreTheOneProcessPluginsBits) {
  for (int threads : {1, 2}) {
    expect_serial_products(REWIND_GRAY_SCOTT_STENCIL_PLUGIN, {13, 9}, threads);
    expect_serial_products(REWIND_BRUSSELATOR_STENCIL_PLUGIN, {14, 10}, threads);
    // Several blocks and three colours in the one-process vjp (64 periodic rows of 200 cells).
    expect_serial_products(REWIND_GRAY_SCOTT_STENCIL_PLUGIN, {64, 200}, threads);
  }
}

// rk4 on the Brusselator plugin from its θ-dependent initial state: the split gradient, under
// every schedule and store, has the one-process store-all gradient's bits, θ's effect through
// the initial state included.
TEST(DistributedPluginStencil, GradientsAreTheOneProcessBitsUnderEveryScheduleAndStore) {
  ThreadCountGuard guard;
  set_thread_count(1);
  const StencilPlugin plugin = load_stencil_plugin(REWIND_BRUSSELATOR_STENCIL_PLUGIN);
  const std::vector<Index> sizes{12, 10};
  const StepControl control = StepControl::fixed(0.0, 0.02, 12);
  const PluginStencilProblem serial = plugin.on_grid(sizes);
  const V theta = plugin.default_parameters();
  const V y0 = serial.initial_state(theta);
  ExplicitRungeKutta serial_stepper(serial, ButcherTableau::rk4(), control);
  StoreAllAdjoint serial_driver(serial_stepper, Objective<EigenBackend>::terminal_squared_norm());
  const auto reference = serial_driver.run(y0, theta);
  const V reference_theta =
      serial.total_parameter_gradient(theta, reference.grad_y0, reference.grad_theta);
  EXPECT_GT((reference.y_final - y0).norm(), 1e-4 * y0.norm());

  const DistributedPluginStencilProblem split(plugin, sizes, world());
  ExplicitRungeKutta stepper(split, ButcherTableau::rk4(), control);
  const auto objective = Objective<B>::terminal_squared_norm();
  const DistributedVector dtheta = split.default_parameters();
  const DistributedVector dy0 = split.initial_state(dtheta);
  test::ScratchDirectory scratch;
  for (const auto& [name, planner] : std::vector<std::pair<std::string, Planner>>{
           {"store-all schedule", store_all_schedule()},
           {"revolve c=3", revolve_schedule(3)},
           {"revolve c=4 on disk", on_disk(revolve_schedule(4))},
           {"two-level 2+4 disk", two_level_schedule(2, 4, slow_disk())}}) {
    SCOPED_TRACE(name);
    CheckpointOptions options;
    options.drift_policy = DriftPolicy::fail;
    options.disk.directory = scratch.path();
    CheckpointedAdjoint driver(stepper, objective, options);
    const auto r = driver.run(dy0, dtheta, planner);
    EXPECT_TRUE(same_bits(local_values(r.grad_y0), own_part(split, reference.grad_y0)));
    EXPECT_TRUE(same_bits(local_values(r.y_final), own_part(split, reference.y_final)));
    const DistributedVector total = split.total_parameter_gradient(dtheta, r.grad_y0, r.grad_theta);
    for (Index j = 0; j < theta.size(); ++j)
      EXPECT_TRUE(same_bits(total.local[j], reference_theta[j]))
          << "dJ/dtheta[" << j << "] " << total.local[j] << " vs " << reference_theta[j];
    EXPECT_EQ(r.drift.first_drift_step, -1);
  }
}

// Lorenz-96 on a ring of 4·5000 cells (four equal blocks, one or more per rank): the products and
// the initial state have the one-process plugin's bits.
TEST(DistributedPluginStencil, ALineOfCellsSplitsWithTheOneProcessPluginsBits) {
  for (int threads : {1, 2})
    expect_serial_products(REWIND_LORENZ96_STENCIL_PLUGIN, {20000}, threads);
}

TEST(DistributedPluginStencil, RefusesALineWithNoEqualBlocksNamingThePath) {
  const StencilPlugin plugin = load_stencil_plugin(REWIND_LORENZ96_STENCIL_PLUGIN);
  try {
    DistributedPluginStencilProblem problem(plugin, {20011}, world());  // 20011 is prime
    FAIL() << "a line of unequal blocks was split";
  } catch (const InvalidArgument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(REWIND_LORENZ96_STENCIL_PLUGIN), std::string::npos) << message;
    EXPECT_NE(message.find("n = 20011 has none"), std::string::npos) << message;
  }
}

TEST(DistributedPluginStencil, RefusesMoreRanksThanTheStencilsReachAllows) {
  if (world().size() < 2) GTEST_SKIP() << "needs 2 ranks or more";
  // Gray–Scott's stencil spans 2 rows: 2·ranks − 1 rows leave some rank 1.
  const StencilPlugin plugin = load_stencil_plugin(REWIND_GRAY_SCOTT_STENCIL_PLUGIN);
  const Index rows = 2 * world().size() - 1;
  try {
    DistributedPluginStencilProblem problem(plugin, {rows, 8}, world());
    FAIL() << "a split leaving a rank fewer rows than the stencil reaches was accepted";
  } catch (const InvalidArgument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(REWIND_GRAY_SCOTT_STENCIL_PLUGIN), std::string::npos) << message;
    EXPECT_NE(message.find("reaches 2 slabs"), std::string::npos) << message;
    EXPECT_NE(message.find("use at most " + std::to_string(rows / 2) + " ranks"), std::string::npos)
        << message;
  }
}

}  // namespace
}  // namespace rwd
