// rwd::stencil_problem (rewind/stencil_model.hpp): Gray–Scott, Heat2D and Lorenz-96 written as
// stencil models give the built-in problems' rhs bit for bit and their hand-written vjps to
// 1e-13; jvp is the transpose of vjp; the sparsity pattern holds every nonzero of the Jacobian;
// rhs, vjp and jvp give the same bits on 1, 2 and 4 threads, and checkpointed gradients the same
// bits for every schedule and thread count; the derivative checker passes 1-, 2- and 3-D models
// with every kind of boundary; a kernel reading outside its shape or leaving an output unwritten
// is caught by the read check; bad declarations and grid sizes are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "problems/models/stencil_models.hpp"
#include "rewind/adjoint/differentiate.hpp"
#include "rewind/derivative_checker.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/parallel.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/heat2d.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "rewind/schedule/schedules.hpp"
#include "rewind/stencil_model.hpp"
#include "support/error_message.hpp"
#include "support/random_data.hpp"
#include "support/same_gradient_bits.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vector = B::Vector;
using testing::GrayScottStencil;
using testing::Heat2DStencil;
using testing::Lorenz96Stencil;

static_assert(Problem<StencilProblem<GrayScottStencil>>);
static_assert(Problem<StencilProblem<Lorenz96Stencil>>);

// max_i |a_i − b_i| / max_i |b_i|.
double relative_error(const Vector& a, const Vector& b) {
  const double scale = b.cwiseAbs().maxCoeff();
  return (a - b).cwiseAbs().maxCoeff() / (scale > 0.0 ? scale : 1.0);
}

bool same_bits(const Vector& a, const Vector& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(double)) == 0;
}

// rhs bit for bit and vjp to 1e-13 against a built-in problem at random points.
template <class Derived, class Hand>
void expect_matches_built_in(const Derived& derived, const Hand& hand, const Vector& theta,
                             std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const Index n = hand.state_size(), p = hand.parameter_size();
  ASSERT_EQ(derived.state_size(), n);
  ASSERT_EQ(derived.parameter_size(), p);
  for (int trial = 0; trial < 3; ++trial) {
    const Vector y = testing::random_vector(n, rng, 0.0, 1.0);
    const Vector v = testing::random_vector(n, rng);
    Vector f(n), hand_f(n), out_y(n), hand_y(n), out_theta(p), hand_theta(p);
    derived.rhs(0.0, y, theta, f);
    hand.rhs(0.0, y, theta, hand_f);
    EXPECT_TRUE(same_bits(f, hand_f)) << relative_error(f, hand_f);
    derived.vjp(0.0, y, theta, v, out_y, out_theta);
    hand.vjp(0.0, y, theta, v, hand_y, hand_theta);
    EXPECT_LE(relative_error(out_y, hand_y), 1e-13);
    EXPECT_LE(relative_error(out_theta, hand_theta), 1e-13)
        << out_theta.transpose() << " vs " << hand_theta.transpose();
  }
}

TEST(StencilModel, GrayScottEqualsTheBuiltIn) {
  for (const Index n : {3, 8, 33, 140}) {
    SCOPED_TRACE(n);
    expect_matches_built_in(stencil_problem(GrayScottStencil{}, n, n), GrayScott<>(n),
                            GrayScott<>::default_parameters(), 42);
  }
}

TEST(StencilModel, Heat2DEqualsTheBuiltIn) {
  for (const Index n : {3, 8, 33, 190}) {
    SCOPED_TRACE(n);
    expect_matches_built_in(stencil_problem(Heat2DStencil(n), n, n), Heat2D<>(n),
                            Vector{{0.2, 0.7}}, 43);
  }
}

TEST(StencilModel, Lorenz96EqualsTheBuiltIn) {
  for (const Index n : {4, 5, 40, 1027, 40000}) {
    SCOPED_TRACE(n);
    expect_matches_built_in(stencil_problem(Lorenz96Stencil{}, n), Lorenz96<>(n), Vector{{8.0}},
                            44);
  }
}

