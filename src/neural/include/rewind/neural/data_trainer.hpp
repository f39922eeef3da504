// rewind/neural/data_trainer.hpp — minibatch training of a neural field (neural_field.hpp) on one
// or several trajectories with any time grid: windows placed on the observation times, the exact
// discrete gradient, validation on held-out points.
//
//   rwd::nn::NeuralField field(mlp, rwd::nn::InputFeatures::identity, /*time_input=*/false);
//   rwd::training::DataTrainerOptions options;              // window 10, batch 20, RK4, …
//   options.augment = 2;                                    // S = D + 2 state components
//   rwd::training::DataTrainer trainer(field, trajectories, training_points, options);
//   Eigen::VectorXd theta = mlp.initial_parameters(1);
//   auto record = trainer.step(theta, adam);                // record.loss, gradient_norm, …
//   rwd::training::Evaluation e = trainer.evaluate(theta);  // e.train_mse, e.validation_mse
//
// Data: trajectories in the model's units (normalised), trajectory j's first training_points[j]
// points for training and the rest for validation (training_points[j] = 1: a trajectory held
// out whole). A window is W consecutive observation intervals of one trajectory's training
// points; the starts of all trajectories are numbered one after another and a minibatch draws B
// of them uniformly (rwd::training::WindowSampler over that count: seeded, reproducible, the same
// on every platform). Trajectories with fewer than W + 1 training points give no window.
//
// One window: from its first observation (the D observed components, then K = options.augment
// zeros) the field is integrated with `substeps` equal steps inside each observation interval
// (the field's time input sees the true t), and
// scored by J_w = 1/(B·W·D) Σ_{k=1..W} |ŷ_obs(t_{s+k}) − z(t_{s+k})|² — the observed components
// only, the augmented ones are free. The gradient of J_w is rwd::CheckpointedAdjoint's exact
// discrete gradient with the options' schedule; the minibatch's loss and gradient are the
// windows' sums in window order. Every window is computed on its own grid (in a batch of
// windows; see "Windows integrated together" below); a process of a
// BatchExchange takes the windows [a, b) of windows_of_process and the gather adds every
// window's loss and gradient in window order, so one process and N processes give the same
// bits. With options.clip_norm > 0 a gradient longer than it is rescaled to that
// length before the optimizer step (the record keeps the length before clipping).
//
// Adaptive steps (options.adaptive): instead of `substeps` equal steps, the tableau's embedded
// pair (dopri5, tsit5, bs3, heun) chooses each window's steps within rtol/atol, landing exactly
// on every observation time (StepControl::stop_times); the loss observes those times
// (Objective::at_times) and the gradient is the exact discrete adjoint of the accepted steps.
// The number of steps is known only when a window ends, so a revolve schedule runs online
// (rwd::OnlineSchedule, no counting sweep) and the store-all schedule runs rwd::StoreAllAdjoint,
// which grows as the window goes. DataIteration reports the steps taken.
//
// Windows integrated together (fixed steps): the windows of a process whose local step grids are
// the same integrate as one batched state (nn::NeuralOde with a parameter copy per window, as
// rwd::training::NeuralOdeTrainer does; with a time input each window sees its own start time
// plus the shared local clock), and each window's gradient is its own copy's — the same bits
// however the windows are grouped or split among processes, alone included. A trajectory whose
// observation intervals all agree with its mean spacing Δ to 1e-9 relative (a uniform grid
// written as text) is stepped with Δ/substeps everywhere, so all its windows share one grid, and
// trajectories of the same Δ share it too. The windows of the other trajectories (irregular
// times) are integrated together as well, on a shared clock of unit steps with every step of
// every window rescaled to its own true size (nn::NeuralOde's step rates): each window is then
// stepped on its own observation intervals — the same steps as alone, to rounding — and its
// bits do not depend on the group either. Adaptive steps integrate every window by itself
// (NeuralField).
//
// Evaluation integrates every trajectory whole from its first point with the same method and
// substeps and reports the mean squared error (observed components, model units) over the
// training points after the first, and over the held-out points either the same way or, with
// ValidationMeasure::windows, from windows started at every held-out observation.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/integrators/butcher_tableau.hpp"
#include "rewind/integrators/step_control.hpp"
#include "rewind/neural/batch_exchange.hpp"
#include "rewind/neural/neural_field.hpp"
#include "rewind/neural/neural_ode.hpp"
#include "rewind/neural/optimizer.hpp"
#include "rewind/neural/time_series.hpp"
#include "rewind/neural/window_sampler.hpp"
#include "rewind/schedule/schedules.hpp"

