// src/fit/src/observations.cpp — validating observations and their HDF5 files (1.10 C API); see
// rewind/fit/observations.hpp.
#include "rewind/fit/observations.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <string_view>
#include <system_error>
#include <unordered_set>
#include <utility>

#include "rewind/durable_write.hpp"
#include "rewind/error.hpp"
#include "rewind/hdf5/hdf5_errors.hpp"
#include "rewind/hdf5/hdf5_handles.hpp"

namespace rwd {
namespace {

using detail::fail;
using detail::hdf5_error_suffix;
using detail::Hdf5Handle;
using detail::Hdf5Kind;
using detail::QuietHdf5;

constexpr const char* kFormat = "rewind observations";
constexpr std::int64_t kFormatVersion = 2;
// Version 1 lacks the method's settings; it reads with their defaults.
constexpr std::int64_t kOldestFormatVersion = 1;

// (Built by appending: GCC 12 warns falsely (-Wrestrict) about "literal" + std::string.)
std::string where_of(const std::filesystem::path& file) {
  std::string text = "observation file '";
  text += file.string();
  text += '\'';
  return text;
}

[[noreturn]] void fail_file(const std::filesystem::path& file, const std::string& what) {
  throw StorageError(where_of(file) + ": " + what);
}

// `id` in a handle that closes it; a negative one (HDF5's failure value) is a StorageError
// naming the file, what was being done and HDF5's own reason.
Hdf5Handle checked(hid_t id, Hdf5Kind kind, const std::filesystem::path& file,
                   const std::string& what) {
  if (id < 0) fail_file(file, what + hdf5_error_suffix());
  return Hdf5Handle(id, kind);
}

void check(herr_t status, const std::filesystem::path& file, const std::string& what) {
  if (status < 0) fail_file(file, what + hdf5_error_suffix());
}

bool valid_name(const std::string& name) {
  if (name.empty() || name.front() == ' ' || name.back() == ' ') return false;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (c == ',' || u < 0x20 || u == 0x7f) return false;
  }
  return true;
}

std::string join(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) {
    if (!text.empty()) text += ',';
    text += name;
  }
  return text;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> names;
  if (text.empty()) return names;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = text.find(',', begin);
    names.push_back(
        text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
    if (comma == std::string::npos) return names;
    begin = comma + 1;
  }
}

// ---------------------------------------------------------------------------------------------
// Writing: the whole file is built in memory (HDF5's core driver, no backing store), then its
// bytes are written with plain system calls. HDF5 never touches the disk: after a failed write
// (a full disk) HDF5 1.10 can keep a half-closed file that crashes its clean-up at exit, while a
// failed write(2) is an ordinary error that removes the temporary file.

