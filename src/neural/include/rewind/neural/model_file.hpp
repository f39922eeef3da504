// rewind/neural/model_file.hpp — a trained neural ODE as a self-contained file: the network's
// parameters (parameter_file.hpp) plus everything needed to use it without the command that
// trained it: input features, augmentation, time input, normalisation, integrator, options.
//
//   rwd::nn::NeuralModel model;                 // architecture, normalisation, method…
//   model.observed = 3; model.hidden = {64, 64}; model.mean = …; model.scale = …;
//   rwd::nn::save_model("lorenz.h5", model, theta);
//   rwd::nn::LoadedModel m = rwd::nn::load_model("lorenz.h5");   // m.model, m.theta
//   rwd::nn::NeuralField field = m.model.field();                // ready to integrate
//
// The file is a parameter file (/theta, /layers, the format attributes; nn::load_parameters
// reads it) with these additions in the root group:
//   attributes  model = "neural ode", observed (int64, D), augment (int64, K), time_input (int64
//               0/1), features ("identity"|"cube"), time_shift, time_scale (float64: the network
//               sees (t − shift)/scale), names ("x,y,z"), method ("rk4"), substeps (int64),
//               rtol and atol (float64, only for a model trained with adaptive steps),
//               training_options (JSON text: the options of the run, for people)
//   datasets    /normalization_mean, /normalization_scale  float64 [D]: the model works in
//               z = (y − mean) / scale
// A parameter file without the `model` attribute (rewind train spiral before these fields, or
// nn::save_parameters) holds weights but not how to feed them: load_model refuses it, saying so.
// Errors are rwd::StorageError naming the file and the field.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "rewind/neural/activation.hpp"
#include "rewind/neural/mlp.hpp"
#include "rewind/neural/neural_field.hpp"
#include "rewind/neural/neural_ode.hpp"
#include "rewind/types.hpp"

namespace rwd::nn {

struct NeuralModel {
  std::vector<Index> hidden = {50};  // hidden layer widths, each >= 1
  Activation activation = Activation::tanh;
  InputFeatures features = InputFeatures::identity;
  Index observed = 0;  // D, the data's components
  Index augment = 0;   // K zero-started extra components
  bool time_input = false;
  double time_shift = 0.0, time_scale = 1.0;
  std::vector<std::string> names;  // D component names
  Eigen::VectorXd mean, scale;     // normalisation, D each
  std::string method = "rk4";
  Index substeps = 1;  // fixed steps per observation interval (unused when adaptive)
  // Adaptive steps of `method`'s embedded pair within these tolerances, landing on every
  // requested time (rtol, atol > 0); false: `substeps` equal steps per interval.
  bool adaptive = false;
  double rtol = 0.0, atol = 0.0;
  std::string training_options;  // JSON text

  Index state_dimension() const { return observed + augment; }
  // {S (+1 with a time input), hidden…, S}, the hidden activation, identity output.
  Mlp network() const;
  NeuralField field(Index batch = 1) const;
  // "3+2 augmented, time input, 4-64-64-5 tanh on identity features".
  std::string describe() const;
  // rwd::InvalidArgument naming the first inconsistency.
  void validate() const;
};

// Refuses an existing file (rwd::StorageError), as save_parameters does.
void save_model(const std::filesystem::path& file, const NeuralModel& model,
                const Eigen::VectorXd& theta);

struct LoadedModel {
  NeuralModel model;
  Eigen::VectorXd theta;
};
LoadedModel load_model(const std::filesystem::path& file);

// The network architecture only, from the file's /layers and activations (also for parameter
// files without the model fields): an "a-b-c act" description, for messages.
std::string describe_file_network(const std::filesystem::path& file);

}  // namespace rwd::nn