// A 3-D model with every kind of boundary and a nonlinear, asymmetric update: what the
// derivative checker, the transpose and sparsity tests run besides the built-ins.
struct Mixed3D {
  static constexpr std::array<const char*, 2> field_names{"a", "b"};
  static constexpr std::array<const char*, 2> parameter_names{"alpha", "beta"};
  static constexpr std::array<Offset<3>, 6> stencil{
      {{0, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -2}, {0, 0, 1}}};
  static constexpr std::array<Boundary, 3> boundaries{Boundary::periodic, Boundary::fixed,
                                                      Boundary::reflecting};
  static constexpr std::array<double, 2> wall_values{0.5, -0.25};
  template <class T, class X>
  void cell(const X& x, const T* p, const GridCell<3>& at, T* f) const {
    using std::sin;
    const double where = 0.1 * static_cast<double>(at.index[2]);
    f[0] = p[0] * (x(0, 1) - x(0, 0)) + x(1, 2) * x(0, 3) + sin(x(0, 4)) * x(1, 5) + where;
    f[1] = p[1] * x(1, 0) * x(0, 0) - x(1, 4) * x(1, 4) + (x(0, 5) > 0.0 ? x(1, 1) : x(1, 3));
  }
};

TEST(StencilModel, PassesTheDerivativeChecker) {
  const auto mixed = stencil_problem(Mixed3D{}, 3, 4, 5);
  std::mt19937_64 rng(7);
  const Vector y = testing::random_vector(mixed.state_size(), rng);
  const auto report = check_derivatives(mixed, 0.0, y, Vector{{0.7, -1.3}});
  EXPECT_TRUE(report.ok) << report.report();
  const auto gs = stencil_problem(GrayScottStencil{}, 6, 6);
  const Vector gs_y = testing::random_vector(gs.state_size(), rng, 0.0, 1.0);
  const auto gs_report = check_derivatives(gs, 0.0, gs_y, gs.default_parameters());
  EXPECT_TRUE(gs_report.ok) << gs_report.report();
  const auto heat = stencil_problem(Heat2DStencil(5), 5, 5);
  const auto heat_report = check_derivatives(
      heat, 0.0, testing::random_vector(heat.state_size(), rng), heat.default_parameters());
  EXPECT_TRUE(heat_report.ok) << heat_report.report();
  const auto lorenz = stencil_problem(Lorenz96Stencil{}, 10);
  const auto lorenz_report =
      check_derivatives(lorenz, 0.0, testing::random_vector(10, rng, -5.0, 5.0), Vector{{8.0}});
  EXPECT_TRUE(lorenz_report.ok) << lorenz_report.report();
}

// A reflecting wall is zero flux: diffusion with reflecting walls conserves the total, exactly
// up to round-off, and its vjp is the transpose of its jvp.
struct ReflectingDiffusion1D {
  static constexpr std::array<const char*, 1> field_names{"c"};
  static constexpr std::array<const char*, 1> parameter_names{"D"};
  static constexpr std::array<Offset<1>, 3> stencil{{{-1}, {0}, {1}}};
  static constexpr std::array<Boundary, 1> boundaries{Boundary::reflecting};
  template <class T, class X>
  void cell(const X& x, const T* p, const GridCell<1>&, T* f) const {
    f[0] = p[0] * ((x(0, 0) + x(0, 2)) - 2.0 * x(0, 1));
  }
};

TEST(StencilModel, ReflectingWallsConserveTheTotal) {
  const auto problem = stencil_problem(ReflectingDiffusion1D{}, 9);
  std::mt19937_64 rng(9);
  const Vector y = testing::random_vector(9, rng, 0.0, 1.0);
  Vector f(9);
  problem.rhs(0.0, y, Vector{{0.3}}, f);
  EXPECT_NEAR(f.sum(), 0.0, 1e-15);
  // Σ_i f_i = 0 for every y: (∂f/∂y)ᵀ 1 = 0.
  Vector out_y(9), out_theta(1);
  problem.vjp(0.0, y, Vector{{0.3}}, Vector::Ones(9), out_y, out_theta);
  EXPECT_LE(out_y.cwiseAbs().maxCoeff(), 1e-15);
}

