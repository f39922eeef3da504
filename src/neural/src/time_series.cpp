// src/neural/src/time_series.cpp — time series files: CSV (text) and HDF5 (1.10 C API); see
// rewind/neural/time_series.hpp.
#include "rewind/neural/time_series.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <string_view>
#include <system_error>
#include <unordered_set>
#include <utility>

#include "rewind/error.hpp"
#include "rewind/format.hpp"
#include "rewind/hdf5/hdf5_errors.hpp"
#include "rewind/hdf5/hdf5_handles.hpp"
#include "rewind/physical_memory.hpp"

namespace rwd::training {
namespace {

using rwd::detail::fail;

std::string where_of(const std::filesystem::path& file) {
  std::string text = "time series ";
  text += quoted(file);
  return text;
}

std::string default_name(Index component) {
  std::string name(1, 'y');
  name += std::to_string(component);
  return name;
}

// ---------------------------------------------------------------------------------------------
// Text

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

// Fields between commas, trimmed ("a,,b," has four: "a", "", "b", "").
std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = line.find(',', begin);
    fields.push_back(trim(line.substr(
        begin, comma == std::string_view::npos ? std::string_view::npos : comma - begin)));
    if (comma == std::string_view::npos) return fields;
    begin = comma + 1;
  }
}

// A header name without the double quotes some writers put around every name.
std::string unquote(std::string_view name) {
  if (name.size() >= 2 && name.front() == '"' && name.back() == '"')
    name = trim(name.substr(1, name.size() - 2));
  return std::string(name);
}

enum class Parse { ok, not_a_number, out_of_range };

// The whole of `text` as a double, correctly rounded and independent of the C locale (unlike
// strtod, which reads "1.5" as 1 under a locale with a decimal comma). A leading '+' is allowed.
Parse parse_double(std::string_view text, double& value) {
  if (text.size() > 1 && text.front() == '+' && text[1] != '-' && text[1] != '+')
    text.remove_prefix(1);
  if (text.empty()) return Parse::not_a_number;
  const char* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(text.data(), end, value, std::chars_format::general);
  if (error == std::errc::result_out_of_range && ptr == end) return Parse::out_of_range;
  if (error != std::errc() || ptr != end) return Parse::not_a_number;
  return Parse::ok;
}

// printf("%.17g") in the "C" locale whatever the global locale: 17 significant digits identify
// every double, so parse_double gives back the same bits.
std::string_view format_double(double value, std::array<char, 40>& buffer) {
  const auto [ptr, error] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value,
                                          std::chars_format::general, 17);
  if (error != std::errc())
    fail<InvalidArgument>("cannot format the number ", value);  // not reached: 40 chars suffice
  return {buffer.data(), static_cast<std::size_t>(ptr - buffer.data())};
}

// ---------------------------------------------------------------------------------------------
// Files

void check_readable_file(const std::filesystem::path& file) {
  std::error_code error;
  const auto status = std::filesystem::status(file, error);
  if (error && error != std::errc::no_such_file_or_directory)
    fail<StorageError>(where_of(file), " cannot be accessed: ", error.message());
  if (!std::filesystem::exists(status)) fail<StorageError>(where_of(file), " does not exist");
  if (std::filesystem::is_directory(status))
    fail<StorageError>(where_of(file), " is a directory, not a file");
}

// Runs write(temporary) on a fresh temporary file beside `file`, then renames it over `file`: an
// existing file is replaced whole or not at all. A symbolic link is followed (its target is
// replaced, the link stays).
template <class Write>
void replace_atomically(const std::filesystem::path& file, Write&& write) {
  std::error_code error;
  std::filesystem::path target = file;
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(file, error))) {
    target = std::filesystem::weakly_canonical(file, error);
    if (error)
      fail<StorageError>(where_of(file), ": cannot resolve the symbolic link: ", error.message());
  }
  const std::filesystem::path directory = target.has_parent_path() ? target.parent_path() : ".";
  if (!std::filesystem::is_directory(directory, error))
    fail<StorageError>(where_of(file), " cannot be written: the directory ", quoted(directory),
                       " does not exist");
  if (std::filesystem::is_directory(target, error))
    fail<StorageError>(where_of(file), " is a directory, not a file");
  static std::atomic<unsigned> counter{0};
  std::filesystem::path temporary = target;
  temporary += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  try {
    write(temporary);
  } catch (...) {
    std::filesystem::remove(temporary, error);
    throw;
  }
  std::filesystem::rename(temporary, target, error);
  if (error) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    fail<StorageError>(where_of(file), " cannot be replaced: ", error.message());
  }
}