void write_string(hid_t object, const char* name, const std::string& value,
                  const std::filesystem::path& file) {
  Hdf5Handle type = checked(H5Tcopy(H5T_C_S1), Hdf5Kind::datatype, file, "string type");
  check(H5Tset_size(type.get(), value.empty() ? 1 : value.size()), file, "string type");
  Hdf5Handle space = checked(H5Screate(H5S_SCALAR), Hdf5Kind::dataspace, file, "attribute extent");
  Hdf5Handle attribute =
      checked(H5Acreate2(object, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
              Hdf5Kind::attribute, file, std::string("creating attribute ") + name);
  check(H5Awrite(attribute.get(), type.get(), value.c_str()), file,
        std::string("writing attribute ") + name);
}

// A scalar attribute of a numeric type: `file_type` on disk, `memory_type` for `value`.
void write_scalar(hid_t object, const char* name, hid_t file_type, hid_t memory_type,
                  const void* value, const std::filesystem::path& file) {
  Hdf5Handle space = checked(H5Screate(H5S_SCALAR), Hdf5Kind::dataspace, file, "attribute extent");
  Hdf5Handle attribute =
      checked(H5Acreate2(object, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
              Hdf5Kind::attribute, file, std::string("creating attribute ") + name);
  check(H5Awrite(attribute.get(), memory_type, value), file,
        std::string("writing attribute ") + name);
}

void write_dataset(hid_t h5, const char* name, int rank, const hsize_t* extent, hid_t file_type,
                   hid_t memory_type, const void* values, const std::filesystem::path& file) {
  Hdf5Handle space = checked(H5Screate_simple(rank, extent, nullptr), Hdf5Kind::dataspace, file,
                             std::string("extent of /") + name);
  Hdf5Handle set =
      checked(H5Dcreate2(h5, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
              Hdf5Kind::dataset, file, std::string("creating /") + name);
  check(H5Dwrite(set.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values), file,
        std::string("writing /") + name);
}

void write_contents(hid_t h5, const Observations& obs, const std::filesystem::path& file) {
  write_string(h5, "format", kFormat, file);
  write_scalar(h5, "format_version", H5T_STD_I64LE, H5T_NATIVE_INT64, &kFormatVersion, file);
  write_string(h5, "problem", obs.problem, file);
  const std::int64_t size = obs.size, state_size = obs.state_size, steps = obs.steps;
  const std::int64_t offset = obs.field.offset, count = obs.field.count;
  write_scalar(h5, "size", H5T_STD_I64LE, H5T_NATIVE_INT64, &size, file);
  write_scalar(h5, "state_size", H5T_STD_I64LE, H5T_NATIVE_INT64, &state_size, file);
  write_string(h5, "method", obs.method, file);
  write_scalar(h5, "dt", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &obs.dt, file);
  write_scalar(h5, "steps", H5T_STD_I64LE, H5T_NATIVE_INT64, &steps, file);
  write_string(h5, "field", obs.field.name, file);
  write_scalar(h5, "field_offset", H5T_STD_I64LE, H5T_NATIVE_INT64, &offset, file);
  write_scalar(h5, "field_count", H5T_STD_I64LE, H5T_NATIVE_INT64, &count, file);
  write_scalar(h5, "noise", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &obs.noise, file);
  write_scalar(h5, "seed", H5T_STD_U64LE, H5T_NATIVE_UINT64, &obs.seed, file);
  write_string(h5, "parameter_names", join(obs.parameter_names), file);
  const MethodSettings& method = obs.method_settings;
  write_scalar(h5, "rtol", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &method.rtol, file);
  write_scalar(h5, "atol", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &method.atol, file);
  write_string(h5, "linear_solver", method.linear_solver, file);
  write_scalar(h5, "newton_rtol", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &method.newton_rtol, file);
  write_scalar(h5, "newton_atol", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &method.newton_atol, file);

  const hsize_t p = static_cast<hsize_t>(obs.parameters.size());
  write_dataset(h5, "parameters", 1, &p, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, obs.parameters.data(),
                file);
  const hsize_t n = static_cast<hsize_t>(obs.initial_state.size());
  write_dataset(h5, "initial_state", 1, &n, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                obs.initial_state.data(), file);
  const std::vector<std::int64_t> observed(obs.observed_steps.begin(), obs.observed_steps.end());
  const hsize_t k = observed.size();
  write_dataset(h5, "observed_steps", 1, &k, H5T_STD_I64LE, H5T_NATIVE_INT64, observed.data(),
                file);
  // Our column-major count × K matrix is, byte for byte, the row-major [K × count] dataset: one
  // row per observed step, as h5py shows it.
  const hsize_t extent[2] = {k, static_cast<hsize_t>(obs.field.count)};
  write_dataset(h5, "data", 2, extent, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, obs.data.data(), file);
}

std::vector<char> file_image(const Observations& obs, const std::filesystem::path& file) {
  QuietHdf5 quiet;
  Hdf5Handle access =
      checked(H5Pcreate(H5P_FILE_ACCESS), Hdf5Kind::property_list, file, "file access properties");
  check(H5Pset_fapl_core(access.get(), 64 * 1024, /*backing_store=*/0), file, "in-memory driver");
  Hdf5Handle h5 = checked(H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get()),
                          Hdf5Kind::file, file, "creating the file in memory");
  write_contents(h5.get(), obs, file);
  check(H5Fflush(h5.get(), H5F_SCOPE_LOCAL), file, "flushing the file in memory");
  const ssize_t size = H5Fget_file_image(h5.get(), nullptr, 0);
  if (size <= 0) fail_file(file, "measuring the file image" + hdf5_error_suffix());
  std::vector<char> image(static_cast<std::size_t>(size));
  if (H5Fget_file_image(h5.get(), image.data(), image.size()) != size)
    fail_file(file, "copying the file image" + hdf5_error_suffix());
  return image;
}

// Writes `bytes` durably (fsync) to a new file `temporary`; on failure removes it and reports
// the system's reason against `file`.
void write_temporary(const std::filesystem::path& temporary, const std::vector<char>& bytes,
                     const std::filesystem::path& file) {
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) fail_file(file, std::string("cannot be written: ") + std::strerror(errno));
  const int error = write_all_and_close(fd, bytes.data(), bytes.size());
  if (error != 0) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    fail_file(file, std::string("writing failed (") + std::strerror(error) +
                        "); nothing was left behind");
  }
}