// wᵀ (∂f/∂y)ᵀ v = vᵀ (∂f/∂y) w.
template <class P>
void expect_jvp_is_the_transpose(const P& problem, const Vector& theta, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const Index n = problem.state_size();
  const Vector y = testing::random_vector(n, rng), v = testing::random_vector(n, rng),
               w = testing::random_vector(n, rng);
  Vector jw(n), jtv(n), out_theta(problem.parameter_size());
  problem.jvp(0.0, y, theta, w, jw);
  problem.vjp(0.0, y, theta, v, jtv, out_theta);
  const double a = v.dot(jw), b = w.dot(jtv);
  EXPECT_NEAR(a, b, 1e-13 * std::max(1.0, std::abs(a)));
}

TEST(StencilModel, JvpIsTheTransposeOfTheVjp) {
  expect_jvp_is_the_transpose(stencil_problem(Mixed3D{}, 4, 3, 6), Vector{{0.7, -1.3}}, 1);
  expect_jvp_is_the_transpose(stencil_problem(GrayScottStencil{}, 9, 7),
                              GrayScott<>::default_parameters(), 2);
  expect_jvp_is_the_transpose(stencil_problem(Heat2DStencil(8), 8, 8), Vector{{0.2, 0.5}}, 3);
  expect_jvp_is_the_transpose(stencil_problem(Lorenz96Stencil{}, 11), Vector{{8.0}}, 4);
}

// Every nonzero of the Jacobian (its columns from the jvp) is in the pattern; rows sorted and
// distinct; a wall's neighbour is not a column.
template <class P>
void expect_pattern_holds_the_jacobian(const P& problem, const Vector& theta) {
  const SparsityPattern pattern = problem.sparsity();
  const Index n = problem.state_size();
  ASSERT_EQ(pattern.size, n);
  ASSERT_EQ(static_cast<Index>(pattern.row_starts.size()), n + 1);
  std::vector<std::vector<char>> in(static_cast<std::size_t>(n),
                                    std::vector<char>(static_cast<std::size_t>(n), 0));
  for (Index r = 0; r < n; ++r)
    for (Index i = pattern.row_starts[r]; i < pattern.row_starts[r + 1]; ++i) {
      if (i > pattern.row_starts[r]) {
        EXPECT_LT(pattern.columns[i - 1], pattern.columns[i]);
      }
      in[r][pattern.columns[i]] = 1;
    }
  std::mt19937_64 rng(5);
  const Vector y = testing::random_vector(n, rng);
  Vector e = Vector::Zero(n), column(n);
  Index nonzeros = 0;
  for (Index j = 0; j < n; ++j) {
    e[j] = 1.0;
    problem.jvp(0.0, y, theta, e, column);
    e[j] = 0.0;
    for (Index r = 0; r < n; ++r)
      if (column[r] != 0.0) {
        ++nonzeros;
        EXPECT_TRUE(in[r][j]) << "J(" << r << ", " << j << ") = " << column[r];
      }
  }
  EXPECT_GT(nonzeros, n);
  EXPECT_LE(nonzeros, pattern.nonzeros());
}

TEST(StencilModel, SparsityPatternHoldsEveryNonzero) {
  expect_pattern_holds_the_jacobian(stencil_problem(Mixed3D{}, 3, 3, 4), Vector{{0.7, -1.3}});
  expect_pattern_holds_the_jacobian(stencil_problem(Heat2DStencil(4), 4, 4), Vector{{0.2, 0.5}});
  // Heat2D's corner cell reads itself and two neighbours; the walls add no column.
  const auto heat = stencil_problem(Heat2DStencil(4), 4, 4);
  EXPECT_EQ(heat.sparsity().row_starts[1], 3);
  // 5-point, periodic, 2 fields: 10 columns per row.
  const auto gs = stencil_problem(GrayScottStencil{}, 5, 5);
  EXPECT_EQ(gs.sparsity().nonzeros(), 50 * 10);
}

