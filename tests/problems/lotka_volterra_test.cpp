// Lotka–Volterra: defaults, rhs at hand-computed points, and the vjp against the hand-written
// Jacobian. The contract every problem keeps (finite differences at random states, outputs
// overwritten, sizes refused) is checked in problem_contract_test.cpp.
#include <gtest/gtest.h>

#include "rewind/problems/lotka_volterra.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vector = B::Vector;

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

}  // namespace
}  // namespace rwd