// ---------------------------------------------------------------------------------------------
// HDF5

using rwd::detail::hdf5_error_suffix;
using rwd::detail::Hdf5Handle;
using rwd::detail::Hdf5Kind;
using rwd::detail::QuietHdf5;

[[noreturn]] void fail_hdf5(const std::filesystem::path& file, const std::string& what) {
  const std::string reason = hdf5_error_suffix();
  fail<StorageError>(where_of(file), ": ", what, reason);
}

// `id` in a handle that closes it; a negative one (HDF5's failure value) is an rwd::StorageError
// naming the file and what was being done.
Hdf5Handle checked(hid_t id, Hdf5Kind kind, const std::filesystem::path& file, const char* what) {
  if (id < 0) fail_hdf5(file, what);
  return Hdf5Handle(id, kind);
}

void check(herr_t status, const std::filesystem::path& file, const char* what) {
  if (status < 0) fail_hdf5(file, what);
}

const char* class_name(H5T_class_t c) {
  switch (c) {
    case H5T_INTEGER:
      return "integers";
    case H5T_FLOAT:
      return "floating-point numbers";
    case H5T_STRING:
      return "strings";
    case H5T_COMPOUND:
      return "compound records";
    case H5T_ENUM:
      return "enumerations";
    case H5T_ARRAY:
      return "arrays";
    case H5T_VLEN:
      return "variable-length sequences";
    default:
      return "non-numeric data";
  }
}

// Opens dataset `name` of `group`, which must hold numbers; its extent goes to `extent`.
Hdf5Handle open_numeric_dataset(hid_t group, const char* name, const std::string& group_name,
                                const std::filesystem::path& file, std::vector<hsize_t>& extent) {
  if (H5Lexists(group, name, H5P_DEFAULT) <= 0)
    fail<StorageError>(where_of(file), " has no dataset '", name, "' in group '", group_name,
                       "' (a time series needs t [points] and y [points x dimension])");
  Hdf5Handle dataset = checked(H5Dopen2(group, name, H5P_DEFAULT), Hdf5Kind::dataset, file,
                               "opening a dataset (is it a group?)");
  Hdf5Handle type =
      checked(H5Dget_type(dataset.get()), Hdf5Kind::datatype, file, "reading a dataset's type");
  const H5T_class_t type_class = H5Tget_class(type.get());
  if (type_class != H5T_FLOAT && type_class != H5T_INTEGER)
    fail<StorageError>(where_of(file), ": dataset '", name, "' holds ", class_name(type_class),
                       ", not numbers");
  Hdf5Handle space =
      checked(H5Dget_space(dataset.get()), Hdf5Kind::dataspace, file, "reading a dataset's extent");
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) fail_hdf5(file, "reading a dataset's extent");
  extent.assign(static_cast<std::size_t>(rank), 0);
  if (rank > 0 && H5Sget_simple_extent_dims(space.get(), extent.data(), nullptr) < 0)
    fail_hdf5(file, "reading a dataset's extent");
  return dataset;
}