// Moves the finished temporary file to `file`. Without `overwrite` a hard link puts it in place
// only if no file of that name appeared meanwhile (link(2) never replaces); file systems without
// hard links fall back to a check and a rename.
void move_into_place(const std::filesystem::path& temporary, const std::filesystem::path& file,
                     bool overwrite) {
  std::error_code error;
  if (!overwrite) {
    if (::link(temporary.c_str(), file.c_str()) == 0) {
      std::filesystem::remove(temporary, error);
      return;
    }
    const int reason = errno;
    if (reason == EEXIST) {
      std::filesystem::remove(temporary, error);
      fail_file(file, "exists already; not overwritten");
    }
    if (reason != EPERM && reason != ENOTSUP && reason != EOPNOTSUPP && reason != EMLINK) {
      std::filesystem::remove(temporary, error);
      fail_file(file, std::string("cannot be created: ") + std::strerror(reason));
    }
    if (std::filesystem::exists(file, error)) {
      std::filesystem::remove(temporary, error);
      fail_file(file, "exists already; not overwritten");
    }
  }
  std::filesystem::rename(temporary, file, error);
  if (error) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    fail_file(file, "cannot be put in place: " + error.message());
  }
}

// ---------------------------------------------------------------------------------------------
// Reading

Hdf5Handle open_attribute(hid_t object, const char* name, const std::filesystem::path& file) {
  if (H5Aexists(object, name) <= 0)
    fail_file(file, std::string("has no attribute '") + name + "' (is it damaged?)");
  return checked(H5Aopen(object, name, H5P_DEFAULT), Hdf5Kind::attribute, file,
                 std::string("opening attribute '") + name + "'");
}

// A scalar string attribute, fixed-length (as rewind writes it) or variable-length (as h5py
// writes a Python str).
std::string read_string(hid_t object, const char* name, const std::filesystem::path& file) {
  Hdf5Handle attribute = open_attribute(object, name, file);
  Hdf5Handle type = checked(H5Aget_type(attribute.get()), Hdf5Kind::datatype, file,
                            std::string("type of attribute '") + name + "'");
  Hdf5Handle space = checked(H5Aget_space(attribute.get()), Hdf5Kind::dataspace, file,
                             std::string("extent of attribute '") + name + "'");
  if (H5Tget_class(type.get()) != H5T_STRING || H5Sget_simple_extent_npoints(space.get()) != 1)
    fail_file(file, std::string("attribute '") + name + "' is not a single string");
  Hdf5Handle memory = checked(H5Tcopy(H5T_C_S1), Hdf5Kind::datatype, file, "string type");
  if (H5Tis_variable_str(type.get()) > 0) {
    check(H5Tset_size(memory.get(), H5T_VARIABLE), file, "string type");
    char* text = nullptr;
    check(H5Aread(attribute.get(), memory.get(), &text), file,
          std::string("reading attribute '") + name + "'");
    std::string value = text ? text : "";
    H5free_memory(text);
    return value;
  }
  const std::size_t size = H5Tget_size(type.get());
  std::vector<char> buffer(size + 1, '\0');
  check(H5Tset_size(memory.get(), size + 1), file, "string type");
  check(H5Aread(attribute.get(), memory.get(), buffer.data()), file,
        std::string("reading attribute '") + name + "'");
  return buffer.data();
}

