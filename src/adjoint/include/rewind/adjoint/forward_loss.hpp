// rewind/adjoint/forward_loss.hpp — J alone, from one forward sweep that stores nothing.
//
//   double J = rwd::forward_loss(stepper, objective, y0, theta);
//
// Used for finite-difference checks of gradients (each perturbed run is one call) and by
// anything that needs the loss without its gradient. An observer (rewind/adjoint/step_observer.hpp)
// is told of the sweep's start and of every step.
#pragma once

#include "rewind/adjoint/run_checks.hpp"
#include "rewind/adjoint/step_observer.hpp"
#include "rewind/carry.hpp"
#include "rewind/integrators/stepper_concepts.hpp"
#include "rewind/objective.hpp"

namespace rwd {

template <class Stepper>
double forward_loss(Stepper& stepper, const Objective<typename Stepper::Backend>& objective,
                    const typename Stepper::Backend::Vector& y0,
                    const typename Stepper::Backend::Vector& theta,
                    typename Stepper::Backend::Vector* y_final = nullptr,
                    const StepObserver& observer = {}) {
  static_assert(TimeStepper<Stepper>,
                "forward_loss needs a rwd::TimeStepper (rewind/integrators/stepper_concepts.hpp)");
  using B = typename Stepper::Backend;
  const Index n = stepper.state_size();
  detail::require_size<B>(y0, n, "initial state y0");
  detail::require_size<B>(theta, stepper.parameter_size(), "parameter vector theta");
  detail::require_observation_times_landed(objective, stepper);
  typename B::Vector y = B::zeros(n);
  typename B::Vector grad = B::zeros(n);
  B::copy(y0, y);
  Carry carry = stepper.initial_carry(y, theta);
  detail::notify(observer, StepKind::start, carry.step, carry.t);
  double loss = 0.0;
  while (true) {
    if (objective.observes(carry.step, carry.t))
      loss += objective.observation(carry.step, carry.t, y, grad);
    if (stepper.finished(carry)) break;
    stepper.step(y, carry, theta);
    detail::require_finite_state<B>(y, carry);
    detail::notify(observer, StepKind::forward, carry.step, carry.t);
  }
  detail::require_observed_steps_taken(objective, carry.step, carry.t);
  loss += objective.terminal(carry.t, y, grad);
  if (y_final) B::copy(y, *y_final);
  return loss;
}

}  // namespace rwd
