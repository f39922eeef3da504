// src/neural/src/trajectory_set.cpp — see rewind/neural/trajectory_set.hpp. Single-trajectory files
// go through the time-series loaders; this file reads the multi-trajectory layouts.
#include "rewind/neural/trajectory_set.hpp"

#include <hdf5.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <set>
#include <string_view>

#include "rewind/error.hpp"
#include "rewind/format.hpp"
#include "rewind/hdf5/hdf5_handles.hpp"

namespace rwd::training {
namespace {

using rwd::detail::fail;

std::string lowercase_extension(const std::filesystem::path& file) {
  std::string ext = file.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> fields;
  for (std::size_t begin = 0;;) {
    const std::size_t comma = line.find(',', begin);
    fields.push_back(trim(line.substr(
        begin, comma == std::string_view::npos ? std::string_view::npos : comma - begin)));
    if (comma == std::string_view::npos) return fields;
    begin = comma + 1;
  }
}

std::string unquote(std::string_view name) {
  if (name.size() >= 2 && name.front() == '"' && name.back() == '"')
    name = trim(name.substr(1, name.size() - 2));
  return std::string(name);
}

bool parse_number(std::string_view text, double& value) {
  if (text.size() > 1 && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(text.data(), end, value);
  return error == std::errc() && ptr == end;
}

// The header of a CSV file (its first line that is neither blank nor a comment), or "" when the
// file has none; the file is known to exist.
std::string csv_header(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    const std::string_view content = trim(line);
    if (content.empty() || content.front() == '#') continue;
    return std::string(content);
  }
  return {};
}

Index trajectory_column(const std::string& header) {
  const auto fields = split(header);
  for (std::size_t c = 0; c < fields.size(); ++c)
    if (unquote(fields[c]) == "trajectory") return static_cast<Index>(c);
  return -1;
}

// CSV with a `trajectory` column (see the header).
TrajectorySet load_labelled_csv(const std::filesystem::path& file, Index label_column) {
  const std::string where = "time series " + quoted(file);
  std::ifstream in(file);
  if (!in) fail<StorageError>(where, " cannot be opened");
  TrajectorySet set;
  std::vector<std::string> columns;
  Index time_column = -1;
  std::set<std::string> finished;         // labels whose rows have ended
  std::vector<std::vector<double>> rows;  // of the current trajectory: t, then the components
  std::vector<Index> row_lines;
  const auto close_trajectory = [&] {
    if (rows.empty()) return;
    TimeSeries series;
    const Index d = static_cast<Index>(columns.size()) - 2;
    series.values.resize(d, static_cast<Index>(rows.size()));
    for (std::size_t k = 0; k < rows.size(); ++k) {
      series.times.push_back(rows[k][0]);
      for (Index i = 0; i < d; ++i) series.values(i, static_cast<Index>(k)) = rows[k][1 + i];
    }
    for (std::size_t c = 0; c < columns.size(); ++c)
      if (static_cast<Index>(c) != label_column && static_cast<Index>(c) != time_column)
        series.names.push_back(columns[c]);
    series.validate(where + " trajectory '" + set.labels.back() + "' (lines " +
                    std::to_string(row_lines.front()) + " to " + std::to_string(row_lines.back()) +
                    ")");
    set.trajectories.push_back(std::move(series));
    rows.clear();
    row_lines.clear();
  };
  std::string line;
  Index number = 0, header_line = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string_view content = trim(line);
    if (content.empty() || content.front() == '#') continue;
    const auto fields = split(content);
    if (columns.empty()) {
      for (auto f : fields) columns.push_back(unquote(f));
      header_line = number;
      time_column = label_column == 0 ? 1 : 0;
      if (columns.size() < 3)
        fail<InvalidArgument>(where, " line ", number, ": a header with a trajectory column needs ",
                              "a time column and at least one component");
      continue;
    }
    if (fields.size() != columns.size())
      fail<InvalidArgument>(where, " line ", number, ": ", fields.size(),
                            " columns, but the header (line ", header_line, ") has ",
                            columns.size());
    const std::string label(fields[static_cast<std::size_t>(label_column)]);
    if (label.empty())
      fail<InvalidArgument>(where, " line ", number, ": the trajectory label is empty");
    if (set.labels.empty() || set.labels.back() != label) {
      if (finished.count(label) != 0)
        fail<InvalidArgument>(where, " line ", number, ": trajectory '", label,
                              "' continues after another trajectory; the rows of one trajectory ",
                              "must be consecutive");
      close_trajectory();
      if (!set.labels.empty()) finished.insert(set.labels.back());
      set.labels.push_back(label);
    }
    std::vector<double> row;
    row.reserve(columns.size() - 1);
    for (std::size_t c = 0; c < fields.size(); ++c) {
      if (static_cast<Index>(c) == label_column) continue;
      double value = 0.0;
      if (fields[c].empty())
        fail<InvalidArgument>(where, " line ", number, " column ", c + 1, " ('", columns[c],
                              "'): the value is missing");
      if (!parse_number(fields[c], value))
        fail<InvalidArgument>(where, " line ", number, " column ", c + 1, " ('", columns[c],
                              "'): '", fields[c], "' is not a number");
      if (!std::isfinite(value))
        fail<InvalidArgument>(where, " line ", number, " column ", c + 1, " ('", columns[c],
                              "'): ", fields[c], " is not finite");
      row.push_back(value);
    }
    if (!rows.empty() && !(row[0] > rows.back()[0]))
      fail<InvalidArgument>(where, " line ", number, ": t = ", row[0],
                            " does not come after t = ", rows.back()[0], " (line ",
                            row_lines.back(), ") in trajectory '", label,
                            "'; times must increase strictly within a trajectory");
    rows.push_back(std::move(row));
    row_lines.push_back(number);
  }
  close_trajectory();
  if (set.trajectories.empty()) fail<InvalidArgument>(where, " has no data rows");
  set.names = set.trajectories.front().names;
  return set;
}

// The groups of the HDF5 root, in name order.
std::vector<std::string> root_groups(const std::filesystem::path& file) {
  rwd::detail::QuietHdf5 quiet;
  rwd::detail::Hdf5Handle h5(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT),
                             rwd::detail::Hdf5Kind::file);
  if (!h5.valid()) fail<StorageError>("time series ", quoted(file), " cannot be opened as HDF5");
  if (H5Lexists(h5.get(), "t", H5P_DEFAULT) > 0 || H5Lexists(h5.get(), "y", H5P_DEFAULT) > 0)
    return {};  // one trajectory in the root
  std::vector<std::string> groups;
  const auto visit = [](hid_t group, const char* name, const H5L_info_t*, void* data) -> herr_t {
    H5O_info_t info;
    if (H5Oget_info_by_name(group, name, &info, H5P_DEFAULT) >= 0 && info.type == H5O_TYPE_GROUP)
      static_cast<std::vector<std::string>*>(data)->emplace_back(name);
    return 0;
  };
  H5Literate(h5.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, visit, &groups);
  return groups;
}