// A scalar numeric attribute read as `memory_type`; `integer` says which class it must have.
void read_scalar(hid_t object, const char* name, bool integer, hid_t memory_type, void* value,
                 const std::filesystem::path& file) {
  Hdf5Handle attribute = open_attribute(object, name, file);
  Hdf5Handle type = checked(H5Aget_type(attribute.get()), Hdf5Kind::datatype, file,
                            std::string("type of attribute '") + name + "'");
  Hdf5Handle space = checked(H5Aget_space(attribute.get()), Hdf5Kind::dataspace, file,
                             std::string("extent of attribute '") + name + "'");
  const H5T_class_t type_class = H5Tget_class(type.get());
  const bool ok =
      integer ? type_class == H5T_INTEGER : (type_class == H5T_FLOAT || type_class == H5T_INTEGER);
  if (!ok || H5Sget_simple_extent_npoints(space.get()) != 1)
    fail_file(file, std::string("attribute '") + name + "' is not a single " +
                        (integer ? "integer" : "number"));
  check(H5Aread(attribute.get(), memory_type, value), file,
        std::string("reading attribute '") + name + "'");
}

std::int64_t read_integer(hid_t object, const char* name, const std::filesystem::path& file) {
  std::int64_t value = 0;
  read_scalar(object, name, true, H5T_NATIVE_INT64, &value, file);
  return value;
}

// Dataset /name: its class must be `type_class` and its rank `rank`; the extent goes to `extent`.
Hdf5Handle open_dataset(hid_t h5, const char* name, H5T_class_t type_class, int rank,
                        hsize_t* extent, const std::filesystem::path& file) {
  if (H5Lexists(h5, name, H5P_DEFAULT) <= 0)
    fail_file(file, std::string("has no dataset /") + name);
  Hdf5Handle set = checked(H5Dopen2(h5, name, H5P_DEFAULT), Hdf5Kind::dataset, file,
                           std::string("opening /") + name + " (is it a group?)");
  Hdf5Handle type =
      checked(H5Dget_type(set.get()), Hdf5Kind::datatype, file, std::string("type of /") + name);
  Hdf5Handle space = checked(H5Dget_space(set.get()), Hdf5Kind::dataspace, file,
                             std::string("extent of /") + name);
  if (H5Tget_class(type.get()) != type_class)
    fail_file(file, std::string("/") + name + " holds " +
                        (type_class == H5T_FLOAT ? "no floating-point numbers" : "no integers"));
  if (H5Sget_simple_extent_ndims(space.get()) != rank)
    fail_file(file, std::string("/") + name + " must have " + std::to_string(rank) + " dimension" +
                        (rank > 1 ? "s" : ""));
  if (H5Sget_simple_extent_dims(space.get(), extent, nullptr) != rank)
    fail_file(file, std::string("reading the extent of /") + name + hdf5_error_suffix());
  return set;
}

void read_dataset(const Hdf5Handle& set, const char* name, hid_t memory_type, void* values,
                  const std::filesystem::path& file) {
  check(H5Dread(set.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values), file,
        std::string("reading /") + name + " (is the file truncated?)");
}

Eigen::VectorXd read_vector(hid_t h5, const char* name, const std::filesystem::path& file) {
  hsize_t n = 0;
  const Hdf5Handle set = open_dataset(h5, name, H5T_FLOAT, 1, &n, file);
  Eigen::VectorXd values(static_cast<Index>(n));
  if (n > 0) read_dataset(set, name, H5T_NATIVE_DOUBLE, values.data(), file);
  return values;
}

}  // namespace

// -----------------------------------------------------------------------------------------------

