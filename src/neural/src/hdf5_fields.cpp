// src/neural/src/hdf5_fields.cpp — see hdf5_fields.hpp.
#include "hdf5_fields.hpp"

#include <new>
#include <string>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/format.hpp"
#include "rewind/hdf5/hdf5_handles.hpp"
#include "rewind/physical_memory.hpp"

namespace rwd::nn::detail {
namespace {

using rwd::detail::Hdf5Handle;
using rwd::detail::Hdf5Kind;

[[noreturn]] void fail_field(const std::filesystem::path& file, const std::string& what) {
  throw StorageError("model file " + quoted(file) + ": " + what);
}

Hdf5Handle checked(hid_t id, Hdf5Kind kind, const std::filesystem::path& file,
                   const std::string& what) {
  if (id < 0) fail_field(file, what);
  return Hdf5Handle(id, kind);
}

void check(herr_t status, const std::filesystem::path& file, const std::string& what) {
  if (status < 0) fail_field(file, what);
}

void write_attribute(hid_t object, const char* name, hid_t type, const void* value,
                     const std::filesystem::path& file) {
  Hdf5Handle space = checked(H5Screate(H5S_SCALAR), Hdf5Kind::dataspace, file, "attribute space");
  if (H5Aexists(object, name) > 0) check(H5Adelete(object, name), file, name);
  Hdf5Handle attribute =
      checked(H5Acreate2(object, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
              Hdf5Kind::attribute, file, std::string("creating attribute ") + name);
  check(H5Awrite(attribute.get(), type, value), file, std::string("writing attribute ") + name);
}

Hdf5Handle open_attribute(hid_t object, const char* name, const std::filesystem::path& file) {
  if (H5Aexists(object, name) <= 0)
    fail_field(file, std::string("has no attribute '") + name + "'");
  return checked(H5Aopen(object, name, H5P_DEFAULT), Hdf5Kind::attribute, file,
                 std::string("opening attribute ") + name);
}

Hdf5Handle open_dataset(hid_t group, const char* name, const std::filesystem::path& file,
                        hsize_t& length, H5T_class_t wanted) {
  if (H5Lexists(group, name, H5P_DEFAULT) <= 0)
    fail_field(file, std::string("has no dataset '") + name + "'");
  Hdf5Handle set = checked(H5Dopen2(group, name, H5P_DEFAULT), Hdf5Kind::dataset, file,
                           std::string("opening ") + name);
  Hdf5Handle type = checked(H5Dget_type(set.get()), Hdf5Kind::datatype, file, name);
  Hdf5Handle space = checked(H5Dget_space(set.get()), Hdf5Kind::dataspace, file, name);
  if (H5Tget_class(type.get()) != wanted || H5Sget_simple_extent_ndims(space.get()) != 1)
    fail_field(file, std::string("dataset '") + name + "' is not a one-dimensional " +
                         (wanted == H5T_FLOAT ? "float64" : "integer") + " array");
  H5Sget_simple_extent_dims(space.get(), &length, nullptr);
  return set;
}

// The n values a dataset declares: a file that declares more than this machine can hold (a
// damaged extent, a sparse dataset never written) is refused naming the dataset, not left to an
// uncaught std::bad_alloc.
template <class T>
std::vector<T> allocate_declared(hsize_t n, const char* name, const std::filesystem::path& file) {
  const auto too_large = [&] {
    fail_field(file, std::string("dataset '") + name + "' declares " + std::to_string(n) +
                         " values, more than this machine can allocate");
  };
  if (n > (hsize_t{1} << 56) / sizeof(T)) too_large();
  if (static_cast<double>(n) * sizeof(T) >
      static_cast<double>(rwd::detail::physical_memory_bytes()))
    too_large();
  try {
    return std::vector<T>(static_cast<std::size_t>(n));
  } catch (const std::bad_alloc&) {
    too_large();
  }
  return {};
}

void write_array(hid_t group, const char* name, hid_t file_type, hid_t memory_type,
                 const void* values, std::size_t count, const std::filesystem::path& file) {
  const hsize_t n = count;
  Hdf5Handle space = checked(H5Screate_simple(1, &n, nullptr), Hdf5Kind::dataspace, file, name);
  Hdf5Handle set = checked(
      H5Dcreate2(group, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
      Hdf5Kind::dataset, file, std::string("creating dataset ") + name);
  if (count > 0)
    check(H5Dwrite(set.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values), file,
          std::string("writing dataset ") + name);
}

}  // namespace

void write_string_attribute(hid_t object, const char* name, const std::string& value,
                            const std::filesystem::path& file) {
  Hdf5Handle type = checked(H5Tcopy(H5T_C_S1), Hdf5Kind::datatype, file, "string type");
  check(H5Tset_size(type.get(), value.empty() ? 1 : value.size()), file, "string type");
  write_attribute(object, name, type.get(), value.empty() ? "" : value.c_str(), file);
}

void write_integer_attribute(hid_t object, const char* name, std::int64_t value,
                             const std::filesystem::path& file) {
  write_attribute(object, name, H5T_NATIVE_INT64, &value, file);
}

void write_double_attribute(hid_t object, const char* name, double value,
                            const std::filesystem::path& file) {
  write_attribute(object, name, H5T_NATIVE_DOUBLE, &value, file);
}

void write_doubles(hid_t group, const char* name, const double* values, std::size_t count,
                   const std::filesystem::path& file) {
  write_array(group, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, values, count, file);
}

void write_integers(hid_t group, const char* name, const std::vector<std::int64_t>& values,
                    const std::filesystem::path& file) {
  write_array(group, name, H5T_STD_I64LE, H5T_NATIVE_INT64, values.data(), values.size(), file);
}

bool has_attribute(hid_t object, const char* name) {
  return H5Aexists(object, name) > 0;
}

std::string read_string_attribute(hid_t object, const char* name,
                                  const std::filesystem::path& file) {
  const Hdf5Handle attribute = open_attribute(object, name, file);
  Hdf5Handle type = checked(H5Aget_type(attribute.get()), Hdf5Kind::datatype, file, name);
  if (H5Tget_class(type.get()) != H5T_STRING)
    fail_field(file, std::string("attribute ") + name + " is not a string");
  Hdf5Handle memory = checked(H5Tcopy(H5T_C_S1), Hdf5Kind::datatype, file, "string type");
  if (H5Tis_variable_str(type.get()) > 0) {
    check(H5Tset_size(memory.get(), H5T_VARIABLE), file, "string type");
    char* text = nullptr;
    check(H5Aread(attribute.get(), memory.get(), &text), file, name);
    std::string value = text ? text : "";
    H5free_memory(text);
    return value;
  }
  const std::size_t size = H5Tget_size(type.get());
  std::vector<char> buffer(size + 1, '\0');
  check(H5Tset_size(memory.get(), size + 1), file, "string type");
  check(H5Aread(attribute.get(), memory.get(), buffer.data()), file, name);
  return buffer.data();
}

std::int64_t read_integer_attribute(hid_t object, const char* name,
                                    const std::filesystem::path& file) {
  const Hdf5Handle attribute = open_attribute(object, name, file);
  Hdf5Handle type = checked(H5Aget_type(attribute.get()), Hdf5Kind::datatype, file, name);
  if (H5Tget_class(type.get()) != H5T_INTEGER)
    fail_field(file, std::string("attribute ") + name + " is not an integer");
  std::int64_t value = 0;
  check(H5Aread(attribute.get(), H5T_NATIVE_INT64, &value), file, name);
  return value;
}

double read_double_attribute(hid_t object, const char* name, const std::filesystem::path& file) {
  const Hdf5Handle attribute = open_attribute(object, name, file);
  Hdf5Handle type = checked(H5Aget_type(attribute.get()), Hdf5Kind::datatype, file, name);
  if (H5Tget_class(type.get()) != H5T_FLOAT)
    fail_field(file, std::string("attribute ") + name + " is not a floating-point number");
  double value = 0.0;
  check(H5Aread(attribute.get(), H5T_NATIVE_DOUBLE, &value), file, name);
  return value;
}

std::vector<double> read_doubles(hid_t group, const char* name, const std::filesystem::path& file,
                                 long long expected) {
  hsize_t n = 0;
  Hdf5Handle set = open_dataset(group, name, file, n, H5T_FLOAT);
  if (expected >= 0 && n != static_cast<hsize_t>(expected))
    fail_field(file, std::string("dataset '") + name + "' has " + std::to_string(n) +
                         " values, not " + std::to_string(expected));
  std::vector<double> values = allocate_declared<double>(n, name, file);
  if (n > 0)
    check(H5Dread(set.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), file,
          std::string("reading ") + name);
  return values;
}

std::vector<std::int64_t> read_integers(hid_t group, const char* name,
                                        const std::filesystem::path& file) {
  hsize_t n = 0;
  Hdf5Handle set = open_dataset(group, name, file, n, H5T_INTEGER);
  std::vector<std::int64_t> values = allocate_declared<std::int64_t>(n, name, file);
  if (n > 0)
    check(H5Dread(set.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), file,
          std::string("reading ") + name);
  return values;
}

}  // namespace rwd::nn::detail
