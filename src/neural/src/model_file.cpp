// src/neural/src/model_file.cpp — see rewind/neural/model_file.hpp.
#include "rewind/neural/model_file.hpp"

#include <hdf5.h>

#include <limits>
#include <sstream>

#include "hdf5_fields.hpp"
#include "rewind/error.hpp"
#include "rewind/format.hpp"
#include "rewind/hdf5/hdf5_handles.hpp"
#include "rewind/neural/parameter_file.hpp"

namespace rwd::nn {
namespace {

using rwd::detail::fail;
using rwd::detail::Hdf5Handle;
using rwd::detail::Hdf5Kind;
using rwd::detail::QuietHdf5;

std::string join(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) {
    if (!text.empty()) text += ',';
    text += n;
  }
  return text;
}

std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> names;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) names.push_back(item);
  return names;
}

Hdf5Handle open_file(const std::filesystem::path& file, unsigned flags) {
  if (!std::filesystem::is_regular_file(file))
    throw StorageError("model file " + quoted(file) + " does not exist or is not a file");
  if (H5Fis_hdf5(file.c_str()) <= 0)
    throw StorageError("model file " + quoted(file) + " is not an HDF5 file");
  Hdf5Handle h5(H5Fopen(file.c_str(), flags, H5P_DEFAULT), Hdf5Kind::file);
  if (!h5.valid()) throw StorageError("model file " + quoted(file) + " cannot be opened");
  return h5;
}

}  // namespace

Mlp NeuralModel::network() const {
  std::vector<Index> widths{state_dimension() + (time_input ? 1 : 0)};
  widths.insert(widths.end(), hidden.begin(), hidden.end());
  widths.push_back(state_dimension());
  return Mlp(widths, activation);
}

NeuralField NeuralModel::field(Index batch) const {
  return NeuralField(network(), features, time_input, batch, time_shift, time_scale);
}

std::string NeuralModel::describe() const {
  std::string text = std::to_string(observed) + " observed";
  if (augment > 0) text += " + " + std::to_string(augment) + " augmented";
  text += time_input ? ", time input, " : ", ";
  return text + network().describe() + " on " + std::string(to_string(features)) + " features";
}

void NeuralModel::validate() const {
  if (observed < 1) fail<InvalidArgument>("model: observed = ", observed, " must be >= 1");
  if (augment < 0) fail<InvalidArgument>("model: augment = ", augment, " must be >= 0");
  // The network's input width is observed + augment (+1 with a time input): it must fit 64 bits
  // (the Mlp then refuses widths whose parameter count does not).
  if (augment > std::numeric_limits<Index>::max() - observed - 1)
    fail<InvalidArgument>("model: observed + augment = ", observed, " + ", augment,
                          " does not fit 64 bits");
  for (std::size_t i = 0; i < hidden.size(); ++i)
    if (hidden[i] < 1)
      fail<InvalidArgument>("model: hidden layer ", i + 1, " has width ", hidden[i],
                            "; widths must be >= 1");
  if (static_cast<Index>(names.size()) != observed || mean.size() != observed ||
      scale.size() != observed)
    fail<InvalidArgument>("model: ", names.size(), " names, ", mean.size(), " means and ",
                          scale.size(), " scales for ", observed, " observed components");
  if (!mean.allFinite() || !(scale.array() > 0.0).all() || !scale.allFinite())
    fail<InvalidArgument>("model: the normalisation needs finite means and scales > 0");
  if (!(std::isfinite(time_shift) && std::isfinite(time_scale) && time_scale > 0.0))
    fail<InvalidArgument>("model: the time input scaling needs a finite shift and a scale > 0");
  if (substeps < 1) fail<InvalidArgument>("model: substeps = ", substeps, " must be >= 1");
  if (adaptive && !(rtol >= 1e-15 && std::isfinite(rtol) && atol > 0.0 && std::isfinite(atol)))
    fail<InvalidArgument>(
        "model: adaptive steps need finite tolerances, rtol >= 1e-15 and atol "
        "> 0; rtol = ",
        rtol, ", atol = ", atol);
}

void save_model(const std::filesystem::path& file, const NeuralModel& model,
                const Eigen::VectorXd& theta) {
  model.validate();
  save_parameters(file, model.network(), theta);
  try {
    QuietHdf5 quiet;
    Hdf5Handle h5 = open_file(file, H5F_ACC_RDWR);
    const hid_t root = h5.get();
    detail::write_string_attribute(root, "model", "neural ode", file);
    detail::write_integer_attribute(root, "observed", model.observed, file);
    detail::write_integer_attribute(root, "augment", model.augment, file);
    detail::write_integer_attribute(root, "time_input", model.time_input ? 1 : 0, file);
    detail::write_string_attribute(root, "features", std::string(to_string(model.features)), file);
    detail::write_double_attribute(root, "time_shift", model.time_shift, file);
    detail::write_double_attribute(root, "time_scale", model.time_scale, file);
    detail::write_string_attribute(root, "names", join(model.names), file);
    detail::write_string_attribute(root, "method", model.method, file);
    detail::write_integer_attribute(root, "substeps", model.substeps, file);
    if (model.adaptive) {
      detail::write_double_attribute(root, "rtol", model.rtol, file);
      detail::write_double_attribute(root, "atol", model.atol, file);
    }
    detail::write_string_attribute(root, "training_options", model.training_options, file);
    detail::write_doubles(root, "normalization_mean", model.mean.data(),
                          static_cast<std::size_t>(model.mean.size()), file);
    detail::write_doubles(root, "normalization_scale", model.scale.data(),
                          static_cast<std::size_t>(model.scale.size()), file);
    if (h5.close() < 0) throw StorageError("model file " + quoted(file) + ": closing failed");
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(file, ignored);  // never leave half a model behind
    throw;
  }
}

