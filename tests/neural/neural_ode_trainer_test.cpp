// Neural ODE training end to end: the window loss and its gradient, reproducibility from seeds,
// schedule independence through whole training runs, and that training actually learns the
// spiral.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/neural/adam.hpp"
#include "rewind/neural/neural_ode_trainer.hpp"
#include "rewind/neural/sampled_solution.hpp"
#include "rewind/neural/window_fit.hpp"
#include "rewind/problems/cubic_spiral.hpp"

namespace {

using rwd::Index;
using rwd::training::NeuralOdeTrainer;
using rwd::training::TimeSeries;
using rwd::training::TrainerOptions;

// The spiral at `points` samples on [0, t_final] (RK4, 20 steps per interval).
TimeSeries spiral_series(Index points = 400, double t_final = 10.0) {
  const rwd::CubicSpiral spiral;
  return rwd::training::sample_solution(spiral, spiral.default_initial_state(),
                                        spiral.default_parameters(), rwd::ButcherTableau::rk4(),
                                        t_final, points, 20, {"y0", "y1"});
}

const rwd::nn::Mlp kMlp({2, 16, 2}, rwd::nn::Activation::tanh);

TrainerOptions small_options() {
  TrainerOptions o;
  o.window = 8;
  o.batch = 6;
  o.seed = 5;
  return o;
}

TEST(WindowFit, LossIsTheMeanSquaredErrorOfThePredictedWindows) {
  // With the true dynamics as the model, the window loss is the integrator's error only; with a
  // wrong model it is the mean over windows, points and components of the squared misfit,
  // computed here by hand from predictions.
  const TimeSeries data = spiral_series();
  NeuralOdeTrainer trainer(kMlp, rwd::nn::InputFeatures::cube, data, small_options());
  const Eigen::VectorXd theta = kMlp.initial_parameters(2);
  const std::vector<Index> starts = {0, 17, 100, 250, 391, 3};
  const auto result = trainer.gradient(theta, starts);
  double sum = 0.0;
  for (Index s : starts) {
    const Eigen::MatrixXd path = trainer.predict_from(theta, data.values.col(s), 9);
    sum += (path.rightCols(8) - data.values.middleCols(s + 1, 8)).squaredNorm();
  }
  EXPECT_NEAR(result.loss, sum / (6 * 8 * 2), 1e-14 * sum);
}

TEST(WindowFit, RefusesWindowsPastTheEndAndNonUniformData) {
  const TimeSeries data = spiral_series();
  EXPECT_THROW(rwd::training::window_misfit(data, {395}, 8, 1), rwd::InvalidArgument);
  EXPECT_THROW(rwd::training::window_misfit(data, {-1}, 8, 1), rwd::InvalidArgument);
  TimeSeries uneven = data;
  uneven.times[10] += 0.01;
  EXPECT_THROW(rwd::training::uniform_spacing(uneven), rwd::InvalidArgument);
  EXPECT_THROW(NeuralOdeTrainer(kMlp, rwd::nn::InputFeatures::cube, uneven, small_options()),
               rwd::InvalidArgument);
  TimeSeries three = data;
  three.values.conservativeResize(3, Eigen::NoChange);
  EXPECT_THROW(NeuralOdeTrainer(kMlp, rwd::nn::InputFeatures::cube, three, small_options()),
               rwd::InvalidArgument);
}

TEST(WindowFit, GradientMatchesFiniteDifferences) {
  const TimeSeries data = spiral_series();
  TrainerOptions options = small_options();
  options.substeps = 2;
  NeuralOdeTrainer trainer(kMlp, rwd::nn::InputFeatures::cube, data, options);
  const Eigen::VectorXd theta = kMlp.initial_parameters(4);
  const std::vector<Index> starts = {5, 50, 150, 200, 300, 380};
  const auto result = trainer.gradient(theta, starts);
  Eigen::VectorXd direction(theta.size());
  for (Index i = 0; i < direction.size(); ++i)
    direction[i] = std::sin(0.37 * static_cast<double>(i) + 1.0);
  const double h = 1e-6;
  const double fd = (trainer.gradient(theta + h * direction, starts).loss -
                     trainer.gradient(theta - h * direction, starts).loss) /
                    (2 * h);
  EXPECT_NEAR(result.grad_theta.dot(direction), fd, 1e-6 * std::abs(fd));
}

TEST(NeuralOdeTrainer, SameSeedsSameBitsWhateverTheSchedule) {
  // Training is a chain of gradients; schedule independence makes whole runs bit-identical.
  const TimeSeries data = spiral_series();
  Eigen::VectorXd reference;
  for (const auto& schedule :
       {rwd::store_all_schedule(), rwd::revolve_schedule(2), rwd::revolve_schedule(3)}) {
    TrainerOptions options = small_options();
    options.schedule = schedule;
    NeuralOdeTrainer trainer(kMlp, rwd::nn::InputFeatures::cube, data, options);
    Eigen::VectorXd theta = kMlp.initial_parameters(9);
    rwd::training::Adam adam(rwd::training::AdamOptions{});
    for (int i = 0; i < 15; ++i) trainer.step(theta, adam);
    if (reference.size() == 0)
      reference = theta;
    else
      EXPECT_EQ(theta, reference);
  }
}

TEST(NeuralOdeTrainer, LearnsTheSpiral) {
  const TimeSeries data = spiral_series();
  TrainerOptions options = small_options();
  options.batch = 16;
  NeuralOdeTrainer trainer(kMlp, rwd::nn::InputFeatures::cube, data, options);
  Eigen::VectorXd theta = kMlp.initial_parameters(1);
  rwd::training::AdamOptions adam_options;
  adam_options.learning_rate = 1e-2;
  rwd::training::Adam adam(adam_options);
  const double before = trainer.trajectory_error(theta);
  for (int i = 0; i < 300; ++i) trainer.step(theta, adam);
  const double after = trainer.trajectory_error(theta);
  EXPECT_LT(after, 0.1 * before) << "trajectory MSE " << before << " -> " << after;
  EXPECT_EQ(trainer.iterations(), 300);
}

}  // namespace