// The group's optional "names" attribute: one comma-separated string, or an array of strings
// (fixed or variable length: what h5py writes for a str or a list of str).
std::vector<std::string> read_names(hid_t group, const std::filesystem::path& file) {
  std::vector<std::string> names;
  if (H5Aexists(group, "names") <= 0) return names;
  Hdf5Handle attribute = checked(H5Aopen(group, "names", H5P_DEFAULT), Hdf5Kind::attribute, file,
                                 "opening attribute 'names'");
  Hdf5Handle type = checked(H5Aget_type(attribute.get()), Hdf5Kind::datatype, file,
                            "reading the type of attribute 'names'");
  if (H5Tget_class(type.get()) != H5T_STRING)
    fail<StorageError>(where_of(file), ": attribute 'names' holds ",
                       class_name(H5Tget_class(type.get())), ", not strings");
  Hdf5Handle space = checked(H5Aget_space(attribute.get()), Hdf5Kind::dataspace, file,
                             "reading the extent of attribute 'names'");
  const int rank = H5Sget_simple_extent_ndims(space.get());
  const hssize_t count = H5Sget_simple_extent_npoints(space.get());
  if (rank < 0 || rank > 1 || count < 0)
    fail<StorageError>(
        where_of(file),
        ": attribute 'names' must be one string or a one-dimensional array of strings");
  Hdf5Handle memory = checked(H5Tcopy(H5T_C_S1), Hdf5Kind::datatype, file, "string type");
  check(H5Tset_cset(memory.get(), H5Tget_cset(type.get())), file, "string type");
  std::vector<std::string> items;
  if (H5Tis_variable_str(type.get()) > 0) {
    check(H5Tset_size(memory.get(), H5T_VARIABLE), file, "string type");
    std::vector<char*> buffer(static_cast<std::size_t>(count), nullptr);
    check(H5Aread(attribute.get(), memory.get(), buffer.data()), file, "reading attribute 'names'");
    for (char* item : buffer) items.emplace_back(item ? item : "");
    H5Dvlen_reclaim(memory.get(), space.get(), H5P_DEFAULT, buffer.data());
  } else {
    const std::size_t size = H5Tget_size(type.get());
    if (size == 0) fail_hdf5(file, "reading the type of attribute 'names'");
    check(H5Tset_size(memory.get(), size), file, "string type");
    check(H5Tset_strpad(memory.get(), H5T_STR_NULLPAD), file, "string type");
    std::vector<char> buffer(size * static_cast<std::size_t>(count), '\0');
    check(H5Aread(attribute.get(), memory.get(), buffer.data()), file, "reading attribute 'names'");
    for (hssize_t i = 0; i < count; ++i) {
      const char* item = buffer.data() + static_cast<std::size_t>(i) * size;
      items.emplace_back(item, strnlen(item, size));
    }
  }
  if (rank == 0) {  // one string: comma-separated names
    for (std::string_view name :
         split_fields(items.empty() ? std::string_view() : std::string_view(items[0])))
      names.emplace_back(name);
  } else {
    for (const std::string& item : items) names.emplace_back(trim(item));
  }
  return names;
}

void write_names(hid_t object, const std::string& names, const std::filesystem::path& file) {
  Hdf5Handle type = checked(H5Tcopy(H5T_C_S1), Hdf5Kind::datatype, file, "string type");
  check(H5Tset_size(type.get(), std::max<std::size_t>(names.size(), 1)), file, "string type");
  Hdf5Handle space = checked(H5Screate(H5S_SCALAR), Hdf5Kind::dataspace, file, "attribute extent");
  Hdf5Handle attribute =
      checked(H5Acreate2(object, "names", type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
              Hdf5Kind::attribute, file, "creating attribute 'names'");
  check(H5Awrite(attribute.get(), type.get(), names.c_str()), file, "writing attribute 'names'");
}

void write_dataset(hid_t file_id, const char* name, int rank, const hsize_t* extent,
                   const double* data, const std::filesystem::path& file) {
  Hdf5Handle space =
      checked(H5Screate_simple(rank, extent, nullptr), Hdf5Kind::dataspace, file, "dataset extent");
  Hdf5Handle dataset = checked(
      H5Dcreate2(file_id, name, H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
      Hdf5Kind::dataset, file, "creating a dataset");
  check(H5Dwrite(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), file,
        "writing a dataset (is the disk full?)");
}

std::vector<std::string> names_or_defaults(const TimeSeries& series) {
  if (!series.names.empty()) return series.names;
  std::vector<std::string> names;
  for (Index i = 0; i < series.dimension(); ++i) names.push_back(default_name(i));
  return names;
}

}  // namespace

// -----------------------------------------------------------------------------------------------

void TimeSeries::validate(const std::string& source) const {
  if (static_cast<Index>(times.size()) != points())
    fail<InvalidArgument>(source, ": ", times.size(), " times but ", points(),
                          " value columns (values is dimension x points, one column per time)");
  if (points() < 2)
    fail<InvalidArgument>(source, ": a time series needs at least 2 points, it has ", points());
  if (dimension() < 1)
    fail<InvalidArgument>(source, ": a time series needs at least one component");
  if (!names.empty()) {
    if (static_cast<Index>(names.size()) != dimension())
      fail<InvalidArgument>(source, ": ", names.size(), " names for ", dimension(), " components");
    std::unordered_set<std::string_view> seen;
    for (std::size_t i = 0; i < names.size(); ++i) {
      const std::string& name = names[i];
      if (name.empty()) fail<InvalidArgument>(source, ": the name of component ", i, " is empty");
      const bool bad_char = std::any_of(name.begin(), name.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return c == ',' || c == '"' || u < 0x20 || u == 0x7f;
      });
      if (bad_char || trim(name).size() != name.size())
        fail<InvalidArgument>(source, ": the name of component ", i, ", '", name,
                              "', must not contain commas, quotes or control characters, nor start "
                              "or end with spaces");
      if (!seen.insert(name).second)
        fail<InvalidArgument>(source, ": two components are named '", name, "'");
    }
  }
  for (Index k = 0; k < points(); ++k) {
    const double t = times[static_cast<std::size_t>(k)];
    if (!std::isfinite(t)) fail<InvalidArgument>(source, ": the time of point ", k, " is ", t);
    if (k > 0 && !(t > times[static_cast<std::size_t>(k - 1)]))
      fail<InvalidArgument>(source, ": times must increase strictly, but point ", k, " has t = ", t,
                            " after t = ", times[static_cast<std::size_t>(k - 1)]);
    for (Index i = 0; i < dimension(); ++i)
      if (!std::isfinite(values(i, k)))
        fail<InvalidArgument>(source, ": component ", i, " at point ", k, " (t = ", t, ") is ",
                              values(i, k), "; values must be finite");
  }
}

