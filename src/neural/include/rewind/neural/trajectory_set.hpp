// rewind/neural/trajectory_set.hpp — one or several observed trajectories of the same system, read
// from CSV or HDF5, and the per-component normalisation a model is trained in.
//
//   rwd::training::TrajectorySet set = rwd::training::load_trajectories("runs.csv");
//   set.trajectories[j];            // a TimeSeries each: its own times, same components
//   set.labels[j];                  // "0", "1", … or the file's labels / group names
//   auto norm = rwd::training::Normalization::of(set, training_points);  // mean, std per component
//
// Files:
//   - a time-series file as rwd::training::load_time_series reads it is one trajectory;
//   - CSV with a column named `trajectory` (anywhere in the header): the rows of one label
//     (any text without commas: "0", "run-a") form one trajectory, in file order; the first
//     other column is the time, the rest are the components. The rows of a label must be
//     consecutive (a label seen again after another one is an error naming the line), times
//     increase strictly within a trajectory and start again for the next;
//       trajectory,t,x,y,z
//       0,0,1,1,1
//       0,0.01,1.1,1.2,0.98
//       1,0,-3,2,10
//   - HDF5 without t and y in the root group: every group of the root is a trajectory, named by
//     its group, in name order; each group holds t and y as load_time_series_hdf5 reads them.
// Trajectories may have different lengths and different (also irregular) time grids; they must
// have the same components (count, and names where the file names them). Errors name the file
// and the line, column or group (rwd::InvalidArgument for bad content, rwd::StorageError for a
// file that cannot be read), before any work.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "rewind/neural/time_series.hpp"
#include "rewind/types.hpp"

namespace rwd::training {

struct TrajectorySet {
  std::vector<TimeSeries> trajectories;
  std::vector<std::string> labels;  // one per trajectory
  std::vector<std::string> names;   // the components' names (y0, y1, … when the file has none)

  Index dimension() const { return trajectories.empty() ? 0 : trajectories.front().dimension(); }
  Index size() const { return static_cast<Index>(trajectories.size()); }
  Index points() const;  // over all trajectories
};

TrajectorySet load_trajectories(const std::filesystem::path& file);

// z = (y − mean) / scale per component: the model lives in z. mean and scale come from the
// training points only (scale = the population standard deviation; 1 for a component that is
// constant there, so that it is shifted but never divided by zero).
struct Normalization {
  Eigen::VectorXd mean;
  Eigen::VectorXd scale;

  // The identity map for d components.
  static Normalization identity(Index d);
  // From the first training_points[j] points of trajectory j (all points when empty).
  static Normalization of(const TrajectorySet& set, const std::vector<Index>& training_points = {});

  TimeSeries normalize(const TimeSeries& series) const;
  // D × points in data units from D × points in z.
  Eigen::MatrixXd denormalize(const Eigen::MatrixXd& z) const;
  Eigen::VectorXd normalize_point(const Eigen::VectorXd& y) const;
};

}  // namespace rwd::training
