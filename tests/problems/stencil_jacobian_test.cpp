// rwd::StencilProblem::jacobian_values (rewind/stencil_model.hpp): the sparse Jacobian's entries
// in sparsity()'s order equal the dense Jacobian the jvp gives column by column (to 1e-14
// relative) on Gray–Scott (periodic), Heat2D (fixed walls), the Brusselator (reflecting walls,
// where a mirrored neighbour reads the cell itself), Lorenz-96 (1-D) and a 3-D model with every
// boundary (two points reading one cell); they equal the built-in problems' hand-written
// derivatives (rows from their vjps; the built-in Brusselator interleaves its fields); the same
// bits on 1, 2 and 4 threads and with the read check on; bad sizes are refused. The built-in
// Brusselator's own hand-written sparse Jacobian (sparsity(), jacobian_values()) is checked the
// same way, and its second derivatives (jvp_vjp) against differences of its jvp.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "problems/models/stencil_models.hpp"
#include "rewind/parallel.hpp"
#include "rewind/problems/brusselator2d.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/heat2d.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "rewind/stencil_model.hpp"
#include "support/error_message.hpp"
#include "support/random_data.hpp"

namespace rwd {
namespace {

using Vector = EigenBackend::Vector;
using Dense = Eigen::MatrixXd;
using testing::BrusselatorStencil;
using testing::GrayScottStencil;
using testing::Heat2DStencil;
using testing::Lorenz96Stencil;

// A 3-D model with every kind of boundary, a nonlinear, asymmetric update, a field it ignores at
// some points, and (reflecting along dimension 2 with offsets −2 and +1) two points that read the
// same cell at the first and last cells of a line.
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

// The values at y as a dense matrix, through the pattern (entries outside it stay 0).
template <class P>
Dense sparse_as_dense(const P& problem, const Vector& y, const Vector& theta) {
  const SparsityPattern pattern = problem.sparsity();
  std::vector<double> values(static_cast<std::size_t>(pattern.nonzeros()));
  problem.jacobian_values(0.0, y, theta, values);
  const Index n = problem.state_size();
  Dense J = Dense::Zero(n, n);
  for (Index r = 0; r < n; ++r)
    for (Index i = pattern.row_starts[r]; i < pattern.row_starts[r + 1]; ++i)
      J(r, pattern.columns[i]) = values[static_cast<std::size_t>(i)];
  return J;
}

// J e_j for every j, from the problem's jvp.
template <class P>
Dense jacobian_from_jvp(const P& problem, const Vector& y, const Vector& theta) {
  const Index n = problem.state_size();
  Dense J(n, n);
  Vector e = Vector::Zero(n), column(n);
  for (Index j = 0; j < n; ++j) {
    e[j] = 1.0;
    problem.jvp(0.0, y, theta, e, column);
    e[j] = 0.0;
    J.col(j) = column;
  }
  return J;
}

// e_iᵀ J for every i, from the problem's vjp (a built-in problem's hand-written transpose).
template <class P>
Dense jacobian_from_vjp(const P& problem, const Vector& y, const Vector& theta) {
  const Index n = problem.state_size();
  Dense J(n, n);
  Vector e = Vector::Zero(n), row(n), row_theta(problem.parameter_size());
  for (Index i = 0; i < n; ++i) {
    e[i] = 1.0;
    problem.vjp(0.0, y, theta, e, row, row_theta);
    e[i] = 0.0;
    J.row(i) = row.transpose();
  }
  return J;
}

// max |A − B| / max |B|.
double relative_difference(const Dense& a, const Dense& b) {
  return (a - b).cwiseAbs().maxCoeff() / b.cwiseAbs().maxCoeff();
}

template <class P>
void expect_values_are_the_jvp_columns(const P& problem, const Vector& theta, std::uint64_t seed,
                                       double lo = -1.0, double hi = 1.0) {
  std::mt19937_64 rng(seed);
  const Vector y = testing::random_vector(problem.state_size(), rng, lo, hi);
  const Dense sparse = sparse_as_dense(problem, y, theta);
  const Dense reference = jacobian_from_jvp(problem, y, theta);
  EXPECT_LE(relative_difference(sparse, reference), 1e-14);
  EXPECT_GT((sparse.array() != 0.0).count(), problem.state_size());  // not a vacuous comparison
}

TEST(StencilJacobian, ValuesAreTheJvpColumnsInThePatternsOrder) {
  {
    SCOPED_TRACE("Gray-Scott, periodic");
    expect_values_are_the_jvp_columns(stencil_problem(GrayScottStencil{}, 5, 6),
                                      GrayScott<>::default_parameters(), 1, 0.0, 1.0);
    expect_values_are_the_jvp_columns(stencil_problem(GrayScottStencil{}, 3, 3),
                                      GrayScott<>::default_parameters(), 2, 0.0, 1.0);
  }
  {
    SCOPED_TRACE("Heat2D, fixed walls");
    expect_values_are_the_jvp_columns(stencil_problem(Heat2DStencil(6), 6, 6), Vector{{0.2, 0.5}},
                                      3);
  }
  {
    SCOPED_TRACE("Brusselator, reflecting walls");
    expect_values_are_the_jvp_columns(stencil_problem(BrusselatorStencil{}, 5, 5),
                                      Vector{{1.0, 3.4, 0.002}}, 4, 0.0, 2.0);
  }
  {
    SCOPED_TRACE("Lorenz-96, 1-D periodic");
    expect_values_are_the_jvp_columns(stencil_problem(Lorenz96Stencil{}, 4), Vector{{8.0}}, 5, -5.0,
                                      5.0);
    expect_values_are_the_jvp_columns(stencil_problem(Lorenz96Stencil{}, 13), Vector{{8.0}}, 6,
                                      -5.0, 5.0);
  }
  {
    SCOPED_TRACE("3-D, periodic, fixed and reflecting");
    expect_values_are_the_jvp_columns(stencil_problem(Mixed3D{}, 3, 4, 5), Vector{{0.7, -1.3}}, 7);
  }
}

TEST(StencilJacobian, PointsReadingOneCellShareOneEntry) {
  // Mixed3D along dimension 2 (reflecting; offsets −2, 0, +1): the last cell's +1 mirrors onto
  // itself, the first cell's −2 onto cell 1, which +1 reads too. The row of cell (0, 1, 0),
  // field a, then has 5 distinct cells per field (itself, (1, 1, 0), (0, 0, 0), (0, 2, 0),
  // (0, 1, 1)) where the stencil has 6 points.
  const auto problem = stencil_problem(Mixed3D{}, 3, 4, 5);
  const SparsityPattern pattern = problem.sparsity();
  const Index row = 1 * 5;  // cell (0, 1, 0) in row-major order
  EXPECT_EQ(pattern.row_starts[row + 1] - pattern.row_starts[row], 2 * 5);
  // A fixed wall's neighbour takes no entry: cell (0, 0, 2) reads the wall at (0, −1, 2).
  EXPECT_EQ(pattern.row_starts[3] - pattern.row_starts[2], 2 * 5);
  // Cell (0, 1, 2) reads six distinct cells.
  EXPECT_EQ(pattern.row_starts[8] - pattern.row_starts[7], 2 * 6);
}

TEST(StencilJacobian, ValuesEqualTheBuiltInProblemsHandWrittenDerivatives) {
  std::mt19937_64 rng(21);
  {
    SCOPED_TRACE("Gray-Scott");
    const Index n = 6;
    const GrayScott<> built_in(n);
    const Vector theta = GrayScott<>::default_parameters();
    const Vector y = testing::random_vector(built_in.state_size(), rng, 0.0, 1.0);
    EXPECT_LE(
        relative_difference(sparse_as_dense(stencil_problem(GrayScottStencil{}, n, n), y, theta),
                            jacobian_from_vjp(built_in, y, theta)),
        1e-14);
  }
  {
    SCOPED_TRACE("Heat2D");
    const Index n = 7;
    const Heat2D<> built_in(n);
    const Vector theta{{0.2, 0.7}};
    const Vector y = testing::random_vector(built_in.state_size(), rng);
    EXPECT_LE(
        relative_difference(sparse_as_dense(stencil_problem(Heat2DStencil(n), n, n), y, theta),
                            jacobian_from_vjp(built_in, y, theta)),
        1e-14);
  }
  {
    SCOPED_TRACE("Lorenz-96");
    const Lorenz96<> built_in(9);
    const Vector theta{{8.0}};
    const Vector y = testing::random_vector(9, rng, -5.0, 5.0);
    EXPECT_LE(relative_difference(sparse_as_dense(stencil_problem(Lorenz96Stencil{}, 9), y, theta),
                                  jacobian_from_vjp(built_in, y, theta)),
              1e-14);
  }
  {
    // The built-in interleaves the species per cell (u₀, v₀, u₁, v₁, …); the stencil model
    // stores each field whole ([u; v]): value (field k, cell c) is at 2c + k there.
    SCOPED_TRACE("Brusselator");
    const Index n = 6, cells = n * n;
    const Brusselator2D built_in(n);
    const Vector theta = built_in.default_parameters();
    const Vector interleaved = built_in.default_initial_state() +
                               testing::random_vector(built_in.state_size(), rng, 0.0, 0.5);
    Eigen::VectorXi at(2 * cells);  // stencil index → built-in index
    for (Index k = 0; k < 2; ++k)
      for (Index c = 0; c < cells; ++c) at[k * cells + c] = static_cast<int>(2 * c + k);
    Vector y(2 * cells);
    for (Index i = 0; i < 2 * cells; ++i) y[i] = interleaved[at[i]];
    const Dense stencil = sparse_as_dense(stencil_problem(BrusselatorStencil{}, n, n), y, theta);
    const Dense hand = jacobian_from_vjp(built_in, interleaved, theta);
    Dense hand_in_stencil_order(2 * cells, 2 * cells);
    for (Index i = 0; i < 2 * cells; ++i)
      for (Index j = 0; j < 2 * cells; ++j) hand_in_stencil_order(i, j) = hand(at[i], at[j]);
    EXPECT_LE(relative_difference(stencil, hand_in_stencil_order), 1e-14);
  }
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

template <class P>
std::vector<double> values_at(const P& problem, const Vector& y, const Vector& theta) {
  std::vector<double> values(static_cast<std::size_t>(problem.sparsity().nonzeros()));
  problem.jacobian_values(0.0, y, theta, values);
  return values;
}

// 1, 2 and 4 threads, and one thread with every read checked: one set of bits.
template <class Model, class... Sizes>
void expect_thread_independent(const Model& model, const Vector& theta, Sizes... sizes) {
  const auto problem = stencil_problem(model, sizes...);
  ASSERT_GT(problem.block_count(), 2);
  std::mt19937_64 rng(31);
  const Vector y = testing::random_vector(problem.state_size(), rng, 0.0, 1.0);
  set_thread_count(1);
  const std::vector<double> one = values_at(problem, y, theta);
  for (const int threads : {2, 4}) {
    set_thread_count(threads);
    EXPECT_TRUE(same_bits(values_at(problem, y, theta), one)) << threads << " threads";
  }
  set_thread_count(1);
  const auto checked =
      stencil_problem(model, {static_cast<Index>(sizes)...}, StencilOptions{.check_reads = true});
  EXPECT_TRUE(same_bits(values_at(checked, y, theta), one)) << "read check on";
}

TEST(StencilJacobian, TheBuiltInBrusselatorsOwnSparseJacobianIsItsJvpsAndVjps) {
  // rwd::Brusselator2D declares its pattern and values by hand (species interleaved, mirrored
  // walls): every entry is the jvp's column and the vjp's row, and nothing lies outside the
  // pattern (sparse_as_dense would miss it). n = 2 has only walls; n = 5 interior cells too.
  std::mt19937_64 rng(43);
  for (const Index n : {Index{2}, Index{3}, Index{5}}) {
    SCOPED_TRACE(n);
    const Brusselator2D problem(n);
    const Vector theta{{1.2, 3.1, 0.004}};
    const Vector y = testing::random_vector(problem.state_size(), rng, 0.5, 2.0);
    const SparsityPattern pattern = problem.sparsity();
    EXPECT_EQ(pattern.size, problem.state_size());
    EXPECT_EQ(pattern.row_starts.back(), pattern.nonzeros());
    const Dense declared = sparse_as_dense(problem, y, theta);
    EXPECT_LE(relative_difference(declared, jacobian_from_jvp(problem, y, theta)), 1e-14);
    EXPECT_LE(relative_difference(declared, jacobian_from_vjp(problem, y, theta)), 1e-14);
  }
  const Brusselator2D problem(3);
  std::vector<double> too_few(10);
  testing::expect_message(testing::error_message<InvalidArgument>([&] {
                            problem.jacobian_values(0.0, problem.default_initial_state(),
                                                    problem.default_parameters(), too_few);
                          }),
                          "Jacobian values");
}

TEST(StencilJacobian, TheBuiltInBrusselatorsSecondDerivativesDifferentiateItsJvp) {
  // jvp_vjp gives ∇_y and ∇_θ of wᵀ (∂f/∂y) u. (∂f/∂y) u is quadratic in y and linear in θ, so
  // central differences of the jvp are exact up to round-off.
  std::mt19937_64 rng(44);
  const Brusselator2D problem(4);
  const Index n = problem.state_size();
  const Vector theta{{1.2, 3.1, 0.004}};
  const Vector y = testing::random_vector(n, rng, 0.5, 2.0);
  const Vector u = testing::random_vector(n, rng, -1.0, 1.0);
  const Vector w = testing::random_vector(n, rng, -1.0, 1.0);
  const Vector d = testing::random_vector(n, rng, -1.0, 1.0);
  Vector out_y(n), out_theta(3), plus(n), minus(n);
  problem.jvp_vjp(0.0, y, theta, u, w, out_y, out_theta);
  const double eps = 1e-3;
  problem.jvp(0.0, y + eps * d, theta, u, plus);
  problem.jvp(0.0, y - eps * d, theta, u, minus);
  const double along_d = w.dot(plus - minus) / (2.0 * eps);
  EXPECT_NEAR(out_y.dot(d), along_d, 1e-10 * std::abs(along_d));
  for (Index k = 0; k < 3; ++k) {
    Vector up = theta, down = theta;
    up[k] += eps * theta[k];
    down[k] -= eps * theta[k];
    problem.jvp(0.0, y, up, u, plus);
    problem.jvp(0.0, y, down, u, minus);
    const double along_k = w.dot(plus - minus) / (2.0 * eps * theta[k]);
    EXPECT_NEAR(out_theta[k], along_k, 1e-9 * (std::abs(along_k) + 1.0)) << "theta[" << k << "]";
  }
}

TEST(StencilJacobian, SameBitsOnAnyThreadCount) {
  if (!kThreadsAvailable) GTEST_SKIP() << "built without OpenMP";
  expect_thread_independent(GrayScottStencil{}, GrayScott<>::default_parameters(), 135, 136);
  expect_thread_independent(BrusselatorStencil{}, Vector{{1.0, 3.4, 0.002}}, 130, 130);
  expect_thread_independent(Lorenz96Stencil{}, Vector{{8.0}}, 50001);
  expect_thread_independent(Mixed3D{}, Vector{{0.7, -1.3}}, 41, 30, 31);
}

TEST(StencilJacobian, RefusesBadSizes) {
  const auto problem = stencil_problem(GrayScottStencil{}, 4, 4);
  const Vector theta = GrayScott<>::default_parameters(), y = Vector::Zero(32);
  std::vector<double> values(static_cast<std::size_t>(problem.sparsity().nonzeros()) - 1);
  const std::string message = testing::error_message<InvalidArgument>(
      [&] { problem.jacobian_values(0.0, y, theta, values); });
  testing::expect_message(message, "room for 319 values");
  testing::expect_message(message, "has 320 nonzeros");
  values.resize(320);
  testing::expect_message(testing::error_message<InvalidArgument>([&] {
                            problem.jacobian_values(0.0, Vector::Zero(31), theta, values);
                          }),
                          "state y");
  testing::expect_message(testing::error_message<InvalidArgument>(
                              [&] { problem.jacobian_values(0.0, y, Vector::Zero(3), values); }),
                          "parameter vector theta");
}

}  // namespace
}  // namespace rwd
