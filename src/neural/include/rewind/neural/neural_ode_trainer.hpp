// rewind/neural/neural_ode_trainer.hpp — minibatch training of a neural ODE on a time series:
// sample windows, take the exact gradient of the window loss, update the parameters.
//
//   rwd::training::TimeSeries data = rwd::training::load_time_series("data/spiral.csv");
//   rwd::nn::Mlp mlp({2, 50, 2}, rwd::nn::Activation::tanh);
//   rwd::training::TrainerOptions options;                 // window 10, batch 20, RK4, …
//   rwd::training::NeuralOdeTrainer trainer(mlp, rwd::nn::InputFeatures::cube, data, options);
//   Eigen::VectorXd theta = mlp.initial_parameters(1);
//   rwd::training::Adam adam({.learning_rate = 1e-2});
//   for (int i = 0; i < 1000; ++i) {
//     auto record = trainer.step(theta, adam);             // record.loss, record.gradient_norm, …
//   }
//   Eigen::MatrixXd fit = trainer.predict(theta);          // D × points, from the first point
//
// One iteration: the sampler draws B window starts (seeded, so a run is reproducible), the B
// windows integrate together as one batched state (rwd::nn::NeuralOde), the loss is
// rwd::training::window_misfit, and the gradient comes from rwd::CheckpointedAdjoint with the
// schedule of the options (store-all by default: a window is short; a schedule with a snapshot
// budget bounds memory for long windows) — the exact derivative of the discrete loss. Each
// iteration's record carries the loss, the gradient norm and the time of the gradient.
#pragma once

#include <chrono>
#include <cmath>
#include <utility>
#include <vector>

#include <Eigen/Dense>

#include "rewind/adjoint/backsolve_adjoint.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/error.hpp"
#include "rewind/format.hpp"
#include "rewind/integrators/butcher_tableau.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/neural/mlp.hpp"
#include "rewind/neural/neural_ode.hpp"
#include "rewind/neural/optimizer.hpp"
#include "rewind/neural/time_series.hpp"
#include "rewind/neural/window_fit.hpp"
#include "rewind/neural/window_sampler.hpp"
#include "rewind/schedule/schedules.hpp"

namespace rwd::training {

// Which gradient a training step uses.
enum class GradientMethod {
  discrete,   // exact discrete adjoint (rwd::CheckpointedAdjoint with `schedule`)
  backsolve,  // continuous adjoint solved backwards (rwd::BacksolveAdjoint with `backsolve`)
};

struct TrainerOptions {
  Index window = 10;   // data intervals per window (W)
  Index batch = 20;    // windows per minibatch (B)
  Index substeps = 1;  // integrator steps per data interval
  ButcherTableau tableau = ButcherTableau::rk4();
  std::uint64_t seed = 1;  // window sampling
  Planner schedule = store_all_schedule();
  CheckpointOptions checkpoint;  // drift policy etc. of the driver
  GradientMethod method = GradientMethod::discrete;
  BacksolveOptions backsolve;  // anchors and re-anchoring, for GradientMethod::backsolve

  void validate() const {
    if (window < 1)
      rwd::detail::fail<InvalidArgument>("window = ", window, " intervals must be >= 1");
    if (batch < 1) rwd::detail::fail<InvalidArgument>("batch = ", batch, " must be >= 1");
    if (substeps < 1) rwd::detail::fail<InvalidArgument>("substeps = ", substeps, " must be >= 1");
    if (!schedule) rwd::detail::fail<InvalidArgument>("the trainer needs a schedule");
  }
};

// What one iteration did.
struct IterationRecord {
  Index iteration = 0;         // 1-based
  double loss = 0.0;           // the minibatch loss at the parameters before the update
  double gradient_norm = 0.0;  // |dJ/dθ|
  double gradient_seconds = 0.0;
  double update_seconds = 0.0;
  Summary summary;  // the driver's counts for this gradient
};

class NeuralOdeTrainer {
 public:
  using Stepper = ExplicitRungeKutta<nn::NeuralOde>;

  NeuralOdeTrainer(const nn::Mlp& mlp, nn::InputFeatures features, TimeSeries data,
                   TrainerOptions options)
      : data_(std::move(data)),
        options_(std::move(options)),
        spacing_((options_.validate(), uniform_spacing(data_))),
        model_(mlp, options_.batch, features),
        single_(mlp, 1, features),
        stepper_(model_, options_.tableau,
                 StepControl::fixed(0.0, spacing_ / static_cast<double>(options_.substeps),
                                    options_.window * options_.substeps)),
        sampler_(data_.points(), options_.window, options_.batch, options_.seed) {
    if (data_.dimension() != mlp.input_size())
      rwd::detail::fail<InvalidArgument>("the data have ", data_.dimension(),
                                         " components but the network ", mlp.describe(), " takes ",
                                         mlp.input_size());
  }