// rhs, vjp and jvp at 1, 2 and 4 threads: the same bits (grids large enough to be split).
template <class P>
void expect_thread_independent(const P& problem, const Vector& theta) {
  ASSERT_GT(problem.block_count(), 2);
  std::mt19937_64 rng(11);
  const Index n = problem.state_size();
  const Vector y = testing::random_vector(n, rng), v = testing::random_vector(n, rng);
  std::vector<Vector> results;
  for (const int threads : {1, 2, 4}) {
    set_thread_count(threads);
    Vector f(n), out_y(n), out_theta(problem.parameter_size()), jv(n);
    problem.rhs(0.0, y, theta, f);
    problem.vjp(0.0, y, theta, v, out_y, out_theta);
    problem.jvp(0.0, y, theta, v, jv);
    Vector all(3 * n + problem.parameter_size());
    all << f, out_y, jv, out_theta;
    results.push_back(all);
  }
  set_thread_count(1);
  EXPECT_TRUE(same_bits(results[1], results[0]));
  EXPECT_TRUE(same_bits(results[2], results[0]));
}

TEST(StencilModel, SameBitsOnAnyThreadCount) {
  if (!kThreadsAvailable) GTEST_SKIP() << "built without OpenMP";
  expect_thread_independent(stencil_problem(GrayScottStencil{}, 140, 140),
                            GrayScott<>::default_parameters());
  expect_thread_independent(stencil_problem(GrayScottStencil{}, 135, 136),  // odd block count
                            GrayScott<>::default_parameters());
  expect_thread_independent(stencil_problem(Heat2DStencil(190), 190, 190), Vector{{0.2, 0.5}});
  expect_thread_independent(stencil_problem(Lorenz96Stencil{}, 50001), Vector{{8.0}});
  expect_thread_independent(stencil_problem(Mixed3D{}, 41, 30, 31), Vector{{0.7, -1.3}});
}

// Contracts 2 and 6 for a derived stencil vjp: a short RK4 run on a grid that is split among
// threads, store-all against revolve and uniform, on 1, 2 and 4 threads: one set of bits; and the
// built-in problem's gradient to the round-off of the vjps' differing sums.
template <class Derived, class Hand>
void expect_checkpointed_gradient_bits(const Derived& derived, const Hand& hand, const Vector& y0,
                                       const Vector& theta, double dt, Index steps) {
  ASSERT_GT(derived.block_count(), 2);
  ExplicitRungeKutta stepper(derived, ButcherTableau::rk4(), StepControl::fixed(0.0, dt, steps));
  const auto objective = Objective<B>::terminal_squared_norm();
  set_thread_count(1);
  const auto reference = differentiate(stepper, objective, y0, theta, StoreAllStrategy{});
  for (const int threads : {1, 2, 4}) {
    if (threads > 1 && !kThreadsAvailable) continue;
    set_thread_count(threads);
    const std::vector<std::pair<std::string, CheckpointStrategy>> strategies = {
        {"revolve(2)", {revolve_schedule(2)}}, {"uniform(3)", {uniform_schedule(3)}}};
    SCOPED_TRACE(threads);
    testing::expect_same_gradient_bits<B>(
        differentiate(stepper, objective, y0, theta, StoreAllStrategy{}), reference);
    for (const auto& [name, strategy] : strategies) {
      SCOPED_TRACE(name);
      testing::expect_same_gradient_bits<B>(differentiate(stepper, objective, y0, theta, strategy),
                                            reference);
    }
  }
  set_thread_count(1);
  ExplicitRungeKutta hand_stepper(hand, ButcherTableau::rk4(), StepControl::fixed(0.0, dt, steps));
  const auto built_in = differentiate(hand_stepper, objective, y0, theta, StoreAllStrategy{});
  EXPECT_EQ(std::memcmp(&built_in.loss, &reference.loss, sizeof(double)), 0);  // rhs: same bits
  EXPECT_LE(relative_error(reference.grad_y0, built_in.grad_y0), 1e-12);
  EXPECT_LE(relative_error(reference.grad_theta, built_in.grad_theta), 1e-12);
}

