// src/nn/parameter_file.cpp — see rewind/nn/parameter_file.hpp.
#include "rewind/nn/parameter_file.hpp"

#include "rewind/checkpoint/detail/hdf5_handles.hpp"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "rewind/error.hpp"

namespace rwd::nn {
namespace {

constexpr const char* kFormat = "rewind mlp parameters";
constexpr std::int64_t kFormatVersion = 1;

using rwd::detail::QuietHdf5;

// An identifier closed on scope exit; a negative one (HDF5's failure) is an error naming the file.
class Handle : public rwd::detail::Hdf5Id {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t), const std::filesystem::path& file, const std::string& what)
      : Hdf5Id(id, close) {
    if (!valid()) throw StorageError("parameter file '" + file.string() + "': " + what);
  }
};

void check(herr_t status, const std::filesystem::path& file, const std::string& what) {
  if (status < 0) throw StorageError("parameter file '" + file.string() + "': " + what);
}

std::string activation_list(const Mlp& mlp) {
  std::string list;
  for (const DenseLayerShape& l : mlp.layers()) {
    if (!list.empty()) list += ',';
    list += to_string(l.activation);
  }
  return list;
}

void write_string(hid_t object, const char* name, const std::string& value, const std::filesystem::path& file) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose, file, "string type");
  check(H5Tset_size(type.get(), std::max<std::size_t>(value.size(), 1)), file, "string type");
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, file, "attribute space");
  Handle attribute(H5Acreate2(object, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose, file,
                   std::string("creating attribute ") + name);
  check(H5Awrite(attribute.get(), type.get(), value.c_str()), file, std::string("writing attribute ") + name);
}

std::string read_string(hid_t object, const char* name, const std::filesystem::path& file) {
  if (H5Aexists(object, name) <= 0)
    throw StorageError("parameter file '" + file.string() + "' has no attribute '" + name +
                       "': not a rewind parameter file");
  Handle attribute(H5Aopen(object, name, H5P_DEFAULT), H5Aclose, file, std::string("opening attribute ") + name);
  Handle type(H5Aget_type(attribute.get()), H5Tclose, file, std::string("attribute type of ") + name);
  if (H5Tget_class(type.get()) != H5T_STRING)
    throw StorageError("parameter file '" + file.string() + "': attribute " + name + " is not a string");
  const std::size_t size = H5Tget_size(type.get());
  std::vector<char> buffer(size + 1, '\0');
  Handle memory(H5Tcopy(H5T_C_S1), H5Tclose, file, "string type");
  check(H5Tset_size(memory.get(), size + 1), file, "string type");
  check(H5Aread(attribute.get(), memory.get(), buffer.data()), file, std::string("reading attribute ") + name);
  return buffer.data();
}

}  // namespace

