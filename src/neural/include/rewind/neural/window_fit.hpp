// rewind/neural/window_fit.hpp — the minibatch loss of trajectory fitting: B windows of W
// consecutive data intervals, each integrated from its first data point, scored against the
// next W points.
//
//   J = 1/(B·W·D) Σ_b Σ_{k=1..W} |ŷ_b(t_{s_b + k}) − y(t_{s_b + k})|²
//
// (mean squared error over windows, points and components). The data must be sampled
// uniformly (spacing Δ): then every window sees the same local time grid 0, Δ, …, WΔ, and for an
// autonomous model (a neural ODE is one) the B windows integrate together as one batched state
// with the integrator taking `substeps` steps per data interval, so the loss is an ordinary
// rwd::Objective with observations at steps k·substeps and any adjoint driver computes dJ/dθ.
//
//   auto starts = sampler.next_batch();
//   Eigen::VectorXd y0 = rwd::training::window_initial_states(data, starts);   // D·B values
//   auto J = rwd::training::window_misfit(data, starts, window, substeps);
//   rwd::CheckpointedAdjoint driver(stepper, J);    // stepper over NeuralOde(mlp, B, …)
//   auto result = driver.run(y0, theta, rwd::revolve_schedule(4));
//
// Split by window (for a minibatch shared among processes): pass the whole minibatch's window
// count B as `total_windows` (the 1/(B·W·D) scale is the whole minibatch's) and a matrix
// `terms`; observation k then also writes window w's share, scale·|ŷ_w − y|² (its D components
// added in order), into terms(w, k − 1). A window's loss is its row added in order; the
// minibatch's is those added in window order — sums over a window's own values only, so the
// same bits however the windows are split. The observation's own value is the sum of its column
// in window order (so J itself does not depend on the split either).
#pragma once

#include <cmath>
#include <memory>
#include <vector>

#include <Eigen/Dense>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/neural/time_series.hpp"
#include "rewind/neural/window_sampler.hpp"
#include "rewind/objective.hpp"
#include "rewind/types.hpp"

namespace rwd::training {

// The spacing of a uniformly sampled series; an error naming the first interval that differs
// from the first one by more than `relative_tolerance` (uniform grids written as text carry
// round-off, hence a tolerance).
inline double uniform_spacing(const TimeSeries& data, double relative_tolerance = 1e-6) {
  if (data.points() < 2)
    rwd::detail::fail<InvalidArgument>("a time series needs at least 2 points");
  const double spacing = data.times[1] - data.times[0];
  for (std::size_t i = 1; i + 1 < data.times.size(); ++i) {
    const double h = data.times[i + 1] - data.times[i];
    if (std::abs(h - spacing) > relative_tolerance * std::abs(spacing))
      rwd::detail::fail<InvalidArgument>(
          "window training needs uniformly sampled data, but interval ", i, " (t = ", data.times[i],
          " to ", data.times[i + 1], ") is ", h, " long while the first is ", spacing);
  }
  return spacing;
}

inline void check_window_starts(const TimeSeries& data, const std::vector<Index>& starts,
                                Index window) {
  if (window < 1)
    rwd::detail::fail<InvalidArgument>("window = ", window, " intervals must be >= 1");
  if (starts.empty()) rwd::detail::fail<InvalidArgument>("a minibatch needs at least one window");
  for (Index s : starts)
    if (s < 0 || s + window >= data.points())
      rwd::detail::fail<InvalidArgument>("window starting at point ", s, " with ", window,
                                         " intervals runs past the series' ", data.points(),
                                         " points");
}

// The first point of every window, one after another: the batched initial state (D·B values) —
// the D × B matrix of gather_initial_states read column by column.
inline Eigen::VectorXd window_initial_states(const TimeSeries& data,
                                             const std::vector<Index>& starts) {
  const Eigen::MatrixXd columns = gather_initial_states(data, starts);
  return Eigen::Map<const Eigen::VectorXd>(columns.data(), columns.size());
}

// J above as an Objective over the batched state: observation at step k·substeps compares the
// batch with the data points start + k. total_windows (0: the windows given) and terms (null:
// not wanted; else resized to windows × W) as described above.
inline Objective<EigenBackend> window_misfit(const TimeSeries& data,
                                             const std::vector<Index>& starts, Index window,
                                             Index substeps, Index total_windows = 0,
                                             std::shared_ptr<Eigen::MatrixXd> terms = nullptr) {
  check_window_starts(data, starts, window);
  if (substeps < 1) rwd::detail::fail<InvalidArgument>("substeps = ", substeps, " must be >= 1");
  const Index d = data.dimension();
  const Index batch = static_cast<Index>(starts.size());
  if (total_windows == 0) total_windows = batch;
  if (total_windows < batch)
    rwd::detail::fail<InvalidArgument>(
        "window misfit: ", batch, " windows given but the minibatch ", "has only ", total_windows);
  if (terms) terms->setZero(batch, window);
  // targets.col(k − 1) holds the D·B target values of observation k.
  auto targets = std::make_shared<Eigen::MatrixXd>(d * batch, window);
  for (Index k = 1; k <= window; ++k) {
    const Eigen::MatrixXd at_k = gather_targets(data, starts, k);  // D × B, flattened below
    targets->col(k - 1) = Eigen::Map<const Eigen::VectorXd>(at_k.data(), at_k.size());
  }
  std::vector<Index> steps;
  for (Index k = 1; k <= window; ++k) steps.push_back(k * substeps);
  const double scale = 1.0 / static_cast<double>(d * total_windows * window);
  auto term = [targets, terms, substeps, scale, d, batch](
                  Index step, double, const Eigen::VectorXd& y, Eigen::VectorXd& grad) {
    const Index k = step / substeps - 1;
    const auto target = targets->col(k);
    if (y.size() != target.size())
      rwd::detail::fail<InvalidArgument>("window misfit: the state has ", y.size(),
                                         " values but the batch of targets has ", target.size());
    grad = y - target;
    // Plain loops, not a vectorised reduction: a window's sum must not depend on where it sits.
    double value = 0.0;
    for (Index w = 0; w < batch; ++w) {
      double squares = 0.0;
      for (Index i = w * d; i < (w + 1) * d; ++i) squares += grad[i] * grad[i];
      const double share = scale * squares;
      if (terms) (*terms)(w, k) = share;
      value += share;
    }
    grad *= 2.0 * scale;
    return value;
  };
  return Objective<EigenBackend>(Objective<EigenBackend>::TerminalFn{}, std::move(steps),
                                 std::move(term));
}

}  // namespace rwd::training
