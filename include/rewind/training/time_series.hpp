// rewind/training/time_series.hpp — a sampled trajectory y(t_0), …, y(t_{P−1}) to fit, from CSV or
// HDF5.
//
//   auto data = rwd::training::load_time_series("data/spiral.csv");   // or .h5 / .hdf5
//   data.values.col(k);          // y(t_k), data.dimension() components
//
// CSV: a header row "t,<name>,<name>,…" then one row per time; lines starting with '#' are
// comments. Written with 17 significant digits, so save → load gives back the same bits.
// HDF5: datasets "t" float64 [points] and "y" float64 [points × dimension] (a row per time, as
// numpy/h5py hold it) in a group (default "/"), attribute "names" = "y0,y1" (optional).
//
// Loading checks what training relies on and names the place when it fails: times strictly
// increasing, every value finite, the same number of columns in every row, at least two points.
// A missing or unreadable file is an rwd::StorageError naming the path; malformed contents are
// an rwd::InvalidArgument naming the line (CSV) or dataset (HDF5).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "rewind/types.hpp"

namespace rwd::training {

struct TimeSeries {
  std::vector<double> times;       // t_0 < t_1 < … (points values)
  Eigen::MatrixXd values;          // dimension × points: column k is y(t_k)
  std::vector<std::string> names;  // one per component (may be empty)

  Index dimension() const { return values.rows(); }
  Index points() const { return values.cols(); }
  // The checks above; `source` names the data in the message.
  void validate(const std::string& source) const;
};

TimeSeries load_time_series_csv(const std::filesystem::path& file);
void save_time_series_csv(const std::filesystem::path& file, const TimeSeries& series);
TimeSeries load_time_series_hdf5(const std::filesystem::path& file, const std::string& group = "/");
void save_time_series_hdf5(const std::filesystem::path& file, const TimeSeries& series);
// By extension: .csv, .h5 or .hdf5.
TimeSeries load_time_series(const std::filesystem::path& file);

}  // namespace rwd::training