// ---------------------------------------------------------------------------------------------
// CSV

TimeSeries load_time_series_csv(const std::filesystem::path& file) {
  const std::string where = where_of(file);
  check_readable_file(file);
  std::ifstream in(file, std::ios::binary);
  if (!in) fail<StorageError>(where, " cannot be opened: ", std::strerror(errno));

  TimeSeries series;
  std::vector<std::string> columns;  // the header: time column, then component names
  Index header_line = 0;
  Index previous_line = 0;   // line of the previous data row
  std::vector<double> flat;  // values, point after point
  std::string line;
  Index number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (number == 1) {
      if (line.rfind("\x89HDF", 0) == 0)
        fail<StorageError>(where, " is an HDF5 file, not CSV text; give it the extension .h5");
      if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // UTF-8 byte order mark
    }
    if (line.find('\0') != std::string::npos)
      fail<StorageError>(where, " line ", number, " contains binary data: not a CSV text file");
    const std::string_view content = trim(line);
    if (content.empty() || content.front() == '#') continue;
    const std::vector<std::string_view> fields = split_fields(content);

    if (columns.empty()) {  // the header
      double number_value = 0.0;
      if (parse_double(fields[0], number_value) == Parse::ok)
        fail<InvalidArgument>(where, " line ", number,
                              ": expected a header naming the columns, like 't,y0,y1', ",
                              "but the line starts with a number");
      if (fields.size() < 2)
        fail<InvalidArgument>(where, " line ", number,
                              ": the header needs a time column and at least one ",
                              "value column, like 't,y0,y1'");
      for (std::size_t c = 0; c < fields.size(); ++c) {
        columns.push_back(unquote(fields[c]));
        if (columns.back().empty())
          fail<InvalidArgument>(where, " line ", number, " column ", c + 1,
                                ": the header has an empty column name");
      }
      series.names.assign(columns.begin() + 1, columns.end());
      header_line = number;
      continue;
    }

    if (fields.size() != columns.size())
      fail<InvalidArgument>(where, " line ", number, ": ", fields.size(),
                            " columns, but the header (line ", header_line, ") has ",
                            columns.size());
    for (std::size_t c = 0; c < fields.size(); ++c) {
      double value = 0.0;
      const Parse parsed = parse_double(fields[c], value);
      if (parsed == Parse::not_a_number)
        fail<InvalidArgument>(where, " line ", number, " column ", c + 1, " ('", columns[c],
                              "'): '", fields[c], "' is not a number");
      if (parsed == Parse::out_of_range)
        fail<InvalidArgument>(where, " line ", number, " column ", c + 1, " ('", columns[c],
                              "'): '", fields[c], "' is outside the range of a double");
      if (!std::isfinite(value))
        fail<InvalidArgument>(where, " line ", number, " column ", c + 1, " ('", columns[c],
                              "'): ", fields[c], " is not allowed; values must be finite");
      if (c == 0) {
        if (!series.times.empty() && !(value > series.times.back()))
          fail<InvalidArgument>(where, " line ", number, ": t = ", value,
                                " does not come after t = ", series.times.back(), " (line ",
                                previous_line, "); times must increase strictly");
        series.times.push_back(value);
      } else {
        flat.push_back(value);
      }
    }
    previous_line = number;
  }
  if (in.bad())
    fail<StorageError>(where, ": reading failed after line ", number, ": ", std::strerror(errno));
  if (columns.empty())
    fail<InvalidArgument>(where, " has no header and no data (", number, " lines)");
  if (series.times.size() < 2)
    fail<InvalidArgument>(where, ": a time series needs at least 2 points, the file has ",
                          series.times.size());

  const Index dimension = static_cast<Index>(columns.size() - 1);
  series.values = Eigen::Map<const Eigen::MatrixXd>(flat.data(), dimension,
                                                    static_cast<Index>(series.times.size()));
  series.validate(where);
  return series;
}

