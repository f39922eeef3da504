// Stencil models split across MPI ranks (rwd::DistributedStencilProblem), run by ctest under
// mpiexec with 1, 2, 3 and 4 ranks: rhs, jvp and the derived vjp against the one-process
// rwd::StencilProblem bit for bit — Gray–Scott (periodic), Heat2D (fixed walls), the Brusselator
// (reflecting walls), a 2-D model whose stencil reaches two rows up and one down, a 3-D model
// reaching one plane back and two ahead, and 1-D lines of cells split by blocks (Lorenz-96 on a
// ring, a two-field line reaching three cells back and two ahead between walls) — with 1 and 2
// threads per rank and on grids cut into several blocks and colours; gradients under every
// schedule and store the one-process gradient's bits; and the refusals. Each rank checks its own
// slabs; θ's gradient must be the same on every rank.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "distributed_test_support.hpp"
#include "problems/models/stencil_models.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/distributed/distributed_stencil.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/parallel.hpp"
#include "rewind/schedule/schedules.hpp"
#include "rewind/stencil_model.hpp"
#include "support/scratch_directory.hpp"

namespace rwd {
namespace {

using test::local_values;
using test::same_bits;
using test::slow_disk;
using test::ThreadCountGuard;
using test::world;
using testing::BrusselatorStencil;
using testing::GrayScottStencil;
using testing::Heat2DStencil;
using testing::Lorenz96Stencil;

using V = Eigen::VectorXd;
using B = DistributedBackend;

// u' = a (u_{i−2} − 2u_i + u_{i+1}) + b ∇²_j u − u³ + c: reaches two rows up and one down
// (span 3 along dimension 0, periodic), walls at u = 0.5 along dimension 1.
struct ReachTwoUp {
  static constexpr std::array<const char*, 1> field_names{"u"};
  static constexpr std::array<const char*, 3> parameter_names{"a", "b", "c"};
  static constexpr std::array<double, 3> default_parameters{0.05, 0.1, 0.01};
  enum Point { centre, up2, down, left, right };
  static constexpr std::array<Offset<2>, 5> stencil{{{0, 0}, {-2, 0}, {1, 0}, {0, -1}, {0, 1}}};
  static constexpr std::array<Boundary, 2> boundaries{Boundary::periodic, Boundary::fixed};
  static constexpr std::array<double, 1> wall_values{0.5};

  template <class T, class X>
  void cell(const X& x, const T* p, const GridCell<2>& /*at*/, T* f) const {
    const T u = x(0, centre);
    f[0] = p[0] * ((x(0, up2) - 2.0 * u) + x(0, down)) +
           p[1] * ((x(0, left) - 2.0 * u) + x(0, right)) - u * u * u + p[2];
  }
};

// Two fields on a 3-D grid, reflecting along dimension 0 with points one plane back and two
// ahead, periodic in the other two: every boundary kind a 3-D split meets.
struct Planes3D {
  static constexpr std::array<const char*, 2> field_names{"u", "v"};
  static constexpr std::array<const char*, 2> parameter_names{"d", "k"};
  static constexpr std::array<double, 2> default_parameters{0.08, 0.3};
  enum Point { centre, back, ahead2, left, right, below, above };
  static constexpr std::array<Offset<3>, 7> stencil{
      {{0, 0, 0}, {-1, 0, 0}, {2, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}}};
  static constexpr std::array<Boundary, 3> boundaries{Boundary::reflecting, Boundary::periodic,
                                                      Boundary::periodic};

