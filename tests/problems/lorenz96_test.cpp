// Lorenz-96: rhs against hand values and an independent modulo implementation, the vjp against
// finite differences (entry by entry up to N = 64, by random directions beyond) and the explicit
// transposed Jacobian, the equilibrium, defaults, and size checks (N ≥ 4).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "rewind/derivative_checker.hpp"
#include "rewind/problem.hpp"
#include "rewind/problems/lorenz96.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vector = B::Vector;

static_assert(Problem<Lorenz96<>>);

Vector random_vector(Index n, std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> dist(lo, hi);
  Vector x(n);
  for (Index i = 0; i < n; ++i) x[i] = dist(rng);
  return x;
}

Index wrap(Index i, Index n) {
  return ((i % n) + n) % n;
}

// The textbook formula with explicit modulo indexing.
Vector reference_rhs(const Vector& y, double forcing) {
  const Index n = y.size();
  Vector f(n);
  for (Index i = 0; i < n; ++i)
    f[i] = (y[wrap(i + 1, n)] - y[wrap(i - 2, n)]) * y[wrap(i - 1, n)] - y[i] + forcing;
  return f;
}

// The dense Jacobian ∂f/∂y built row by row.
Eigen::MatrixXd reference_jacobian(const Vector& y) {
  const Index n = y.size();
  Eigen::MatrixXd j = Eigen::MatrixXd::Zero(n, n);
  for (Index i = 0; i < n; ++i) {
    j(i, wrap(i + 1, n)) += y[wrap(i - 1, n)];
    j(i, wrap(i - 2, n)) -= y[wrap(i - 1, n)];
    j(i, wrap(i - 1, n)) += y[wrap(i + 1, n)] - y[wrap(i - 2, n)];
    j(i, i) -= 1.0;
  }
  return j;
}

TEST(Lorenz96, RhsMatchesHandComputedValues) {
  Lorenz96<> p(4);
  Vector f(4);
  p.rhs(0.0, Vector{{1, 2, 3, 4}}, Vector{{8.0}}, f);
  // f_0 = (y1 − y2) y3 − y0 + 8 = 3, f_1 = (y2 − y3) y0 − y1 + 8 = 5,
  // f_2 = (y3 − y0) y1 − y2 + 8 = 11, f_3 = (y0 − y1) y2 − y3 + 8 = 1.
  EXPECT_EQ(f, (Vector{{3, 5, 11, 1}}));
}

TEST(Lorenz96, RhsMatchesTheModuloFormula) {
  std::mt19937_64 rng(96);
  for (Index n : {4, 5, 7, 40, 1000}) {
    Lorenz96<> p(n);
    const Vector y = random_vector(n, rng, -10, 10);
    Vector f(n);
    p.rhs(0.0, y, Vector{{7.5}}, f);
    EXPECT_EQ(f, reference_rhs(y, 7.5)) << "N = " << n;
  }
}

TEST(Lorenz96, VjpIsTheTransposedJacobian) {
  std::mt19937_64 rng(97);
  for (Index n : {4, 5, 6, 33}) {
    Lorenz96<> p(n);
    const Vector y = random_vector(n, rng, -10, 10), v = random_vector(n, rng, -1, 1);
    Vector out_y(n), out_theta(1);
    p.vjp(0.0, y, Vector{{8.0}}, v, out_y, out_theta);
    EXPECT_LT((out_y - reference_jacobian(y).transpose() * v).cwiseAbs().maxCoeff(), 1e-13)
        << "N = " << n;
    EXPECT_NEAR(out_theta[0], v.sum(), 1e-14);
  }
}

TEST(Lorenz96, JacobiansMatchFiniteDifferencesAtRandomStates) {
  std::mt19937_64 rng(98);
  DerivativeCheckOptions options;
  options.tolerance = 1e-7;
  for (Index n : {4, 5, 10, 40, 200}) {  // 200 > max_full_columns: random directions
    Lorenz96<> p(n);
    for (int trial = 0; trial < 3; ++trial) {
      const Vector y = random_vector(n, rng, -8, 12);
      const Vector theta{{8.0 + random_vector(1, rng, -2, 2)[0]}};
      const auto report = check_derivatives(p, 0.0, y, theta, options);
      EXPECT_TRUE(report.ok) << "N = " << n << "\n" << report.report();
      EXPECT_EQ(report.state.mode,
                n <= 64 ? JacobianCheckMode::kFull : JacobianCheckMode::kRandomDirections);
    }
  }
  // N = 200 entry by entry as well.
  options.max_full_columns = 200;
  Lorenz96<> p(200);
  const auto report =
      check_derivatives(p, 0.0, random_vector(200, rng, -8, 12), Vector{{8.0}}, options);
  EXPECT_TRUE(report.ok) << report.report();
  EXPECT_EQ(report.state.comparisons, 200 * 200);
}

TEST(Lorenz96, DefaultsAndEquilibrium) {
  Lorenz96<> p(40);
  EXPECT_EQ(p.state_size(), 40);
  EXPECT_EQ(p.parameter_size(), 1);
  EXPECT_EQ(p.default_parameters(), (Vector{{8.0}}));
  const Vector y = p.default_initial_state();
  ASSERT_EQ(y.size(), 40);
  EXPECT_EQ(y[0], 8.01);
  for (Index i = 1; i < 40; ++i) EXPECT_EQ(y[i], 8.0);
  // y_i = F is an equilibrium.
  Vector f(40);
  p.rhs(0.0, Vector::Constant(40, 3.5), Vector{{3.5}}, f);
  EXPECT_EQ(f, Vector::Zero(40));
  EXPECT_EQ(p.default_initial_state(5.0, 0.0), Vector::Constant(40, 5.0));
}

TEST(Lorenz96, OutputsAreOverwritten) {
  Lorenz96<> p(9);
  std::mt19937_64 rng(99);
  const Vector y = random_vector(9, rng, -5, 5), v = random_vector(9, rng, -1, 1);
  const Vector theta = p.default_parameters();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Vector a1 = Vector::Constant(9, nan), b1 = Vector::Constant(1, nan);
  Vector a2 = Vector::Constant(9, 2.0), b2 = Vector::Constant(1, 2.0);
  p.vjp(0.0, y, theta, v, a1, b1);
  p.vjp(0.0, y, theta, v, a2, b2);
  EXPECT_EQ(a1, a2);
  EXPECT_EQ(b1, b2);
}

TEST(Lorenz96, RefusesFewerThanFourVariables) {
  for (Index n : {3, 2, 1, 0, -1}) EXPECT_THROW(Lorenz96<>{n}, InvalidArgument) << "N = " << n;
  EXPECT_NO_THROW(Lorenz96<>(4));
  try {
    Lorenz96<> p(3);
    FAIL() << "N = 3 accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("N = 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(">= 4"), std::string::npos) << e.what();
  }
  Lorenz96<> p(6);
  Vector f(6), out_y(6), out_theta(1);
  const Vector y = Vector::Zero(6);
  EXPECT_THROW(p.rhs(0.0, Vector::Zero(5), Vector{{8.0}}, f), InvalidArgument);
  EXPECT_THROW(p.rhs(0.0, y, Vector{{8.0, 1.0}}, f), InvalidArgument);
  EXPECT_THROW(p.vjp(0.0, y, Vector{{8.0}}, Vector::Zero(7), out_y, out_theta), InvalidArgument);
}

}  // namespace
}  // namespace rwd