void save_time_series_csv(const std::filesystem::path& file, const TimeSeries& series) {
  series.validate("time series to save as " + quoted(file));
  const std::vector<std::string> names = names_or_defaults(series);
  replace_atomically(file, [&](const std::filesystem::path& temporary) {
    std::FILE* out = std::fopen(temporary.c_str(), "wb");
    if (!out) fail<StorageError>(where_of(file), " cannot be written: ", std::strerror(errno));
    std::string text = "t";
    for (const std::string& name : names) {
      text += ',';
      text += name;
    }
    text += "\n";
    std::array<char, 40> buffer;
    bool ok = true;
    for (Index k = 0; k < series.points() && ok; ++k) {
      text.append(format_double(series.times[static_cast<std::size_t>(k)], buffer));
      for (Index i = 0; i < series.dimension(); ++i) {
        text += ',';
        text.append(format_double(series.values(i, k), buffer));
      }
      text += '\n';
      if (text.size() > (std::size_t{1} << 16) || k + 1 == series.points()) {
        ok = std::fwrite(text.data(), 1, text.size(), out) == text.size();
        text.clear();
      }
    }
    int error = ok ? 0 : errno;
    if (ok && std::fflush(out) != 0) {
      ok = false;
      error = errno;
    }
    if (std::fclose(out) != 0 && ok) {
      ok = false;
      error = errno;
    }
    if (!ok) fail<StorageError>(where_of(file), ": writing failed: ", std::strerror(error));
  });
}

// ---------------------------------------------------------------------------------------------
// HDF5