void Observations::validate() const {
  if (problem.empty()) fail<InvalidArgument>("observations: the problem's name is empty");
  if (size < 0)
    fail<InvalidArgument>("observations: size = ", size,
                          " must be >= 0 (0 for fixed-size problems)");
  if (state_size < 1)
    fail<InvalidArgument>("observations: state_size = ", state_size, " must be >= 1");
  if (method.empty()) fail<InvalidArgument>("observations: the method's name is empty");
  if (!(std::isfinite(dt) && dt > 0.0))
    fail<InvalidArgument>("observations: dt = ", dt, " must be finite and > 0");
  if (steps < 1) fail<InvalidArgument>("observations: steps = ", steps, " must be >= 1");
  const auto check_tolerance = [](const char* name, double value) {
    if (!(std::isfinite(value) && value >= 0.0))
      fail<InvalidArgument>("observations: the method's ", name, " = ", value,
                            " must be finite and >= 0 (0: the method's default)");
  };
  check_tolerance("rtol", method_settings.rtol);
  check_tolerance("atol", method_settings.atol);
  check_tolerance("newton_rtol", method_settings.newton_rtol);
  check_tolerance("newton_atol", method_settings.newton_atol);

  if (parameters.size() < 1) fail<InvalidArgument>("observations: no parameters θ are recorded");
  if (static_cast<Index>(parameter_names.size()) != parameters.size())
    fail<InvalidArgument>("observations: ", parameter_names.size(), " parameter names for ",
                          parameters.size(), " parameters");
  std::unordered_set<std::string_view> seen;
  for (std::size_t i = 0; i < parameter_names.size(); ++i) {
    const std::string& name = parameter_names[i];
    if (!valid_name(name))
      fail<InvalidArgument>("observations: the name of parameter ", i, ", '", name,
                            "', must be non-empty, without commas or control characters, and not "
                            "start or end with a space");
    if (!seen.insert(name).second)
      fail<InvalidArgument>("observations: two parameters are named '", name, "'");
    if (!std::isfinite(parameters[static_cast<Index>(i)]))
      fail<InvalidArgument>("observations: parameter ", name, " = ",
                            parameters[static_cast<Index>(i)], " is not finite");
  }
  if (initial_state.size() != state_size)
    fail<InvalidArgument>("observations: the initial state has ", initial_state.size(),
                          " components but state_size = ", state_size);
  for (Index i = 0; i < state_size; ++i)
    if (!std::isfinite(initial_state[i]))
      fail<InvalidArgument>("observations: component ", i, " of the initial state is ",
                            initial_state[i], "; it must be finite");

  if (field.name.empty()) fail<InvalidArgument>("observations: the observed field has no name");
  if (field.offset < 0 || field.count < 1 || field.offset > state_size ||
      field.count > state_size - field.offset)
    fail<InvalidArgument>("observations: field '", field.name, "' (components ", field.offset,
                          " to ", field.offset + field.count - 1, ", offset ", field.offset,
                          ", count ", field.count, ") lies outside the state of ", state_size,
                          " components (count must be >= 1)");
  if (!(std::isfinite(noise) && noise >= 0.0))
    fail<InvalidArgument>("observations: noise σ = ", noise, " must be finite and >= 0");

  if (observed_steps.empty()) fail<InvalidArgument>("observations: no observed steps");
  for (std::size_t k = 0; k < observed_steps.size(); ++k) {
    const Index step = observed_steps[k];
    if (step < 0 || step > steps)
      fail<InvalidArgument>("observations: observed step ", step, " (observation ", k,
                            ") lies outside the horizon [0, ", steps, "]");
    if (k > 0 && step <= observed_steps[k - 1])
      fail<InvalidArgument>("observations: observed steps must increase strictly, but step ", step,
                            " (observation ", k, ") follows step ", observed_steps[k - 1]);
  }
  const Index observations = static_cast<Index>(observed_steps.size());
  if (data.rows() != field.count || data.cols() != observations)
    fail<InvalidArgument>("observations: data is ", data.rows(), " × ", data.cols(),
                          " but must be ", field.count, " × ", observations,
                          " (field count × observed steps)");
  for (Index k = 0; k < observations; ++k)
    for (Index i = 0; i < field.count; ++i)
      if (!std::isfinite(data(i, k)))
        fail<InvalidArgument>("observations: the datum at step ",
                              observed_steps[static_cast<std::size_t>(k)], " (observation ", k,
                              "), component ", i, " of field '", field.name, "' (state component ",
                              field.offset + i, ") is ", data(i, k), "; data must be finite");
}

