// For y' = A y every explicit Runge–Kutta step is the matrix R(hA) = Σ_k γ_k (hA)^k with
// γ_0 = 1, γ_k = bᵀ 𝒜^{k−1} 𝟙 (its stability polynomial). With J = ½|M^N y0|², M = R(hA):
//   dJ/dy0 = (M^N)ᵀ M^N y0,
//   dJ/dA_ij = ⟨M^N y0, D_ij y0⟩ with D_ij the Fréchet derivative of A ↦ R(hA)^N along E_ij,
// read off the upper-right block of R(hÃ)^N for Ã = [[A, E_ij], [0, A]] (Higham, Functions of
// Matrices, §3.2). Both are exact matrix algebra, independent of the adjoint code.
#include <gtest/gtest.h>

#include <Eigen/Dense>

#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/problems/linear.hpp"

namespace rwd {
namespace {

Eigen::MatrixXd stability_matrix(const ButcherTableau& t, const Eigen::MatrixXd& hA) {
  const int s = t.stages;
  Eigen::MatrixXd tab(s, s);
  for (int i = 0; i < s; ++i)
    for (int j = 0; j < s; ++j) tab(i, j) = t.a_at(i, j);
  const Eigen::VectorXd b = Eigen::Map<const Eigen::VectorXd>(t.b.data(), s);
  Eigen::VectorXd v = Eigen::VectorXd::Ones(s);  // 𝒜^{k−1} 𝟙
  Eigen::MatrixXd power = Eigen::MatrixXd::Identity(hA.rows(), hA.cols());
  Eigen::MatrixXd R = power;
  for (int k = 1; k <= s; ++k) {
    power = power * hA;
    R += b.dot(v) * power;
    v = tab * v;
  }
  return R;
}

class LinearClosedForm : public ::testing::TestWithParam<std::string> {};

TEST_P(LinearClosedForm, GradientMatchesMatrixAlgebra) {
  const ButcherTableau tableau = ButcherTableau::by_name(GetParam());
  const Index n = 3, steps = 25;
  const double dt = 0.04;
  LinearOde<> problem(n);
  const Eigen::VectorXd theta = problem.default_parameters();
  const Eigen::VectorXd y0 = problem.default_initial_state();
  Eigen::MatrixXd A(n, n);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j) A(i, j) = theta[i * n + j];

  ExplicitRungeKutta stepper(problem, tableau, StepControl::fixed(0.0, dt, steps));
  StoreAllAdjoint driver(stepper, Objective<EigenBackend>::terminal_squared_norm());
  const auto result = driver.run(y0, theta);

  const Eigen::MatrixXd M = stability_matrix(tableau, dt * A);
  Eigen::MatrixXd MN = Eigen::MatrixXd::Identity(n, n);
  for (Index k = 0; k < steps; ++k) MN = M * MN;
  const Eigen::VectorXd yN = MN * y0;
  EXPECT_NEAR(result.loss, 0.5 * yN.squaredNorm(), 1e-14 * yN.squaredNorm());
  const Eigen::VectorXd grad_y0 = MN.transpose() * yN;
  EXPECT_LE((result.grad_y0 - grad_y0).norm(), 1e-13 * grad_y0.norm())
      << result.grad_y0.transpose() << "\n"
      << grad_y0.transpose();

  Eigen::VectorXd grad_A(n * n);
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < n; ++j) {
      Eigen::MatrixXd big = Eigen::MatrixXd::Zero(2 * n, 2 * n);
      big.topLeftCorner(n, n) = A;
      big.bottomRightCorner(n, n) = A;
      big(i, n + j) = 1.0;
      const Eigen::MatrixXd Mbig = stability_matrix(tableau, dt * big);
      Eigen::MatrixXd P = Eigen::MatrixXd::Identity(2 * n, 2 * n);
      for (Index k = 0; k < steps; ++k) P = Mbig * P;
      grad_A[i * n + j] = yN.dot(P.topRightCorner(n, n) * y0);
    }
  }
  EXPECT_LE((result.grad_theta - grad_A).norm(), 1e-12 * grad_A.norm())
      << result.grad_theta.transpose() << "\n"
      << grad_A.transpose();
}

INSTANTIATE_TEST_SUITE_P(AllTableaux, LinearClosedForm,
                         ::testing::Values("euler", "heun", "rk4", "rk38", "bs3", "dopri5",
                                           "tsit5"));

}  // namespace
}  // namespace rwd