TimeSeries load_time_series_hdf5(const std::filesystem::path& file, const std::string& group) {
  const std::string where = where_of(file);
  const std::string group_name = group.empty() ? "/" : group;
  check_readable_file(file);
  QuietHdf5 quiet;
  const htri_t is_hdf5 = H5Fis_hdf5(file.c_str());
  H5Eclear2(H5E_DEFAULT);
  if (is_hdf5 <= 0)
    fail<StorageError>(where, " is not an HDF5 file (or its superblock is damaged)");
  Hdf5Handle h5 = checked(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), Hdf5Kind::file, file,
                          "cannot be opened (damaged or truncated?)");
  if (group_name != "/" && H5Lexists(h5.get(), group_name.c_str(), H5P_DEFAULT) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    fail<StorageError>(where, " has no group '", group_name, "'");
  }
  Hdf5Handle g = checked(H5Gopen2(h5.get(), group_name.c_str(), H5P_DEFAULT), Hdf5Kind::group, file,
                         "opening the group");

  std::vector<hsize_t> t_extent, y_extent;
  const Hdf5Handle t = open_numeric_dataset(g.get(), "t", group_name, file, t_extent);
  const Hdf5Handle y = open_numeric_dataset(g.get(), "y", group_name, file, y_extent);
  if (t_extent.size() != 1)
    fail<StorageError>(where, ": dataset 't' must be one-dimensional [points], it has ",
                       t_extent.size(), " dimensions");
  if (y_extent.size() != 1 && y_extent.size() != 2)
    fail<StorageError>(
        where,
        ": dataset 'y' must be [points x dimension] (or [points] for one component), it has ",
        y_extent.size(), " dimensions");
  const hsize_t points = t_extent[0];
  const hsize_t dimension = y_extent.size() == 2 ? y_extent[1] : 1;
  if (y_extent[0] != points)
    fail<StorageError>(where, ": dataset 't' has ", points, " times but 'y' has ", y_extent[0],
                       " rows; 'y' must be [points x dimension], a row per time");
  if (points < 2)
    fail<InvalidArgument>(where, ": a time series needs at least 2 points, the file has ", points);
  if (dimension < 1) fail<InvalidArgument>(where, ": dataset 'y' has no columns (no components)");

  TimeSeries series;
  // The sizes are the file's word: a file that declares more than this machine can hold (a
  // damaged extent, a sparse dataset never written) is refused naming them, not left to an
  // uncaught std::bad_alloc. Beyond 2^56 values the byte count itself would not fit; beyond the
  // physical memory it is refused before allocating (rewind/physical_memory.hpp says why).
  const double declared_bytes =
      static_cast<double>(points) * (static_cast<double>(dimension) + 1.0) * sizeof(double);
  const auto too_large = [&] {
    fail<StorageError>(where, ": datasets 't' and 'y' declare ", points, " points of ", dimension,
                       " components (", declared_bytes / 1e9,
                       " GB), more than this machine can allocate");
  };
  if (points > (hsize_t{1} << 56) || dimension > (hsize_t{1} << 56) / points) too_large();
  if (declared_bytes > static_cast<double>(rwd::detail::physical_memory_bytes())) too_large();
  try {
    series.times.resize(points);
    // 'y' is row-major [points × dimension]: its bytes are, as they are, our column-major
    // dimension × points matrix.
    series.values.resize(static_cast<Index>(dimension), static_cast<Index>(points));
  } catch (const std::bad_alloc&) {
    too_large();
  }
  check(H5Dread(t.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, series.times.data()),
        file, "reading dataset 't' (damaged or truncated?)");
  check(H5Dread(y.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, series.values.data()),
        file, "reading dataset 'y' (damaged or truncated?)");
  series.names = read_names(g.get(), file);

  // Name the place in the file's own terms before the generic checks.
  for (Index k = 0; k < series.points(); ++k) {
    const double time = series.times[static_cast<std::size_t>(k)];
    if (!std::isfinite(time))
      fail<InvalidArgument>(where, ": dataset 't' row ", k, " is ", time, "; times must be finite");
    if (k > 0 && !(time > series.times[static_cast<std::size_t>(k - 1)]))
      fail<InvalidArgument>(
          where, ": dataset 't' row ", k, ": t = ", time,
          " does not come after t = ", series.times[static_cast<std::size_t>(k - 1)], " (row ",
          k - 1, "); times must increase strictly");
    for (Index i = 0; i < series.dimension(); ++i)
      if (!std::isfinite(series.values(i, k)))
        fail<InvalidArgument>(where, ": dataset 'y' row ", k, " column ", i, " (t = ", time,
                              ") is ", series.values(i, k), "; values must be finite");
  }
  if (series.names.empty())
    for (Index i = 0; i < series.dimension(); ++i) series.names.push_back(default_name(i));
  series.validate(where + " (group '" + group_name + "')");
  return series;
}

void save_time_series_hdf5(const std::filesystem::path& file, const TimeSeries& series) {
  series.validate("time series to save as " + quoted(file));
  std::string names;
  for (const std::string& name : names_or_defaults(series)) {
    if (!names.empty()) names += ',';
    names += name;
  }
  replace_atomically(file, [&](const std::filesystem::path& temporary) {
    QuietHdf5 quiet;
    Hdf5Handle h5 = checked(H5Fcreate(temporary.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT),
                            Hdf5Kind::file, file, "cannot be created");
    const hsize_t points = static_cast<hsize_t>(series.points());
    const hsize_t extent[2] = {points, static_cast<hsize_t>(series.dimension())};
    write_dataset(h5.get(), "t", 1, &points, series.times.data(), file);
    // Our column-major dimension × points matrix is, byte for byte, the row-major
    // [points × dimension] dataset.
    write_dataset(h5.get(), "y", 2, extent, series.values.data(), file);
    write_names(h5.get(), names, file);
    check(H5Fflush(h5.get(), H5F_SCOPE_LOCAL), file, "flushing the file (is the disk full?)");
    check(h5.close(), file, "closing the file (is the disk full?)");
  });
}

TimeSeries load_time_series(const std::filesystem::path& file) {
  std::string extension = file.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (extension == ".csv") return load_time_series_csv(file);
  if (extension == ".h5" || extension == ".hdf5") return load_time_series_hdf5(file);
  if (extension.empty())
    fail<InvalidArgument>(where_of(file),
                          " has no extension; name it .csv, .h5 or .hdf5 by its format");
  fail<InvalidArgument>(where_of(file), ": unknown file type '", file.extension().string(),
                        "'; use .csv, .h5 or .hdf5");
}

}  // namespace rwd::training
