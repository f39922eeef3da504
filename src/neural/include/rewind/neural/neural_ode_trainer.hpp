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
// One iteration: the sampler draws B window starts (seeded, so a run is reproducible), the
// windows integrate together as one batched state (rwd::nn::NeuralOde), the loss is
// rwd::training::window_misfit, and the gradient comes from rwd::CheckpointedAdjoint with the
// schedule of the options (by default every step's stage values are kept — a window is short — so
// the reverse sweep re-runs no step; a schedule with a snapshot budget bounds memory for long
// windows; every schedule gives the same bits) — the exact derivative of the discrete loss. Each
// iteration's record carries the loss, the gradient norm and the time of the gradient.
//
// Window by window, so that the batch can be split across processes (a BatchExchange, see
// batch_exchange.hpp) with the same bits: the loss is Σ_w L_w and dJ/dθ is Σ_w g_w, both added
// in window order, where L_w and g_w are window w's own loss and gradient. The model gives every
// window its own copy of θ (nn::ParameterCopies::per_sample), so the adjoint accumulates each
// g_w in its own slot over steps and stages, and the network's columns are independent to the
// bit (mlp.hpp): L_w and g_w are the same bits whichever windows share the batched state. A
// process integrates only its windows [a, b) of the B drawn (every process draws all B: the
// same seed), then every process gathers every L_w and g_w, adds them in window order and takes
// the same optimizer step. One process is the case of one range [0, B) — the same arithmetic,
// so `rewind train` alone and across N processes print the same loss history.
//
//   rwd::training::NeuralOdeTrainer trainer(mlp, features, data, options, exchange);  // N ranks
//
// Cost of the split: the batched gradient holds B·P parameter values instead of P (B copies of
// θ and B gradient slots; for the 2-50-2 spiral network 20 × 252), and each step gathers
// B·(P + 1) doubles on every process. A process whose gradient fails (a non-finite state, a
// drift) still takes part in the gather, so every process stops with an error naming it instead
// of waiting.
#pragma once

#include <chrono>
#include <cmath>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Dense>

