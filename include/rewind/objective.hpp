// rewind/objective.hpp — the scalar J whose gradient rewind computes.
//
// J = g(t_N, y_N) + Σ_{k ∈ K} g_k(t_k, y_k): a terminal cost and observation terms at chosen
// step indices k (0 ≤ k ≤ N; k = 0 observes the initial state). Each term returns its value and
// writes its gradient with respect to the state into `grad` (overwritten).
//
//   auto J = rwd::Objective<rwd::EigenBackend>::terminal_squared_norm();   // ½|y_N|²
//   auto fit = rwd::Objective<B>(terminal, {10, 20, 30}, observation);       // custom terms
//
// Observation steps are step indices, not times: with fixed steps step k is t0 + k·dt. An
// observation step past the last step of the run is an error reported after the forward sweep.
//
// Observation times instead suit adaptive runs, whose step indices are not known in advance:
//
//   auto fit = rwd::Objective<B>::at_times(terminal, {0.5, 1.0, 1.5}, observation);
//
// term g_k is then evaluated at the state whose time is exactly t_k. The stepper must land on
// every such time — an adaptive rwd::ExplicitRungeKutta, rwd::DiagonallyImplicitRungeKutta or
// rwd::RosenbrockStepper with the times among its StepControl::stop_times does (the drivers ask it
// through `lands_on(t)` before any work, and refuse a stepper that cannot); a time past the end of
// the run (a stop condition ended it earlier) is an error after the forward sweep. The observation
// function still receives the step index, and the time to tell which term it is.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>
#include <vector>

#include "rewind/backend/backend.hpp"
#include "rewind/error.hpp"
#include "rewind/types.hpp"

namespace rwd {

template <VectorBackend B>
class Objective {
 public:
  using Vector = typename B::Vector;
  // g(t, y) with grad = ∂g/∂y.
  using TerminalFn = std::function<double(double t, const Vector& y, Vector& grad)>;
  // g_k(t, y) with grad = ∂g_k/∂y, called for each observed step k.
  using ObservationFn = std::function<double(Index step, double t, const Vector& y, Vector& grad)>;

  Objective() = default;

  // terminal may be empty (no terminal cost); observation must be set when steps are given.
  explicit Objective(TerminalFn terminal, std::vector<Index> observation_steps = {},
                     ObservationFn observation = {})
      : terminal_(std::move(terminal)),
        steps_(std::move(observation_steps)),
        observation_(std::move(observation)) {
    std::sort(steps_.begin(), steps_.end());
    if (std::adjacent_find(steps_.begin(), steps_.end()) != steps_.end())
      detail::fail<InvalidArgument>("observation steps must be distinct");
    if (!steps_.empty() && steps_.front() < 0)
      detail::fail<InvalidArgument>("observation step ", steps_.front(), " must be >= 0");
    if (!steps_.empty() && !observation_)
      detail::fail<InvalidArgument>("observation steps were given without an observation function");
    if (!terminal_ && steps_.empty())
      detail::fail<InvalidArgument>("an objective needs a terminal cost or observation terms");
  }

  // Observation terms at the states whose time is exactly one of `times` (see above), plus the
  // terminal cost (may be empty).
  static Objective at_times(TerminalFn terminal, std::vector<double> times,
                            ObservationFn observation) {
    if (times.empty()) detail::fail<InvalidArgument>("observation times: the list is empty");
    if (!observation)
      detail::fail<InvalidArgument>("observation times were given without an observation function");
    for (double t : times)
      if (!std::isfinite(t))
        detail::fail<InvalidArgument>("observation time ", t, " is not finite");
    std::sort(times.begin(), times.end());
    if (std::adjacent_find(times.begin(), times.end()) != times.end())
      detail::fail<InvalidArgument>("observation times must be distinct");
    Objective objective;
    objective.terminal_ = std::move(terminal);
    objective.times_ = std::move(times);
    objective.observation_ = std::move(observation);
    return objective;
  }

  bool has_terminal() const { return static_cast<bool>(terminal_); }
  // Whether step `step` is observed (by index only: objectives without observation times).
  bool observes(Index step) const { return std::binary_search(steps_.begin(), steps_.end(), step); }
  // Whether the state of step `step` at time t is observed, by its index or by its time.
  bool observes(Index step, double t) const {
    return observes(step) ||
           (!times_.empty() && std::binary_search(times_.begin(), times_.end(), t));
  }
  const std::vector<Index>& observation_steps() const { return steps_; }
  Index last_observation_step() const { return steps_.empty() ? -1 : steps_.back(); }
  const std::vector<double>& observation_times() const { return times_; }

  double terminal(double t, const Vector& y, Vector& grad) const {
    if (!terminal_) {
      B::fill(grad, 0.0);
      return 0.0;
    }
    return terminal_(t, y, grad);
  }
  double observation(Index step, double t, const Vector& y, Vector& grad) const {
    return observation_(step, t, y, grad);
  }

  // J = ½ |y_N|².
  static Objective terminal_squared_norm() {
    return Objective([](double, const Vector& y, Vector& grad) {
      B::copy(y, grad);
      return 0.5 * B::dot(y, y);
    });
  }

  // J = wᵀ y_N.
  static Objective terminal_linear(Vector weights) {
    return Objective([w = std::move(weights)](double, const Vector& y, Vector& grad) {
      if (B::size(y) != B::size(w))
        detail::fail<InvalidArgument>("linear objective has ", B::size(w),
                                      " weights but the state has ", B::size(y), " components");
      B::copy(w, grad);
      return B::dot(w, y);
    });
  }

  // J = ½ Σ_k |y_k − d_k|² over the given steps (data[i] belongs to steps[i]), no terminal cost
  // unless the last step is the final one and listed.
  static Objective trajectory_misfit(std::vector<Index> steps, std::vector<Vector> data) {
    if (steps.size() != data.size())
      detail::fail<InvalidArgument>("trajectory misfit has ", steps.size(), " steps but ",
                                    data.size(), " data vectors; they must match");
    std::vector<std::pair<Index, Vector>> table;
    for (std::size_t i = 0; i < steps.size(); ++i) table.emplace_back(steps[i], std::move(data[i]));
    std::sort(table.begin(), table.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    auto fn = [table = std::move(table)](Index step, double, const Vector& y, Vector& grad) {
      auto it = std::lower_bound(table.begin(), table.end(), step,
                                 [](const auto& e, Index s) { return e.first < s; });
      const Vector& d = it->second;
      if (B::size(d) != B::size(y))
        detail::fail<InvalidArgument>("observation at step ", step, " has ", B::size(d),
                                      " components but the state has ", B::size(y));
      const double coeff[] = {-1.0};
      const Vector* vec[] = {&d};
      B::linear_combination(grad, 1.0, y, coeff, vec);  // grad = y − d
      return 0.5 * B::dot(grad, grad);
    };
    return Objective(TerminalFn{}, std::move(steps), std::move(fn));
  }

 private:
  TerminalFn terminal_;
  std::vector<Index> steps_;
  std::vector<double> times_;  // sorted, distinct (at_times)
  ObservationFn observation_;
};

}  // namespace rwd
