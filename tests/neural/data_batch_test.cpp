// rewind train --data's windows integrated together: with fixed steps, the windows on one step
// grid (uniform trajectories of one spacing) run as one batched state
// with a parameter copy each. A minibatch mixing two spacings and an irregular trajectory gives
// the same loss and gradient bits split over 1, 2 and 3 simulated processes, revolve gives
// store-all's bits, and the gradient is the derivative of the loss and agrees with integrating
// every window by itself to rounding, with and without a time input (each window then sees its
// own start time plus the batch's shared clock).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/neural/adam.hpp"
#include "rewind/neural/data_trainer.hpp"
#include "rewind/neural/model_file.hpp"
#include "support/thread_group_exchange.hpp"

namespace {

using rwd::Index;
namespace nn = rwd::nn;
namespace training = rwd::training;

// A rotation sampled at `points` times from t0, `spacing` apart (written as text would be:
// k·spacing rounded), or on an irregular grid.
training::TimeSeries rotation(double t0, double spacing, Index points, bool irregular = false) {
  training::TimeSeries s;
  double t = t0;
  s.values.resize(2, points);
  for (Index k = 0; k < points; ++k) {
    s.times.push_back(t);
    s.values.col(k) << std::cos(1.5 * t) + 0.1 * k, std::sin(1.5 * t);
    t = t0 + spacing * static_cast<double>(k + 1) + (irregular ? 0.3 * spacing * (k % 3) : 0.0);
  }
  return s;
}

std::vector<training::TimeSeries> mixed_data() {
  return {rotation(0.0, 0.1, 30), rotation(2.0, 0.1, 25), rotation(0.0, 0.15, 20),
          rotation(1.0, 0.1, 18, /*irregular=*/true)};
}

nn::NeuralModel autonomous_model() {
  nn::NeuralModel model;
  model.hidden = {8};
  model.observed = 2;
  model.augment = 1;
  return model;
}

training::DataTrainerOptions options_of(rwd::Planner schedule = rwd::store_all_schedule()) {
  training::DataTrainerOptions o;
  o.window = 4;
  o.batch = 9;
  o.substeps = 2;
  o.augment = 1;
  o.seed = 5;
  o.schedule = std::move(schedule);
  return o;
}

struct History {
  std::vector<double> losses, norms;
};

History train_split(int ranks, int iterations) {
  const nn::NeuralModel model = autonomous_model();
  std::vector<History> histories(static_cast<std::size_t>(ranks));
  rwd::testing::ThreadGroup group(ranks);
  group.run([&](int rank, const training::BatchExchange& exchange) {
    training::DataTrainer trainer(model.field(), mixed_data(), {30, 25, 20, 18}, options_of(),
                                  exchange);
    Eigen::VectorXd theta = model.network().initial_parameters(3);
    training::AdamOptions adam_options;
    adam_options.learning_rate = 1e-2;
    training::Adam adam(adam_options);
    for (int i = 0; i < iterations; ++i) {
      const auto record = trainer.step(theta, adam);
      histories[static_cast<std::size_t>(rank)].losses.push_back(record.loss);
      histories[static_cast<std::size_t>(rank)].norms.push_back(record.gradient_norm);
    }
  });
  for (int r = 1; r < ranks; ++r) {
    EXPECT_EQ(0, std::memcmp(histories[0].losses.data(), histories[r].losses.data(),
                             sizeof(double) * histories[0].losses.size()));
  }
  return histories[0];
}

TEST(DataBatch, TheSameBitsHoweverTheWindowsAreSplit) {
  const History one = train_split(1, 6);
  for (int ranks : {2, 3}) {
    SCOPED_TRACE(std::to_string(ranks) + " processes");
    const History split = train_split(ranks, 6);
    ASSERT_EQ(split.losses.size(), one.losses.size());
    for (std::size_t i = 0; i < one.losses.size(); ++i) {
      EXPECT_EQ(0, std::memcmp(&one.losses[i], &split.losses[i], sizeof(double)))
          << "iteration " << i + 1;
      EXPECT_EQ(0, std::memcmp(&one.norms[i], &split.norms[i], sizeof(double)))
          << "iteration " << i + 1;
    }
  }
  EXPECT_LT(one.losses.back(), one.losses.front());
}

// Windows of every kind in one minibatch: both uniform spacings and the irregular trajectory
// (window numbers run through the trajectories in order: 26, 21, 16 and 14 starts).
const std::vector<Index> kMixedStarts = {0, 30, 2, 60, 50, 70, 27, 63, 5};

TEST(DataBatch, RevolveGivesStoreAllsBitsAndTheGradientIsTheLossDerivative) {
  const nn::NeuralModel model = autonomous_model();
  training::DataTrainer store_all(model.field(), mixed_data(), {30, 25, 20, 18}, options_of());
  training::DataTrainer revolve(model.field(), mixed_data(), {30, 25, 20, 18},
                                options_of(rwd::revolve_schedule(2)));
  ASSERT_EQ(store_all.window_count(), 26 + 21 + 16 + 14);
  const Eigen::VectorXd theta = model.network().initial_parameters(3);
  const auto& starts = kMixedStarts;
  const auto a = store_all.gradient(theta, starts);
  const auto b = revolve.gradient(theta, starts);
  EXPECT_EQ(0, std::memcmp(&a.loss, &b.loss, sizeof(double)));
  EXPECT_EQ(0, std::memcmp(a.grad_theta.data(), b.grad_theta.data(),
                           sizeof(double) * static_cast<std::size_t>(a.grad_theta.size())));
  EXPECT_EQ(store_all.last_steps(), 9 * 4 * 2);

  const Eigen::VectorXd direction = Eigen::VectorXd::LinSpaced(theta.size(), 1.0, -1.0);
  const double h = 1e-6;
  const double fd = (store_all.gradient(theta + h * direction, starts).loss -
                     store_all.gradient(theta - h * direction, starts).loss) /
                    (2 * h);
  EXPECT_NEAR(fd, a.grad_theta.dot(direction), 1e-7 * (1 + std::abs(fd)));
}

// The minibatch's loss and gradient computed the plain way: every window by itself, the field
// (nn::NeuralField, batch 1) stepped over the window's exact observation intervals, the sums in
// window order.
rwd::GradientResult<Eigen::VectorXd> window_by_window(const nn::NeuralField& field,
                                                      const std::vector<training::TimeSeries>& data,
                                                      const training::DataTrainerOptions& options,
                                                      const std::vector<Index>& numbers,
                                                      const Eigen::VectorXd& theta) {
  std::vector<std::pair<std::size_t, Index>> windows;  // (trajectory, start), numbered in order
  for (std::size_t j = 0; j < data.size(); ++j)
    for (Index s = 0; s + options.window < data[j].points(); ++s) windows.emplace_back(j, s);
  rwd::GradientResult<Eigen::VectorXd> total;
  total.loss = 0.0;
  total.grad_theta = Eigen::VectorXd::Zero(theta.size());
  const Index d = 2, window = options.window;
  const double scale = 1.0 / static_cast<double>(options.batch * window * d);
  for (Index n : numbers) {
    const auto [j, start] = windows[static_cast<std::size_t>(n)];
    const training::TimeSeries& series = data[j];
    rwd::ExplicitRungeKutta stepper(
        field, options.tableau,
        training::window_step_control(series.times, start, window, options.substeps, std::nullopt));
    std::vector<Index> steps;
    for (Index k = 1; k <= window; ++k) steps.push_back(k * options.substeps);
    auto term = [&, start = start](Index step, double, const Eigen::VectorXd& y,
                                   Eigen::VectorXd& grad) {
      const auto target = series.values.col(start + step / options.substeps);
      grad.setZero(y.size());
      double squares = 0.0;
      for (Index i = 0; i < d; ++i) {
        squares += (y[i] - target[i]) * (y[i] - target[i]);
        grad[i] = 2.0 * scale * (y[i] - target[i]);
      }
      return scale * squares;
    };
    rwd::StoreAllAdjoint driver(
        stepper, rwd::Objective<rwd::EigenBackend>(rwd::Objective<rwd::EigenBackend>::TerminalFn{},
                                                   steps, term));
    Eigen::VectorXd y0 = Eigen::VectorXd::Zero(field.dimension());
    y0.head(d) = series.values.col(start);
    const auto r = driver.run(y0, theta);
    total.loss += r.loss;
    total.grad_theta += r.grad_theta;
  }
  return total;
}

TEST(DataBatch, AgreesWithWindowByWindowIntegrationWithAndWithoutATimeInput) {
  for (bool time_input : {false, true}) {
    SCOPED_TRACE(time_input ? "time input" : "autonomous");
    nn::NeuralModel model = autonomous_model();
    model.time_input = time_input;
    model.time_shift = 1.0;
    model.time_scale = 2.0;
    const Eigen::VectorXd theta = model.network().initial_parameters(3);
    training::DataTrainer batched(model.field(), mixed_data(), {30, 25, 20, 18}, options_of());
    const auto a = batched.gradient(theta, kMixedStarts);
    const auto b = window_by_window(model.field(), mixed_data(), options_of(), kMixedStarts, theta);
    // Uniform trajectories are stepped with their mean spacing in the batch, with the exact
    // intervals here: the same to rounding, not to the bit.
    EXPECT_NEAR(a.loss, b.loss, 1e-12 * b.loss);
    EXPECT_LT((a.grad_theta - b.grad_theta).norm(), 1e-11 * b.grad_theta.norm());
  }
}

}  // namespace