#include "rewind/adjoint/backsolve_adjoint.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/error.hpp"
#include "rewind/format.hpp"
#include "rewind/integrators/butcher_tableau.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/neural/batch_exchange.hpp"
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
  // Empty (the default): every step's stage values are kept, store_all_stages_schedule with the
  // tableau's stage count — no step is re-run in the reverse sweep (a third fewer network passes
  // than store_all_schedule, the same bits).
  Planner schedule;
  CheckpointOptions checkpoint;  // drift policy etc. of the driver
  GradientMethod method = GradientMethod::discrete;
  BacksolveOptions backsolve;  // anchors and re-anchoring, for GradientMethod::backsolve

  void validate() const {
    if (window < 1)
      rwd::detail::fail<InvalidArgument>("window = ", window, " intervals must be >= 1");
    if (batch < 1) rwd::detail::fail<InvalidArgument>("batch = ", batch, " must be >= 1");
    if (substeps < 1) rwd::detail::fail<InvalidArgument>("substeps = ", substeps, " must be >= 1");
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

  // exchange: the processes sharing each minibatch (one process by default); it must outlive the
  // trainer. More processes than options.batch windows is an rwd::InvalidArgument.
  NeuralOdeTrainer(const nn::Mlp& mlp, nn::InputFeatures features, TimeSeries data,
                   TrainerOptions options, const BatchExchange& exchange = single_process())
      : data_(std::move(data)),
        options_(std::move(options)),
        spacing_((options_.validate(), uniform_spacing(data_))),
        exchange_(&exchange),
        mine_(windows_of_process(options_.batch, exchange.rank(), exchange.size())),
        description_(nn::NeuralOde::describe(mlp, features, options_.batch)),
        // The copies are written by windows_gradient alone: the model need not compare them.
        model_(mlp, mine_.size(), features, nn::ParameterCopies::per_sample,
               nn::CopyCheck::by_owner),
        single_(mlp, 1, features),
        stepper_(model_, options_.tableau,
                 StepControl::fixed(0.0, spacing_ / static_cast<double>(options_.substeps),
                                    options_.window * options_.substeps)),
        sampler_(data_.points(), options_.window, options_.batch, options_.seed),
        terms_(std::make_shared<Eigen::MatrixXd>()) {
    if (!options_.schedule) options_.schedule = store_all_stages_schedule(stepper_.stage_count());
    // Every stage of a window keeps its forward pass for the reverse sweep's VJP there.
    model_.keep_forward_passes(options_.window * options_.substeps * stepper_.stage_count());
    // A step's per-window parameter gradients added in one pass over the B·P copies.
    model_.defer_parameter_gradients(stepper_.stage_count());
    if (data_.dimension() != mlp.input_size())
      rwd::detail::fail<InvalidArgument>("the data have ", data_.dimension(),
                                         " components but the network ", mlp.describe(), " takes ",
                                         mlp.input_size());
    const Index p = mlp.parameter_size();
    copies_.resize(p * mine_.size());
    counts_.resize(static_cast<std::size_t>(exchange.size()));
    for (int r = 0; r < exchange.size(); ++r) {
      const Index windows = windows_of_process(options_.batch, r, exchange.size()).size();
      counts_[static_cast<std::size_t>(r)] = static_cast<int>(1 + windows * (p + 1));
    }
    mine_values_.resize(1 + mine_.size() * (p + 1));
    all_values_.resize(exchange.size() + options_.batch * (p + 1));
  }

  // The stepper refers to the model it holds: not copyable, not movable.
  NeuralOdeTrainer(const NeuralOdeTrainer&) = delete;
  NeuralOdeTrainer& operator=(const NeuralOdeTrainer&) = delete;

  const TimeSeries& data() const { return data_; }
  const TrainerOptions& options() const { return options_; }
  double spacing() const { return spacing_; }
  Index iterations() const { return iterations_; }
  // The model this process integrates: its windows only, a parameter copy per window (copies it
  // does not compare: nn::CopyCheck::by_owner — give it equal ones).
  const nn::NeuralOde& model() const { return model_; }
  // The model being trained, with the whole minibatch: "neural ODE 2-50-2 tanh on cube
  // features, batch 20" (the same on every process).
  const std::string& describe() const { return description_; }
  // This process's windows of every minibatch, and the processes sharing it.
  WindowRange windows() const { return mine_; }
  const BatchExchange& exchange() const { return *exchange_; }

  // Loss and gradient on the windows starting at `starts` (B of them, the same on every
  // process), at θ: the exact discrete gradient, or the continuous backsolve one when options()
  // says so, added window by window (see above). loss and grad_theta are the whole minibatch's,
  // on every process; grad_y0 and y_final cover this process's windows only; summary counts this
  // process's work. A collective when several processes share the batch.
  GradientResult<Eigen::VectorXd> gradient(const Eigen::VectorXd& theta,
                                           const std::vector<Index>& starts) {
    if (static_cast<Index>(starts.size()) != options_.batch)
      rwd::detail::fail<InvalidArgument>("gradient: ", starts.size(),
                                         " window starts given, the batch is ", options_.batch);
    const Index p = single_.parameter_size();
    if (theta.size() != p)
      rwd::detail::fail<InvalidArgument>("gradient: theta has ", theta.size(),
                                         " values but the network has ", p);
    GradientResult<Eigen::VectorXd> result;
    std::exception_ptr failure;
    try {
      result = windows_gradient(theta, starts);
    } catch (...) {
      failure = std::current_exception();  // still take part in the gather: nobody waits
    }

    // This process's part: a status, then per window its loss and its gradient.
    mine_values_[0] = failure ? 1.0 : 0.0;
    if (!failure)
      for (Index w = 0; w < mine_.size(); ++w) {
        double loss = 0.0;
        for (Index k = 0; k < options_.window; ++k) loss += (*terms_)(w, k);
        double* out = mine_values_.data() + 1 + w * (p + 1);
        out[0] = loss;
        Eigen::Map<Eigen::VectorXd>(out + 1, p) = result.grad_theta.segment(w * p, p);
      }
    exchange_->all_gather(mine_values_, counts_, all_values_);
    if (failure) std::rethrow_exception(failure);

    // Every process's windows in window order: ranks hold consecutive ranges, so the gathered
    // values are already in window order, each rank's block led by its status.
    double loss = 0.0;
    Eigen::VectorXd grad = Eigen::VectorXd::Zero(p);
    const double* at = all_values_.data();
    for (int r = 0; r < exchange_->size(); ++r) {
      const WindowRange range = windows_of_process(options_.batch, r, exchange_->size());
      if (at[0] != 0.0)
        rwd::detail::fail<Error>("the gradient of windows [", range.begin, ", ", range.end,
                                 ") failed on rank ", r, " (that rank reports why); rank ",
                                 exchange_->rank(), " stops too");
      ++at;
      for (Index w = range.begin; w < range.end; ++w, at += p + 1) {
        loss += at[0];
        grad += Eigen::Map<const Eigen::VectorXd>(at + 1, p);
      }
    }
    result.loss = loss;
    result.grad_theta = std::move(grad);
    return result;
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
  // This process's windows of `starts`, integrated and differentiated together: the driver's
  // result over the per-window copies of θ (grad_theta holds one gradient per window), the
  // per-window loss terms in terms_.
  GradientResult<Eigen::VectorXd> windows_gradient(const Eigen::VectorXd& theta,
                                                   const std::vector<Index>& starts) {
    const std::vector<Index> mine(starts.begin() + mine_.begin, starts.begin() + mine_.end);
    auto objective =
        window_misfit(data_, mine, options_.window, options_.substeps, options_.batch, terms_);
    const Eigen::VectorXd y0 = window_initial_states(data_, mine);
    const Index p = theta.size();
    for (Index w = 0; w < mine_.size(); ++w) copies_.segment(w * p, p) = theta;
    if (options_.method == GradientMethod::backsolve) {
      BacksolveAdjoint driver(stepper_, std::move(objective), options_.backsolve);
      return driver.run(y0, copies_);
    }
    // The health of a gradient over per-window copies says nothing a trainer reads.
    CheckpointOptions checkpoint = options_.checkpoint;
    checkpoint.assess_health = false;
    CheckpointedAdjoint driver(stepper_, std::move(objective), checkpoint);
    return driver.run(y0, copies_, options_.schedule);
  }

  TimeSeries data_;
  TrainerOptions options_;
  double spacing_;
  const BatchExchange* exchange_;
  WindowRange mine_;         // this process's windows of every minibatch
  std::string description_;  // the model with the whole minibatch
  nn::NeuralOde model_;      // this process's windows, a θ copy each, for gradients
  nn::NeuralOde single_;     // batch 1, for predictions
  Stepper stepper_;
  WindowSampler sampler_;
  std::shared_ptr<Eigen::MatrixXd> terms_;  // per-window loss terms (windows × W)
  Eigen::VectorXd copies_;                  // θ once per window of this process
  std::vector<int> counts_;                 // values each rank contributes to the gather
  std::vector<double> mine_values_, all_values_;
  Index iterations_ = 0;
};

}  // namespace rwd::training
