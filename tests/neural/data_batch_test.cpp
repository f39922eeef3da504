// rewind train --data's windows integrated together: for an autonomous field with fixed steps,
// the windows on one step grid (uniform trajectories of one spacing) run as one batched state
// with a parameter copy each. A minibatch mixing two spacings and an irregular trajectory gives
// the same loss and gradient bits split over 1, 2 and 3 simulated processes, revolve gives
// store-all's bits, and the gradient is the derivative of the loss and agrees with the field's
// one-window-at-a-time integration (the path of time-dependent fields) to rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

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

TEST(DataBatch, AgreesWithTheOneWindowAtATimeIntegration) {
  // A time input the network ignores (its weights on t set to zero) sends the same field down
  // the one-window-at-a-time path; uniform grids there use the exact intervals rather than the
  // mean spacing, so the two agree to rounding, not to the bit.
  nn::NeuralModel timed = autonomous_model();
  timed.time_input = true;
  const nn::NeuralModel plain = autonomous_model();
  const Eigen::VectorXd theta = plain.network().initial_parameters(3);
  // The timed network's first layer has one more input column (t, last): copy θ around it.
  const nn::Mlp timed_net = timed.network();
  Eigen::VectorXd timed_theta = Eigen::VectorXd::Zero(timed_net.parameter_size());
  // W1 is hidden × inputs, column-major: the state's s columns, then (timed) t's, all zero.
  const Index s = 3, hidden = 8;
  timed_theta.head(s * hidden) = theta.head(s * hidden);
  timed_theta.tail(theta.size() - s * hidden) = theta.tail(theta.size() - s * hidden);

  training::DataTrainer batched(plain.field(), mixed_data(), {30, 25, 20, 18}, options_of());
  training::DataTrainer one_by_one(timed.field(), mixed_data(), {30, 25, 20, 18}, options_of());
  const auto& starts = kMixedStarts;
  const auto a = batched.gradient(theta, starts);
  const auto b = one_by_one.gradient(timed_theta, starts);
  EXPECT_NEAR(a.loss, b.loss, 1e-12 * b.loss);
  Eigen::VectorXd b_plain(theta.size());
  b_plain.head(s * hidden) = b.grad_theta.head(s * hidden);
  b_plain.tail(theta.size() - s * hidden) = b.grad_theta.tail(theta.size() - s * hidden);
  EXPECT_LT((a.grad_theta - b_plain).norm(), 1e-11 * b_plain.norm());
}

}  // namespace
