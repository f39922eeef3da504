// Lotka–Volterra: rhs at hand-computed points, the vjp against the hand-written Jacobian and
// finite differences at random states, the output contract, and size checks.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "rewind/derivative_checker.hpp"
#include "rewind/problem.hpp"
#include "rewind/problems/lotka_volterra.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vector = B::Vector;

static_assert(Problem<LotkaVolterra<>>);

Vector random_vector(Index n, std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> dist(lo, hi);
  Vector x(n);
  for (Index i = 0; i < n; ++i) x[i] = dist(rng);
  return x;
}

TEST(LotkaVolterra, Defaults) {
  LotkaVolterra<> p;
  EXPECT_EQ(p.state_size(), 2);
  EXPECT_EQ(p.parameter_size(), 4);
  EXPECT_EQ(p.default_parameters(), (Vector{{1.5, 1.0, 1.0, 3.0}}));
  EXPECT_EQ(p.default_initial_state(), (Vector{{1.0, 1.0}}));
  EXPECT_EQ(p.parameter_names().size(), 4u);
}

TEST(LotkaVolterra, RhsMatchesHandComputedValues) {
  LotkaVolterra<> p;
  Vector f(2);
  p.rhs(0.0, p.default_initial_state(), p.default_parameters(), f);
  EXPECT_EQ(f, (Vector{{0.5, -2.0}}));
  // (x, y) = (2, 3), θ = (1, 0.5, 0.25, 2): x' = 2 − 3 = −1, y' = 1.5 − 6 = −4.5.
  p.rhs(0.0, Vector{{2.0, 3.0}}, Vector{{1.0, 0.5, 0.25, 2.0}}, f);
  EXPECT_EQ(f, (Vector{{-1.0, -4.5}}));
}

TEST(LotkaVolterra, VjpIsTheTransposedHandJacobian) {
  LotkaVolterra<> p;
  const double x = 0.7, y = 2.5, a = 1.5, b = 1.1, d = 0.9, g = 3.0;
  Eigen::Matrix2d jy;
  jy << a - b * y, -b * x, d * y, d * x - g;
  Eigen::Matrix<double, 2, 4> jt;
  jt << x, -x * y, 0, 0, 0, 0, x * y, -y;
  const Vector v{{0.3, -1.7}};
  Vector out_y(2), out_theta(4);
  p.vjp(0.0, Vector{{x, y}}, Vector{{a, b, d, g}}, v, out_y, out_theta);
  EXPECT_LT((out_y - jy.transpose() * v).norm(), 1e-14);
  EXPECT_LT((out_theta - jt.transpose() * v).norm(), 1e-14);
}

TEST(LotkaVolterra, JacobiansMatchFiniteDifferencesAtRandomStates) {
  LotkaVolterra<> p;
  std::mt19937_64 rng(4);
  DerivativeCheckOptions options;
  options.tolerance = 1e-7;
  for (int trial = 0; trial < 20; ++trial) {
    const Vector y = random_vector(2, rng, 0.1, 7.0);
    const Vector theta = random_vector(4, rng, 0.5, 3.0);
    const auto report = check_derivatives(p, 0.0, y, theta, options);
    EXPECT_TRUE(report.ok) << "trial " << trial << "\n" << report.report();
    EXPECT_EQ(report.parameters.comparisons, 8);
  }
}

TEST(LotkaVolterra, OutputsAreOverwritten) {
  LotkaVolterra<> p;
  const Vector y{{1.3, 0.4}}, theta = p.default_parameters(), v{{0.5, 2.0}};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Vector a1 = Vector::Constant(2, nan), b1 = Vector::Constant(4, nan);
  Vector a2 = Vector::Constant(2, 5.0), b2 = Vector::Constant(4, 5.0);
  p.vjp(0.0, y, theta, v, a1, b1);
  p.vjp(0.0, y, theta, v, a2, b2);
  EXPECT_EQ(a1, a2);
  EXPECT_EQ(b1, b2);
  EXPECT_TRUE(a1.allFinite() && b1.allFinite());
}

TEST(LotkaVolterra, RefusesWrongVectorSizes) {
  LotkaVolterra<> p;
  Vector f(2), out_y(2), out_theta(4), wrong(3);
  const Vector y = p.default_initial_state(), theta = p.default_parameters();
  EXPECT_THROW(p.rhs(0.0, Vector(3), theta, f), InvalidArgument);
  EXPECT_THROW(p.rhs(0.0, y, Vector(3), f), InvalidArgument);
  EXPECT_THROW(p.vjp(0.0, y, theta, y, out_y, wrong), InvalidArgument);
  EXPECT_THROW(p.vjp(0.0, y, theta, Vector(1), out_y, out_theta), InvalidArgument);
}

}  // namespace
}  // namespace rwd
