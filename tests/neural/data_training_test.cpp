// Training on arbitrary data: the neural field's VJP, the trainer's exact gradient on an irregular
// grid with augmentation and a time input, optimizer state restored bit for bit, trajectory sets,
// and model files (complete and old-style).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/neural/adam.hpp"
#include "rewind/neural/data_trainer.hpp"
#include "rewind/neural/model_file.hpp"
#include "rewind/neural/neural_field.hpp"
#include "rewind/neural/parameter_file.hpp"
#include "rewind/neural/sgd.hpp"
#include "rewind/neural/trajectory_set.hpp"

namespace {

using rwd::Index;
namespace nn = rwd::nn;
namespace training = rwd::training;

std::filesystem::path temporary(const std::string& name) {
  return std::filesystem::path(testing::TempDir()) / ("data_training_" + name);
}

// <v, (∂f/∂y) u> by central differences against <(∂f/∂y)ᵀ v, u>, and the same for θ.
TEST(NeuralField, VjpMatchesFiniteDifferencesWithTimeInputAndCubeFeatures) {
  const nn::Mlp mlp({3 + 1, 6, 3}, nn::Activation::tanh);
  const nn::NeuralField field(mlp, nn::InputFeatures::cube, true, /*batch=*/2, 1.5, 2.0);
  const Eigen::VectorXd theta = mlp.initial_parameters(3);
  const Eigen::VectorXd y = Eigen::VectorXd::LinSpaced(6, -0.7, 0.9);
  const Eigen::VectorXd v = Eigen::VectorXd::LinSpaced(6, 0.3, -1.1);
  const Eigen::VectorXd u = Eigen::VectorXd::LinSpaced(6, 1.0, -0.4);
  const Eigen::VectorXd w = Eigen::VectorXd::LinSpaced(theta.size(), -0.5, 0.5);
  const double t = 0.8, h = 1e-6;
  Eigen::VectorXd gy(6), gtheta(theta.size()), fp(6), fm(6);
  field.vjp(t, y, theta, v, gy, gtheta);
  field.rhs(t, y + h * u, theta, fp);
  field.rhs(t, y - h * u, theta, fm);
  EXPECT_NEAR(v.dot(fp - fm) / (2 * h), gy.dot(u), 1e-8);
  field.rhs(t, y, theta + h * w, fp);
  field.rhs(t, y, theta - h * w, fm);
  EXPECT_NEAR(v.dot(fp - fm) / (2 * h), gtheta.dot(w), 1e-8);
  // The time input matters: another t gives another field.
  field.rhs(t + 1.0, y, theta, fp);
  field.rhs(t, y, theta, fm);
  EXPECT_GT((fp - fm).norm(), 1e-6);
}

TEST(NeuralField, RefusesANetworkWithoutTheTimeInput) {
  EXPECT_THROW(
      nn::NeuralField(nn::Mlp({3, 4, 3}, nn::Activation::tanh), nn::InputFeatures::identity, true),
      rwd::InvalidArgument);
}

training::TimeSeries irregular_series() {
  training::TimeSeries s;
  s.times = {0.0, 0.1, 0.35, 0.4, 0.7, 0.75, 1.1};
  s.values.resize(2, 7);
  for (Index k = 0; k < 7; ++k)
    s.values.col(k) << std::cos(2 * s.times[k]), std::sin(2 * s.times[k]);
  return s;
}

// The minibatch loss as a function of θ (no update), by a trainer's gradient call.
double loss_at(training::DataTrainer& trainer, const Eigen::VectorXd& theta,
               const std::vector<Index>& starts) {
  return trainer.gradient(theta, starts).loss;
}

TEST(DataTrainer, GradientIsTheDerivativeOfTheLossOnAnIrregularGridWithAugmentation) {
  nn::NeuralModel model;
  model.hidden = {5};
  model.observed = 2;
  model.augment = 1;
  model.time_input = true;
  training::DataTrainerOptions options;
  options.window = 3;
  options.batch = 3;
  options.substeps = 2;
  options.augment = 1;
  training::DataTrainer trainer(model.field(), {irregular_series()}, {7}, options);
  EXPECT_EQ(trainer.window_count(), 4);  // starts 0..3 of 7 points with windows of 3 intervals
  const Eigen::VectorXd theta = model.network().initial_parameters(5);
  const std::vector<Index> starts = {0, 3, 1};
  const Eigen::VectorXd grad = trainer.gradient(theta, starts).grad_theta;
  const Eigen::VectorXd direction = Eigen::VectorXd::LinSpaced(theta.size(), 1.0, -1.0);
  const double h = 1e-6;
  const double fd = (loss_at(trainer, theta + h * direction, starts) -
                     loss_at(trainer, theta - h * direction, starts)) /
                    (2 * h);
  EXPECT_NEAR(fd, grad.dot(direction), 1e-7 * (1 + std::abs(fd)));
}

TEST(DataTrainer, RevolveGivesTheStoreAllGradientBitForBit) {
  nn::NeuralModel model;
  model.hidden = {4, 4};
  model.observed = 2;
  training::DataTrainerOptions options;
  options.window = 4;
  options.batch = 2;
  options.substeps = 3;
  training::DataTrainer store_all(model.field(), {irregular_series()}, {7}, options);
  options.schedule = rwd::revolve_schedule(2);
  training::DataTrainer revolve(model.field(), {irregular_series()}, {7}, options);
  const Eigen::VectorXd theta = model.network().initial_parameters(2);
  const auto a = store_all.gradient(theta, {0, 2}).grad_theta;
  const auto b = revolve.gradient(theta, {0, 2}).grad_theta;
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), sizeof(double) * a.size()));
}