void check_same_components(const TrajectorySet& set, const std::filesystem::path& file) {
  for (std::size_t j = 1; j < set.trajectories.size(); ++j) {
    const TimeSeries& a = set.trajectories.front();
    const TimeSeries& b = set.trajectories[j];
    if (b.dimension() != a.dimension())
      fail<InvalidArgument>("time series ", quoted(file), ": trajectory '", set.labels[j], "' has ",
                            b.dimension(), " components but trajectory '", set.labels[0], "' has ",
                            a.dimension());
    if (!a.names.empty() && !b.names.empty() && a.names != b.names)
      fail<InvalidArgument>("time series ", quoted(file), ": trajectory '", set.labels[j],
                            "' names its components differently from trajectory '", set.labels[0],
                            "'");
  }
}

}  // namespace

Index TrajectorySet::points() const {
  Index n = 0;
  for (const TimeSeries& s : trajectories) n += s.points();
  return n;
}

TrajectorySet load_trajectories(const std::filesystem::path& file) {
  const std::string ext = lowercase_extension(file);
  TrajectorySet set;
  if (ext == ".csv" && std::filesystem::is_regular_file(file)) {
    const Index column = trajectory_column(csv_header(file));
    if (column >= 0) set = load_labelled_csv(file, column);
  } else if ((ext == ".h5" || ext == ".hdf5") && std::filesystem::is_regular_file(file) &&
             H5Fis_hdf5(file.c_str()) > 0) {
    const std::vector<std::string> groups = root_groups(file);
    for (const std::string& group : groups) {
      std::string path(1, '/');
      path += group;
      set.trajectories.push_back(load_time_series_hdf5(file, path));
      set.labels.push_back(group);
    }
  }
  if (set.trajectories.empty()) {  // one trajectory, as the time-series loaders read it
    set.trajectories.push_back(load_time_series(file));
    set.labels.push_back("0");
  }
  check_same_components(set, file);
  set.names = set.trajectories.front().names;
  if (set.names.empty())
    for (Index i = 0; i < set.dimension(); ++i) {
      std::string name(1, 'y');  // appended, not "y" + …: GCC 12 warns falsely on the latter
      name += std::to_string(i);
      set.names.push_back(std::move(name));
    }
  return set;
}

Normalization Normalization::identity(Index d) {
  return {Eigen::VectorXd::Zero(d), Eigen::VectorXd::Ones(d)};
}

Normalization Normalization::of(const TrajectorySet& set,
                                const std::vector<Index>& training_points) {
  const Index d = set.dimension();
  Eigen::VectorXd sum = Eigen::VectorXd::Zero(d);
  Index count = 0;
  const auto used = [&](std::size_t j) {
    return training_points.empty() ? set.trajectories[j].points() : training_points[j];
  };
  for (std::size_t j = 0; j < set.trajectories.size(); ++j)
    for (Index k = 0; k < used(j); ++k, ++count) sum += set.trajectories[j].values.col(k);
  if (count == 0) fail<InvalidArgument>("normalisation: no training points");
  Normalization n;
  n.mean = sum / static_cast<double>(count);
  Eigen::VectorXd squares = Eigen::VectorXd::Zero(d);
  for (std::size_t j = 0; j < set.trajectories.size(); ++j)
    for (Index k = 0; k < used(j); ++k)
      squares += (set.trajectories[j].values.col(k) - n.mean).array().square().matrix();
  n.scale = (squares / static_cast<double>(count)).cwiseSqrt();
  for (Index i = 0; i < d; ++i)
    if (!(n.scale[i] > 0.0)) n.scale[i] = 1.0;
  return n;
}

TimeSeries Normalization::normalize(const TimeSeries& series) const {
  TimeSeries z = series;
  z.values = ((series.values.colwise() - mean).array().colwise() / scale.array()).matrix();
  return z;
}

Eigen::MatrixXd Normalization::denormalize(const Eigen::MatrixXd& z) const {
  return ((z.array().colwise() * scale.array()).colwise() + mean.array()).matrix();
}

Eigen::VectorXd Normalization::normalize_point(const Eigen::VectorXd& y) const {
  return ((y - mean).array() / scale.array()).matrix();
}

}  // namespace rwd::training
