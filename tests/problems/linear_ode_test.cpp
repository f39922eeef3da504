// LinearOde (y' = A y): rhs against a hand product, exact dot-product (transposition) tests of
// both vjps — f is linear in y and in θ, so ⟨v, f(w, θ)⟩ = ⟨Aᵀv, w⟩ and ⟨v, f(y, W)⟩ =
// ⟨vec(v yᵀ), vec W⟩ hold to round-off without finite differences — and the default matrix. The
// contract every problem keeps (finite differences at random points, outputs overwritten, sizes
// refused) is checked in problem_contract_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "rewind/problems/linear.hpp"
#include "support/random_data.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vector = B::Vector;

using testing::random_vector;

TEST(LinearOde, RhsIsTheRowMajorMatrixProduct) {
  LinearOde<> p(3);
  EXPECT_EQ(p.state_size(), 3);
  EXPECT_EQ(p.parameter_size(), 9);
  const Vector a{{1, 2, 3, 4, 5, 6, 7, 8, 10}};  // A = [[1,2,3],[4,5,6],[7,8,10]]
  Vector f(3);
  p.rhs(0.0, Vector{{1, -1, 2}}, a, f);
  EXPECT_EQ(f, (Vector{{5, 11, 19}}));
}

TEST(LinearOde, VjpIsExactlyTheTransposeAndTheOuterProduct) {
  LinearOde<> p(3);
  const Vector a{{1, 2, 3, 4, 5, 6, 7, 8, 10}};
  const Vector y{{1, -1, 2}}, v{{0.5, -2, 3}};
  Vector out_y(3), out_theta(9);
  p.vjp(0.0, y, a, v, out_y, out_theta);
  // Aᵀ v = (0.5 − 8 + 21, 1 − 10 + 24, 1.5 − 12 + 30).
  EXPECT_EQ(out_y, (Vector{{13.5, 15.0, 19.5}}));
  // vec(v yᵀ) row-major.
  EXPECT_EQ(out_theta, (Vector{{0.5, -0.5, 1.0, -2.0, 2.0, -4.0, 3.0, -3.0, 6.0}}));
}

TEST(LinearOde, DotProductTestsHoldToRoundOff) {
  std::mt19937_64 rng(7);
  for (Index n : {1, 2, 5, 17, 40}) {
    LinearOde<> p(n);
    const Vector a = random_vector(n * n, rng), y = random_vector(n, rng);
    const Vector v = random_vector(n, rng), w = random_vector(n, rng);
    const Vector big_w = random_vector(n * n, rng);
    Vector out_y(n), out_theta(n * n), f(n);
    p.vjp(0.0, y, a, v, out_y, out_theta);
    p.rhs(0.0, w, a, f);  // A w
    const double lhs_y = v.dot(f), rhs_y = out_y.dot(w);
    EXPECT_NEAR(lhs_y, rhs_y, 1e-13 * std::max(1.0, std::abs(lhs_y))) << "n = " << n;
    p.rhs(0.0, y, big_w, f);  // W y
    const double lhs_t = v.dot(f), rhs_t = out_theta.dot(big_w);
    EXPECT_NEAR(lhs_t, rhs_t, 1e-13 * std::max(1.0, std::abs(lhs_t))) << "n = " << n;
  }
}

TEST(LinearOde, DefaultsAreTheDampedOscillatorChain) {
  LinearOde<> p(4);
  const Vector a = p.default_parameters();
  ASSERT_EQ(a.size(), 16);
  EXPECT_EQ(a, LinearOde<>::default_parameters(4));
  const Eigen::Matrix4d m =
      Eigen::Map<const Eigen::Matrix<double, 4, 4, Eigen::RowMajor>>(a.data());
  Eigen::Matrix4d expected;
  expected << -0.1, 1, 0, 0, -1, -0.1, 1, 0, 0, -1, -0.1, 1, 0, 0, -1, -0.1;
  EXPECT_EQ(m, expected);
  // Skew-symmetric plus −0.1 I: the symmetric part is −0.1 I, so every mode decays at rate 0.1.
  EXPECT_EQ(Eigen::Matrix4d(0.5 * (m + m.transpose())),
            Eigen::Matrix4d(-0.1 * Eigen::Matrix4d::Identity()));
  EXPECT_EQ(p.default_initial_state(), (Vector{{1.0, 0.5, 1.0 / 3.0, 0.25}}));
  EXPECT_EQ(LinearOde<>::default_parameters(1), (Vector{{-0.1}}));
  EXPECT_THROW(LinearOde<>::default_parameters(0), InvalidArgument);
  const auto names = p.parameter_names();
  ASSERT_EQ(names.size(), 16u);
  EXPECT_EQ(names[1], "A[0][1]");
  EXPECT_EQ(names[4], "A[1][0]");
}

}  // namespace
}  // namespace rwd
