// src/neural/src/training_checkpoint.cpp — see rewind/neural/training_checkpoint.hpp.
#include "rewind/neural/training_checkpoint.hpp"

#include <hdf5.h>
#include <unistd.h>

#include "hdf5_fields.hpp"
#include "rewind/error.hpp"
#include "rewind/format.hpp"
#include "rewind/hdf5/hdf5_handles.hpp"

namespace rwd::training {
namespace {

using rwd::detail::Hdf5Handle;
using rwd::detail::Hdf5Kind;
using rwd::detail::QuietHdf5;
namespace fields = rwd::nn::detail;

void write_vector(hid_t group, const char* name, const std::vector<double>& v,
                  const std::filesystem::path& file) {
  fields::write_doubles(group, name, v.data(), v.size(), file);
}

void write_vector(hid_t group, const char* name, const Eigen::VectorXd& v,
                  const std::filesystem::path& file) {
  fields::write_doubles(group, name, v.data(), static_cast<std::size_t>(v.size()), file);
}

Eigen::VectorXd to_eigen(const std::vector<double>& v) {
  return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Index>(v.size()));
}

}  // namespace

void save_training_checkpoint(const std::filesystem::path& file, const nn::NeuralModel& model,
                              const Eigen::VectorXd& theta, const TrainingState& state) {
  std::filesystem::path temporary = file;
  temporary += ".tmp-" + std::to_string(::getpid());
  std::error_code ignored;
  std::filesystem::remove(temporary, ignored);
  try {
    nn::save_model(temporary, model, theta);
    QuietHdf5 quiet;
    Hdf5Handle h5(H5Fopen(temporary.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), Hdf5Kind::file);
    if (!h5.valid()) throw StorageError("checkpoint " + quoted(file) + " cannot be reopened");
    Hdf5Handle group(H5Gcreate2(h5.get(), "training", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                     Hdf5Kind::group);
    if (!group.valid()) throw StorageError("checkpoint " + quoted(file) + ": creating /training");
    const hid_t g = group.get();
    fields::write_integer_attribute(g, "iteration", state.iteration, file);
    fields::write_string_attribute(g, "optimizer", state.optimizer.kind, file);
    fields::write_integer_attribute(g, "optimizer_steps", state.optimizer.steps, file);
    fields::write_integer_attribute(
        g, "optimizer_vectors", static_cast<std::int64_t>(state.optimizer.vectors.size()), file);
    for (std::size_t i = 0; i < state.optimizer.vectors.size(); ++i)
      write_vector(g, ("optimizer_" + std::to_string(i)).c_str(), state.optimizer.vectors[i], file);
    write_vector(g, "best_theta", state.best_theta, file);
    fields::write_double_attribute(g, "best_validation", state.best_validation, file);
    fields::write_integer_attribute(g, "best_iteration", state.best_iteration, file);
    fields::write_integer_attribute(g, "evaluations_since_best", state.evaluations_since_best,
                                    file);
    write_vector(g, "losses", state.losses, file);
    write_vector(g, "gradient_norms", state.gradient_norms, file);
    write_vector(g, "learning_rates", state.learning_rates, file);
    fields::write_integers(g, "evaluation_iterations",
                           {state.evaluation_iterations.begin(), state.evaluation_iterations.end()},
                           file);
    write_vector(g, "train_errors", state.train_errors, file);
    write_vector(g, "validation_errors", state.validation_errors, file);
    group.close();
    if (h5.close() < 0) throw StorageError("checkpoint " + quoted(file) + ": closing failed");
    std::filesystem::rename(temporary, file);
  } catch (...) {
    std::filesystem::remove(temporary, ignored);
    throw;
  }
}

LoadedCheckpoint load_training_checkpoint(const std::filesystem::path& file) {
  LoadedCheckpoint loaded{nn::load_model(file), {}};
  TrainingState& s = loaded.state;
  QuietHdf5 quiet;
  Hdf5Handle h5(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), Hdf5Kind::file);
  if (!h5.valid() || H5Lexists(h5.get(), "training", H5P_DEFAULT) <= 0)
    throw StorageError("checkpoint " + quoted(file) +
                       " is a model without training state (no /training group): pass a file "
                       "written by --checkpoint to --resume");
  Hdf5Handle group(H5Gopen2(h5.get(), "training", H5P_DEFAULT), Hdf5Kind::group);
  const hid_t g = group.get();
  s.iteration = fields::read_integer_attribute(g, "iteration", file);
  s.optimizer.kind = fields::read_string_attribute(g, "optimizer", file);
  s.optimizer.steps = fields::read_integer_attribute(g, "optimizer_steps", file);
  const auto vectors = fields::read_integer_attribute(g, "optimizer_vectors", file);
  const auto p = static_cast<long long>(loaded.model.theta.size());
  for (std::int64_t i = 0; i < vectors; ++i)
    s.optimizer.vectors.push_back(
        to_eigen(fields::read_doubles(g, ("optimizer_" + std::to_string(i)).c_str(), file, p)));
  s.best_theta = to_eigen(fields::read_doubles(g, "best_theta", file));
  s.best_validation = fields::read_double_attribute(g, "best_validation", file);
  s.best_iteration = fields::read_integer_attribute(g, "best_iteration", file);
  s.evaluations_since_best = fields::read_integer_attribute(g, "evaluations_since_best", file);
  s.losses = fields::read_doubles(g, "losses", file, s.iteration);
  s.gradient_norms = fields::read_doubles(g, "gradient_norms", file, s.iteration);
  s.learning_rates = fields::read_doubles(g, "learning_rates", file, s.iteration);
  const auto its = fields::read_integers(g, "evaluation_iterations", file);
  s.evaluation_iterations.assign(its.begin(), its.end());
  const auto evaluations = static_cast<long long>(its.size());
  s.train_errors = fields::read_doubles(g, "train_errors", file, evaluations);
  s.validation_errors = fields::read_doubles(g, "validation_errors", file, evaluations);
  if (s.best_theta.size() != 0 && s.best_theta.size() != p)
    throw StorageError("checkpoint " + quoted(file) + ": best_theta has " +
                       std::to_string(s.best_theta.size()) + " values, theta " + std::to_string(p));
  return loaded;
}

}  // namespace rwd::training
