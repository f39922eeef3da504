// Dot-product (transposition) test of every adjoint step: for random λ, v, w
//   ⟨λ, Φ_y v + Φ_θ w⟩ = ⟨Φ_yᵀ λ, v⟩ + ⟨Φ_θᵀ λ, w⟩
// to round-off, for every tableau, fixed and adaptive steps, on several problems. The tangent
// side is computed by an independent implementation (tests/support/tangent_linear.hpp).
#include <gtest/gtest.h>

#include <random>

#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/lotka_volterra.hpp"
#include "support/random_data.hpp"
#include "support/tangent_linear.hpp"
#include "support/test_problems.hpp"

namespace rwd {
namespace {

using testing::random_normal_vector;

// Takes a few steps to reach a generic state, then checks the identity for the next step.
template <class P>
void check_transposition(const P& problem, const ButcherTableau& tableau, StepControl control,
                         const Eigen::VectorXd& y_start, const Eigen::VectorXd& theta,
                         std::uint64_t seed) {
  ExplicitRungeKutta stepper(problem, tableau, control);
  Eigen::VectorXd y = y_start;
  Carry carry = stepper.initial_carry(y, theta);
  for (int i = 0; i < 3; ++i) stepper.step(y, carry, theta);
  const Eigen::VectorXd y_n = y;
  const Carry carry_n = carry;
  stepper.step(y, carry, theta);
  const double h = stepper.last_step_size();

  std::mt19937_64 rng(seed);
  const Index n = problem.state_size(), p = problem.parameter_size();
  const Eigen::VectorXd lambda = random_normal_vector(n, rng), v = random_normal_vector(n, rng),
                        w = random_normal_vector(p, rng);
  const Eigen::VectorXd tangent =
      testing::tangent_step(problem, tableau, carry_n.t, h, y_n, theta, v, w);

  Eigen::VectorXd lambda_n = lambda, mu = Eigen::VectorXd::Zero(p);
  stepper.adjoint_step(y_n, carry_n, theta, lambda_n, mu);
  EXPECT_EQ(stepper.last_step_size(), h) << "the adjoint step must re-run the same step";

  const double lhs = lambda.dot(tangent);
  const double rhs = lambda_n.dot(v) + mu.dot(w);
  // Relative to the size of the terms summed, so cancellation does not inflate the test.
  const double scale = lambda.cwiseAbs().dot(tangent.cwiseAbs()) +
                       lambda_n.cwiseAbs().dot(v.cwiseAbs()) + mu.cwiseAbs().dot(w.cwiseAbs());
  EXPECT_LE(std::abs(lhs - rhs), 1e-13 * scale)
      << tableau.name << (control.is_adaptive() ? " adaptive" : " fixed") << ": lhs " << lhs
      << " rhs " << rhs << " rel " << std::abs(lhs - rhs) / scale;
}

class Transposition : public ::testing::TestWithParam<std::string> {};

TEST_P(Transposition, RationalDecay) {
  const auto tableau = ButcherTableau::by_name(GetParam());
  testing::RationalDecay problem;
  Eigen::VectorXd y(2), theta(1);
  y << 1.0, 0.0;
  theta << 1.5;
  check_transposition(problem, tableau, StepControl::fixed(0.1, 0.05, 10), y, theta, 1);
  if (tableau.has_embedded())
    check_transposition(problem, tableau, StepControl::adaptive(0.1, 3.0, 1e-6, 1e-8), y, theta, 2);
}

TEST_P(Transposition, Lorenz63) {
  const auto tableau = ButcherTableau::by_name(GetParam());
  Lorenz63<> problem;
  const Eigen::VectorXd y = problem.default_initial_state(), theta = problem.default_parameters();
  check_transposition(problem, tableau, StepControl::fixed(0.0, 0.01, 10), y, theta, 3);
  if (tableau.has_embedded())
    check_transposition(problem, tableau, StepControl::adaptive(0.0, 1.0, 1e-6, 1e-9), y, theta, 4);
}

TEST_P(Transposition, LotkaVolterra) {
  const auto tableau = ButcherTableau::by_name(GetParam());
  LotkaVolterra<> problem;
  const Eigen::VectorXd y = problem.default_initial_state(), theta = problem.default_parameters();
  check_transposition(problem, tableau, StepControl::fixed(0.0, 0.02, 10), y, theta, 5);
  if (tableau.has_embedded())
    check_transposition(problem, tableau, StepControl::adaptive(0.0, 2.0, 1e-7, 1e-9), y, theta, 6);
}

TEST_P(Transposition, GrayScott) {
  const auto tableau = ButcherTableau::by_name(GetParam());
  GrayScott<> problem(6);
  const Eigen::VectorXd y = problem.default_initial_state(), theta = problem.default_parameters();
  check_transposition(problem, tableau, StepControl::fixed(0.0, 0.5, 10), y, theta, 7);
  if (tableau.has_embedded())
    check_transposition(problem, tableau, StepControl::adaptive(0.0, 50.0, 1e-6, 1e-9), y, theta,
                        8);
}

INSTANTIATE_TEST_SUITE_P(AllTableaux, Transposition,
                         ::testing::Values("euler", "heun", "rk4", "rk38", "bs3", "dopri5",
                                           "tsit5"));

}  // namespace
}  // namespace rwd
