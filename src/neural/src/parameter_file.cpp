// src/neural/src/parameter_file.cpp — see rewind/neural/parameter_file.hpp. HDF5 1.10 C API; POSIX
// I/O for the final write.
#include "rewind/neural/parameter_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "rewind/durable_write.hpp"
#include "rewind/error.hpp"
#include "rewind/format.hpp"
#include "rewind/hdf5/hdf5_handles.hpp"

namespace rwd::nn {
namespace {

// As many layers as a /layers table may list (the same limit as hdf5_fields.hpp's, for model
// files): more is a damaged file, refused before the table is allocated.
constexpr hsize_t kMaxFileLayers = hsize_t{1} << 16;

constexpr const char* kFormat = "rewind mlp parameters";
constexpr std::int64_t kFormatVersion = 1;

using rwd::detail::Hdf5Handle;
using rwd::detail::Hdf5Kind;
using rwd::detail::QuietHdf5;

[[noreturn]] void fail_file(const std::filesystem::path& file, const std::string& what) {
  throw StorageError("parameter file " + quoted(file) + ": " + what);
}

// `id` in a handle that closes it; a negative one (HDF5's failure value) is an error naming the
// file and what was being done.
Hdf5Handle checked(hid_t id, Hdf5Kind kind, const std::filesystem::path& file,
                   const std::string& what) {
  if (id < 0) fail_file(file, what);
  return Hdf5Handle(id, kind);
}

void check(herr_t status, const std::filesystem::path& file, const std::string& what) {
  if (status < 0) fail_file(file, what);
}

// "tanh,identity": one name per layer, in order.
std::string activation_names(const std::vector<DenseLayerShape>& layers) {
  std::string list;
  for (const DenseLayerShape& l : layers) {
    if (!list.empty()) list += ',';
    list += to_string(l.activation);
  }
  return list;
}

// "2-50-2": the input width, then each layer's output width.
std::string width_list(const std::vector<DenseLayerShape>& layers) {
  std::string text =
      layers.empty() ? std::string("(no layers)") : std::to_string(layers.front().inputs);
  for (const DenseLayerShape& l : layers) {
    text += '-';
    text += std::to_string(l.outputs);
  }
  return text;
}

void write_string(hid_t object, const char* name, const std::string& value,
                  const std::filesystem::path& file) {
  Hdf5Handle type = checked(H5Tcopy(H5T_C_S1), Hdf5Kind::datatype, file, "string type");
  check(H5Tset_size(type.get(), value.empty() ? 1 : value.size()), file, "string type");
  Hdf5Handle space = checked(H5Screate(H5S_SCALAR), Hdf5Kind::dataspace, file, "attribute space");
  Hdf5Handle attribute =
      checked(H5Acreate2(object, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
              Hdf5Kind::attribute, file, std::string("creating attribute ") + name);
  check(H5Awrite(attribute.get(), type.get(), value.c_str()), file,
        std::string("writing attribute ") + name);
}

// The attribute `name` of `object`; a file without it is not a rewind parameter file.
Hdf5Handle open_attribute(hid_t object, const char* name, const std::filesystem::path& file) {
  if (H5Aexists(object, name) <= 0)
    fail_file(file, std::string("has no attribute '") + name + "': not a rewind parameter file");
  return checked(H5Aopen(object, name, H5P_DEFAULT), Hdf5Kind::attribute, file,
                 std::string("opening attribute ") + name);
}

// A scalar string attribute, fixed-length (as rewind writes it) or variable-length (as h5py
// writes a Python str).
std::string read_string(hid_t object, const char* name, const std::filesystem::path& file) {
  const Hdf5Handle attribute = open_attribute(object, name, file);
  Hdf5Handle type = checked(H5Aget_type(attribute.get()), Hdf5Kind::datatype, file,
                            std::string("type of attribute ") + name);
  if (H5Tget_class(type.get()) != H5T_STRING)
    fail_file(file, std::string("attribute ") + name + " is not a string");
  Hdf5Handle space = checked(H5Aget_space(attribute.get()), Hdf5Kind::dataspace, file,
                             std::string("space of attribute ") + name);
  if (H5Sget_simple_extent_npoints(space.get()) != 1)
    fail_file(file, std::string("attribute ") + name + " is not a single string");
  if (H5Tis_variable_str(type.get()) > 0) {
    Hdf5Handle memory = checked(H5Tcopy(H5T_C_S1), Hdf5Kind::datatype, file, "string type");
    check(H5Tset_size(memory.get(), H5T_VARIABLE), file, "string type");
    char* text = nullptr;
    check(H5Aread(attribute.get(), memory.get(), &text), file,
          std::string("reading attribute ") + name);
    std::string value = text ? text : "";
    H5free_memory(text);
    return value;
  }
  const std::size_t size = H5Tget_size(type.get());
  std::vector<char> buffer(size + 1, '\0');
  Hdf5Handle memory = checked(H5Tcopy(H5T_C_S1), Hdf5Kind::datatype, file, "string type");
  check(H5Tset_size(memory.get(), size + 1), file, "string type");
  check(H5Aread(attribute.get(), memory.get(), buffer.data()), file,
        std::string("reading attribute ") + name);
  return buffer.data();
}

std::int64_t read_integer(hid_t object, const char* name, const std::filesystem::path& file) {
  const Hdf5Handle attribute = open_attribute(object, name, file);
  Hdf5Handle type = checked(H5Aget_type(attribute.get()), Hdf5Kind::datatype, file,
                            std::string("type of attribute ") + name);
  Hdf5Handle space = checked(H5Aget_space(attribute.get()), Hdf5Kind::dataspace, file,
                             std::string("space of attribute ") + name);
  if (H5Tget_class(type.get()) != H5T_INTEGER || H5Sget_simple_extent_npoints(space.get()) != 1)
    fail_file(file, std::string("attribute ") + name + " is not a single integer");
  std::int64_t value = 0;
  check(H5Aread(attribute.get(), H5T_NATIVE_INT64, &value), file,
        std::string("reading attribute ") + name);
  return value;
}

// The architecture the file records: /layers (inputs, outputs per row) and the activations
// attribute, one name per layer.
std::vector<DenseLayerShape> read_architecture(hid_t h5, const std::filesystem::path& file) {
  if (H5Lexists(h5, "layers", H5P_DEFAULT) <= 0) fail_file(file, "has no /layers dataset");
  Hdf5Handle set =
      checked(H5Dopen2(h5, "layers", H5P_DEFAULT), Hdf5Kind::dataset, file, "opening /layers");
  Hdf5Handle type = checked(H5Dget_type(set.get()), Hdf5Kind::datatype, file, "type of /layers");
  Hdf5Handle space =
      checked(H5Dget_space(set.get()), Hdf5Kind::dataspace, file, "space of /layers");
  hsize_t dims[2] = {0, 0};
  if (H5Tget_class(type.get()) != H5T_INTEGER || H5Sget_simple_extent_ndims(space.get()) != 2 ||
      H5Sget_simple_extent_dims(space.get(), dims, nullptr) != 2 || dims[1] != 2 || dims[0] < 1 ||
      dims[0] > kMaxFileLayers)
    fail_file(file, "/layers must be an integer table with one (inputs, outputs) row per layer");
  std::vector<std::int64_t> table(dims[0] * 2);
  check(H5Dread(set.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, table.data()), file,
        "reading /layers (is the file truncated?)");

  const std::string names = read_string(h5, "activations", file);
  std::vector<Activation> activations;
  for (std::size_t start = 0;;) {
    const std::size_t comma = names.find(',', start);
    const std::string name =
        names.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    try {
      activations.push_back(parse_activation(name));
    } catch (const InvalidArgument&) {
      fail_file(file, "layer " + std::to_string(activations.size()) +
                          " has an unknown activation '" + name + "' (attribute activations = \"" +
                          names + "\")");
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (activations.size() != dims[0])
    fail_file(file, "/layers has " + std::to_string(dims[0]) +
                        " layers but attribute activations names " +
                        std::to_string(activations.size()) + " (\"" + names + "\")");

  std::vector<DenseLayerShape> layers;
  for (hsize_t i = 0; i < dims[0]; ++i)
    layers.push_back({table[2 * i], table[2 * i + 1], activations[i]});
  return layers;
}

// "" when the file's layers are the network's; else every difference, e.g. "layer 0 has 9
// outputs in the file but 10 in the network given".
std::string differences(const std::vector<DenseLayerShape>& in_file, const Mlp& mlp) {
  const std::vector<DenseLayerShape>& ours = mlp.layers();
  std::string text;
  const auto add = [&text](const std::string& item) { text += (text.empty() ? "" : "; ") + item; };
  if (in_file.size() != ours.size()) {
    // Layer-by-layer differences would mostly be consequences of this one.
    add("the file has " + std::to_string(in_file.size()) + " layers but the network given has " +
        std::to_string(ours.size()));
    return text;
  }
  for (std::size_t i = 0; i < ours.size(); ++i) {
    const std::string layer = "layer " + std::to_string(i) + " has ";
    if (in_file[i].inputs != ours[i].inputs)
      add(layer + std::to_string(in_file[i].inputs) + " inputs in the file but " +
          std::to_string(ours[i].inputs) + " in the network given");
    if (in_file[i].outputs != ours[i].outputs)
      add(layer + std::to_string(in_file[i].outputs) + " outputs in the file but " +
          std::to_string(ours[i].outputs) + " in the network given");
    if (in_file[i].activation != ours[i].activation)
      add(layer + "activation " + std::string(to_string(in_file[i].activation)) +
          " in the file but " + std::string(to_string(ours[i].activation)) +
          " in the network given");
  }
  return text;
}

// Everything a parameter file holds, written into the freshly created file h5.
void write_contents(hid_t h5, const Mlp& mlp, const Eigen::VectorXd& theta,
                    const std::filesystem::path& file) {
  const hsize_t n = static_cast<hsize_t>(theta.size());
  {
    Hdf5Handle space =
        checked(H5Screate_simple(1, &n, nullptr), Hdf5Kind::dataspace, file, "space of /theta");
    Hdf5Handle set = checked(
        H5Dcreate2(h5, "theta", H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
        Hdf5Kind::dataset, file, "creating /theta");
    check(H5Dwrite(set.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, theta.data()), file,
          "writing /theta");
  }
  {
    std::vector<std::int64_t> table;
    for (const DenseLayerShape& l : mlp.layers()) {
      table.push_back(l.inputs);
      table.push_back(l.outputs);
    }
    const hsize_t dims[2] = {mlp.layers().size(), 2};
    Hdf5Handle space =
        checked(H5Screate_simple(2, dims, nullptr), Hdf5Kind::dataspace, file, "space of /layers");
    Hdf5Handle set = checked(
        H5Dcreate2(h5, "layers", H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
        Hdf5Kind::dataset, file, "creating /layers");
    check(H5Dwrite(set.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, table.data()), file,
          "writing /layers");
  }
  write_string(h5, "format", kFormat, file);
  {
    Hdf5Handle space = checked(H5Screate(H5S_SCALAR), Hdf5Kind::dataspace, file, "attribute space");
    Hdf5Handle attribute = checked(
        H5Acreate2(h5, "format_version", H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
        Hdf5Kind::attribute, file, "creating attribute format_version");
    check(H5Awrite(attribute.get(), H5T_NATIVE_INT64, &kFormatVersion), file,
          "writing attribute format_version");
  }
  write_string(h5, "activations", activation_names(mlp.layers()), file);
  write_string(h5, "description", mlp.describe(), file);
}

// The whole HDF5 file, built in memory (the core driver, no backing store). HDF5 never touches
// the disk here: after a failed write (a full disk) HDF5 1.10 can keep a half-closed file
// that crashes the library's clean-up at exit, so the bytes are written by write_new_file,
// whose failures are plain system errors.
std::vector<char> file_image(const Mlp& mlp, const Eigen::VectorXd& theta,
                             const std::filesystem::path& file) {
  QuietHdf5 quiet;
  Hdf5Handle access =
      checked(H5Pcreate(H5P_FILE_ACCESS), Hdf5Kind::property_list, file, "file access properties");
  check(H5Pset_fapl_core(access.get(), 64 * 1024, /*backing_store=*/0), file, "in-memory driver");
  Hdf5Handle h5 = checked(H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get()),
                          Hdf5Kind::file, file, "creating the file in memory");
  write_contents(h5.get(), mlp, theta, file);
  check(H5Fflush(h5.get(), H5F_SCOPE_LOCAL), file, "flushing the file in memory");
  const ssize_t size = H5Fget_file_image(h5.get(), nullptr, 0);
  if (size <= 0) fail_file(file, "measuring the file image");
  std::vector<char> image(static_cast<std::size_t>(size));
  if (H5Fget_file_image(h5.get(), image.data(), image.size()) != size)
    fail_file(file, "copying the file image");
  return image;
}

// Creates `file` (never replacing one: O_EXCL) and writes `bytes` to it durably (fsync). On any
// failure the partial file is removed and the system's reason is reported.
void write_new_file(const std::filesystem::path& file, const std::vector<char>& bytes) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int error = errno;
    fail_file(file, error == EEXIST ? std::string("exists already; not overwritten")
                                    : "cannot be created: " + std::string(std::strerror(error)));
  }
  const int error = write_all_and_close(fd, bytes.data(), bytes.size());
  if (error != 0) {
    std::error_code ignored;
    std::filesystem::remove(file, ignored);
    fail_file(file, "writing failed (" + std::string(std::strerror(error)) +
                        "); the partial file was removed");
  }
}

}  // namespace

void save_parameters(const std::filesystem::path& file, const Mlp& mlp,
                     const Eigen::VectorXd& theta) {
  if (theta.size() != mlp.parameter_size())
    detail::fail<InvalidArgument>("save_parameters: theta has ", theta.size(),
                                  " values but the network ", mlp.describe(), " has ",
                                  mlp.parameter_size());
  if (!theta.allFinite())
    detail::fail<InvalidArgument>(
        "save_parameters: theta contains NaN or Inf; refusing to save it to ", quoted(file));
  const std::vector<char> image = file_image(mlp, theta, file);
  write_new_file(file, image);
}

Eigen::VectorXd load_parameters(const std::filesystem::path& file, const Mlp& mlp) {
  std::error_code error;
  if (!std::filesystem::exists(file, error)) fail_file(file, "does not exist");
  if (!std::filesystem::is_regular_file(file, error)) fail_file(file, "is not a regular file");
  QuietHdf5 quiet;
  if (H5Fis_hdf5(file.c_str()) <= 0)
    fail_file(file, "is not an HDF5 file (or its header is damaged)");
  Hdf5Handle h5 = checked(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), Hdf5Kind::file, file,
                          "cannot be opened (truncated or damaged?)");
  if (read_string(h5.get(), "format", file) != kFormat)
    fail_file(file, "is not a rewind parameter file");
  const std::int64_t version = read_integer(h5.get(), "format_version", file);
  if (version != kFormatVersion)
    fail_file(file, "has format_version " + std::to_string(version) +
                        "; this build of rewind reads version " + std::to_string(kFormatVersion));

  const std::vector<DenseLayerShape> in_file = read_architecture(h5.get(), file);
  const std::string mismatch = differences(in_file, mlp);
  if (!mismatch.empty())
    fail_file(file, "holds parameters of a " + width_list(in_file) + " network (" +
                        activation_names(in_file) + ") but the network given is " +
                        width_list(mlp.layers()) + " (" + activation_names(mlp.layers()) +
                        "): " + mismatch);

  if (H5Lexists(h5.get(), "theta", H5P_DEFAULT) <= 0) fail_file(file, "has no /theta dataset");
  Hdf5Handle set =
      checked(H5Dopen2(h5.get(), "theta", H5P_DEFAULT), Hdf5Kind::dataset, file, "opening /theta");
  Hdf5Handle type = checked(H5Dget_type(set.get()), Hdf5Kind::datatype, file, "type of /theta");
  Hdf5Handle space = checked(H5Dget_space(set.get()), Hdf5Kind::dataspace, file, "space of /theta");
  // float64 only: a float32 θ would load "successfully" with digits the network never had.
  if (H5Tget_class(type.get()) != H5T_FLOAT || H5Tget_size(type.get()) != 8)
    fail_file(file, "/theta is not float64");
  hsize_t n = 0;
  if (H5Sget_simple_extent_ndims(space.get()) != 1 ||
      H5Sget_simple_extent_dims(space.get(), &n, nullptr) != 1 ||
      n != static_cast<hsize_t>(mlp.parameter_size()))
    fail_file(file, "/theta has " + std::to_string(H5Sget_simple_extent_npoints(space.get())) +
                        " values but the network " + mlp.describe() + " has " +
                        std::to_string(mlp.parameter_size()));
  Eigen::VectorXd theta(mlp.parameter_size());
  check(H5Dread(set.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, theta.data()), file,
        "reading /theta (is the file truncated?)");
  if (!theta.allFinite()) fail_file(file, "/theta contains NaN or Inf");
  return theta;
}

}  // namespace rwd::nn
