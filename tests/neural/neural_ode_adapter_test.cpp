// The neural ODE adapter: its VJPs against finite differences, and gradients through it that
// hold the project's contracts — every schedule gives the same bits, the gradient matches
// finite differences of the discrete loss.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/derivative_checker.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/neural/mlp.hpp"
#include "rewind/neural/neural_field.hpp"
#include "rewind/neural/neural_ode.hpp"
#include "rewind/problems/cubic_spiral.hpp"
#include "rewind/schedule/schedules.hpp"

namespace {

using rwd::Index;
using rwd::nn::Activation;
using rwd::nn::InputFeatures;
using rwd::nn::Mlp;
using rwd::nn::NeuralOde;

Eigen::VectorXd batch_state(Index d, Index batch, double scale) {
  Eigen::VectorXd y(d * batch);
  for (Index i = 0; i < y.size(); ++i) y[i] = scale * std::sin(0.7 * static_cast<double>(i) + 0.3);
  return y;
}

TEST(NeuralOde, VjpMatchesFiniteDifferencesForEveryActivationAndFeature) {
  for (Activation activation :
       {Activation::tanh, Activation::relu, Activation::softplus, Activation::gelu})
    for (InputFeatures features : {InputFeatures::identity, InputFeatures::cube}) {
      const Mlp mlp({3, 7, 3}, activation);
      const NeuralOde model(mlp, 4, features);
      const Eigen::VectorXd theta = mlp.initial_parameters(11);
      const Eigen::VectorXd y = batch_state(3, 4, 0.9);
      // Entries ~1e-7 of f ~ 1 lose digits to the differences' round-off: a floor of 1e-6.
      rwd::DerivativeCheckOptions options;
      options.absolute_floor = 1e-6;
      const auto report = rwd::check_derivatives(model, 0.0, y, theta, options);
      EXPECT_TRUE(report.ok) << rwd::nn::to_string(activation) << " / "
                             << rwd::nn::to_string(features) << "\n"
                             << report.report();
    }
}

TEST(NeuralOde, BatchIsSamplesSideBySide) {
  // The batched right-hand side equals the single-sample one applied to each sample.
  const Mlp mlp({2, 5, 2}, Activation::tanh);
  const Eigen::VectorXd theta = mlp.initial_parameters(3);
  const NeuralOde batched(mlp, 3, InputFeatures::cube), single(mlp, 1, InputFeatures::cube);
  const Eigen::VectorXd y = batch_state(2, 3, 1.3);
  Eigen::VectorXd f(6), g(2);
  batched.rhs(0.0, y, theta, f);
  for (Index b = 0; b < 3; ++b) {
    single.rhs(0.0, y.segment(2 * b, 2), theta, g);
    EXPECT_EQ(f.segment(2 * b, 2), g) << "sample " << b;
  }
}

TEST(NeuralOde, TimeInputGivesEverySampleItsOwnClock) {
  // Sample b at local time t with offset o_b is the one-sample field at t + o_b: rhs to the bit,
  // and the per-sample VJPs (state and parameters) too.
  const Mlp mlp({3 + 1, 6, 3}, Activation::tanh);
  const rwd::nn::NeuralOdeTime time{true, 0.5, 2.0};
  NeuralOde batched(mlp, 3, InputFeatures::cube, rwd::nn::ParameterCopies::per_sample,
                    rwd::nn::CopyCheck::every_call, time);
  const Eigen::Vector3d offsets(0.0, 1.25, -3.5);
  batched.set_time_offsets(offsets);
  const Eigen::VectorXd theta = mlp.initial_parameters(5);
  const Eigen::VectorXd copies = theta.replicate(3, 1);
  const Eigen::VectorXd y = batch_state(3, 3, 0.8), v = batch_state(3, 3, -1.1);
  const double t = 0.7;
  Eigen::VectorXd f(9), gy(9), gtheta(copies.size());
  batched.rhs(t, y, copies, f);
  batched.vjp(t, y, copies, v, gy, gtheta);
  for (Index b = 0; b < 3; ++b) {
    const rwd::nn::NeuralField one(mlp, InputFeatures::cube, true, 1, time.shift, time.scale);
    const Eigen::VectorXd yb = y.segment(3 * b, 3), vb = v.segment(3 * b, 3);
    Eigen::VectorXd fb(3), gyb(3), gtb(theta.size());
    one.rhs(t + offsets[b], yb, theta, fb);
    one.vjp(t + offsets[b], yb, theta, vb, gyb, gtb);
    EXPECT_EQ(fb, f.segment(3 * b, 3)) << "sample " << b;
    EXPECT_EQ(gyb, gy.segment(3 * b, 3)) << "sample " << b;
    EXPECT_LT((gtb - gtheta.segment(b * theta.size(), theta.size())).norm(), 1e-14 * gtb.norm())
        << "sample " << b;
  }
  // The clock matters.
  batched.set_time_offsets(Eigen::Vector3d::Zero());
  Eigen::VectorXd f0(9);
  batched.rhs(t, y, copies, f0);
  EXPECT_EQ(f0.head(3), f.head(3));
  EXPECT_GT((f0.tail(6) - f.tail(6)).norm(), 1e-6);
  // Misuse.
  EXPECT_THROW(batched.set_time_offsets(Eigen::Vector2d::Zero()), rwd::InvalidArgument);
  EXPECT_THROW(NeuralOde(mlp, 2), rwd::InvalidArgument);  // 4 inputs need the time input
  NeuralOde autonomous(Mlp({3, 4, 3}, Activation::tanh), 2);
  EXPECT_THROW(autonomous.set_time_offsets(Eigen::Vector2d::Zero()), rwd::InvalidArgument);
}

TEST(NeuralOde, RefusesWrongSizesAndNonSquareNetworks) {
  const Mlp mlp({2, 5, 2}, Activation::tanh);
  const NeuralOde model(mlp, 3);
  const Eigen::VectorXd theta = mlp.initial_parameters(1);
  Eigen::VectorXd y(5), f(6);
  y.setZero();
  EXPECT_THROW(model.rhs(0.0, y, theta, f), rwd::InvalidArgument);
  Eigen::VectorXd y6 = Eigen::VectorXd::Zero(6), short_theta(3);
  EXPECT_THROW(model.rhs(0.0, y6, short_theta, f), rwd::InvalidArgument);
  EXPECT_THROW(NeuralOde(Mlp({2, 5, 3}, Activation::tanh), 1), rwd::InvalidArgument);
  EXPECT_THROW(NeuralOde(mlp, 0), rwd::InvalidArgument);
  EXPECT_THROW(rwd::nn::parse_input_features("square"), rwd::InvalidArgument);
}

// J = ½|y_N − d|² for a batch of spiral-like initial states; gradient w.r.t. θ.
struct SpiralBatch {
  Mlp mlp{{2, 16, 2}, Activation::tanh};
  NeuralOde model{mlp, 5, InputFeatures::cube};
  Eigen::VectorXd theta = mlp.initial_parameters(7);
  Eigen::VectorXd y0 = batch_state(2, 5, 1.5);
  rwd::Objective<rwd::EigenBackend> objective =
      rwd::Objective<rwd::EigenBackend>::terminal_squared_norm();
};

TEST(NeuralOde, EveryScheduleGivesTheSameGradientBitForBit) {
  SpiralBatch s;
  rwd::ExplicitRungeKutta stepper(s.model, rwd::ButcherTableau::rk4(),
                                  rwd::StepControl::fixed(0.0, 0.02, 60));
  rwd::StoreAllAdjoint reference_driver(stepper, s.objective);
  const auto reference = reference_driver.run(s.y0, s.theta);
  for (const auto& schedule : {rwd::revolve_schedule(2), rwd::revolve_schedule(5),
                               rwd::uniform_schedule(7), rwd::store_all_schedule()}) {
    rwd::CheckpointedAdjoint driver(stepper, s.objective);
    const auto result = driver.run(s.y0, s.theta, schedule);
    EXPECT_EQ(result.loss, reference.loss) << result.summary.schedule;
    EXPECT_EQ(result.grad_theta, reference.grad_theta) << result.summary.schedule;
    EXPECT_EQ(result.grad_y0, reference.grad_y0) << result.summary.schedule;
    EXPECT_TRUE(result.drift.bitwise_identical());
  }
}

TEST(NeuralOde, GradientMatchesFiniteDifferencesOfTheDiscreteLoss) {
  SpiralBatch s;
  rwd::ExplicitRungeKutta stepper(s.model, rwd::ButcherTableau::rk4(),
                                  rwd::StepControl::fixed(0.0, 0.02, 40));
  rwd::StoreAllAdjoint driver(stepper, s.objective);
  const auto result = driver.run(s.y0, s.theta);
  auto loss_at = [&](const Eigen::VectorXd& theta) { return driver.run(s.y0, theta).loss; };
  // A random direction and three parameter coordinates, central differences.
  Eigen::VectorXd direction(s.theta.size());
  for (Index i = 0; i < direction.size(); ++i)
    direction[i] = std::cos(1.3 * static_cast<double>(i));
  const double h = 1e-6;
  const double fd = (loss_at(s.theta + h * direction) - loss_at(s.theta - h * direction)) / (2 * h);
  const double adjoint = result.grad_theta.dot(direction);
  EXPECT_NEAR(adjoint, fd, 1e-6 * std::abs(fd) + 1e-9);
  for (Index j : {Index{0}, s.theta.size() / 2, s.theta.size() - 1}) {
    Eigen::VectorXd e = Eigen::VectorXd::Zero(s.theta.size());
    e[j] = 1.0;
    const double fdj = (loss_at(s.theta + h * e) - loss_at(s.theta - h * e)) / (2 * h);
    EXPECT_NEAR(result.grad_theta[j], fdj, 1e-6 * std::abs(fdj) + 1e-8) << "theta[" << j << "]";
  }
}

TEST(NeuralOde, ExactNetworkReproducesTheTrueSpiral) {
  // A "network" with an identity activation and the true A as its only layer is exactly the
  // spiral (y³)A: both problems give the same right-hand side, so the adapter's layout (samples
  // as columns, W = Aᵀ) is the one the data generator uses.
  const Mlp linear({2, 2}, Activation::identity);
  const NeuralOde model(linear, 1, InputFeatures::cube);
  rwd::CubicSpiral spiral;
  const Eigen::VectorXd A = spiral.default_parameters();  // row-major a00 a01 a10 a11
  Eigen::VectorXd theta(linear.parameter_size());         // W (2×2, column-major) then b
  // f = W φ with W = Aᵀ: W(0,0) = a00, W(1,0) = a01, W(0,1) = a10, W(1,1) = a11.
  theta << A[0], A[1], A[2], A[3], 0.0, 0.0;
  Eigen::VectorXd y(2), f(2), g(2);
  y << 1.7, -0.4;
  model.rhs(0.0, y, theta, f);
  spiral.rhs(0.0, y, A, g);
  EXPECT_NEAR((f - g).norm(), 0.0, 1e-15);
}

}  // namespace
