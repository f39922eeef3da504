// src/training/time_series.cpp — see rewind/training/time_series.hpp.
#include "rewind/training/time_series.hpp"

#include "rewind/checkpoint/detail/hdf5_handles.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "rewind/error.hpp"

namespace rwd::training {
namespace {

std::vector<std::string> split(const std::string& line, char separator) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, separator)) fields.push_back(field);
  if (!line.empty() && line.back() == separator) fields.emplace_back();
  return fields;
}

std::string trim(std::string s) {
  const auto first = s.find_first_not_of(" \t\r");
  const auto last = s.find_last_not_of(" \t\r");
  return first == std::string::npos ? std::string() : s.substr(first, last - first + 1);
}

// strtod on the whole field, or an error naming the place.
double parse_number(const std::string& field, const std::filesystem::path& file, Index line, std::size_t column) {
  const std::string text = trim(field);
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size())
    rwd::detail::fail<InvalidArgument>(file.string(), " line ", line, " column ", column + 1, ": '", text,
                                       "' is not a number");
  return value;
}

using rwd::detail::QuietHdf5;

// An identifier closed on scope exit; a negative one (HDF5's failure) is an error naming the file.
class Handle : public rwd::detail::Hdf5Id {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t), const std::filesystem::path& file, const std::string& what)
      : Hdf5Id(id, close) {
    if (!valid()) throw StorageError("time series '" + file.string() + "': " + what);
  }
};

void check(herr_t status, const std::filesystem::path& file, const std::string& what) {
  if (status < 0) throw StorageError("time series '" + file.string() + "': " + what);
}

std::string join(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "" : ",") + n;
  return text;
}

}  // namespace

void TimeSeries::validate(const std::string& source) const {
  if (static_cast<Index>(times.size()) != points())
    rwd::detail::fail<InvalidArgument>(source, ": ", times.size(), " times but ", points(), " value columns");
  if (points() < 2) rwd::detail::fail<InvalidArgument>(source, ": a time series needs at least 2 points, it has ", points());
  if (dimension() < 1) rwd::detail::fail<InvalidArgument>(source, ": a time series needs at least one component");
  if (!names.empty() && static_cast<Index>(names.size()) != dimension())
    rwd::detail::fail<InvalidArgument>(source, ": ", names.size(), " names for ", dimension(), " components");
  for (Index k = 0; k < points(); ++k) {
    const double t = times[static_cast<std::size_t>(k)];
    if (!std::isfinite(t)) rwd::detail::fail<InvalidArgument>(source, ": time ", k, " is ", t);
    if (k > 0 && !(t > times[static_cast<std::size_t>(k - 1)]))
      rwd::detail::fail<InvalidArgument>(source, ": times must increase strictly, but point ", k, " (t = ", t,
                                         ") follows t = ", times[static_cast<std::size_t>(k - 1)]);
    for (Index i = 0; i < dimension(); ++i)
      if (!std::isfinite(values(i, k)))
        rwd::detail::fail<InvalidArgument>(source, ": component ", i, " at point ", k, " (t = ", t, ") is ",
                                           values(i, k));
  }
}

TimeSeries load_time_series_csv(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw StorageError("time series '" + file.string() + "' cannot be opened (does it exist?)");
  TimeSeries series;
  std::vector<double> flat;
  std::string line;
  Index number = 0;
  std::size_t columns = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string content = trim(line);
    if (content.empty() || content[0] == '#') continue;
    const std::vector<std::string> fields = split(content, ',');
    if (columns == 0) {  // the header
      if (fields.size() < 2)
        rwd::detail::fail<InvalidArgument>(file.string(), " line ", number,
                                           ": the header needs a time column and at least one value column");
      columns = fields.size();
      for (std::size_t c = 1; c < fields.size(); ++c) series.names.push_back(trim(fields[c]));
      continue;
    }
    if (fields.size() != columns)
      rwd::detail::fail<InvalidArgument>(file.string(), " line ", number, ": ", fields.size(),
                                         " columns, the header has ", columns);
    series.times.push_back(parse_number(fields[0], file, number, 0));
    for (std::size_t c = 1; c < columns; ++c) {
      const double value = parse_number(fields[c], file, number, c);
      if (!std::isfinite(value))
        rwd::detail::fail<InvalidArgument>(file.string(), " line ", number, " column ", c + 1, ": ", value,
                                           " is not a finite value");
      flat.push_back(value);
    }
  }
  if (in.bad()) throw StorageError("time series '" + file.string() + "': read error");
  if (columns == 0) rwd::detail::fail<InvalidArgument>(file.string(), ": no header and no data");
  const Index d = static_cast<Index>(columns - 1);
  series.values = Eigen::Map<Eigen::MatrixXd>(flat.data(), d, static_cast<Index>(series.times.size()));
  series.validate(file.string());
  return series;
}

void save_time_series_csv(const std::filesystem::path& file, const TimeSeries& series) {
  series.validate("time series to save as '" + file.string() + "'");
  std::FILE* out = std::fopen(file.c_str(), "w");
  if (!out) throw StorageError("time series '" + file.string() + "' cannot be created");
  std::fprintf(out, "t");
  for (Index i = 0; i < series.dimension(); ++i) {
    std::string name = series.names.empty() ? std::string(1, 'y') : series.names[static_cast<std::size_t>(i)];
    if (series.names.empty()) name += std::to_string(i);
    std::fprintf(out, ",%s", name.c_str());
  }
  std::fprintf(out, "\n");
  for (Index k = 0; k < series.points(); ++k) {
    std::fprintf(out, "%.17g", series.times[static_cast<std::size_t>(k)]);
    for (Index i = 0; i < series.dimension(); ++i) std::fprintf(out, ",%.17g", series.values(i, k));
    std::fprintf(out, "\n");
  }
  const bool failed = std::ferror(out) != 0;
  if (std::fclose(out) != 0 || failed)
    throw StorageError("time series '" + file.string() + "': writing failed (is the disk full?)");
}

