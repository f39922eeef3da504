// Adam and SGD: the first steps by hand from the formulas (Kingma & Ba 2015, Algorithm 1; AdamW,
// Loshchilov & Hutter 2019, Algorithm 2), convergence on a quadratic, decoupled weight decay,
// determinism and reset(), and refusals (bad options; wrong sizes and non-finite values leave θ
// and the optimizer untouched).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/neural/adam.hpp"
#include "rewind/neural/sgd.hpp"

namespace {

using rwd::Index;
using rwd::training::Adam;
using rwd::training::AdamOptions;
using rwd::training::Sgd;
using rwd::training::SgdOptions;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Eigen::VectorXd vec(std::initializer_list<double> values) {
  Eigen::VectorXd v(static_cast<Index>(values.size()));
  Index i = 0;
  for (double x : values) v[i++] = x;
  return v;
}

TEST(Adam, FirstStepsFollowTheFormulas) {
  AdamOptions o;
  o.learning_rate = 0.1;
  Adam adam(o);
  Eigen::VectorXd theta = vec({1.0, -2.0, 0.5});
  const Eigen::VectorXd g1 = vec({0.5, -4.0, 0.0});
  adam.step(theta, g1);
  // Step 1: m = 0.1 g, v = 0.001 g², m̂ = g, v̂ = g²: the update is lr · g / (|g| + ε), about lr
  // whatever the scale of g (and 0 where g is 0).
  EXPECT_DOUBLE_EQ(theta[0], 1.0 - 0.1 * 0.5 / (0.5 + 1e-8));
  EXPECT_DOUBLE_EQ(theta[1], -2.0 + 0.1 * 4.0 / (4.0 + 1e-8));
  EXPECT_EQ(theta[2], 0.5);
  const Eigen::VectorXd after1 = theta;

  const Eigen::VectorXd g2 = vec({1.0, 0.0, -3.0});
  adam.step(theta, g2);
  for (Index i = 0; i < 3; ++i) {
    const double m = 0.9 * (0.1 * g1[i]) + 0.1 * g2[i];
    const double v = 0.999 * (0.001 * g1[i] * g1[i]) + 0.001 * g2[i] * g2[i];
    const double m_hat = m / (1.0 - 0.9 * 0.9), v_hat = v / (1.0 - 0.999 * 0.999);
    EXPECT_DOUBLE_EQ(theta[i], after1[i] - 0.1 * m_hat / (std::sqrt(v_hat) + 1e-8))
        << "component " << i;
  }
  EXPECT_EQ(adam.iterations(), 2);
  EXPECT_DOUBLE_EQ(adam.first_moment()[0], 0.9 * 0.05 + 0.1);
}

TEST(Adam, ThirdStepWithOtherBetasFollowsTheFormulas) {
  AdamOptions o;
  o.learning_rate = 0.01;
  o.beta1 = 0.5;
  o.beta2 = 0.75;
  o.epsilon = 1e-3;
  Adam adam(o);
  Eigen::VectorXd theta = vec({2.0});
  const double g[3] = {1.0, -2.0, 0.25};
  double m = 0.0, v = 0.0, x = 2.0;
  for (int t = 1; t <= 3; ++t) {
    adam.step(theta, vec({g[t - 1]}));
    m = 0.5 * m + 0.5 * g[t - 1];
    v = 0.75 * v + 0.25 * g[t - 1] * g[t - 1];
    x -= 0.01 * (m / (1.0 - std::pow(0.5, t))) / (std::sqrt(v / (1.0 - std::pow(0.75, t))) + 1e-3);
    EXPECT_DOUBLE_EQ(theta[0], x) << "step " << t;
  }
}

// J = ½ Σ a_i (θ_i − c_i)², a = (1, 10, 100): ill-conditioned, minimiser c.
double distance_after(rwd::training::Optimizer& optimizer, int steps) {
  const Eigen::Vector3d a(1.0, 10.0, 100.0), c(1.0, -2.0, 3.0);
  Eigen::VectorXd theta = Eigen::VectorXd::Zero(3);
  Eigen::VectorXd gradient(3);
  for (int i = 0; i < steps; ++i) {
    gradient = a.cwiseProduct(theta - c);
    optimizer.step(theta, gradient);
  }
  return (theta - c).cwiseAbs().maxCoeff();
}

TEST(Optimizers, MinimiseAnIllConditionedQuadratic) {
  AdamOptions ao;
  ao.learning_rate = 0.05;
  Adam adam(ao);
  EXPECT_LT(distance_after(adam, 2000), 1e-8) << adam.name();

  SgdOptions so;
  so.learning_rate = 0.015;  // stable below 2/100
  Sgd sgd(so);
  EXPECT_LT(distance_after(sgd, 2000), 1e-6) << sgd.name();
  // With momentum μ = 0.9 the stable range shrinks: heavy ball needs lr·a < 2(1 + μ), Nesterov
  // lr·a < 2(1 + μ)/(1 + 2μ) ≈ 1.36 for the stiffest a = 100.
  so.learning_rate = 0.009;
  so.momentum = 0.9;
  Sgd momentum(so);
  EXPECT_LT(distance_after(momentum, 1000), 1e-6) << momentum.name();
  so.nesterov = true;
  Sgd nesterov(so);
  EXPECT_LT(distance_after(nesterov, 1000), 1e-6) << nesterov.name();
}

TEST(Sgd, StepsFollowTheFormulas) {
  const Eigen::VectorXd g1 = vec({1.0, -2.0}), g2 = vec({0.5, 4.0});
  {
    SgdOptions o;
    o.learning_rate = 0.1;
    Sgd sgd(o);
    Eigen::VectorXd theta = vec({1.0, 1.0});
    sgd.step(theta, g1);
    sgd.step(theta, g2);
    EXPECT_EQ(theta[0], (1.0 - 0.1 * 1.0) - 0.1 * 0.5);
    EXPECT_EQ(theta[1], (1.0 + 0.1 * 2.0) - 0.1 * 4.0);
    EXPECT_EQ(sgd.velocity().size(), 0);
  }
  {
    SgdOptions o;
    o.learning_rate = 0.1;
    o.momentum = 0.5;
    Sgd sgd(o);
    Eigen::VectorXd theta = vec({1.0, 1.0});
    sgd.step(theta, g1);
    sgd.step(theta, g2);
    for (Index i = 0; i < 2; ++i) {
      const double u1 = g1[i], u2 = 0.5 * u1 + g2[i];
      EXPECT_EQ(theta[i], (1.0 - 0.1 * u1) - 0.1 * u2);
      EXPECT_EQ(sgd.velocity()[i], u2);
    }
  }
  {
    SgdOptions o;
    o.learning_rate = 0.1;
    o.momentum = 0.5;
    o.nesterov = true;
    Sgd sgd(o);
    Eigen::VectorXd theta = vec({1.0, 1.0});
    sgd.step(theta, g1);
    sgd.step(theta, g2);
    for (Index i = 0; i < 2; ++i) {
      const double u1 = g1[i], u2 = 0.5 * u1 + g2[i];
      EXPECT_EQ(theta[i], (1.0 - 0.1 * (g1[i] + 0.5 * u1)) - 0.1 * (g2[i] + 0.5 * u2));
    }
  }
}

TEST(Adam, WeightDecayShrinksParametersWithZeroGradient) {
  AdamOptions o;
  o.learning_rate = 0.1;
  o.weight_decay = 0.5;
  Adam adam(o);
  Eigen::VectorXd theta = vec({2.0, -4.0});
  double expected = 2.0;
  for (int i = 0; i < 10; ++i) {
    adam.step(theta, Eigen::VectorXd::Zero(2));
    expected *= 1.0 - 0.1 * 0.5;
    EXPECT_EQ(theta[0], expected);
    EXPECT_EQ(theta[1], -2.0 * expected);
  }
}

TEST(Adam, WeightDecayIsDecoupledFromTheGradientScale) {
  // AdamW: θ ← (1 − lr·λ)θ − lr·m̂/(√v̂ + ε). The decay's effect is −lr·λ·θ whatever the gradient;
  // an L2 penalty added to the gradient (Adam with λθ in g) would be rescaled by 1/√v̂ instead.
  for (double scale : {1.0, 1e3, 1e-3}) {
    AdamOptions with;
    with.learning_rate = 0.01;
    with.weight_decay = 0.1;
    AdamOptions without = with;
    without.weight_decay = 0.0;
    Adam decayed(with), plain(without);
    Eigen::VectorXd a = vec({3.0, -1.0}), b = a;
    const Eigen::VectorXd g = scale * vec({0.3, 0.7});
    decayed.step(a, g);
    plain.step(b, g);
    EXPECT_NEAR(a[0] - b[0], -0.01 * 0.1 * 3.0, 1e-15) << "gradient scale " << scale;
    EXPECT_NEAR(a[1] - b[1], -0.01 * 0.1 * -1.0, 1e-15) << "gradient scale " << scale;
  }
}

TEST(Optimizers, AreDeterministicAndResetStartsOver) {
  std::vector<Eigen::VectorXd> gradients;
  for (int k = 0; k < 20; ++k) {
    Eigen::VectorXd g(5);
    for (Index i = 0; i < 5; ++i)
      g[i] = std::sin(1.3 * k + 0.7 * static_cast<double>(i)) * std::exp(0.1 * k);
    gradients.push_back(g);
  }
  auto run = [&](rwd::training::Optimizer& opt) {
    Eigen::VectorXd theta = Eigen::VectorXd::LinSpaced(5, -1.0, 1.0);
    for (const auto& g : gradients) opt.step(theta, g);
    return theta;
  };
  AdamOptions ao;
  ao.weight_decay = 0.01;
  SgdOptions so;
  so.momentum = 0.9;
  so.nesterov = true;
  Adam adam1(ao), adam2(ao);
  Sgd sgd1(so), sgd2(so);
  const Eigen::VectorXd a = run(adam1), s = run(sgd1);
  EXPECT_EQ(a, run(adam2));
  EXPECT_EQ(s, run(sgd2));
  adam1.reset();
  sgd1.reset();
  EXPECT_EQ(adam1.iterations(), 0);
  EXPECT_EQ(sgd1.iterations(), 0);
  EXPECT_EQ(run(adam1), a) << "reset() must forget the moments";
  EXPECT_EQ(run(sgd1), s) << "reset() must forget the velocity";
  EXPECT_EQ(adam1.iterations(), 20);
}

TEST(Optimizers, NamesShowTheOptions) {
  AdamOptions ao;
  ao.learning_rate = 0.01;
  EXPECT_EQ(Adam(ao).name(), "adam(lr = 0.01)");
  ao.weight_decay = 0.001;
  EXPECT_EQ(Adam(ao).name(), "adam(lr = 0.01, weight decay = 0.001)");
  SgdOptions so;
  EXPECT_EQ(Sgd(so).name(), "sgd(lr = 0.01)");
  so.momentum = 0.9;
  so.nesterov = true;
  EXPECT_EQ(Sgd(so).name(), "sgd(lr = 0.01, momentum = 0.9, nesterov)");
}

template <class Options, class Optimizer>
void expect_refused(const Options& options, const std::string& field) {
  try {
    Optimizer optimizer(options);
    ADD_FAILURE() << "options with a bad " << field << " were accepted";
  } catch (const rwd::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

TEST(Optimizers, RefuseBadOptionsNamingTheField) {
  for (double lr : {0.0, -1e-3, kNaN, kInf}) {
    AdamOptions o;
    o.learning_rate = lr;
    expect_refused<AdamOptions, Adam>(o, "learning_rate");
    SgdOptions s;
    s.learning_rate = lr;
    expect_refused<SgdOptions, Sgd>(s, "learning_rate");
  }
  for (double beta : {1.0, -0.1, 1.5, kNaN}) {
    AdamOptions o;
    o.beta1 = beta;
    expect_refused<AdamOptions, Adam>(o, "beta1");
    o = {};
    o.beta2 = beta;
    expect_refused<AdamOptions, Adam>(o, "beta2");
    SgdOptions s;
    s.momentum = beta;
    expect_refused<SgdOptions, Sgd>(s, "momentum");
  }
  for (double epsilon : {0.0, -1e-8, kNaN, kInf}) {
    AdamOptions o;
    o.epsilon = epsilon;
    expect_refused<AdamOptions, Adam>(o, "epsilon");
  }
  for (double decay : {-0.1, kNaN, kInf}) {
    AdamOptions o;
    o.weight_decay = decay;
    expect_refused<AdamOptions, Adam>(o, "weight_decay");
  }
  AdamOptions too_much;
  too_much.learning_rate = 0.5;
  too_much.weight_decay = 2.0;  // θ ← 0·θ each step
  expect_refused<AdamOptions, Adam>(too_much, "weight_decay");
  SgdOptions nesterov;
  nesterov.nesterov = true;  // without momentum
  expect_refused<SgdOptions, Sgd>(nesterov, "nesterov");
  // Edge values that are allowed.
  AdamOptions edge;
  edge.beta1 = 0.0;
  edge.beta2 = 0.0;
  EXPECT_NO_THROW(Adam{edge});
}

TEST(Optimizers, RefuseBadInputLeavingThetaAndStateUntouched) {
  AdamOptions ao;
  ao.learning_rate = 0.1;
  SgdOptions so;
  so.momentum = 0.5;
  Adam adam(ao), adam_reference(ao);
  Sgd sgd(so), sgd_reference(so);
  std::vector<rwd::training::Optimizer*> optimizers = {&adam, &sgd};
  std::vector<rwd::training::Optimizer*> references = {&adam_reference, &sgd_reference};
  for (std::size_t o = 0; o < optimizers.size(); ++o) {
    rwd::training::Optimizer& opt = *optimizers[o];
    Eigen::VectorXd theta = vec({1.0, 2.0, 3.0}), reference_theta = theta;
    const Eigen::VectorXd g = vec({0.1, -0.2, 0.3});
    opt.step(theta, g);
    references[o]->step(reference_theta, g);
    const Eigen::VectorXd before = theta;

    EXPECT_THROW(opt.step(theta, vec({1.0, 2.0})), rwd::InvalidArgument) << opt.name();
    for (double bad : {kNaN, kInf, -kInf}) {
      Eigen::VectorXd bad_gradient = g;
      bad_gradient[1] = bad;
      try {
        opt.step(theta, bad_gradient);
        ADD_FAILURE() << opt.name() << " accepted a gradient with " << bad;
      } catch (const rwd::NumericalError& e) {
        EXPECT_NE(std::string(e.what()).find("gradient[1]"), std::string::npos) << e.what();
      }
    }
    Eigen::VectorXd bad_theta = theta;
    bad_theta[2] = kNaN;
    EXPECT_THROW(opt.step(bad_theta, g), rwd::NumericalError) << opt.name();
    Eigen::VectorXd empty, empty_gradient;
    EXPECT_THROW(opt.step(empty, empty_gradient), rwd::InvalidArgument) << opt.name();
    Eigen::VectorXd bigger = vec({1.0, 2.0, 3.0, 4.0});
    EXPECT_THROW(opt.step(bigger, vec({1.0, 1.0, 1.0, 1.0})), rwd::InvalidArgument)
        << opt.name() << ": the size may change only after reset()";

    EXPECT_EQ(theta, before) << opt.name() << ": theta must be untouched";
    EXPECT_EQ(opt.iterations(), 1) << opt.name();
    // The state is untouched too: the next good step is the one the reference takes.
    opt.step(theta, g);
    references[o]->step(reference_theta, g);
    EXPECT_EQ(theta, reference_theta) << opt.name();

    opt.reset();
    EXPECT_NO_THROW(opt.step(bigger, vec({1.0, 1.0, 1.0, 1.0})))
        << opt.name() << ": a new size after reset()";
  }
}

TEST(Optimizers, LearningRateChangesBetweenStepsKeepingTheState) {
  // Halving Adam's rate halves its next step exactly (the moments are untouched), and SGD's
  // step is the new rate times the gradient; invalid rates are refused and the old one kept.
  Adam a, b;
  Eigen::VectorXd ta = Eigen::VectorXd::Constant(2, 1.0), tb = ta;
  const Eigen::VectorXd g = Eigen::VectorXd::Constant(2, 0.5);
  a.step(ta, g);
  b.step(tb, g);
  b.set_learning_rate(b.learning_rate() / 2);
  const Eigen::VectorXd before_a = ta, before_b = tb;
  a.step(ta, g);
  b.step(tb, g);
  EXPECT_NEAR((before_b - tb).norm(), 0.5 * (before_a - ta).norm(), 1e-16);
  EXPECT_THROW(b.set_learning_rate(0.0), rwd::InvalidArgument);
  EXPECT_THROW(b.set_learning_rate(std::nan("")), rwd::InvalidArgument);
  EXPECT_EQ(b.learning_rate(), a.learning_rate() / 2);
  Sgd sgd;
  sgd.set_learning_rate(0.25);
  Eigen::VectorXd theta = Eigen::VectorXd::Zero(2);
  sgd.step(theta, g);
  EXPECT_EQ(theta, Eigen::VectorXd::Constant(2, -0.125));
  EXPECT_THROW(sgd.set_learning_rate(-1.0), rwd::InvalidArgument);
}

}  // namespace
