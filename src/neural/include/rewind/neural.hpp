// rewind/neural.hpp — neural ODEs and SDEs trained from C++, in one include (link rewind::neural).
//
//   #include <rewind/neural.hpp>
//   rwd::nn::Mlp mlp({2, 50, 2}, rwd::nn::Activation::tanh);          // the vector field
//   auto data = rwd::training::load_time_series("data/spiral.csv");   // t, y per row
//   // rwd::training::NeuralOdeTrainer (rewind/neural/neural_ode_trainer.hpp) fits windows of the
//   // data with exact gradients through the adjoint drivers; Adam or SGD updates θ.
//   // examples/neural_ode_spiral.cpp is the whole program.
//
// The networks (dense layers, activations, exact vjps), the optimizers, the data (time series,
// trajectory sets, window sampling), the neural ODE and SDE problems, their training drivers and
// the parameter, model and training-checkpoint files. The device (CUDA) variants are opt-in
// includes under rewind/neural/device_*.hpp.
#pragma once

#include "rewind/neural/activation.hpp"
#include "rewind/neural/adam.hpp"
#include "rewind/neural/data_trainer.hpp"
#include "rewind/neural/mlp.hpp"
#include "rewind/neural/model_file.hpp"
#include "rewind/neural/neural_field.hpp"
#include "rewind/neural/neural_ode.hpp"
#include "rewind/neural/neural_ode_trainer.hpp"
#include "rewind/neural/neural_sde.hpp"
#include "rewind/neural/optimizer.hpp"
#include "rewind/neural/parameter_file.hpp"
#include "rewind/neural/sampled_solution.hpp"
#include "rewind/neural/sgd.hpp"
#include "rewind/neural/time_series.hpp"
#include "rewind/neural/training_checkpoint.hpp"
#include "rewind/neural/trajectory_set.hpp"
#include "rewind/neural/window_fit.hpp"
#include "rewind/neural/window_sampler.hpp"
#include "rewind/rewind.hpp"
