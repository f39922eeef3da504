// rewind/neural/time_series.hpp — a sampled trajectory y(t_0), …, y(t_{P−1}) to fit, read from and
// written to CSV or HDF5.
//
//   rwd::training::TimeSeries data = rwd::training::load_time_series("data/spiral.csv");  // or .h5
//   data.values.col(k);               // y(t_k): data.dimension() components
//   data.times[k];                    // t_k
//
// CSV (text, "C" number format whatever the locale):
//     # comment lines start with '#'; blank lines are skipped
//     t,y0,y1                        <- header: a time column, then one name per component
//     0,2,0
//     0.025,1.9839,0.3925
//   The first column holds the times whatever its name; the other names become `names`.
//   Numbers are parsed exactly (correctly rounded) and written with 17 significant digits
//   (printf's %.17g), so save → load gives back the same bits.
// HDF5 (in `group`, "/" by default; the layout numpy/h5py users write naturally):
//     t      float64 [points]                times
//     y      float64 [points × dimension]    a row per time (a 1-D y [points] is one component)
//     names  attribute of the group, optional: "y0,y1" (one string, comma-separated) or an array
//            of strings, one per component
//   Integer or other floating-point datasets are converted to double on reading.
//
// Loading checks what training relies on and says where it fails:
//   - rwd::StorageError naming the path: the file is missing, unreadable, a directory, binary
//     where text is expected, not HDF5, or lacks the HDF5 layout above (dataset missing, wrong
//     rank or type, t and y of different lengths);
//   - rwd::InvalidArgument naming the path and the line and column (CSV) or the dataset, row and
//     column (HDF5): a row with a different number of columns than the header, a field that is
//     not a number, NaN or Inf, times that do not increase strictly, fewer than 2 points, bad
//     names.
// When a file has no names, components are named y0, y1, ….
//
// Saving validates the series first (rwd::InvalidArgument), writes a temporary file next to the
// target and renames it over the target, so an existing file is replaced whole or not at all;
// failures (missing directory, full disk, permissions) are rwd::StorageError naming the path.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "rewind/types.hpp"

namespace rwd::training {

struct TimeSeries {
  std::vector<double> times;       // t_0 < t_1 < …, one per point
  Eigen::MatrixXd values;          // dimension × points: column k is y(t_k)
  std::vector<std::string> names;  // one per component, or empty (then y0, y1, … in files)

  Index dimension() const { return values.rows(); }
  Index points() const { return values.cols(); }

  // Throws rwd::InvalidArgument, the message starting with `source`, unless: times and value
  // columns agree in number, there are >= 2 points and >= 1 component, times are finite and
  // strictly increasing, every value is finite, and names are either absent or one per
  // component, non-empty, distinct, without commas, quotes, control characters or surrounding
  // spaces (so that they survive a CSV header and the HDF5 attribute).
  void validate(const std::string& source = "time series") const;
};

TimeSeries load_time_series_csv(const std::filesystem::path& file);
void save_time_series_csv(const std::filesystem::path& file, const TimeSeries& series);

TimeSeries load_time_series_hdf5(const std::filesystem::path& file, const std::string& group = "/");
// Writes t, y and the names attribute in the file's root group.
void save_time_series_hdf5(const std::filesystem::path& file, const TimeSeries& series);

// By extension, case-insensitive: .csv, or .h5 / .hdf5 (root group); anything else is an
// rwd::InvalidArgument.
TimeSeries load_time_series(const std::filesystem::path& file);

}  // namespace rwd::training