namespace rwd::training {

// Tolerances of adaptive steps (StepControl::rtol, atol).
struct AdaptiveTolerances {
  double rtol = 1e-6;
  double atol = 1e-8;
};

// What the validation error measures (Evaluation::validation_mse).
enum class ValidationMeasure {
  // The model run freely from each trajectory's first point through its training points into
  // the held-out ones: long-range prediction. For a chaotic system it decorrelates from the data
  // after a few Lyapunov times whatever the model, and early stopping on it follows noise.
  trajectory,
  // Windows of up to W intervals started from every observed held-out point (the last training
  // point included) and scored on the held-out points they reach: W-step-ahead prediction, the
  // horizon the model was trained on, at every lead time 1 … W.
  windows,
};

// "trajectory" | "windows", as the command line spells them; InvalidArgument naming the choices
// for anything else.
ValidationMeasure parse_validation_measure(const std::string& text);

struct DataTrainerOptions {
  Index window = 10;   // observation intervals per window (W), >= 1
  Index batch = 20;    // windows per minibatch (B), >= 1
  Index substeps = 1;  // integrator steps per observation interval, >= 1
  ButcherTableau tableau = ButcherTableau::rk4();  // explicit; with an embedded pair if adaptive
  std::optional<AdaptiveTolerances> adaptive;      // set: adaptive steps (substeps unused)
  std::uint64_t seed = 1;                          // window sampling
  Planner schedule = store_all_schedule();         // checkpointing inside a window
  CheckpointOptions checkpoint;                    // the driver's drift policy etc.
  Index augment = 0;                               // K zero-started components, >= 0
  double clip_norm = 0.0;                          // > 0: clip the gradient to this length
  ValidationMeasure validation = ValidationMeasure::trajectory;  // see ValidationMeasure
  // rwd::InvalidArgument naming the first field that breaks its rule.
  void validate() const;
};

struct DataIteration {
  Index iteration = 0;         // 1-based
  double loss = 0.0;           // minibatch loss at θ before the update
  double gradient_norm = 0.0;  // |dJ/dθ| before clipping
  bool clipped = false;
  Index steps = 0;     // accepted steps of this process's windows (forward sweep)
  Index rejected = 0;  // rejected adaptive attempts in them
  double gradient_seconds = 0.0;
  double update_seconds = 0.0;
};

struct Evaluation {
  double train_mse = 0.0;  // the free run over every trajectory's training points after the first
  // Over the held-out points, measured as options.validation says; NaN when there are none.
  double validation_mse = 0.0;
};

// The field integrated from y0 (S values) over `times` with `substeps` equal steps per interval,
// or with adaptive steps landing on every time: S × times.size(), column k the state at
// times[k]. steps_taken (optional): the accepted steps.
Eigen::MatrixXd integrate_on_grid(const nn::NeuralField& field, const ButcherTableau& tableau,
                                  Index substeps, const Eigen::VectorXd& theta,
                                  const Eigen::VectorXd& y0, const std::vector<double>& times,
                                  const std::optional<AdaptiveTolerances>& adaptive = std::nullopt,
                                  Index* steps_taken = nullptr);

// How a window over times[first .. first + intervals] is stepped: `substeps` prescribed equal
// steps per interval, or adaptive steps from times[first] to its last time with every time in
// between a stop time.
StepControl window_step_control(const std::vector<double>& times, Index first, Index intervals,
                                Index substeps, const std::optional<AdaptiveTolerances>& adaptive);

class DataTrainer {
 public:
  // field: batch 1. exchange must outlive the trainer.
  DataTrainer(nn::NeuralField field, std::vector<TimeSeries> trajectories,
              std::vector<Index> training_points, DataTrainerOptions options,
              const BatchExchange& exchange = single_process());