  template <class T, class X>
  void cell(const X& x, const T* p, const GridCell<3>& /*at*/, T* f) const {
    const T u = x(0, centre), v = x(1, centre);
    const T spread =
        (((x(0, back) + x(0, ahead2)) + (x(0, left) + x(0, right))) + (x(0, below) + x(0, above))) -
        6.0 * u;
    f[0] = p[0] * spread - p[1] * u * v;
    f[1] = p[1] * u * v - 0.1 * v + 0.05 * (x(1, ahead2) - x(1, back));
  }
};

// Two fields on a line, reaching three cells back and eleven ahead (span 14): on blocks of 5000
// cells (5000 = 39·128 + 8: the last chunk of a block is 8 cells) a cell's contributions from the
// block below come through two points, +5 and +11, from both sides of that chunk's start — so a
// neighbour's block visited in other chunks than the whole block's would add them in another
// order. u' = a (u_{i−3} − 2u_i + u_{i+5}) − u v + c, v' = u v − b v + c (v_{i+11} − v_{i−1}) +
// 37 u_{i+11} (a large weight, so that adding the two in another order changes the bits).
template <Boundary kBoundary>
struct LineReach {
  static constexpr std::array<const char*, 2> field_names{"u", "v"};
  static constexpr std::array<const char*, 3> parameter_names{"a", "b", "c"};
  static constexpr std::array<double, 3> default_parameters{0.2, 0.3, 0.05};
  static constexpr std::array<double, 2> wall_values{0.4, 0.1};
  enum Point { back3, back1, centre, ahead5, ahead11 };
  static constexpr std::array<Offset<1>, 5> stencil{{{-3}, {-1}, {0}, {5}, {11}}};
  static constexpr std::array<Boundary, 1> boundaries{kBoundary};

