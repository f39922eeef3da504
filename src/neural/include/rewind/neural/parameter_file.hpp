// rewind/neural/parameter_file.hpp — an MLP's parameters in an HDF5 file, with its architecture.
//
//   rwd::nn::save_parameters("spiral.h5", mlp, theta);
//   Eigen::VectorXd theta = rwd::nn::load_parameters("spiral.h5", mlp);   // checks the
//   architecture
//
// Layout (readable with h5dump and h5py):
//   /theta    float64 [parameter_size]   θ in rwd::nn::Mlp's order: per layer W (outputs × inputs,
//                                        column-major), then b
//   /layers   int64 [layers × 2]         (inputs, outputs) of each layer
//   attributes of the root group:
//     format         = "rewind mlp parameters"
//     format_version = 1 (int64)
//     activations    = "tanh,identity" (one name per layer, as rwd::nn::to_string writes them)
//     description    = Mlp::describe(), for people; not read back
// In numpy, layer ℓ's W is theta[o : o + out·in].reshape(in, out).T, with o the sum of
// out·in + out over the layers before it. Files written by h5py (variable-length string
// attributes) load too.
//
// save_parameters refuses to overwrite an existing file (rwd::StorageError), refuses a θ of the
// wrong size or with NaN/Inf (rwd::InvalidArgument), builds the file in memory and writes it in
// one piece with fsync; if writing fails (a full disk) the partial file is removed and the
// StorageError gives the system's reason, so a failed save never leaves a file behind.
// load_parameters checks the format, its
// version and the architecture (layer count, every layer's widths and activation) against the
// network given, and names every difference ("layer 0 has 9 outputs in the file but 10 in the
// network given"); a missing, truncated or foreign file, a θ that is not float64 or has NaN/Inf,
// is an rwd::StorageError naming the path. Loaded values are the saved ones bit for bit.
#pragma once

#include <filesystem>

#include <Eigen/Dense>

#include "rewind/neural/mlp.hpp"

namespace rwd::nn {

void save_parameters(const std::filesystem::path& file, const Mlp& mlp,
                     const Eigen::VectorXd& theta);
Eigen::VectorXd load_parameters(const std::filesystem::path& file, const Mlp& mlp);

}  // namespace rwd::nn