  const std::vector<TimeSeries>& trajectories() const { return trajectories_; }
  const std::vector<Index>& training_points() const { return training_points_; }
  const DataTrainerOptions& options() const { return options_; }
  const nn::NeuralField& field() const { return field_; }
  Index observed() const { return observed_; }
  Index window_count() const { return static_cast<Index>(windows_.size()); }  // possible starts
  Index iterations() const { return iterations_; }
  Index batches_drawn() const { return sampler_.batches_drawn(); }
  // Accepted steps and rejected adaptive attempts of the last gradient(), this process's windows.
  Index last_steps() const { return steps_; }
  Index last_rejected() const { return rejected_; }

  // Continue a run after `iterations` steps: draws (and forgets) as many minibatches, so the next
  // step() draws what the interrupted run would have drawn.
  void fast_forward(Index iterations);

  // Loss and gradient (the whole minibatch's, on every process) on the windows numbered
  // `starts` (B of them): a collective when several processes share the batch.
  GradientResult<Eigen::VectorXd> gradient(const Eigen::VectorXd& theta,
                                           const std::vector<Index>& starts);
  // One iteration: sample, gradient, clip, update θ in place. lr: the optimizer's step size for
  // this iteration (set before the update).
  DataIteration step(Eigen::VectorXd& theta, Optimizer& optimizer);

  // Trajectory j integrated whole from its first point: S × points, model units.
  Eigen::MatrixXd predict(const Eigen::VectorXd& theta, std::size_t j) const;
  Evaluation evaluate(const Eigen::VectorXd& theta) const;

 private:
  struct WindowStart {
    std::size_t trajectory = 0;
    Index start = 0;
  };
  // One window with adaptive steps (windows of fixed steps go through batched_gradient).
  GradientResult<Eigen::VectorXd> adaptive_window_gradient(const Eigen::VectorXd& theta,
                                                           WindowStart w);
  // Per window (row) and step (column) of a group on irregular times: the true step size and
  // its start time (nn::NeuralOde::set_step_rates).
  struct StepRates {
    Eigen::MatrixXd sizes, starts;
  };
  // The windows `numbers` (indices into windows_) integrated together by `control` from time 0:
  // the windows of one uniform step grid (time_offsets: what each window adds to the control's
  // clock; a time input sees the sum), or with `rates` windows on any grid, each step rescaled
  // to its own size on a clock of unit steps. Window i's loss into losses[i] and its gradient
  // into grads.col(i).
  Summary batched_gradient(const Eigen::VectorXd& theta, const std::vector<Index>& numbers,
                           const StepControl& control, const Eigen::VectorXd& time_offsets,
                           const StepRates* rates, std::vector<double>& losses,
                           Eigen::MatrixXd& grads);
  Index steps_ = 0, rejected_ = 0;  // of the last gradient(), this process's windows

  // Windows integrated together: per trajectory the uniform spacing its windows are stepped
  // with (0: not uniform, each window on its own intervals, rescaled), and the models of the
  // last few group sizes — a minibatch of several spacings, or with windows on irregular times,
  // asks for several sizes in turn, and a model with its workspaces is too dear to build for
  // every group (it was 10 % of such an iteration).
  std::vector<double> uniform_spacing_;
  struct BatchModel {
    std::unique_ptr<nn::NeuralOde> model;
    Index batch = 0;
    Index last_used = 0;
  };
  static constexpr std::size_t kKeptBatchModels = 4;
  std::vector<BatchModel> batch_models_;
  Index batch_model_uses_ = 0;
  nn::NeuralOde& batch_model(Index batch);
  // ValidationMeasure::windows: the squared errors of trajectory j's held-out windows added to
  // sum; returns how many values they cover (points × observed components).
  Index add_held_out_window_errors(const Eigen::VectorXd& theta, std::size_t j, double& sum) const;

  nn::NeuralField field_;
  std::vector<TimeSeries> trajectories_;
  std::vector<Index> training_points_;
  DataTrainerOptions options_;
  Index observed_ = 0;
  std::vector<WindowStart> windows_;
  const BatchExchange* exchange_;
  WindowRange mine_;
  WindowSampler sampler_;
  std::vector<int> counts_;
  std::vector<double> mine_values_, all_values_;
  Index iterations_ = 0;
};

}  // namespace rwd::training