std::vector<Index> every_kth_step(Index steps, Index k) {
  if (steps < 1) fail<InvalidArgument>("every_kth_step: steps = ", steps, " must be >= 1");
  if (k < 1) fail<InvalidArgument>("every_kth_step: k = ", k, " must be >= 1");
  if (k > steps)
    fail<InvalidArgument>("every_kth_step: observing every ", k, " steps of a run of ", steps,
                          " steps observes nothing; k must be <= steps");
  std::vector<Index> observed;
  observed.reserve(static_cast<std::size_t>(steps / k));
  for (Index step = k; step <= steps; step += k) observed.push_back(step);
  return observed;
}

namespace detail {

void check_observation_request(Index state_size, Index planned_steps,
                               const std::vector<Index>& observed_steps, const ObservedField& field,
                               double noise) {
  if (planned_steps < 0)
    fail<InvalidArgument>(
        "observe_trajectory needs a fixed-step stepper: an adaptive run's step indices "
        "are different times for every θ, so observations could not be matched");
  if (observed_steps.empty()) fail<InvalidArgument>("observe_trajectory: no observed steps");
  for (std::size_t k = 0; k < observed_steps.size(); ++k) {
    const Index step = observed_steps[k];
    if (step < 0 || step > planned_steps)
      fail<InvalidArgument>("observe_trajectory: observed step ", step,
                            " lies outside the run's horizon [0, ", planned_steps, "]");
    if (k > 0 && step <= observed_steps[k - 1])
      fail<InvalidArgument>("observe_trajectory: observed steps must increase strictly, but step ",
                            step, " follows step ", observed_steps[k - 1]);
  }
  if (field.offset < 0 || field.count < 1 || field.offset > state_size ||
      field.count > state_size - field.offset)
    fail<InvalidArgument>("observe_trajectory: field '", field.name, "' (offset ", field.offset,
                          ", count ", field.count, ") lies outside the state of ", state_size,
                          " components (count must be >= 1)");
  if (!(std::isfinite(noise) && noise >= 0.0))
    fail<InvalidArgument>("observe_trajectory: noise σ = ", noise, " must be finite and >= 0");
}

}  // namespace detail

void save_observations(const std::filesystem::path& file, const Observations& observations,
                       bool overwrite) {
  observations.validate();
  std::error_code error;
  const auto status = std::filesystem::status(file, error);
  if (std::filesystem::is_directory(status)) fail_file(file, "is a directory, not a file");
  if (std::filesystem::exists(status) && !overwrite)
    fail_file(file, "exists already; not overwritten");
  const std::filesystem::path directory = file.has_parent_path() ? file.parent_path() : ".";
  if (!std::filesystem::is_directory(directory, error))
    fail_file(file, "cannot be written: the directory '" + directory.string() + "' does not exist");

  const std::vector<char> image = file_image(observations, file);
  static std::atomic<unsigned> counter{0};
  std::filesystem::path temporary = file;
  temporary += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  write_temporary(temporary, image, file);
  move_into_place(temporary, file, overwrite);
}