TEST(DataTrainer, RefusesDataWithoutRoomForAWindow) {
  nn::NeuralModel model;
  model.observed = 2;
  training::DataTrainerOptions options;
  options.window = 7;
  EXPECT_THROW(training::DataTrainer(model.field(), {irregular_series()}, {7}, options),
               rwd::InvalidArgument);
}

// Validation on windows: every held-out point predicted from the observations up to W intervals
// before it (windows from the last training point on), against the same windows integrated here
// one by one; a trajectory held out whole starts its windows at its first point; data the model
// itself made score 0 both ways (to rounding on windows, which the trainer integrates together).
TEST(DataTrainer, ValidationOnWindowsPredictsEveryHeldOutPointFromTheObservationsBeforeIt) {
  nn::NeuralModel model;
  model.hidden = {5};
  model.observed = 2;
  model.augment = 1;
  training::DataTrainerOptions options;
  options.window = 3;
  options.batch = 2;
  options.substeps = 2;
  options.augment = 1;
  options.validation = training::ValidationMeasure::windows;
  const Eigen::VectorXd theta = model.network().initial_parameters(5);
  const training::TimeSeries series = irregular_series();  // 7 points
  training::TimeSeries other = irregular_series();
  other.values *= 0.5;
  // The first trajectory trains on 4 points (held out: 4, 5, 6); the second is held out whole.
  training::DataTrainer trainer(model.field(), {series, other}, {4, 1}, options);
  const double mse = trainer.evaluate(theta).validation_mse;

  double sum = 0.0;
  Index count = 0;
  const auto add_windows = [&](const training::TimeSeries& s, Index from) {
    for (Index start = from; start + 1 < s.points(); ++start) {
      const Index intervals = std::min<Index>(3, s.points() - 1 - start);
      std::vector<double> times(s.times.begin() + start, s.times.begin() + start + intervals + 1);
      Eigen::VectorXd y0 = Eigen::VectorXd::Zero(3);
      y0.head(2) = s.values.col(start);
      const Eigen::MatrixXd path =
          training::integrate_on_grid(model.field(), options.tableau, 2, theta, y0, times);
      for (Index k = 1; k <= intervals; ++k, count += 2)
        sum += (path.col(k).head(2) - s.values.col(start + k)).squaredNorm();
    }
  };
  add_windows(series, 3);  // starts 3, 4, 5: 3 + 2 + 1 predictions
  add_windows(other, 0);   // starts 0 … 5
  EXPECT_EQ(count, 2 * (6 + 3 + 3 + 3 + 3 + 2 + 1));
  // The trainer integrates the windows together, each step rescaled (step rates): the same steps
  // as here, to rounding.
  EXPECT_NEAR(mse, sum / static_cast<double>(count), 1e-12 * mse);

  // With a time input the windows see their true times (each its own, in one batch).
  nn::NeuralModel timed = model;
  timed.time_input = true;
  timed.time_shift = 0.5;
  timed.time_scale = 2.0;
  const Eigen::VectorXd timed_theta = timed.network().initial_parameters(6);
  training::DataTrainer timed_trainer(timed.field(), {series, other}, {4, 1}, options);
  double timed_sum = 0.0;
  for (const auto& [s, from] :
       {std::pair{&series, Index{3}},
        std::pair{static_cast<const training::TimeSeries*>(&other), Index{0}}})
    for (Index start = from; start + 1 < s->points(); ++start) {
      const Index intervals = std::min<Index>(3, s->points() - 1 - start);
      std::vector<double> times(s->times.begin() + start, s->times.begin() + start + intervals + 1);
      Eigen::VectorXd y0 = Eigen::VectorXd::Zero(3);
      y0.head(2) = s->values.col(start);
      const Eigen::MatrixXd path =
          training::integrate_on_grid(timed.field(), options.tableau, 2, timed_theta, y0, times);
      for (Index k = 1; k <= intervals; ++k)
        timed_sum += (path.col(k).head(2) - s->values.col(start + k)).squaredNorm();
    }
  const double timed_mse = timed_trainer.evaluate(timed_theta).validation_mse;
  EXPECT_NEAR(timed_mse, timed_sum / static_cast<double>(count), 1e-12 * timed_mse);
  EXPECT_NE(timed_mse, mse);

  // Data made by a model without augmentation itself (its own integration): 0 on windows (each
  // starts from the model's own state and takes the same steps) and on the free run.
  nn::NeuralModel plain = model;
  plain.augment = 0;
  options.augment = 0;
  const Eigen::VectorXd plain_theta = plain.network().initial_parameters(5);
  training::TimeSeries own = irregular_series();
  own.values = training::integrate_on_grid(plain.field(), options.tableau, 2, plain_theta,
                                           own.values.col(0), own.times);
  training::DataTrainer exact(plain.field(), {own}, {4}, options);
  EXPECT_LT(exact.evaluate(plain_theta).validation_mse, 1e-28);  // rounding of values ~1
  options.validation = training::ValidationMeasure::trajectory;
  training::DataTrainer exact_free(plain.field(), {own}, {4}, options);
  EXPECT_EQ(exact_free.evaluate(plain_theta).validation_mse, 0.0);
  EXPECT_GT(trainer.evaluate(theta).validation_mse, 0.0);
  EXPECT_THROW(training::parse_validation_measure("window"), rwd::InvalidArgument);
}

