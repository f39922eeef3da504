// Van der Pol: defaults, rhs at hand-computed points, and the vjp against the hand-written
// Jacobian. The contract every problem keeps (finite differences at random states, outputs
// overwritten, sizes refused) is checked in problem_contract_test.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rewind/problems/van_der_pol.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vector = B::Vector;

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

}  // namespace
}  // namespace rwd
