// src/neural/src/hdf5_fields.hpp — small typed reads and writes of HDF5 attributes and 1-D
// datasets, for the model and training-checkpoint files. Private to src/neural/src (HDF5 stays out
// of the public headers). Every failure is an rwd::StorageError naming the file and the field.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <Eigen/Dense>

namespace rwd::nn::detail {

// More layers than this in a file's /layers is a damaged file, not a network: refused before
// the table is allocated (a fuzzed file claimed 2^60 rows).
inline constexpr hsize_t kMaxFileLayers = hsize_t{1} << 16;

void write_string_attribute(hid_t object, const char* name, const std::string& value,
                            const std::filesystem::path& file);
void write_integer_attribute(hid_t object, const char* name, std::int64_t value,
                             const std::filesystem::path& file);
void write_double_attribute(hid_t object, const char* name, double value,
                            const std::filesystem::path& file);
void write_doubles(hid_t group, const char* name, const double* values, std::size_t count,
                   const std::filesystem::path& file);
void write_integers(hid_t group, const char* name, const std::vector<std::int64_t>& values,
                    const std::filesystem::path& file);

bool has_attribute(hid_t object, const char* name);
std::string read_string_attribute(hid_t object, const char* name,
                                  const std::filesystem::path& file);
std::int64_t read_integer_attribute(hid_t object, const char* name,
                                    const std::filesystem::path& file);
double read_double_attribute(hid_t object, const char* name, const std::filesystem::path& file);
// A 1-D float64 dataset (any length; `expected` >= 0 checks it).
std::vector<double> read_doubles(hid_t group, const char* name, const std::filesystem::path& file,
                                 long long expected = -1);
std::vector<std::int64_t> read_integers(hid_t group, const char* name,
                                        const std::filesystem::path& file);

}  // namespace rwd::nn::detail
