// rewind/adjoint/step_observer.hpp — a hook through which the drivers tell what they are doing,
// one call per step, for progress bars, logs and monitors.
//
//   rwd::CheckpointOptions options;
//   options.observer = [&](rwd::StepKind kind, rwd::Index step, double t) {
//     if (kind == rwd::StepKind::reverse) ++reversed;
//   };
//   rwd::CheckpointedAdjoint driver(stepper, objective, options);   // or StoreAllAdjoint,
//   driver.run(y0, theta, rwd::revolve_schedule(20));                // BacksolveAdjoint,
//   forward_loss
//
// The observer sees what the driver does, with the stepper itself untouched: a driver keeps every
// capability of its stepper (stage values, event location, landing on observation times), and the
// numbers are the same bits with or without an observer, which only reads. Unset (the default) it
// costs one test of an empty std::function per step.
//
// The calls, in the order the driver makes them:
//   start      a forward sweep begins at y_0 (step 0, t_0): the run's first sweep, or a counting
//              sweep that finds the length of an adaptive or stop-conditioned run before it
//   forward    the first sweep reached y_step at time t for the first time
//   recompute  a replay from a snapshot (or a resumed run's rebuild) reached y_step again
//   reverse    the adjoint step of step `step` (from y_step at t to y_{step+1}) was taken:
//              λ now holds ∂J/∂y_step
// A driver's run of l steps makes l forward calls and l reverse calls; the step it takes from
// y_{l−1} to y_l for the terminal cost counts among the forward ones.
#pragma once

#include <functional>

#include "rewind/types.hpp"

namespace rwd {

enum class StepKind { start, forward, recompute, reverse };

using StepObserver = std::function<void(StepKind kind, Index step, double t)>;

namespace detail {
// Calls the observer when one is set.
inline void notify(const StepObserver& observer, StepKind kind, Index step, double t) {
  if (observer) observer(kind, step, t);
}
}  // namespace detail

}  // namespace rwd