std::string describe_file_network(const std::filesystem::path& file) {
  QuietHdf5 quiet;
  Hdf5Handle h5 = open_file(file, H5F_ACC_RDONLY);
  Hdf5Handle set(H5Dopen2(h5.get(), "layers", H5P_DEFAULT), Hdf5Kind::dataset);
  if (!set.valid()) return "(no /layers)";
  Hdf5Handle space(H5Dget_space(set.get()), Hdf5Kind::dataspace);
  hsize_t dims[2] = {0, 0};
  if (H5Sget_simple_extent_ndims(space.get()) != 2) return "(unreadable /layers)";
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  if (dims[1] != 2 || dims[0] < 1 || dims[0] > detail::kMaxFileLayers)
    return "(unreadable /layers)";
  std::vector<std::int64_t> table(dims[0] * 2);
  if (H5Dread(set.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, table.data()) < 0)
    return "(unreadable /layers)";
  std::string text = std::to_string(table[0]);
  for (hsize_t i = 0; i < dims[0]; ++i) {
    text += '-';
    text += std::to_string(table[2 * i + 1]);
  }
  if (detail::has_attribute(h5.get(), "activations"))
    text += " (" + detail::read_string_attribute(h5.get(), "activations", file) + ")";
  return text;
}

LoadedModel load_model(const std::filesystem::path& file) {
  LoadedModel loaded;
  NeuralModel& m = loaded.model;
  {
    QuietHdf5 quiet;
    Hdf5Handle h5 = open_file(file, H5F_ACC_RDONLY);
    const hid_t root = h5.get();
    if (!detail::has_attribute(root, "model")) {
      const bool parameters = detail::has_attribute(root, "format");
      throw StorageError(
          "model file " + quoted(file) +
          (parameters
               ? " holds the weights of a network but not how to use it (input features, "
                 "augmentation, time input, normalisation, integrator): it was written by an "
                 "older `rewind train spiral` or by nn::save_parameters. Use it with `rewind "
                 "train spiral --load-parameters`, or train again to write a complete model"
               : " is not a rewind model file (no 'model' attribute)"));
    }
    m.observed = detail::read_integer_attribute(root, "observed", file);
    m.augment = detail::read_integer_attribute(root, "augment", file);
    m.time_input = detail::read_integer_attribute(root, "time_input", file) != 0;
    try {
      m.features = parse_input_features(detail::read_string_attribute(root, "features", file));
    } catch (const InvalidArgument& e) {
      throw StorageError("model file " + quoted(file) + ": " + e.what());
    }
    m.time_shift = detail::read_double_attribute(root, "time_shift", file);
    m.time_scale = detail::read_double_attribute(root, "time_scale", file);
    m.names = split_names(detail::read_string_attribute(root, "names", file));
    m.method = detail::read_string_attribute(root, "method", file);
    m.substeps = detail::read_integer_attribute(root, "substeps", file);
    // Tolerances only in models trained with adaptive steps (and in none before them).
    m.adaptive = detail::has_attribute(root, "rtol");
    if (m.adaptive) {
      m.rtol = detail::read_double_attribute(root, "rtol", file);
      m.atol = detail::read_double_attribute(root, "atol", file);
    }
    m.training_options = detail::read_string_attribute(root, "training_options", file);
    const auto mean = detail::read_doubles(root, "normalization_mean", file, m.observed);
    const auto scale = detail::read_doubles(root, "normalization_scale", file, m.observed);
    m.mean = Eigen::Map<const Eigen::VectorXd>(mean.data(), m.observed);
    m.scale = Eigen::Map<const Eigen::VectorXd>(scale.data(), m.observed);

    // The hidden widths and activation from /layers: input, hidden…, output.
    const std::string activations = detail::read_string_attribute(root, "activations", file);
    Hdf5Handle set(H5Dopen2(root, "layers", H5P_DEFAULT), Hdf5Kind::dataset);
    Hdf5Handle space(set.valid() ? H5Dget_space(set.get()) : -1, Hdf5Kind::dataspace);
    hsize_t dims[2] = {0, 0};
    if (!set.valid() || H5Sget_simple_extent_ndims(space.get()) != 2 ||
        H5Sget_simple_extent_dims(space.get(), dims, nullptr) != 2 || dims[1] != 2 || dims[0] < 1 ||
        dims[0] > detail::kMaxFileLayers)
      throw StorageError("model file " + quoted(file) + ": /layers is missing or malformed");
    std::vector<std::int64_t> table(dims[0] * 2);
    if (H5Dread(set.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, table.data()) < 0)
      throw StorageError("model file " + quoted(file) + ": reading /layers failed");
    m.hidden.clear();
    for (hsize_t i = 0; i + 1 < dims[0]; ++i) m.hidden.push_back(table[2 * i + 1]);
    const std::string first = activations.substr(0, activations.find(','));
    try {
      m.activation = dims[0] > 1 ? parse_activation(first) : Activation::tanh;
    } catch (const InvalidArgument& e) {
      throw StorageError("model file " + quoted(file) + ": " + e.what());
    }
  }
  try {
    m.validate();
  } catch (const InvalidArgument& e) {
    throw StorageError("model file " + quoted(file) + ": " + e.what());
  }
  // The weights, with parameter_file's checks of the architecture against the one described.
  loaded.theta = load_parameters(file, m.network());
  return loaded;
}

}  // namespace rwd::nn
