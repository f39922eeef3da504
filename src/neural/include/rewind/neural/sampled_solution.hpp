// rewind/neural/sampled_solution.hpp — a model's solution sampled on a uniform grid, as a time
// series: synthetic training data, or a reference to compare a fit with.
//
//   rwd::CubicSpiral spiral;
//   auto data = rwd::training::sample_solution(spiral, spiral.default_initial_state(),
//                                              spiral.default_parameters(),
//                                              rwd::ButcherTableau::rk4(),
//                                              /*t_final=*/25.0, /*points=*/1000,
//                                              /*substeps=*/100);
//
// Samples at t_k = t_final·k/(points − 1) (computed, not accumulated, so the grid is uniform to
// one rounding per value), integrating with `substeps` fixed steps per interval in between.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/neural/time_series.hpp"
#include "rewind/problem.hpp"

namespace rwd::training {

template <Problem P>
TimeSeries sample_solution(const P& problem, const Eigen::VectorXd& y0,
                           const Eigen::VectorXd& theta, const ButcherTableau& tableau,
                           double t_final, Index points, Index substeps,
                           std::vector<std::string> names = {}) {
  if (points < 2)
    rwd::detail::fail<InvalidArgument>("sample_solution: points = ", points, " must be >= 2");
  if (!(t_final > 0.0))
    rwd::detail::fail<InvalidArgument>("sample_solution: t_final = ", t_final, " must be > 0");
  if (substeps < 1)
    rwd::detail::fail<InvalidArgument>("sample_solution: substeps = ", substeps, " must be >= 1");
  const double spacing = t_final / static_cast<double>(points - 1);
  ExplicitRungeKutta stepper(
      problem, tableau,
      StepControl::fixed(0.0, spacing / static_cast<double>(substeps), (points - 1) * substeps));
  Eigen::VectorXd y = y0;
  Carry carry = stepper.initial_carry(y, theta);
  TimeSeries series;
  series.names = std::move(names);
  series.values.resize(y0.size(), points);
  for (Index k = 0; k < points; ++k) {
    if (k > 0)
      for (Index i = 0; i < substeps; ++i) stepper.step(y, carry, theta);
    series.times.push_back(t_final * static_cast<double>(k) / static_cast<double>(points - 1));
    series.values.col(k) = y;
  }
  return series;
}

}  // namespace rwd::training
