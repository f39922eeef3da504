// Lorenz-63: the classic defaults, rhs at hand-computed points, and the vjp against the
// hand-written Jacobian. The contract every problem keeps (finite differences at random states,
// outputs overwritten, sizes refused) is checked in problem_contract_test.cpp.
#include <gtest/gtest.h>

#include <random>

#include "rewind/problems/lorenz63.hpp"
#include "support/random_data.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vector = B::Vector;

using testing::random_vector;

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

}  // namespace
}  // namespace rwd
