// rewind/adjoint/run_checks.hpp — the checks every driver makes before and during a run, so
// that bad input is refused before any work and a NaN never becomes a silent wrong gradient.
#pragma once

#include <string>

#include "rewind/carry.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/stepper_concepts.hpp"
#include "rewind/types.hpp"

namespace rwd::detail {

template <class B>
void require_size(const typename B::Vector& v, Index expected, const char* what) {
  if (B::size(v) != expected)
    fail<InvalidArgument>(what, " has ", B::size(v), " components; expected ", expected);
}

template <class B>
void require_finite_input(const typename B::Vector& v, const char* what) {
  if (!B::all_finite(v)) fail<InvalidArgument>(what, " contains NaN or Inf");
}

// The initial state and the parameters of a run: n and p components, all finite.
template <class B>
void require_run_inputs(const typename B::Vector& y0, const typename B::Vector& theta, Index n,
                        Index p) {
  require_size<B>(y0, n, "initial state y0");
  require_size<B>(theta, p, "parameter vector theta");
  require_finite_input<B>(y0, "initial state y0");
  require_finite_input<B>(theta, "parameter vector theta");
}

// An objective that observes a step past the run's `steps` is refused: before the run when the
// steps are known ...
template <class ObjectiveT>
void require_observed_steps_planned(const ObjectiveT& objective, Index steps) {
  if (objective.last_observation_step() > steps)
    fail<InvalidArgument>("objective observes step ", objective.last_observation_step(),
                          " but the run has only ", steps, " steps");
}

// ... and after an adaptive run, which took `steps` steps to t_final (observation times past
// t_final too: a stop condition ended the run before them).
template <class ObjectiveT>
void require_observed_steps_taken(const ObjectiveT& objective, Index steps, double t_final) {
  if (objective.last_observation_step() > steps)
    fail<InvalidArgument>("objective observes step ", objective.last_observation_step(),
                          " but the run took only ", steps, " steps (t_final = ", t_final, ")");
  const auto& times = objective.observation_times();
  if (!times.empty() && times.back() > t_final)
    fail<InvalidArgument>("objective observes t = ", times.back(),
                          " but the run ended at t = ", t_final, " after ", steps, " steps");
}

// Observation times need a stepper with a state at exactly each of them (TimeLandingStepper:
// an adaptive Runge–Kutta or Rosenbrock stepper with the times among its stop times); refused
// before any work.
template <class ObjectiveT, class Stepper>
void require_observation_times_landed(const ObjectiveT& objective, const Stepper& stepper) {
  const auto& times = objective.observation_times();
  if (times.empty()) return;
  if constexpr (TimeLandingStepper<Stepper>) {
    for (double t : times)
      if (!stepper.lands_on(t))
        fail<InvalidArgument>("objective observes t = ", t,
                              ", but the stepper has no state there: observation times need "
                              "adaptive steps with every observation time among the stop times");
  } else {
    fail<InvalidArgument>(
        "objective observes times, but this stepper cannot land on given times (it is no "
        "rwd::TimeLandingStepper: lands_on(t)); observe step indices instead");
  }
}

// A non-finite state after step n stops the run; the message names the step and the time.
template <class B>
void require_finite_state(const typename B::Vector& y, const Carry& carry) {
  if (!B::all_finite(y))
    fail<NumericalError>("state became non-finite (NaN or Inf) at step ", carry.step,
                         ", t = ", carry.t,
                         "; the step size may be too large for stability, or the solution blows "
                         "up (chaotic or unstable dynamics over a long horizon)");
}

inline void require_finite_value(double value, const char* what, Index step, double t) {
  if (!(value - value == 0.0))
    fail<NumericalError>(what, " is non-finite (", value, ") at step ", step, ", t = ", t);
}

}  // namespace rwd::detail