  template <class T, class X>
  void cell(const X& x, const T* p, const GridCell<1>& /*at*/, T* f) const {
    const T u = x(0, centre), v = x(1, centre);
    f[0] = p[0] * ((x(0, back3) - 2.0 * u) + x(0, ahead5)) - u * v + p[2];
    f[1] = u * v - p[1] * v + p[2] * (x(1, ahead11) - x(1, back1)) + 37.0 * x(0, ahead11);
  }
};

// A smooth, varied value for (field, cell): the same on every rank whatever the split.
template <int D>
double sample(int field, const GridCell<D>& at, double scale) {
  double phase = 0.31 * field;
  for (int d = 0; d < D; ++d) phase = phase * 1.7 + 0.23 * static_cast<double>(at.index[d]);
  return scale * (0.6 + 0.4 * std::sin(phase) + 0.05 * std::cos(3.1 * phase));
}

// The whole grid's state in the serial layout, from sample().
template <class Model>
V whole_state(const StencilProblem<Model>& serial, double scale) {
  constexpr int D = StencilProblem<Model>::kDimension;
  const auto& n = serial.grid_sizes();
  const Index cells = serial.cell_count();
  V y(serial.state_size());
  for (int k = 0; k < StencilProblem<Model>::kFields; ++k)
    for (Index c = 0; c < cells; ++c) {
      GridCell<D> at{{}, n};
      Index rest = c;
      for (int d = D - 1; d >= 0; --d) {
        at.index[d] = rest % n[d];
        rest /= n[d];
      }
      y[k * cells + c] = sample<D>(k, at, scale);
    }
  return y;
}

// rhs, jvp and vjp of the split problem against the one-process problem's, bit for bit.
template <class Model>
void expect_serial_products(const Model& model,
                            const std::array<Index, Model::boundaries.size()>& sizes, int threads) {
  SCOPED_TRACE(std::to_string(threads) + " threads, n_0 = " + std::to_string(sizes[0]));
  ThreadCountGuard guard;
  if (threads > 1 && !kThreadsAvailable) GTEST_SKIP() << "built without OpenMP";
  set_thread_count(threads);
  const StencilProblem<Model> serial(model, sizes, StencilOptions{.check_reads = false});
  const DistributedStencilProblem<Model> split(model, sizes, world(),
                                               StencilOptions{.check_reads = false});
  const V y = whole_state(serial, 1.0), v = whole_state(serial, -0.7), w = whole_state(serial, 2.3);
  const V theta = StencilProblem<Model>::default_parameters();
  V f = V::Zero(y.size()), jw = V::Zero(y.size()), out_y = V::Zero(y.size());
  V out_theta = V::Zero(theta.size());
  serial.rhs(0.0, y, theta, f);
  serial.jvp(0.0, y, theta, w, jw);
  serial.vjp(0.0, y, theta, v, out_y, out_theta);

  const auto part = [&](const V& x) {
    return split.local_part(std::span<const double>(x.data(), static_cast<std::size_t>(x.size())));
  };
  const DistributedVector dy = part(y), dv = part(v), dw = part(w);
  const DistributedVector dtheta = DistributedStencilProblem<Model>::default_parameters();
  DistributedVector df = B::zeros(split.state_size()), djw = B::zeros(split.state_size());
  DistributedVector dout = B::zeros(split.state_size()), dout_theta = B::zeros(theta.size());
  split.rhs(0.0, dy, dtheta, df);
  split.jvp(0.0, dy, dtheta, dw, djw);
  split.vjp(0.0, dy, dtheta, dv, dout, dout_theta);
  EXPECT_TRUE(same_bits(local_values(df), local_values(part(f)))) << "rhs";
  EXPECT_TRUE(same_bits(local_values(djw), local_values(part(jw)))) << "jvp";
  EXPECT_TRUE(same_bits(local_values(dout), local_values(part(out_y)))) << "vjp, state part";
  for (Index j = 0; j < theta.size(); ++j)
    EXPECT_TRUE(same_bits(dout_theta.local[j], out_theta[j]))
        << "vjp, parameter " << j << ": " << dout_theta.local[j] << " vs " << out_theta[j];
  // The state built on each rank from the same function is the serial state's part.
  EXPECT_TRUE(same_bits(local_values(split.state_from([](int k, const auto& at) {
                          return sample<Model::boundaries.size()>(k, at, 1.0);
                        })),
                        local_values(dy)));
}

TEST(DistributedStencil, ProductsAreTheOneProcessBitsForEveryBoundary) {
  for (int threads : {1, 2}) {
    expect_serial_products(GrayScottStencil{}, {13, 9}, threads);
    expect_serial_products(Heat2DStencil(13), {13, 13}, threads);
    expect_serial_products(BrusselatorStencil{}, {14, 10}, threads);
    expect_serial_products(ReachTwoUp{}, {13, 11}, threads);
    expect_serial_products(Planes3D{}, {14, 5, 6}, threads);
  }
}

TEST(DistributedStencil, ProductsAreTheOneProcessBitsOnGridsOfSeveralBlocksAndColours) {
  // Slabs of 200 cells: the one-process vjp cuts 64 rows into blocks of 21 (three blocks, an odd
  // number around a periodic dimension 0: three colours) and 2·65 rows into six blocks.
  const StencilProblem<GrayScottStencil> gs(GrayScottStencil{}, {64, 200});
  const StencilProblem<ReachTwoUp> reach(ReachTwoUp{}, {64, 200});
  const StencilProblem<BrusselatorStencil> bruss(BrusselatorStencil{}, {130, 200});
  ASSERT_EQ(gs.colour_count(), 3);
  ASSERT_EQ(reach.colour_count(), 3);
  ASSERT_GT(bruss.block_count(), 3);
  for (int threads : {1, 2}) {
    expect_serial_products(GrayScottStencil{}, {64, 200}, threads);
    expect_serial_products(ReachTwoUp{}, {64, 200}, threads);
    expect_serial_products(BrusselatorStencil{}, {130, 200}, threads);
  }
}

// The one-process gradient (store-all, one thread) and the split gradient under six schedules
// and stores: loss, this rank's slabs of dJ/dy0 and y_N, and dJ/dθ must be its bits.
template <class Model>
void expect_serial_gradient_under_every_schedule(
    const Model& model, const std::array<Index, Model::boundaries.size()>& sizes, double dt,
    Index steps, int threads) {
  SCOPED_TRACE(std::to_string(threads) + " threads");
  ThreadCountGuard guard;
  if (threads > 1 && !kThreadsAvailable) GTEST_SKIP() << "built without OpenMP";
  set_thread_count(1);
  const StencilProblem<Model> serial(model, sizes, StencilOptions{.check_reads = false});
  const StepControl control = StepControl::fixed(0.0, dt, steps);
  ExplicitRungeKutta serial_stepper(serial, ButcherTableau::rk4(), control);
  StoreAllAdjoint serial_driver(serial_stepper, Objective<EigenBackend>::terminal_squared_norm());
  const V y0 = whole_state(serial, 1.0);
  const auto reference = serial_driver.run(y0, StencilProblem<Model>::default_parameters());
  // The run moved the state, and every parameter carries gradient.
  EXPECT_GT((reference.y_final - y0).norm(), 1e-3 * y0.norm());
  for (Index j = 0; j < reference.grad_theta.size(); ++j) EXPECT_NE(reference.grad_theta[j], 0.0);

  set_thread_count(threads);
  const DistributedStencilProblem<Model> split(model, sizes, world(),
                                               StencilOptions{.check_reads = false});
  const auto part = [&](const V& x) {
    return local_values(
        split.local_part(std::span<const double>(x.data(), static_cast<std::size_t>(x.size()))));
  };
  ExplicitRungeKutta stepper(split, ButcherTableau::rk4(), control);
  const auto objective = Objective<B>::terminal_squared_norm();
  const DistributedVector dy0 =
      split.local_part(std::span<const double>(y0.data(), static_cast<std::size_t>(y0.size())));
  const DistributedVector theta = DistributedStencilProblem<Model>::default_parameters();
  test::ScratchDirectory scratch;
  for (const auto& [name, planner] : std::vector<std::pair<std::string, Planner>>{
           {"revolve c=3", revolve_schedule(3)},
           {"uniform k=4", uniform_schedule(4)},
           {"store-all schedule", store_all_schedule()},
           {"revolve c=4 on disk", on_disk(revolve_schedule(4))},
           {"two-level 2+4 disk", two_level_schedule(2, 4, slow_disk())}}) {
    SCOPED_TRACE(name);
    CheckpointOptions options;
    options.drift_policy = DriftPolicy::fail;
    options.disk.directory = scratch.path();
    CheckpointedAdjoint driver(stepper, objective, options);
    const auto r = driver.run(dy0, theta, planner);
    EXPECT_EQ(r.summary.steps, steps);
    EXPECT_TRUE(same_bits(local_values(r.grad_y0), part(reference.grad_y0)));
    EXPECT_TRUE(same_bits(local_values(r.y_final), part(reference.y_final)));
    for (Index j = 0; j < reference.grad_theta.size(); ++j)
      EXPECT_TRUE(same_bits(r.grad_theta.local[j], reference.grad_theta[j]))
          << "dJ/dtheta[" << j << "] " << r.grad_theta.local[j] << " vs "
          << reference.grad_theta[j];
    EXPECT_EQ(r.drift.first_drift_step, -1);
    EXPECT_TRUE(scratch.files().empty()) << "the snapshot files are removed after the run";
  }
}

TEST(DistributedStencil, GradientsAreTheOneProcessBitsUnderEveryScheduleAndStore) {
  for (int threads : {1, 2}) {
    expect_serial_gradient_under_every_schedule(GrayScottStencil{}, {16, 12}, 1.0, 12, threads);
    expect_serial_gradient_under_every_schedule(Heat2DStencil(16), {16, 16}, 1.0, 12, threads);
    expect_serial_gradient_under_every_schedule(ReachTwoUp{}, {13, 10}, 0.5, 10, threads);
  }
}

// 1-D: lines of 4096·k cells are k equal blocks; 5 blocks around a ring take three colours; lines
// of 2·10⁴ and 10⁵ cells are blocks of 5000; 2 blocks on 2 ranks around a ring make one block
// both neighbours of the other.
TEST(DistributedStencil, ProductsAreTheOneProcessBitsOnLinesOfCells) {
  const StencilProblem<Lorenz96Stencil> ring(Lorenz96Stencil{}, {5 * 4096});
  ASSERT_EQ(ring.block_count(), 5);
  ASSERT_EQ(ring.colour_count(), 3);
  ASSERT_EQ(StencilProblem<Lorenz96Stencil>(Lorenz96Stencil{}, {100000}).block_count(), 20);
  for (int threads : {1, 2}) {
    expect_serial_products(Lorenz96Stencil{}, {4 * 4096}, threads);
    expect_serial_products(Lorenz96Stencil{}, {5 * 4096}, threads);
    expect_serial_products(Lorenz96Stencil{}, {100000}, threads);
    expect_serial_products(LineReach<Boundary::periodic>{}, {5 * 4096}, threads);
    expect_serial_products(LineReach<Boundary::periodic>{}, {4 * 5000}, threads);
    expect_serial_products(LineReach<Boundary::fixed>{}, {4 * 5000}, threads);
    expect_serial_products(LineReach<Boundary::reflecting>{}, {4 * 5000}, threads);
    if (world().size() <= 2)
      expect_serial_products(LineReach<Boundary::periodic>{}, {8192}, threads);
  }
}

TEST(DistributedStencil, LineGradientsAreTheOneProcessBitsUnderEveryScheduleAndStore) {
  for (int threads : {1, 2}) {
    expect_serial_gradient_under_every_schedule(Lorenz96Stencil{}, {4 * 4096}, 0.01, 10, threads);
    expect_serial_gradient_under_every_schedule(LineReach<Boundary::fixed>{}, {4 * 5000}, 0.1, 10,
                                                threads);
  }
}

TEST(DistributedStencil, RefusesALineOfFewerBlocksThanRanksOrOfUnequalBlocks) {
  try {
    // 20011 is prime: no equal blocks of 4096 to 16384 cells.
    DistributedStencilProblem<Lorenz96Stencil> problem(Lorenz96Stencil{}, {20011}, world());
    FAIL() << "a line of unequal blocks was accepted";
  } catch (const InvalidArgument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("n = 20011 has none"), std::string::npos) << message;
  }
  if (world().size() < 2) return;
  const Index cells = 4096 * (world().size() - 1);
  try {
    DistributedStencilProblem<Lorenz96Stencil> problem(Lorenz96Stencil{}, {cells}, world());
    FAIL() << "a line of fewer blocks than ranks was accepted";
  } catch (const InvalidArgument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("every rank needs a block or more: use at most " +
                           std::to_string(world().size() - 1) + " rank"),
              std::string::npos)
        << message;
  }
}