Observations load_observations(const std::filesystem::path& file) {
  std::error_code error;
  const auto status = std::filesystem::status(file, error);
  if (error && error != std::errc::no_such_file_or_directory)
    fail_file(file, "cannot be accessed: " + error.message());
  if (!std::filesystem::exists(status)) fail_file(file, "does not exist");
  if (std::filesystem::is_directory(status)) fail_file(file, "is a directory, not a file");

  QuietHdf5 quiet;
  const htri_t is_hdf5 = H5Fis_hdf5(file.c_str());
  H5Eclear2(H5E_DEFAULT);
  if (is_hdf5 <= 0) fail_file(file, "is not an HDF5 file (or its superblock is damaged)");
  Hdf5Handle h5 = checked(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), Hdf5Kind::file, file,
                          "cannot be opened (damaged or truncated?)");
  if (H5Aexists(h5.get(), "format") <= 0)
    fail_file(file, "is an HDF5 file but not a rewind observation file (no 'format' attribute)");
  const std::string format = read_string(h5.get(), "format", file);
  if (format != kFormat)
    fail_file(file, "is an HDF5 file but not a rewind observation file (format '" + format +
                        "', expected '" + kFormat + "')");
  const std::int64_t version = read_integer(h5.get(), "format_version", file);
  if (version < kOldestFormatVersion || version > kFormatVersion)
    fail_file(file, "has format_version " + std::to_string(version) +
                        "; this build of rewind reads versions " +
                        std::to_string(kOldestFormatVersion) + " to " +
                        std::to_string(kFormatVersion));

  Observations obs;
  obs.problem = read_string(h5.get(), "problem", file);
  obs.size = read_integer(h5.get(), "size", file);
  obs.state_size = read_integer(h5.get(), "state_size", file);
  obs.method = read_string(h5.get(), "method", file);
  read_scalar(h5.get(), "dt", false, H5T_NATIVE_DOUBLE, &obs.dt, file);
  obs.steps = read_integer(h5.get(), "steps", file);
  obs.field.name = read_string(h5.get(), "field", file);
  obs.field.offset = read_integer(h5.get(), "field_offset", file);
  obs.field.count = read_integer(h5.get(), "field_count", file);
  read_scalar(h5.get(), "noise", false, H5T_NATIVE_DOUBLE, &obs.noise, file);
  read_scalar(h5.get(), "seed", true, H5T_NATIVE_UINT64, &obs.seed, file);
  obs.parameter_names = split(read_string(h5.get(), "parameter_names", file));
  if (version >= 2) {
    MethodSettings& method = obs.method_settings;
    read_scalar(h5.get(), "rtol", false, H5T_NATIVE_DOUBLE, &method.rtol, file);
    read_scalar(h5.get(), "atol", false, H5T_NATIVE_DOUBLE, &method.atol, file);
    method.linear_solver = read_string(h5.get(), "linear_solver", file);
    read_scalar(h5.get(), "newton_rtol", false, H5T_NATIVE_DOUBLE, &method.newton_rtol, file);
    read_scalar(h5.get(), "newton_atol", false, H5T_NATIVE_DOUBLE, &method.newton_atol, file);
  }

  obs.parameters = read_vector(h5.get(), "parameters", file);
  obs.initial_state = read_vector(h5.get(), "initial_state", file);
  hsize_t k = 0;
  {
    const Hdf5Handle set = open_dataset(h5.get(), "observed_steps", H5T_INTEGER, 1, &k, file);
    std::vector<std::int64_t> steps(k);
    if (k > 0) read_dataset(set, "observed_steps", H5T_NATIVE_INT64, steps.data(), file);
    obs.observed_steps.assign(steps.begin(), steps.end());
  }
  hsize_t extent[2] = {0, 0};
  const Hdf5Handle set = open_dataset(h5.get(), "data", H5T_FLOAT, 2, extent, file);
  if (extent[0] != k)
    fail_file(file, "/data has " + std::to_string(extent[0]) + " rows but /observed_steps has " +
                        std::to_string(k) + " steps; /data must be [observed steps × field count]");
  // The row-major [K × count] dataset is, byte for byte, our column-major count × K matrix.
  obs.data.resize(static_cast<Index>(extent[1]), static_cast<Index>(extent[0]));
  if (obs.data.size() > 0) read_dataset(set, "data", H5T_NATIVE_DOUBLE, obs.data.data(), file);

  try {
    obs.validate();
  } catch (const InvalidArgument& e) {
    // "observations: …" becomes "observation file 'x.h5': …", naming where the bad value is.
    std::string message = e.what();
    const std::string prefix = "observations: ";
    if (message.compare(0, prefix.size(), prefix) == 0) message.erase(0, prefix.size());
    throw InvalidArgument(where_of(file) + ": " + message);
  }
  return obs;
}

}  // namespace rwd
