// Training with adaptive steps: each window's steps are chosen by the embedded pair and land on
// every observation time. The gradient is the same bits from store-all and every online revolve
// budget, agrees with the converged fixed-step gradient, looser tolerances take fewer steps,
// predictions land on the data's times, and models keep their tolerances.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/neural/adam.hpp"
#include "rewind/neural/data_trainer.hpp"
#include "rewind/neural/model_file.hpp"

namespace {

using rwd::Index;
namespace nn = rwd::nn;
namespace training = rwd::training;

bool same_bits(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

// Irregular observation times of a slow rotation.
training::TimeSeries irregular_series() {
  training::TimeSeries s;
  s.times = {0.0, 0.1, 0.35, 0.4, 0.7, 0.75, 1.1, 1.6};
  s.values.resize(2, 8);
  for (Index k = 0; k < 8; ++k)
    s.values.col(k) << std::cos(2 * s.times[k]), std::sin(2 * s.times[k]);
  return s;
}

nn::NeuralModel small_model() {
  nn::NeuralModel model;
  model.hidden = {6};
  model.observed = 2;
  model.augment = 1;
  model.time_input = true;
  return model;
}

training::DataTrainerOptions adaptive_options(double rtol, double atol) {
  training::DataTrainerOptions options;
  options.window = 4;
  options.batch = 3;
  options.augment = 1;
  options.tableau = rwd::ButcherTableau::dormand_prince();
  options.adaptive = training::AdaptiveTolerances{rtol, atol};
  return options;
}

const std::vector<Index> kStarts = {0, 3, 1};

TEST(AdaptiveTraining, GradientIsBitwiseTheSameFromStoreAllAndEveryOnlineBudget) {
  const nn::NeuralModel model = small_model();
  const Eigen::VectorXd theta = model.network().initial_parameters(4);
  training::DataTrainerOptions options = adaptive_options(1e-8, 1e-10);
  training::DataTrainer store_all(model.field(), {irregular_series()}, {8}, options);
  const auto expected = store_all.gradient(theta, kStarts);
  EXPECT_GT(store_all.last_steps(), 3 * options.window);  // more than one step per interval
  for (int c : {1, 2, 5}) {
    SCOPED_TRACE("revolve c = " + std::to_string(c));
    options.schedule = rwd::revolve_schedule(c);
    training::DataTrainer revolve(model.field(), {irregular_series()}, {8}, options);
    const auto result = revolve.gradient(theta, kStarts);
    EXPECT_EQ(result.loss, expected.loss);
    EXPECT_TRUE(same_bits(result.grad_theta, expected.grad_theta));
    EXPECT_EQ(revolve.last_steps(), store_all.last_steps());
  }
}

TEST(AdaptiveTraining, TightTolerancesAgreeWithTheConvergedFixedStepGradient) {
  const nn::NeuralModel model = small_model();
  const Eigen::VectorXd theta = model.network().initial_parameters(4);
  training::DataTrainer adaptive(model.field(), {irregular_series()}, {8},
                                 adaptive_options(1e-11, 1e-13));
  training::DataTrainerOptions fixed = adaptive_options(1.0, 1.0);
  fixed.adaptive.reset();
  fixed.substeps = 200;
  training::DataTrainer reference(model.field(), {irregular_series()}, {8}, fixed);
  const auto a = adaptive.gradient(theta, kStarts);
  const auto f = reference.gradient(theta, kStarts);
  EXPECT_NEAR(a.loss, f.loss, 1e-9 * f.loss);
  EXPECT_LT((a.grad_theta - f.grad_theta).norm(), 1e-7 * f.grad_theta.norm());
  EXPECT_LT(adaptive.last_steps(), reference.last_steps() / 4);
}

TEST(AdaptiveTraining, LooserTolerancesTakeFewerStepsAndTrainingLowersTheLoss) {
  const nn::NeuralModel model = small_model();
  Index previous = 0;
  for (double rtol : {1e-9, 1e-6, 1e-3}) {
    training::DataTrainer trainer(model.field(), {irregular_series()}, {8},
                                  adaptive_options(rtol, 1e-3 * rtol));
    Eigen::VectorXd theta = model.network().initial_parameters(4);
    (void)trainer.gradient(theta, kStarts);
    if (previous > 0) {
      EXPECT_LT(trainer.last_steps(), previous) << "rtol " << rtol;
    }
    previous = trainer.last_steps();
  }
  training::DataTrainer trainer(model.field(), {irregular_series()}, {8},
                                adaptive_options(1e-6, 1e-9));
  Eigen::VectorXd theta = model.network().initial_parameters(4);
  training::AdamOptions adam_options;
  adam_options.learning_rate = 1e-2;
  training::Adam adam(adam_options);
  const double before = trainer.evaluate(theta).train_mse;
  Index steps = 0;
  for (int i = 0; i < 60; ++i) steps += trainer.step(theta, adam).steps;
  EXPECT_LT(trainer.evaluate(theta).train_mse, 0.5 * before);
  EXPECT_GT(steps, 60 * 3 * 4);
}

TEST(AdaptiveTraining, PredictionsLandOnTheDataTimes) {
  const nn::NeuralModel model = small_model();
  const Eigen::VectorXd theta = model.network().initial_parameters(4);
  const training::TimeSeries series = irregular_series();
  Eigen::VectorXd y0 = Eigen::VectorXd::Zero(3);
  y0.head(2) = series.values.col(0);
  Index steps = 0;
  const Eigen::MatrixXd adaptive =
      training::integrate_on_grid(model.field(), rwd::ButcherTableau::tsitouras(), 1, theta, y0,
                                  series.times, training::AdaptiveTolerances{1e-10, 1e-12}, &steps);
  const Eigen::MatrixXd fine = training::integrate_on_grid(
      model.field(), rwd::ButcherTableau::rk4(), 400, theta, y0, series.times);
  EXPECT_LT((adaptive - fine).cwiseAbs().maxCoeff(), 1e-8);
  EXPECT_GE(steps, static_cast<Index>(series.times.size()) - 1);
}

TEST(AdaptiveTraining, MisuseIsRefused) {
  const nn::NeuralModel model = small_model();
  training::DataTrainerOptions options = adaptive_options(1e-6, 1e-9);
  options.tableau = rwd::ButcherTableau::rk4();
  EXPECT_THROW(training::DataTrainer(model.field(), {irregular_series()}, {8}, options),
               rwd::InvalidArgument);
  options = adaptive_options(0.0, 1e-9);
  EXPECT_THROW(training::DataTrainer(model.field(), {irregular_series()}, {8}, options),
               rwd::InvalidArgument);
  options = adaptive_options(1e-6, -1.0);
  EXPECT_THROW(training::DataTrainer(model.field(), {irregular_series()}, {8}, options),
               rwd::InvalidArgument);
}

TEST(AdaptiveTraining, ModelFilesKeepTheTolerances) {
  nn::NeuralModel model = small_model();
  model.names = {"x", "y"};
  model.mean = Eigen::Vector2d(0.1, -0.2);
  model.scale = Eigen::Vector2d(1.5, 2.5);
  model.method = "tsit5";
  model.adaptive = true;
  model.rtol = 1e-7;
  model.atol = 1e-10;
  const Eigen::VectorXd theta = model.network().initial_parameters(2);
  const auto file = std::filesystem::path(testing::TempDir()) / "adaptive_training_model.h5";
  std::filesystem::remove(file);
  nn::save_model(file, model, theta);
  const nn::LoadedModel loaded = nn::load_model(file);
  EXPECT_TRUE(loaded.model.adaptive);
  EXPECT_EQ(loaded.model.rtol, 1e-7);
  EXPECT_EQ(loaded.model.atol, 1e-10);
  std::filesystem::remove(file);
  model.adaptive = false;
  nn::save_model(file, model, theta);
  EXPECT_FALSE(nn::load_model(file).model.adaptive);
  std::filesystem::remove(file);
  model.adaptive = true;
  model.rtol = 0.0;
  EXPECT_THROW(model.validate(), rwd::InvalidArgument);
}

}  // namespace
