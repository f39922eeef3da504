// Van der Pol: rhs at hand-computed points, the vjp against the hand-written Jacobian and
// finite differences at random states, the output contract, and size checks.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "rewind/derivative_checker.hpp"
#include "rewind/problem.hpp"
#include "rewind/problems/van_der_pol.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vector = B::Vector;

static_assert(Problem<VanDerPol<>>);

TEST(VanDerPol, Defaults) {
  VanDerPol<> p;
  EXPECT_EQ(p.state_size(), 2);
  EXPECT_EQ(p.parameter_size(), 1);
  EXPECT_EQ(p.default_parameters(), (Vector{{1.0}}));
  EXPECT_EQ(p.default_initial_state(), (Vector{{2.0, 0.0}}));
  EXPECT_EQ(p.parameter_names(), std::vector<std::string>{"mu"});
}

TEST(VanDerPol, RhsMatchesHandComputedValues) {
  VanDerPol<> p;
  Vector f(2);
  p.rhs(0.0, p.default_initial_state(), p.default_parameters(), f);
  EXPECT_EQ(f, (Vector{{0.0, -2.0}}));
  // (x, y) = (0.5, 2), μ = 3: y' = 3·0.75·2 − 0.5 = 4.
  p.rhs(0.0, Vector{{0.5, 2.0}}, Vector{{3.0}}, f);
  EXPECT_EQ(f, (Vector{{2.0, 4.0}}));
}

TEST(VanDerPol, VjpIsTheTransposedHandJacobian) {
  VanDerPol<> p;
  const double x = -1.3, y = 0.8, mu = 2.5;
  Eigen::Matrix2d jy;
  jy << 0, 1, -2 * mu * x * y - 1, mu * (1 - x * x);
  const Vector v{{0.4, -1.1}};
  Vector out_y(2), out_theta(1);
  p.vjp(0.0, Vector{{x, y}}, Vector{{mu}}, v, out_y, out_theta);
  EXPECT_LT((out_y - jy.transpose() * v).norm(), 1e-14);
  EXPECT_NEAR(out_theta[0], (1 - x * x) * y * v[1], 1e-15);
}

TEST(VanDerPol, JacobiansMatchFiniteDifferencesAtRandomStates) {
  VanDerPol<> p;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> state(-3.0, 3.0), mu(0.1, 10.0);
  DerivativeCheckOptions options;
  options.tolerance = 1e-7;
  for (int trial = 0; trial < 20; ++trial) {
    const Vector y{{state(rng), state(rng)}};
    const Vector theta{{mu(rng)}};
    const auto report = check_derivatives(p, 0.0, y, theta, options);
    EXPECT_TRUE(report.ok) << "trial " << trial << "\n" << report.report();
  }
}

TEST(VanDerPol, OutputsAreOverwritten) {
  VanDerPol<> p;
  const Vector y{{1.3, 0.4}}, theta = p.default_parameters(), v{{0.5, 2.0}};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Vector a1 = Vector::Constant(2, nan), b1 = Vector::Constant(1, nan);
  Vector a2 = Vector::Constant(2, 5.0), b2 = Vector::Constant(1, 5.0);
  p.vjp(0.0, y, theta, v, a1, b1);
  p.vjp(0.0, y, theta, v, a2, b2);
  EXPECT_EQ(a1, a2);
  EXPECT_EQ(b1, b2);
  EXPECT_TRUE(a1.allFinite() && b1.allFinite());
}

TEST(VanDerPol, RefusesWrongVectorSizes) {
  VanDerPol<> p;
  Vector f(2), out_y(2), out_theta(1), wrong(2);
  const Vector y = p.default_initial_state(), theta = p.default_parameters();
  EXPECT_THROW(p.rhs(0.0, y, Vector(2), f), InvalidArgument);
  EXPECT_THROW(p.vjp(0.0, y, theta, y, out_y, wrong), InvalidArgument);
  EXPECT_THROW(p.vjp(0.0, Vector(3), theta, y, out_y, out_theta), InvalidArgument);
}

}  // namespace
}  // namespace rwd
