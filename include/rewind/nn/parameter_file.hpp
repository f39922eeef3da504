// rewind/nn/parameter_file.hpp — an MLP's parameters in an HDF5 file, with its architecture.
//
//   rwd::nn::save_parameters("spiral.h5", mlp, theta);
//   Eigen::VectorXd theta = rwd::nn::load_parameters("spiral.h5", mlp);   // checks the architecture
//
// Layout (readable with h5dump and h5py):
//   /theta    float64 [parameter_size]   θ in rwd::nn::Mlp's order: per layer W (outputs × inputs,
//                                        column-major), then b
//   /layers   int64 [layers × 2]         (inputs, outputs) of each layer
//   attributes of /: format = "rewind mlp parameters", format_version = 1,
//                    activations = "tanh,identity" (one per layer), description = Mlp::describe()
// In numpy, layer ℓ's W is theta[o : o + out·in].reshape(in, out).T.
//
// save_parameters refuses to overwrite an existing file. load_parameters says precisely how the
// file's architecture differs from the network given; a missing, truncated or foreign file, or
// non-finite values, are an rwd::StorageError naming the path.
#pragma once

#include <filesystem>

#include <Eigen/Dense>

#include "rewind/nn/mlp.hpp"

namespace rwd::nn {

void save_parameters(const std::filesystem::path& file, const Mlp& mlp, const Eigen::VectorXd& theta);
Eigen::VectorXd load_parameters(const std::filesystem::path& file, const Mlp& mlp);

}  // namespace rwd::nn