  // The stepper refers to the model it holds: not copyable, not movable.
  NeuralOdeTrainer(const NeuralOdeTrainer&) = delete;
  NeuralOdeTrainer& operator=(const NeuralOdeTrainer&) = delete;

  const TimeSeries& data() const { return data_; }
  const TrainerOptions& options() const { return options_; }
  double spacing() const { return spacing_; }
  Index iterations() const { return iterations_; }
  const nn::NeuralOde& model() const { return model_; }

  // Loss and gradient on the windows starting at `starts` (B of them), at θ: the exact discrete
  // gradient, or the continuous backsolve one when options().method says so.
  GradientResult<Eigen::VectorXd> gradient(const Eigen::VectorXd& theta,
                                           const std::vector<Index>& starts) {
    if (static_cast<Index>(starts.size()) != options_.batch)
      rwd::detail::fail<InvalidArgument>("gradient: ", starts.size(),
                                         " window starts given, the batch is ", options_.batch);
    auto objective = window_misfit(data_, starts, options_.window, options_.substeps);
    const Eigen::VectorXd y0 = window_initial_states(data_, starts);
    if (options_.method == GradientMethod::backsolve) {
      BacksolveAdjoint driver(stepper_, std::move(objective), options_.backsolve);
      return driver.run(y0, theta);
    }
    CheckpointedAdjoint driver(stepper_, std::move(objective), options_.checkpoint);
    return driver.run(y0, theta, options_.schedule);
  }

  // One iteration: sample, gradient, update θ in place.
  IterationRecord step(Eigen::VectorXd& theta, Optimizer& optimizer) {
    using Clock = std::chrono::steady_clock;
    IterationRecord record;
    record.iteration = ++iterations_;
    const auto start = Clock::now();
    auto result = gradient(theta, sampler_.next_batch());
    const auto computed = Clock::now();
    optimizer.step(theta, result.grad_theta);
    record.update_seconds = seconds_since(computed);
    record.gradient_seconds = std::chrono::duration<double>(computed - start).count();
    record.loss = result.loss;
    record.gradient_norm = result.grad_theta.norm();
    record.summary = std::move(result.summary);
    return record;
  }

  // The model's trajectory on the data grid from the series' first point: D × points, the same
  // integrator and substeps as training.
  Eigen::MatrixXd predict(const Eigen::VectorXd& theta) const {
    return predict_from(theta, data_.values.col(0), data_.points());
  }

  Eigen::MatrixXd predict_from(const Eigen::VectorXd& theta, const Eigen::VectorXd& y0,
                               Index points) const {
    if (points < 1)
      rwd::detail::fail<InvalidArgument>("predict: points = ", points, " must be >= 1");
    const Index d = data_.dimension();
    if (y0.size() != d)
      rwd::detail::fail<InvalidArgument>("predict: y0 has ", y0.size(), " values, the model ", d);
    ExplicitRungeKutta stepper(
        single_, options_.tableau,
        StepControl::fixed(0.0, spacing_ / static_cast<double>(options_.substeps),
                           (points - 1) * options_.substeps));
    Eigen::MatrixXd path(d, points);
    Eigen::VectorXd y = y0;
    Carry carry = stepper.initial_carry(y, theta);
    path.col(0) = y;
    for (Index k = 1; k < points; ++k) {
      for (Index s = 0; s < options_.substeps; ++s) stepper.step(y, carry, theta);
      path.col(k) = y;
    }
    return path;
  }

  // Mean squared error of predict(θ) against the whole series (all points after the first).
  double trajectory_error(const Eigen::VectorXd& theta) const {
    const Eigen::MatrixXd path = predict(theta);
    const Index n = data_.points() - 1;
    return (path.rightCols(n) - data_.values.rightCols(n)).squaredNorm() /
           static_cast<double>(n * data_.dimension());
  }

 private:
  TimeSeries data_;
  TrainerOptions options_;
  double spacing_;
  nn::NeuralOde model_;   // batch B, for gradients
  nn::NeuralOde single_;  // batch 1, for predictions
  Stepper stepper_;
  WindowSampler sampler_;
  Index iterations_ = 0;
};

}  // namespace rwd::training
