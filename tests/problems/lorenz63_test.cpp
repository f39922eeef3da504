// Lorenz-63: rhs at hand-computed points, the vjp against the hand-written Jacobian and against
// finite differences at random states, the output contract, and size checks.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "rewind/derivative_checker.hpp"
#include "rewind/problem.hpp"
#include "rewind/problems/lorenz63.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vector = B::Vector;

static_assert(Problem<Lorenz63<>>);

Vector random_vector(Index n, std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> dist(lo, hi);
  Vector x(n);
  for (Index i = 0; i < n; ++i) x[i] = dist(rng);
  return x;
}

TEST(Lorenz63, DefaultsAreTheClassicValues) {
  Lorenz63<> p;
  EXPECT_EQ(p.state_size(), 3);
  EXPECT_EQ(p.parameter_size(), 3);
  const Vector theta = p.default_parameters();
  EXPECT_EQ(theta[0], 10.0);
  EXPECT_EQ(theta[1], 28.0);
  EXPECT_EQ(theta[2], 8.0 / 3.0);
  const Vector y = p.default_initial_state();
  EXPECT_EQ(y, Vector::Ones(3));
  EXPECT_EQ(p.parameter_names().size(), 3u);
}

TEST(Lorenz63, RhsMatchesHandComputedValues) {
  Lorenz63<> p;
  Vector f(3);
  p.rhs(0.0, p.default_initial_state(), p.default_parameters(), f);
  EXPECT_EQ(f[0], 0.0);
  EXPECT_EQ(f[1], 26.0);
  EXPECT_DOUBLE_EQ(f[2], 1.0 - 8.0 / 3.0);

  // (x, y, z) = (1, 2, 3), (σ, ρ, β) = (2, 5, 0.5): (2·1, 1·2 − 2, 2 − 1.5).
  p.rhs(0.7, Vector{{1.0, 2.0, 3.0}}, Vector{{2.0, 5.0, 0.5}}, f);
  EXPECT_EQ(f, (Vector{{2.0, 0.0, 0.5}}));
}

TEST(Lorenz63, VjpIsTheTransposedHandJacobian) {
  Lorenz63<> p;
  const double x = 1.5, y = -2.0, z = 20.0, s = 10.0, r = 28.0, b = 8.0 / 3.0;
  Eigen::Matrix3d jy;
  jy << -s, s, 0, r - z, -1, -x, y, x, -b;
  Eigen::Matrix3d jt;
  jt << y - x, 0, 0, 0, x, 0, 0, 0, -z;
  std::mt19937_64 rng(1);
  const Vector v = random_vector(3, rng, -1, 1);
  Vector out_y(3), out_theta(3);
  p.vjp(0.0, Vector{{x, y, z}}, Vector{{s, r, b}}, v, out_y, out_theta);
  EXPECT_LT((out_y - jy.transpose() * v).norm(), 1e-14);
  EXPECT_LT((out_theta - jt.transpose() * v).norm(), 1e-14);
}

TEST(Lorenz63, JacobiansMatchFiniteDifferencesAtRandomStates) {
  Lorenz63<> p;
  std::mt19937_64 rng(63);
  DerivativeCheckOptions options;
  options.tolerance = 1e-7;
  for (int trial = 0; trial < 20; ++trial) {
    Vector y = random_vector(3, rng, -20, 20);
    y[2] = std::abs(y[2]) * 2;  // z lives in [0, 50] on the attractor
    const Vector theta = p.default_parameters() + random_vector(3, rng, -1, 1);
    const auto report = check_derivatives(p, 0.0, y, theta, options);
    EXPECT_TRUE(report.ok) << "trial " << trial << "\n" << report.report();
    EXPECT_EQ(report.state.mode, JacobianCheckMode::kFull);
    EXPECT_EQ(report.state.comparisons, 9);
    EXPECT_EQ(report.parameters.comparisons, 9);
  }
}

TEST(Lorenz63, OutputsAreOverwrittenAndDeterministic) {
  Lorenz63<> p;
  std::mt19937_64 rng(2);
  const Vector y = random_vector(3, rng, -10, 10), theta = p.default_parameters();
  const Vector v = random_vector(3, rng, -1, 1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Vector f1 = Vector::Constant(3, nan), f2 = Vector::Zero(3);
  p.rhs(0.0, y, theta, f1);
  p.rhs(0.0, y, theta, f2);
  EXPECT_EQ(f1, f2);
  Vector a1 = Vector::Constant(3, nan), b1 = Vector::Constant(3, nan);
  Vector a2 = Vector::Constant(3, 7.0), b2 = Vector::Constant(3, 7.0);
  p.vjp(0.0, y, theta, v, a1, b1);
  p.vjp(0.0, y, theta, v, a2, b2);
  EXPECT_EQ(a1, a2);
  EXPECT_EQ(b1, b2);
}

TEST(Lorenz63, RefusesWrongVectorSizes) {
  Lorenz63<> p;
  Vector f(3), out_y(3), out_theta(3);
  const Vector y = p.default_initial_state(), theta = p.default_parameters();
  EXPECT_THROW(p.rhs(0.0, Vector(2), theta, f), InvalidArgument);
  EXPECT_THROW(p.rhs(0.0, y, Vector(4), f), InvalidArgument);
  Vector short_out(2);
  EXPECT_THROW(p.rhs(0.0, y, theta, short_out), InvalidArgument);
  EXPECT_THROW(p.vjp(0.0, y, theta, y, short_out, out_theta), InvalidArgument);
  EXPECT_THROW(p.vjp(0.0, y, theta, y, out_y, short_out), InvalidArgument);
  try {
    p.rhs(0.0, Vector(2), theta, f);
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("lorenz63"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("must have 3"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rwd