TEST(DistributedStencil, RefusesMoreRanksThanTheStencilsReachAllowsBeforeAnyWork) {
  if (world().size() < 2) GTEST_SKIP() << "needs 2 ranks or more";
  // ReachTwoUp spans 3 rows: 3·ranks − 1 rows leave some rank 2.
  const Index rows = 3 * world().size() - 1;
  try {
    DistributedStencilProblem<ReachTwoUp> problem(ReachTwoUp{}, {rows, 8}, world());
    FAIL() << "a split leaving a rank fewer rows than the stencil reaches was accepted";
  } catch (const InvalidArgument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("reaches 3 slabs"), std::string::npos) << message;
    EXPECT_NE(message.find("use at most " + std::to_string(rows / 3) + " ranks"), std::string::npos)
        << message;
  }
}

TEST(DistributedStencil, RefusesVectorsOfAnotherSplitAndAWrongWholeState) {
  const DistributedStencilProblem<GrayScottStencil> problem(GrayScottStencil{}, {8, 8}, world());
  const DistributedVector theta = DistributedStencilProblem<GrayScottStencil>::default_parameters();
  DistributedVector f = B::zeros(problem.state_size());
  const DistributedVector replicated = B::zeros(4);
  EXPECT_THROW(problem.rhs(0.0, replicated, theta, f), InvalidArgument);
  const std::vector<double> short_state(10, 0.0);
  EXPECT_THROW(problem.local_part(short_state), InvalidArgument);
}

}  // namespace
}  // namespace rwd