TEST(StencilModel, CheckpointedGradientsAreTheSameBitsForEveryScheduleAndThreadCount) {
  {
    SCOPED_TRACE("Gray-Scott");
    const GrayScott<> hand(128);
    expect_checkpointed_gradient_bits(stencil_problem(GrayScottStencil{}, 128, 128), hand,
                                      hand.default_initial_state(3), hand.default_parameters(), 1.0,
                                      12);
  }
  {
    SCOPED_TRACE("Heat2D");
    const Heat2D<> hand(190);
    expect_checkpointed_gradient_bits(stencil_problem(Heat2DStencil(190), 190, 190), hand,
                                      hand.default_initial_state(5), Vector{{0.2, 0.5}}, 1.0, 4);
  }
  {
    SCOPED_TRACE("Lorenz-96");
    const Lorenz96<> hand(40000);
    Vector y0 = hand.default_initial_state();
    for (Index i = 0; i < y0.size(); ++i) y0[i] += std::sin(0.3 * static_cast<double>(i));
    expect_checkpointed_gradient_bits(stencil_problem(Lorenz96Stencil{}, 40000), hand, y0,
                                      hand.default_parameters(), 0.01, 6);
  }
}

// --- the read check ------------------------------------------------------------------------------

// Declares the 3-point stencil but reads a fourth point.
struct ReadsOutsideItsShape {
  static constexpr std::array<const char*, 1> field_names{"c"};
  static constexpr std::array<const char*, 0> parameter_names{};
  static constexpr std::array<Offset<1>, 3> stencil{{{-1}, {0}, {1}}};
  static constexpr std::array<Boundary, 1> boundaries{Boundary::periodic};
  template <class T, class X>
  void cell(const X& x, const T*, const GridCell<1>& at, T* f) const {
    volatile int fourth = 3;  // x(0, 3) at cell 4: a fourth point (opaque to the compiler)
    f[0] = x(0, 1) + x(0, at.index[0] == 4 ? fourth : 0);
  }
};

// Reads a second field it does not have.
struct ReadsAMissingField {
  static constexpr std::array<const char*, 1> field_names{"c"};
  static constexpr std::array<const char*, 0> parameter_names{};
  static constexpr std::array<Offset<1>, 1> stencil{{{0}}};
  static constexpr std::array<Boundary, 1> boundaries{Boundary::fixed};
  template <class T, class X>
  void cell(const X& x, const T*, const GridCell<1>&, T* f) const {
    volatile int second = 1;  // a second field (opaque to the compiler)
    f[0] = x(0, 0) * x(second, 0);
  }
};

// Writes only the first of its two outputs.
struct LeavesAnOutputUnwritten {
  static constexpr std::array<const char*, 2> field_names{"a", "b"};
  static constexpr std::array<const char*, 0> parameter_names{};
  static constexpr std::array<Offset<1>, 1> stencil{{{0}}};
  static constexpr std::array<Boundary, 1> boundaries{Boundary::fixed};
  template <class T, class X>
  void cell(const X& x, const T*, const GridCell<1>&, T* f) const {
    f[0] = x(0, 0);
  }
};

// rhs, jvp and vjp of a model with and without the read check.
template <class Model>
void expect_checked_run_agrees(const Model& model,
                               const std::array<Index, StencilProblem<Model>::kDimension>& sizes,
                               const Vector& theta) {
  const auto plain = stencil_problem(model, sizes, {.check_reads = false});
  const auto checked = stencil_problem(model, sizes, {.check_reads = true});
  const Index n = plain.state_size(), p = plain.parameter_size();
  std::mt19937_64 rng(2);
  const Vector y = testing::random_vector(n, rng), v = testing::random_vector(n, rng);
  Vector f(n), cf(n), jv(n), cjv(n), a(n), b(n), ta(p), tb(p);
  plain.rhs(0.0, y, theta, f);
  checked.rhs(0.0, y, theta, cf);
  EXPECT_TRUE(same_bits(f, cf));
  plain.jvp(0.0, y, theta, v, jv);
  checked.jvp(0.0, y, theta, v, cjv);
  EXPECT_TRUE(same_bits(jv, cjv));
  plain.vjp(0.0, y, theta, v, a, ta);
  checked.vjp(0.0, y, theta, v, b, tb);
  EXPECT_LE(relative_error(b, a), 1e-14);
  EXPECT_LE(relative_error(tb, ta), 1e-14);
}