// N steps, state saved and restored into a fresh optimizer, N more: the bits of 2N in one go.
template <class Optimizer, class Options>
void expect_restored_run_is_identical(Options options) {
  const auto gradient = [](const Eigen::VectorXd& theta, int step) {
    return Eigen::VectorXd((theta.array().sin() + 0.1 * step).matrix());
  };
  Eigen::VectorXd straight = Eigen::VectorXd::LinSpaced(7, -1.0, 2.0), resumed = straight;
  Optimizer one(options);
  for (int i = 0; i < 10; ++i) one.step(straight, gradient(straight, i));
  Optimizer first(options);
  for (int i = 0; i < 5; ++i) first.step(resumed, gradient(resumed, i));
  Optimizer second(options);
  second.restore(first.state());
  for (int i = 5; i < 10; ++i) second.step(resumed, gradient(resumed, i));
  EXPECT_EQ(0, std::memcmp(straight.data(), resumed.data(), sizeof(double) * 7));
  EXPECT_EQ(second.iterations(), 10);
}

TEST(OptimizerState, AdamAndSgdContinueBitForBit) {
  training::AdamOptions adam;
  adam.learning_rate = 0.05;
  expect_restored_run_is_identical<training::Adam>(adam);
  training::SgdOptions sgd;
  sgd.momentum = 0.9;
  sgd.nesterov = true;
  expect_restored_run_is_identical<training::Sgd>(sgd);
  training::Sgd other;
  EXPECT_THROW(other.restore(training::Adam(adam).state()), rwd::InvalidArgument);
}