void save_parameters(const std::filesystem::path& file, const Mlp& mlp, const Eigen::VectorXd& theta) {
  if (theta.size() != mlp.parameter_size())
    detail::fail<InvalidArgument>("save_parameters: theta has ", theta.size(), " values but the network ",
                                  mlp.describe(), " has ", mlp.parameter_size());
  if (!theta.allFinite())
    detail::fail<InvalidArgument>("save_parameters: theta contains NaN or Inf; refusing to save it to '",
                                  file.string(), "'");
  QuietHdf5 quiet;
  Handle h5(H5Fcreate(file.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT), H5Fclose, file,
            std::filesystem::exists(file) ? "exists already; not overwritten" : "cannot be created");
  const hsize_t n = static_cast<hsize_t>(theta.size());
  {
    Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose, file, "theta space");
    Handle set(H5Dcreate2(h5.get(), "theta", H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
               H5Dclose, file, "creating /theta");
    check(H5Dwrite(set.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, theta.data()), file,
          "writing /theta");
  }
  {
    std::vector<std::int64_t> shapes;
    for (const DenseLayerShape& l : mlp.layers()) {
      shapes.push_back(l.inputs);
      shapes.push_back(l.outputs);
    }
    const hsize_t dims[2] = {mlp.layers().size(), 2};
    Handle space(H5Screate_simple(2, dims, nullptr), H5Sclose, file, "layers space");
    Handle set(H5Dcreate2(h5.get(), "layers", H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
               H5Dclose, file, "creating /layers");
    check(H5Dwrite(set.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, shapes.data()), file,
          "writing /layers");
  }
  write_string(h5.get(), "format", kFormat, file);
  write_string(h5.get(), "activations", activation_list(mlp), file);
  write_string(h5.get(), "description", mlp.describe(), file);
  {
    Handle space(H5Screate(H5S_SCALAR), H5Sclose, file, "attribute space");
    Handle attribute(H5Acreate2(h5.get(), "format_version", H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                     H5Aclose, file, "creating attribute format_version");
    check(H5Awrite(attribute.get(), H5T_NATIVE_INT64, &kFormatVersion), file, "writing format_version");
  }
  check(H5Fflush(h5.get(), H5F_SCOPE_LOCAL), file, "flushing (is the disk full?)");
}

Eigen::VectorXd load_parameters(const std::filesystem::path& file, const Mlp& mlp) {
  if (!std::filesystem::exists(file)) throw StorageError("parameter file '" + file.string() + "' does not exist");
  QuietHdf5 quiet;
  if (H5Fis_hdf5(file.c_str()) <= 0)
    throw StorageError("parameter file '" + file.string() + "' is not an HDF5 file (or is truncated)");
  Handle h5(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, file, "cannot be opened");
  if (read_string(h5.get(), "format", file) != kFormat)
    throw StorageError("parameter file '" + file.string() + "' is not a rewind parameter file");

  // Architecture: layer shapes, then activations.
  Handle layers(H5Dopen2(h5.get(), "layers", H5P_DEFAULT), H5Dclose, file, "has no /layers dataset");
  Handle layer_space(H5Dget_space(layers.get()), H5Sclose, file, "/layers space");
  hsize_t dims[2] = {0, 0};
  if (H5Sget_simple_extent_ndims(layer_space.get()) != 2 || H5Sget_simple_extent_dims(layer_space.get(), dims, nullptr) != 2 ||
      dims[1] != 2)
    throw StorageError("parameter file '" + file.string() + "': /layers must be a [layers × 2] table");
  std::vector<std::int64_t> shapes(dims[0] * 2);
  check(H5Dread(layers.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, shapes.data()), file,
        "reading /layers");
  std::string file_architecture;
  for (hsize_t i = 0; i < dims[0]; ++i)
    file_architecture += (i == 0 ? std::to_string(shapes[0]) : std::string()) + "-" + std::to_string(shapes[2 * i + 1]);
  const std::string activations = read_string(h5.get(), "activations", file);
  std::string our_architecture;
  for (std::size_t i = 0; i < mlp.layers().size(); ++i)
    our_architecture += (i == 0 ? std::to_string(mlp.input_size()) : std::string()) + "-" +
                        std::to_string(mlp.layers()[i].outputs);
  bool same_shapes = dims[0] == mlp.layers().size();
  for (std::size_t i = 0; same_shapes && i < mlp.layers().size(); ++i)
    same_shapes = shapes[2 * i] == mlp.layers()[i].inputs && shapes[2 * i + 1] == mlp.layers()[i].outputs;
  if (!same_shapes)
    throw StorageError("parameter file '" + file.string() + "' holds a " + file_architecture +
                       " network but the network given is " + our_architecture);
  if (activations != activation_list(mlp))
    throw StorageError("parameter file '" + file.string() + "' has activations " + activations +
                       " but the network given has " + activation_list(mlp));

  Handle set(H5Dopen2(h5.get(), "theta", H5P_DEFAULT), H5Dclose, file, "has no /theta dataset");
  Handle space(H5Dget_space(set.get()), H5Sclose, file, "/theta space");
  hsize_t n = 0;
  if (H5Sget_simple_extent_ndims(space.get()) != 1 || H5Sget_simple_extent_dims(space.get(), &n, nullptr) != 1 ||
      n != static_cast<hsize_t>(mlp.parameter_size()))
    throw StorageError("parameter file '" + file.string() + "': /theta has " + std::to_string(n) +
                       " values but the network has " + std::to_string(mlp.parameter_size()));
  Eigen::VectorXd theta(mlp.parameter_size());
  check(H5Dread(set.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, theta.data()), file,
        "reading /theta (is the file truncated?)");
  if (!theta.allFinite())
    throw StorageError("parameter file '" + file.string() + "': /theta contains NaN or Inf");
  return theta;
}

}  // namespace rwd::nn
