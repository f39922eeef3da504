// src/cli/series_observations.hpp — a measured time series (a CSV or HDF5 file as
// rwd::training::load_time_series reads it) turned into the observations `rewind fit --data`
// fits: a fixed-step run of the problem from the first point, observed at every point, with the
// last fraction of the points held out.
//
//   auto series = rwd::training::load_time_series("data/hare_lynx.csv");   // t, hare, lynx
//   rwd::cli::SeriesObservations s = rwd::cli::series_observations(
//       "data/hare_lynx.csv", series, "lotka_volterra", names, theta_default, 2, "rk4", 0.01, 0.2);
//   s.training;          // rwd::Observations of 1900–1915: steps 0, 100, …, 1500 of dt = 0.01
//   s.all;               // the same grid over every point, 1900–1920 (predictions, held-out error)
//   s.training_points;   // 16: the held-out points are the last ceil(0.2 · 21) = 5
//
// The run starts at the first point (its step 0 is t = times[0]; built-in problems are
// autonomous, so only time differences matter) and the points' times must lie on the step grid:
// (t_k − t_0)/dt an integer to 1e-6. Every component of the state is observed (field "all"), so
// the series must have as many components as the state. The first point is the initial state
// (`rewind fit --fit-initial-state` estimates it instead of taking it as exact). The split is
// `rewind train --data`'s: held out are the last ceil(validation · points) points.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/fit/observations.hpp"
#include "rewind/neural/time_series.hpp"
#include "rewind/types.hpp"

namespace rwd::cli {

struct SeriesObservations {
  Observations training;           // the points fitted (the first training_points)
  Observations all;                // every point on the same grid
  Index training_points = 0;       // points fitted; the rest are held out
  std::vector<double> times;       // every point's time as the file gives it
  std::vector<std::string> names;  // component names from the file (may be empty)
};

// `source` names the file in messages. InvalidArgument: dt not finite and > 0, validation not in
// [0, 1), fewer than 2 training points left, a component count other than state_size, a time off
// the step grid.
inline SeriesObservations series_observations(
    const std::string& source, const training::TimeSeries& series, const std::string& problem,
    Index size, const std::vector<std::string>& parameter_names, const Eigen::VectorXd& parameters,
    Index state_size, const std::string& method, double dt, double validation) {
  using rwd::detail::fail;
  series.validate(source);
  if (!(std::isfinite(dt) && dt > 0.0))
    fail<InvalidArgument>("--dt = ", dt, " must be finite and > 0");
  if (!(validation >= 0.0 && validation < 1.0))
    fail<InvalidArgument>("--validation = ", validation, " must be a fraction in [0, 1)");
  if (series.dimension() != state_size)
    fail<InvalidArgument>("--data '", source, "' has ", series.dimension(), " components but ",
                          problem, "'s state has ", state_size, " (every component is observed)");
  const Index points = series.points();
  const auto held = static_cast<Index>(std::ceil(validation * static_cast<double>(points)));
  if (points - held < 2)
    fail<InvalidArgument>("--validation ", validation, " leaves '", source, "' with ",
                          points - held, " points to fit; at least 2 are needed");

  SeriesObservations out;
  out.training_points = points - held;
  out.times = series.times;
  out.names = series.names;
  Observations& all = out.all;
  all.problem = problem;
  all.size = size;
  all.state_size = state_size;
  all.method = method;
  all.dt = dt;
  all.parameter_names = parameter_names;
  all.parameters = parameters;
  all.field = {"all", 0, state_size};
  all.noise = 0.0;
  all.seed = 0;
  for (Index k = 0; k < points; ++k) {
    const double steps = (series.times[static_cast<std::size_t>(k)] - series.times[0]) / dt;
    const double rounded = std::round(steps);
    if (std::abs(steps - rounded) > 1e-6 * std::max(1.0, rounded))
      fail<InvalidArgument>(
          "--data '", source, "': t = ", series.times[static_cast<std::size_t>(k)], " is ", steps,
          " steps of --dt ", dt, " after the first point; the points must lie on the step grid");
    all.observed_steps.push_back(static_cast<Index>(rounded));
  }
  all.steps = all.observed_steps.back();
  all.data = series.values;
  all.initial_state = series.values.col(0);
  all.validate();

  out.training = all;
  out.training.observed_steps.resize(static_cast<std::size_t>(out.training_points));
  out.training.data = all.data.leftCols(out.training_points).eval();
  out.training.steps = out.training.observed_steps.back();
  out.training.validate();
  return out;
}

}  // namespace rwd::cli