TEST(TrajectorySet, LabelledCsvGivesTrajectoriesOfDifferentLengths) {
  const auto file = temporary("labelled.csv");
  std::ofstream(file) << "# two runs\ntrajectory,t,x,y\nA,0,1,2\nA,0.5,1.5,2\nA,2,3,4\n"
                         "B,0,0,0\nB,0.1,1,1\n";
  const training::TrajectorySet set = training::load_trajectories(file);
  ASSERT_EQ(set.size(), 2);
  EXPECT_EQ(set.labels, (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(set.trajectories[0].points(), 3);
  EXPECT_EQ(set.trajectories[1].points(), 2);
  EXPECT_EQ(set.names, (std::vector<std::string>{"x", "y"}));
  const auto norm = training::Normalization::of(set, {2, 2});  // A's first 2, B's 2 points
  EXPECT_DOUBLE_EQ(norm.mean[0], (1 + 1.5 + 0 + 1) / 4.0);
  // y: 2, 2, 0, 1 → mean 1.25, deviations ±0.75, −1.25, −0.25.
  EXPECT_DOUBLE_EQ(norm.scale[1], std::sqrt((0.5625 + 0.5625 + 1.5625 + 0.0625) / 4.0));
}

TEST(TrajectorySet, ErrorsNameTheLine) {
  const auto file = temporary("broken.csv");
  const auto message_of = [&](const std::string& text) {
    std::ofstream(file) << text;
    try {
      training::load_trajectories(file);
    } catch (const rwd::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message_of("trajectory,t,x\na,0,1\na,1,1\nb,0,2\nb,1,2\na,2,3\n").find("line 6"),
            std::string::npos);
  EXPECT_NE(message_of("trajectory,t,x\na,0,1\na,1,\n").find("line 3"), std::string::npos);
  EXPECT_NE(message_of("trajectory,t,x\na,0,1\na,0,2\n").find("line 3"), std::string::npos);
  EXPECT_NE(message_of("trajectory,t,x,y\na,0,1,2\nb,0,1\n").find("line 3"), std::string::npos);
}

TEST(ModelFile, RoundTripsTheWholeModel) {
  nn::NeuralModel model;
  model.hidden = {7, 3};
  model.activation = nn::Activation::softplus;
  model.features = nn::InputFeatures::cube;
  model.observed = 2;
  model.augment = 2;
  model.time_input = true;
  model.time_shift = 1900;
  model.time_scale = 6.2;
  model.names = {"hare", "lynx"};
  model.mean = Eigen::Vector2d(34.1, 20.2);
  model.scale = Eigen::Vector2d(21.3, 16.6);
  model.method = "dopri5";
  model.substeps = 4;
  model.training_options = R"({"iterations": 10})";
  const Eigen::VectorXd theta = model.network().initial_parameters(9);
  const auto file = temporary("model.h5");
  std::filesystem::remove(file);
  nn::save_model(file, model, theta);
  const nn::LoadedModel loaded = nn::load_model(file);
  EXPECT_EQ(loaded.model.hidden, model.hidden);
  EXPECT_EQ(loaded.model.activation, model.activation);
  EXPECT_EQ(loaded.model.features, model.features);
  EXPECT_EQ(loaded.model.augment, 2);
  EXPECT_TRUE(loaded.model.time_input);
  EXPECT_EQ(loaded.model.time_shift, 1900);
  EXPECT_EQ(loaded.model.names, model.names);
  EXPECT_EQ(loaded.model.mean, model.mean);
  EXPECT_EQ(loaded.model.scale, model.scale);
  EXPECT_EQ(loaded.model.method, "dopri5");
  EXPECT_EQ(loaded.model.substeps, 4);
  EXPECT_EQ(loaded.model.training_options, model.training_options);
  EXPECT_EQ(0, std::memcmp(loaded.theta.data(), theta.data(), sizeof(double) * theta.size()));
  // The old reader still reads the weights.
  EXPECT_EQ(nn::load_parameters(file, model.network()), theta);
}

TEST(ModelFile, AnOldParameterFileIsRefusedSayingWhy) {
  const nn::Mlp mlp({2, 5, 2}, nn::Activation::tanh);
  const auto file = temporary("old.h5");
  std::filesystem::remove(file);
  nn::save_parameters(file, mlp, mlp.initial_parameters(1));
  try {
    nn::load_model(file);
    FAIL() << "an old parameter file loaded as a model";
  } catch (const rwd::StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("older `rewind train spiral`"), std::string::npos)
        << e.what();
  }
}

}  // namespace
