// rewind/adjoint/detail/adjoint_steps.hpp — the steps of a discrete adjoint that the store-all
// and checkpointed drivers share, so that both run the same floating-point operations in the
// same order (their gradients agree bit for bit whatever the schedule): an observation term, the
// terminal cost that starts the reverse sweep, and one reverse step with its observation jump.
// Internal to the drivers.
#pragma once

#include <span>

#include "rewind/adjoint/gradient_health.hpp"
#include "rewind/adjoint/parameter_gradient_watch.hpp"
#include "rewind/adjoint/run_checks.hpp"
#include "rewind/adjoint/run_end.hpp"
#include "rewind/adjoint/step_observer.hpp"
#include "rewind/carry.hpp"
#include "rewind/integrators/stepper_concepts.hpp"
#include "rewind/objective.hpp"

namespace rwd::detail {

// Where a run ended, as the terminal cost found it.
struct RunClose {
  double t_final = 0.0;
  double final_change = 0.0;  // ‖y_l − y_{l−1}‖ / ‖y_l‖ (Summary::health)
};

template <class Stepper>
class AdjointSteps {
 public:
  using B = typename Stepper::Backend;
  using Vector = typename B::Vector;

  AdjointSteps(Stepper& stepper, const Objective<B>& objective, RunEnd<Stepper>& run_end,
               const StepObserver& observer, bool check_finite)
      : stepper_(stepper),
        objective_(objective),
        run_end_(run_end),
        observer_(observer),
        check_finite_(check_finite) {}

  // g_n(y_n) when step n is observed (its gradient into `grad`), else 0.
  double observe(const Carry& carry, const Vector& y, Vector& grad) const {
    if (!objective_.observes(carry.step, carry.t)) return 0.0;
    const double value = objective_.observation(carry.step, carry.t, y, grad);
    require_finite_value(value, "observation term", carry.step, carry.t);
    return value;
  }

  // The end of the run, from y_{l−1} = y_prev (carry_prev) and y_final = the ordinary step from
  // it (carry `last`): the step shortened to the event if the stop condition locates one, then
  // the observation at l and the terminal cost added to `loss` (in that order), and
  // λ = ∂J/∂y_l. `grad` is scratch.
  RunClose close(const Vector& y_prev, const Carry& carry_prev, const Vector& theta,
                 Vector& y_final, Carry& last, Vector& grad, Vector& lambda, double& loss) {
    run_end_.finish(y_prev, carry_prev, theta, y_final, last);
    if (check_finite_) require_finite_state<B>(y_final, last);
    require_observed_steps_taken(objective_, last.step, last.t);
    const RunClose closed{last.t, relative_step_change<B>(y_final, y_prev)};
    loss += observe(last, y_final, grad);
    const double g = objective_.terminal(last.t, y_final, grad);
    require_finite_value(g, "terminal cost", last.step, last.t);
    loss += g;
    B::copy(grad, lambda);
    if (objective_.observes(last.step, last.t)) {
      objective_.observation(last.step, last.t, y_final, grad);
      B::axpy(1.0, grad, lambda);
    }
    return closed;
  }

  // Reverses step n = carry_n.step from y_n: λ = ∂J/∂y_{n+1} becomes ∂J/∂y_n, μ grows. The last
  // step (n = l − 1) goes through the run's end (an event step is reversed with its event
  // time); y_final and t_final are y_l and t_l.
  void reverse(const Vector& y_n, const Carry& carry_n, const Vector& theta, bool last_step,
               const Vector& y_final, double t_final, Vector& lambda, Vector& mu, Vector& grad,
               ParameterGradientWatch<B, Stepper>& watch) {
    if (last_step)
      run_end_.reverse_last(y_n, carry_n, theta, y_final, t_final, lambda, mu);
    else
      stepper_.adjoint_step(y_n, carry_n, theta, lambda, mu);
    after_reverse(y_n, carry_n, lambda, mu, grad, watch);
  }

  // Reverses step n from its kept stage values (stages[0] = y_n) without re-running it.
  void reverse_from_stages(std::span<const Vector> stages, const Carry& carry_n,
                           const Vector& theta, Vector& lambda, Vector& mu, Vector& grad,
                           ParameterGradientWatch<B, Stepper>& watch) requires
      StageKeepingStepper<Stepper> {
    stepper_.adjoint_step_from_stages(stages, carry_n, theta, lambda, mu);
    after_reverse(stages[0], carry_n, lambda, mu, grad, watch);
  }

 private:
  // After the reverse of step n: the observation jump at n, the finite checks, the observer.
  void after_reverse(const Vector& y_n, const Carry& carry_n, Vector& lambda, const Vector& mu,
                     Vector& grad, ParameterGradientWatch<B, Stepper>& watch) {
    if (objective_.observes(carry_n.step, carry_n.t)) {
      objective_.observation(carry_n.step, carry_n.t, y_n, grad);
      B::axpy(1.0, grad, lambda);
    }
    watch.after_reverse(lambda, mu, carry_n, carry_n.step == 0);
    notify(observer_, StepKind::reverse, carry_n.step, carry_n.t);
  }

  Stepper& stepper_;
  const Objective<B>& objective_;
  RunEnd<Stepper>& run_end_;
  const StepObserver& observer_;
  bool check_finite_;
};

}  // namespace rwd::detail
