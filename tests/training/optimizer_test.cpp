// Adam and SGD: the first steps by hand from the formulas, convergence on a quadratic, weight
// decay, and refusals (bad options, wrong sizes, non-finite gradients leave θ untouched).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "rewind/error.hpp"
#include "rewind/training/adam.hpp"
#include "rewind/training/sgd.hpp"

namespace {

using rwd::training::Adam;
using rwd::training::AdamOptions;
using rwd::training::Sgd;
using rwd::training::SgdOptions;

TEST(Adam, FirstTwoStepsFollowTheFormulas) {
  AdamOptions o;
  o.learning_rate = 0.1;
  Adam adam(o);
  Eigen::VectorXd theta(2), g(2);
  theta << 1.0, -2.0;
  g << 0.5, -4.0;
  adam.step(theta, g);
  // Step 1: m̂ = g, v̂ = g², so the update is lr · g / (|g| + ε).
  EXPECT_DOUBLE_EQ(theta[0], 1.0 - 0.1 * 0.5 / (0.5 + 1e-8));
  EXPECT_DOUBLE_EQ(theta[1], -2.0 + 0.1 * 4.0 / (4.0 + 1e-8));
  const double t0 = theta[0];
  Eigen::VectorXd g2(2);
  g2 << 1.0, 0.0;
  adam.step(theta, g2);
  const double m = 0.9 * (0.1 * 0.5) + 0.1 * 1.0, v = 0.999 * (0.001 * 0.25) + 0.001 * 1.0;
  const double mhat = m / (1 - 0.81), vhat = v / (1 - 0.999 * 0.999);
  EXPECT_NEAR(theta[0], t0 - 0.1 * mhat / (std::sqrt(vhat) + 1e-8), 1e-15);
  EXPECT_EQ(adam.iterations(), 2);
}

TEST(Optimizers, MinimiseAnIllConditionedQuadratic) {
  // J = ½ Σ a_i (θ_i − 1)², a = (1, 10, 100).
  const Eigen::Vector3d a(1, 10, 100);
  auto run = [&](rwd::training::Optimizer& opt, int steps) {
    Eigen::VectorXd theta = Eigen::VectorXd::Zero(3);
    for (int i = 0; i < steps; ++i) opt.step(theta, (a.array() * (theta.array() - 1.0)).matrix());
    return (theta.array() - 1.0).abs().maxCoeff();
  };
  AdamOptions ao;
  ao.learning_rate = 0.05;
  Adam adam(ao);
  EXPECT_LT(run(adam, 2000), 1e-3);
  SgdOptions so;
  so.learning_rate = 0.009;
  Sgd sgd(so);
  EXPECT_LT(run(sgd, 3000), 1e-3);
  so.momentum = 0.9;
  Sgd momentum(so);
  EXPECT_LT(run(momentum, 500), 1e-3);
  so.nesterov = true;
  Sgd nesterov(so);
  EXPECT_LT(run(nesterov, 500), 1e-3);
}

TEST(Adam, WeightDecayShrinksParametersWithZeroGradient) {
  AdamOptions o;
  o.learning_rate = 0.1;
  o.weight_decay = 0.5;
  Adam adam(o);
  Eigen::VectorXd theta = Eigen::VectorXd::Constant(2, 2.0);
  adam.step(theta, Eigen::VectorXd::Zero(2));
  EXPECT_DOUBLE_EQ(theta[0], 2.0 * (1.0 - 0.05));
}

TEST(Optimizers, RefuseBadOptionsSizesAndNonFiniteGradients) {
  AdamOptions bad;
  bad.learning_rate = 0.0;
  EXPECT_THROW(Adam{bad}, rwd::InvalidArgument);
  bad = {};
  bad.beta1 = 1.0;
  EXPECT_THROW(Adam{bad}, rwd::InvalidArgument);
  SgdOptions sbad;
  sbad.nesterov = true;
  EXPECT_THROW(Sgd{sbad}, rwd::InvalidArgument);
  Adam adam;
  Eigen::VectorXd theta = Eigen::VectorXd::Constant(3, 1.0);
  EXPECT_THROW(adam.step(theta, Eigen::VectorXd::Zero(2)), rwd::InvalidArgument);
  Eigen::VectorXd g = Eigen::VectorXd::Ones(3);
  g[1] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(adam.step(theta, g), rwd::NumericalError);
  EXPECT_EQ(theta, Eigen::VectorXd::Constant(3, 1.0)) << "theta must be untouched";
  EXPECT_EQ(adam.iterations(), 0);
  Sgd sgd;
  g[1] = std::numeric_limits<double>::infinity();
  EXPECT_THROW(sgd.step(theta, g), rwd::NumericalError);
  EXPECT_EQ(theta, Eigen::VectorXd::Constant(3, 1.0));
}

}  // namespace