TimeSeries load_time_series_hdf5(const std::filesystem::path& file, const std::string& group) {
  if (!std::filesystem::exists(file)) throw StorageError("time series '" + file.string() + "' does not exist");
  QuietHdf5 quiet;
  if (H5Fis_hdf5(file.c_str()) <= 0)
    throw StorageError("time series '" + file.string() + "' is not an HDF5 file (or is truncated)");
  Handle h5(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, file, "cannot be opened");
  Handle g(H5Gopen2(h5.get(), group.c_str(), H5P_DEFAULT), H5Gclose, file, "has no group " + group);
  Handle t(H5Dopen2(g.get(), "t", H5P_DEFAULT), H5Dclose, file, "has no dataset 't' in " + group);
  Handle y(H5Dopen2(g.get(), "y", H5P_DEFAULT), H5Dclose, file, "has no dataset 'y' in " + group);
  Handle t_space(H5Dget_space(t.get()), H5Sclose, file, "'t' space");
  Handle y_space(H5Dget_space(y.get()), H5Sclose, file, "'y' space");
  hsize_t points = 0, dims[2] = {0, 0};
  if (H5Sget_simple_extent_ndims(t_space.get()) != 1 || H5Sget_simple_extent_dims(t_space.get(), &points, nullptr) != 1)
    rwd::detail::fail<InvalidArgument>(file.string(), ": dataset 't' must be one-dimensional");
  if (H5Sget_simple_extent_ndims(y_space.get()) != 2 || H5Sget_simple_extent_dims(y_space.get(), dims, nullptr) != 2 ||
      dims[0] != points)
    rwd::detail::fail<InvalidArgument>(file.string(), ": dataset 'y' must be [points × dimension] with ", points,
                                       " rows like 't'");
  TimeSeries series;
  series.times.resize(points);
  // 'y' is row-major [points × dimension]: read as is, it is our column-major dimension × points.
  series.values.resize(static_cast<Index>(dims[1]), static_cast<Index>(points));
  check(H5Dread(t.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, series.times.data()), file,
        "reading 't' (is the file truncated?)");
  check(H5Dread(y.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, series.values.data()), file,
        "reading 'y' (is the file truncated?)");
  if (H5Aexists(g.get(), "names") > 0) {
    Handle attribute(H5Aopen(g.get(), "names", H5P_DEFAULT), H5Aclose, file, "attribute 'names'");
    Handle type(H5Aget_type(attribute.get()), H5Tclose, file, "attribute 'names' type");
    if (H5Tget_class(type.get()) == H5T_STRING) {
      std::vector<char> buffer(H5Tget_size(type.get()) + 1, '\0');
      Handle memory(H5Tcopy(H5T_C_S1), H5Tclose, file, "string type");
      check(H5Tset_size(memory.get(), buffer.size()), file, "string type");
      check(H5Aread(attribute.get(), memory.get(), buffer.data()), file, "reading attribute 'names'");
      series.names = split(buffer.data(), ',');
    }
  }
  series.validate(file.string());
  return series;
}

void save_time_series_hdf5(const std::filesystem::path& file, const TimeSeries& series) {
  series.validate("time series to save as '" + file.string() + "'");
  QuietHdf5 quiet;
  Handle h5(H5Fcreate(file.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT), H5Fclose, file,
            std::filesystem::exists(file) ? "exists already; not overwritten" : "cannot be created");
  const hsize_t points = static_cast<hsize_t>(series.points());
  const hsize_t dims[2] = {points, static_cast<hsize_t>(series.dimension())};
  Handle t_space(H5Screate_simple(1, &points, nullptr), H5Sclose, file, "'t' space");
  Handle t(H5Dcreate2(h5.get(), "t", H5T_IEEE_F64LE, t_space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
           H5Dclose, file, "creating 't'");
  check(H5Dwrite(t.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, series.times.data()), file, "writing 't'");
  Handle y_space(H5Screate_simple(2, dims, nullptr), H5Sclose, file, "'y' space");
  Handle y(H5Dcreate2(h5.get(), "y", H5T_IEEE_F64LE, y_space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
           H5Dclose, file, "creating 'y'");
  check(H5Dwrite(y.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, series.values.data()), file, "writing 'y'");
  if (!series.names.empty()) {
    const std::string names = join(series.names);
    Handle type(H5Tcopy(H5T_C_S1), H5Tclose, file, "string type");
    check(H5Tset_size(type.get(), std::max<std::size_t>(names.size(), 1)), file, "string type");
    Handle space(H5Screate(H5S_SCALAR), H5Sclose, file, "attribute space");
    Handle attribute(H5Acreate2(h5.get(), "names", type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                     file, "creating attribute 'names'");
    check(H5Awrite(attribute.get(), type.get(), names.c_str()), file, "writing attribute 'names'");
  }
  check(H5Fflush(h5.get(), H5F_SCOPE_LOCAL), file, "flushing (is the disk full?)");
}

TimeSeries load_time_series(const std::filesystem::path& file) {
  const std::string ext = file.extension().string();
  if (ext == ".csv") return load_time_series_csv(file);
  if (ext == ".h5" || ext == ".hdf5") return load_time_series_hdf5(file);
  rwd::detail::fail<InvalidArgument>("time series '", file.string(), "': unknown format '", ext,
                                     "' (use .csv, .h5 or .hdf5)");
}

}  // namespace rwd::training