TEST(StencilModel, ReadCheckCatchesAReadOutsideTheShape) {
  const auto checked =
      stencil_problem(ReadsOutsideItsShape{}, {8}, StencilOptions{.check_reads = true});
  const Vector y = Vector::Ones(8), theta(0);
  Vector f(8), out_y(8), out_theta(0), jv(8);
  for (const auto& call :
       std::vector<std::function<void()>>{[&] { checked.rhs(0.0, y, theta, f); },
                                          [&] { checked.vjp(0.0, y, theta, y, out_y, out_theta); },
                                          [&] { checked.jvp(0.0, y, theta, y, jv); }}) {
    const std::string message = testing::error_message<InvalidArgument>(call);
    testing::expect_message(message, "read x(0, 3) at cell (4)");
    testing::expect_message(message, "outside its declared shape (fields 0 … 0, points 0 … 2");
  }
  const auto missing = stencil_problem(ReadsAMissingField{}, {2}, {.check_reads = true});
  testing::expect_message(testing::error_message<InvalidArgument>([&] {
                            Vector f2(2);
                            missing.rhs(0.0, y.head(2), theta, f2);
                          }),
                          "read x(1, 0) at cell (0)");
  const auto unwritten = stencil_problem(LeavesAnOutputUnwritten{}, {3}, {.check_reads = true});
  Vector f6(6);
  testing::expect_message(testing::error_message<InvalidArgument>(
                              [&] { unwritten.rhs(0.0, Vector::Ones(6), theta, f6); }),
                          "left f[1] (field 'b') unwritten");
  // A correct model passes the check, with the unchecked results: rhs and jvp bit for bit, the
  // vjp to round-off (the checked run adds each cell's contributions as it goes, the unchecked
  // one chunk by chunk and line by line).
  expect_checked_run_agrees(GrayScottStencil{}, {16, 16}, GrayScott<>::default_parameters());
  expect_checked_run_agrees(Mixed3D{}, {5, 4, 9}, Vector{{0.7, -1.3}});
  expect_checked_run_agrees(Lorenz96Stencil{}, {300}, Vector{{8.0}});
}

// --- refusals ------------------------------------------------------------------------------------

struct EmptyStencil {
  static constexpr std::array<const char*, 1> field_names{"c"};
  static constexpr std::array<const char*, 0> parameter_names{};
  static constexpr std::array<Offset<2>, 0> stencil{};
  static constexpr std::array<Boundary, 2> boundaries{Boundary::periodic, Boundary::periodic};
  template <class T, class X>
  void cell(const X&, const T*, const GridCell<2>&, T* f) const {
    f[0] = T(0.0);
  }
};

struct RepeatedOffset {
  static constexpr std::array<const char*, 1> field_names{"c"};
  static constexpr std::array<const char*, 0> parameter_names{};
  static constexpr std::array<Offset<2>, 3> stencil{{{0, 0}, {0, 1}, {0, 1}}};
  static constexpr std::array<Boundary, 2> boundaries{Boundary::periodic, Boundary::fixed};
  template <class T, class X>
  void cell(const X& x, const T*, const GridCell<2>&, T* f) const {
    f[0] = x(0, 0);
  }
};

