// rewind/neural/training_checkpoint.hpp — a training run saved part way, to be continued with the
// same bits as a run that never stopped.
//
//   rwd::training::TrainingState state;              // iteration, optimizer, history, best θ…
//   state.optimizer = adam.state();
//   rwd::training::save_training_checkpoint("run.ckpt.h5", model, theta, state);  // replaces
//   auto resumed = rwd::training::load_training_checkpoint("run.ckpt.h5");
//   adam.restore(resumed.state.optimizer);
//   trainer.fast_forward(resumed.state.iteration);   // the window sampler's position
//
// What a continuation needs and a model file (model_file.hpp) lacks: the iteration count (it
// gives the sampler's position — the windows are drawn by a seeded generator, so the resumed
// run redraws and skips that many minibatches — and the learning rate of a schedule, a function
// of the iteration), the optimizer's state (Adam's moments, SGD's velocity, their step count),
// the early-stopping state (best θ, its validation error and iteration, evaluations since), and
// the history so far (per-iteration loss, gradient norm, learning rate; per-evaluation errors),
// so the resumed run's log is the whole run's. The file is a complete model file (rewind predict
// reads it) with these in a group /training; writing goes to a temporary file renamed over the
// target, so an interrupted write leaves the previous checkpoint whole.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "rewind/neural/model_file.hpp"
#include "rewind/neural/optimizer.hpp"
#include "rewind/types.hpp"

namespace rwd::training {

struct TrainingState {
  Index iteration = 0;  // iterations done
  OptimizerState optimizer;
  Eigen::VectorXd best_theta;    // the parameters of the best validation error so far
  double best_validation = 0.0;  // +inf before the first evaluation with validation points
  Index best_iteration = 0;
  Index evaluations_since_best = 0;
  std::vector<double> losses, gradient_norms, learning_rates;  // one per iteration
  std::vector<Index> evaluation_iterations;
  std::vector<double> train_errors, validation_errors;  // one per evaluation
};

void save_training_checkpoint(const std::filesystem::path& file, const nn::NeuralModel& model,
                              const Eigen::VectorXd& theta, const TrainingState& state);

struct LoadedCheckpoint {
  nn::LoadedModel model;
  TrainingState state;
};
// rwd::StorageError naming the file for a model file without the /training group (not a
// checkpoint) or with inconsistent history lengths.
LoadedCheckpoint load_training_checkpoint(const std::filesystem::path& file);

}  // namespace rwd::training
