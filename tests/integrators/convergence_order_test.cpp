// Observed order of convergence of every shipped tableau on a nonlinear, non-autonomous problem
// with a closed-form solution: halving dt divides the error by 2^p.
#include <gtest/gtest.h>

#include <cmath>

#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "support/test_problems.hpp"

namespace rwd {
namespace {

double final_error(const ButcherTableau& tableau, Index steps) {
  testing::RationalDecay problem;
  const double T = 2.0, a = 1.5;
  ExplicitRungeKutta stepper(problem, tableau,
                             StepControl::fixed(0.0, T / static_cast<double>(steps), steps));
  Eigen::VectorXd y(2), theta(1);
  y << 1.0, 0.0;
  theta << a;
  Carry carry = stepper.initial_carry(y, theta);
  while (!stepper.finished(carry)) stepper.step(y, carry, theta);
  EXPECT_DOUBLE_EQ(carry.t, T);
  return (y - testing::RationalDecay::exact(T, a)).norm();
}

class ConvergenceOrder : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvergenceOrder, MatchesClaimedOrder) {
  const ButcherTableau tableau = ButcherTableau::by_name(GetParam());
  std::vector<double> errors;
  for (Index steps : {20, 40, 80, 160}) errors.push_back(final_error(tableau, steps));
  std::vector<double> slopes;
  for (std::size_t i = 1; i < errors.size(); ++i)
    slopes.push_back(std::log2(errors[i - 1] / errors[i]));
  for (double s : slopes) RecordProperty("slope", std::to_string(s));
  // The asymptotic slope: the last refinement is within 0.25 of the order.
  EXPECT_NEAR(slopes.back(), tableau.order, 0.25)
      << "errors " << errors[0] << " " << errors[1] << " " << errors[2] << " " << errors[3];
}

INSTANTIATE_TEST_SUITE_P(AllTableaux, ConvergenceOrder,
                         ::testing::Values("euler", "heun", "rk4", "rk38", "bs3", "dopri5",
                                           "tsit5"));

TEST(AdaptiveConvergence, ErrorFollowsTolerance) {
  // Tightening rtol by 10^3 must shrink the global error by a large factor for every pair.
  for (const char* name : {"heun", "bs3", "dopri5", "tsit5"}) {
    SCOPED_TRACE(name);
    testing::RationalDecay problem;
    std::vector<double> errors;
    for (double tol : {1e-5, 1e-8}) {
      ExplicitRungeKutta stepper(problem, ButcherTableau::by_name(name),
                                 StepControl::adaptive(0.0, 2.0, tol, tol));
      Eigen::VectorXd y(2), theta(1);
      y << 1.0, 0.0;
      theta << 1.5;
      Carry carry = stepper.initial_carry(y, theta);
      while (!stepper.finished(carry)) stepper.step(y, carry, theta);
      EXPECT_EQ(carry.t, 2.0);  // the last step lands exactly on t_final
      errors.push_back((y - testing::RationalDecay::exact(2.0, 1.5)).norm());
      EXPECT_LT(errors.back(), 100 * tol);
    }
    EXPECT_LT(errors[1], errors[0] / 30);
  }
}

}  // namespace
}  // namespace rwd