struct NoFields {
  static constexpr std::array<const char*, 0> field_names{};
  static constexpr std::array<const char*, 0> parameter_names{};
  static constexpr std::array<Offset<1>, 1> stencil{{{0}}};
  static constexpr std::array<Boundary, 1> boundaries{Boundary::periodic};
  template <class T, class X>
  void cell(const X&, const T*, const GridCell<1>&, T*) const {}
};

struct RepeatedFieldName {
  static constexpr std::array<const char*, 2> field_names{"u", "u"};
  static constexpr std::array<const char*, 1> parameter_names{""};
  static constexpr std::array<Offset<1>, 1> stencil{{{0}}};
  static constexpr std::array<Boundary, 1> boundaries{Boundary::periodic};
  template <class T, class X>
  void cell(const X& x, const T*, const GridCell<1>&, T* f) const {
    f[0] = x(0, 0);
    f[1] = x(1, 0);
  }
};

struct EmptyParameterName {
  static constexpr std::array<const char*, 1> field_names{"u"};
  static constexpr std::array<const char*, 1> parameter_names{""};
  static constexpr std::array<Offset<1>, 1> stencil{{{0}}};
  static constexpr std::array<Boundary, 1> boundaries{Boundary::periodic};
  template <class T, class X>
  void cell(const X& x, const T*, const GridCell<1>&, T* f) const {
    f[0] = x(0, 0);
  }
};

TEST(StencilModel, RefusesBadDeclarationsAndGridSizes) {
  using testing::error_message;
  using testing::expect_message;
  expect_message(error_message<InvalidArgument>([] { stencil_problem(EmptyStencil{}, 4, 4); }),
                 "the model's stencil is empty");
  expect_message(error_message<InvalidArgument>([] { stencil_problem(RepeatedOffset{}, 4, 4); }),
                 "stencil[2] = {0, 1} repeats stencil[1]; the offsets must be distinct");
  expect_message(error_message<InvalidArgument>([] { stencil_problem(NoFields{}, 4); }),
                 "declares no fields");
  expect_message(error_message<InvalidArgument>([] { stencil_problem(RepeatedFieldName{}, 4); }),
                 "field_names[1] = 'u' repeats field_names[0]");
  expect_message(error_message<InvalidArgument>([] { stencil_problem(EmptyParameterName{}, 4); }),
                 "parameter_names[0] is empty");
  // Lorenz-96 spans offsets −2 … 1: four distinct cells need n >= 4.
  expect_message(error_message<InvalidArgument>([] { stencil_problem(Lorenz96Stencil{}, 3); }),
                 "grid size n_0 = 3 must be >= 4 (the stencil spans offsets -2 … 1 in dimension "
                 "0, periodic boundary");
  expect_message(error_message<InvalidArgument>([] { stencil_problem(GrayScottStencil{}, 3, 2); }),
                 "grid size n_1 = 2 must be >= 3");
  expect_message(error_message<InvalidArgument>([] { stencil_problem(Heat2DStencil(3), 0, 3); }),
                 "grid size n_0 = 0 must be >= 3");
  // Vectors of the wrong size.
  const auto gs = stencil_problem(GrayScottStencil{}, 4, 4);
  Vector f(32);
  expect_message(error_message<InvalidArgument>(
                     [&] { gs.rhs(0.0, Vector::Zero(31), gs.default_parameters(), f); }),
                 "state y has 31 elements but must have 32");
}

TEST(StencilModel, NamesAndSizesComeFromTheModel) {
  const auto gs = stencil_problem(GrayScottStencil{}, 6, 5);
  EXPECT_EQ(gs.field_names(), (std::vector<std::string>{"u", "v"}));
  EXPECT_EQ(gs.parameter_names(), (std::vector<std::string>{"Du", "Dv", "F", "k"}));
  EXPECT_EQ(gs.state_size(), 60);
  EXPECT_EQ(gs.cell_count(), 30);
  EXPECT_EQ(gs.grid_sizes(), (std::array<Index, 2>{6, 5}));
  EXPECT_EQ(gs.default_parameters(), (Vector{{0.16, 0.08, 0.037, 0.06}}));
}

}  // namespace
}  // namespace rwd
