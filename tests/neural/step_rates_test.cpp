// nn::NeuralOde's step rates: samples whose true steps differ (windows on irregular times) run as
// one batch on a clock of unit steps, each step of each sample rescaled to its own size. Checked:
//   - each sample ends where it ends integrated alone on its own prescribed steps, and its
//     per-sample gradient is the one of that run, to rounding — with and without a time input
//     (which must then see the true stage times);
//   - a sample's bits do not depend on the batch it runs in (alone with its rates, or among
//     others), and every schedule gives store-all's bits;
//   - the gradient is the derivative of the loss (central differences);
//   - wrong shapes, a stepper that never says which step it is on, and the backsolve adjoint
//     (whose backward solve takes steps of its own) are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "rewind/adjoint/backsolve_adjoint.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/neural/mlp.hpp"
#include "rewind/neural/neural_ode.hpp"
#include "rewind/schedule/schedules.hpp"

namespace {

using rwd::Index;
namespace nn = rwd::nn;

constexpr Index kDim = 2, kSteps = 9, kBatch = 3;

// Sample b's true steps: irregular sizes from its own start time.
std::vector<double> sizes_of(Index b) {
  std::vector<double> h;
  for (Index n = 0; n < kSteps; ++n)
    h.push_back(0.04 + 0.03 * std::abs(std::sin(1.3 * static_cast<double>(n + 3 * b))));
  return h;
}
double start_of(Index b) {
  return 0.5 + 0.8 * static_cast<double>(b);
}

nn::Mlp network(bool time_input) {
  return nn::Mlp({kDim + (time_input ? 1 : 0), 6, kDim}, nn::Activation::tanh);
}
nn::NeuralOdeTime clock(bool time_input) {
  return {time_input, 1.0, 2.0};
}

Eigen::VectorXd start_state(Index b) {
  Eigen::VectorXd y(kDim);
  y << 0.9 - 0.3 * static_cast<double>(b), -0.4 + 0.2 * static_cast<double>(b);
  return y;
}

// The rates of samples `which` (rows), with starts summed as a prescribed stepper sums them.
void rates_of(const std::vector<Index>& which, Eigen::MatrixXd& sizes, Eigen::MatrixXd& starts) {
  const auto rows = static_cast<Eigen::Index>(which.size());
  sizes.resize(rows, kSteps);
  starts.resize(rows, kSteps);
  for (Eigen::Index i = 0; i < rows; ++i) {
    const std::vector<double> h = sizes_of(which[static_cast<std::size_t>(i)]);
    double t = start_of(which[static_cast<std::size_t>(i)]);
    for (Index n = 0; n < kSteps; ++n) {
      sizes(i, n) = h[static_cast<std::size_t>(n)];
      starts(i, n) = t;
      t += h[static_cast<std::size_t>(n)];
    }
  }
}

// J = ½|y_N|² over the samples `which`, run as one batch with step rates, per-sample copies.
rwd::GradientResult<Eigen::VectorXd> rated_run(bool time_input, const std::vector<Index>& which,
                                               const Eigen::VectorXd& theta,
                                               const rwd::Planner& schedule) {
  const auto b = static_cast<Index>(which.size());
  nn::NeuralOde model(network(time_input), b, nn::InputFeatures::identity,
                      nn::ParameterCopies::per_sample, nn::CopyCheck::every_call,
                      clock(time_input));
  Eigen::MatrixXd sizes, starts;
  rates_of(which, sizes, starts);
  model.set_step_rates(sizes, starts);
  Eigen::VectorXd y0(kDim * b);
  for (Index i = 0; i < b; ++i) y0.segment(i * kDim, kDim) = start_state(which[i]);
  rwd::ExplicitRungeKutta stepper(model, rwd::ButcherTableau::rk4(),
                                  rwd::StepControl::fixed(0.0, 1.0, kSteps));
  rwd::CheckpointedAdjoint driver(stepper,
                                  rwd::Objective<rwd::EigenBackend>::terminal_squared_norm());
  return driver.run(y0, theta.replicate(b, 1), schedule);
}

// The same sample alone, on its own true steps (prescribed), no rates.
rwd::GradientResult<Eigen::VectorXd> plain_run(bool time_input, Index b,
                                               const Eigen::VectorXd& theta) {
  nn::NeuralOde model(network(time_input), 1, nn::InputFeatures::identity,
                      nn::ParameterCopies::shared, nn::CopyCheck::every_call, clock(time_input));
  rwd::ExplicitRungeKutta stepper(model, rwd::ButcherTableau::rk4(),
                                  rwd::StepControl::prescribed(start_of(b), sizes_of(b)));
  rwd::StoreAllAdjoint driver(stepper, rwd::Objective<rwd::EigenBackend>::terminal_squared_norm());
  return driver.run(start_state(b), theta);
}

TEST(StepRates, EachSampleRunsOnItsOwnStepsWithAndWithoutATimeInput) {
  for (bool time_input : {false, true}) {
    SCOPED_TRACE(time_input ? "time input" : "autonomous");
    const Eigen::VectorXd theta = network(time_input).initial_parameters(4);
    const Index p = theta.size();
    const auto rated = rated_run(time_input, {0, 1, 2}, theta, rwd::store_all_schedule());
    double loss = 0.0;
    for (Index b = 0; b < kBatch; ++b) {
      const auto plain = plain_run(time_input, b, theta);
      loss += plain.loss;
      const Eigen::VectorXd grad = rated.grad_theta.segment(b * p, p);
      EXPECT_LT((grad - plain.grad_theta).norm(), 1e-13 * plain.grad_theta.norm())
          << "sample " << b;
      EXPECT_LT((rated.grad_y0.segment(b * kDim, kDim) - plain.grad_y0).norm(),
                1e-13 * plain.grad_y0.norm())
          << "sample " << b;
    }
    EXPECT_NEAR(rated.loss, loss, 1e-14 * loss);
  }
}

TEST(StepRates, ASamplesBitsDoNotDependOnItsBatchOrTheSchedule) {
  for (bool time_input : {false, true}) {
    SCOPED_TRACE(time_input ? "time input" : "autonomous");
    const Eigen::VectorXd theta = network(time_input).initial_parameters(4);
    const Index p = theta.size();
    const auto all = rated_run(time_input, {0, 1, 2}, theta, rwd::store_all_schedule());
    for (Index b = 0; b < kBatch; ++b) {
      const auto alone = rated_run(time_input, {b}, theta, rwd::store_all_schedule());
      EXPECT_EQ(0, std::memcmp(alone.grad_theta.data(), all.grad_theta.data() + b * p,
                               sizeof(double) * static_cast<std::size_t>(p)))
          << "sample " << b;
    }
    // The middle sample first and last: where it sits does not matter either.
    const auto reordered = rated_run(time_input, {2, 1, 0}, theta, rwd::store_all_schedule());
    EXPECT_EQ(0, std::memcmp(reordered.grad_theta.data() + p, all.grad_theta.data() + p,
                             sizeof(double) * static_cast<std::size_t>(p)));
    for (const rwd::Planner& schedule : {rwd::revolve_schedule(1), rwd::revolve_schedule(3)}) {
      const auto r = rated_run(time_input, {0, 1, 2}, theta, schedule);
      EXPECT_EQ(0, std::memcmp(&r.loss, &all.loss, sizeof(double)));
      EXPECT_EQ(0, std::memcmp(r.grad_theta.data(), all.grad_theta.data(),
                               sizeof(double) * static_cast<std::size_t>(all.grad_theta.size())));
    }
  }
}

TEST(StepRates, TheGradientIsTheDerivativeOfTheLoss) {
  const Eigen::VectorXd theta = network(true).initial_parameters(4);
  const auto r = rated_run(true, {0, 1, 2}, theta, rwd::store_all_schedule());
  const Index p = theta.size();
  Eigen::VectorXd summed = Eigen::VectorXd::Zero(p);
  for (Index b = 0; b < kBatch; ++b) summed += r.grad_theta.segment(b * p, p);
  const Eigen::VectorXd direction = Eigen::VectorXd::LinSpaced(p, 1.0, -0.5);
  const double eps = 1e-6;
  const double plus =
      rated_run(true, {0, 1, 2}, theta + eps * direction, rwd::store_all_schedule()).loss;
  const double minus =
      rated_run(true, {0, 1, 2}, theta - eps * direction, rwd::store_all_schedule()).loss;
  const double fd = (plus - minus) / (2 * eps);
  EXPECT_NEAR(summed.dot(direction), fd, 1e-7 * (1.0 + std::abs(fd)));
}

TEST(StepRates, WrongShapesAndAStepperThatNeverSaysTheStepAreRefused) {
  nn::NeuralOde model(network(true), 2, nn::InputFeatures::identity, nn::ParameterCopies::shared,
                      nn::CopyCheck::every_call, clock(true));
  Eigen::MatrixXd sizes, starts;
  rates_of({0, 1}, sizes, starts);
  EXPECT_THROW(model.set_step_rates(sizes.topRows(1), starts.topRows(1)), rwd::InvalidArgument);
  EXPECT_THROW(model.set_step_rates(sizes, starts.leftCols(3)), rwd::InvalidArgument);
  Eigen::MatrixXd negative = sizes;
  negative(1, 4) = -0.1;
  EXPECT_THROW(model.set_step_rates(negative, starts), rwd::InvalidArgument);
  negative(1, 4) = std::nan("");
  EXPECT_THROW(model.set_step_rates(negative, starts), rwd::InvalidArgument);

  model.set_step_rates(sizes, starts);
  const Eigen::VectorXd theta = network(true).initial_parameters(4);
  Eigen::VectorXd y = Eigen::VectorXd::Constant(2 * kDim, 0.3), f(2 * kDim);
  try {
    model.rhs(0.5, y, theta, f);  // no step entered yet
    ADD_FAILURE() << "rhs ran without knowing its step";
  } catch (const rwd::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("begin_step"), std::string::npos) << e.what();
  }
  model.begin_step(kSteps);  // past the table
  EXPECT_THROW(model.rhs(0.5, y, theta, f), rwd::InvalidArgument);
  model.begin_step(kSteps - 1);
  EXPECT_NO_THROW(model.rhs(kSteps - 1 + 0.5, y, theta, f));
  model.clear_step_rates();
  EXPECT_FALSE(model.has_step_rates());
  EXPECT_NO_THROW(model.rhs(0.5, y, theta, f));
}

TEST(StepRates, TheBacksolveAdjointRefusesAFieldWithRates) {
  nn::NeuralOde model(network(false), 2, nn::InputFeatures::identity);
  Eigen::MatrixXd sizes, starts;
  rates_of({0, 1}, sizes, starts);
  model.set_step_rates(sizes);
  rwd::ExplicitRungeKutta stepper(model, rwd::ButcherTableau::rk4(),
                                  rwd::StepControl::fixed(0.0, 1.0, kSteps));
  rwd::BacksolveAdjoint driver(stepper, rwd::Objective<rwd::EigenBackend>::terminal_squared_norm());
  const Eigen::VectorXd theta = network(false).initial_parameters(4);
  const Eigen::VectorXd y0 = Eigen::VectorXd::Constant(2 * kDim, 0.3);
  EXPECT_THROW(driver.run(y0, theta), rwd::InvalidArgument);
  model.clear_step_rates();  // one clock again: the continuous adjoint applies
  EXPECT_NO_THROW(driver.run(y0, theta));
}

}  // namespace
