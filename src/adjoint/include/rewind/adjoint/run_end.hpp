// rewind/adjoint/run_end.hpp — where a run ends, when a stop condition decides it: the test at
// each step boundary, the event located inside the last step, and the adjoint of that step.
//
// Shared by StoreAllAdjoint and CheckpointedAdjoint so that both run the same floating-point
// operations at the end of a run (their gradients agree bit for bit). The formulas are those of
// rewind/stop_condition.hpp: the event step's size h* solves E(h) = e(t + h, Φ_h(y)) = 0 and is
// differentiated by the implicit function theorem.
#pragma once

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "rewind/carry.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/stepper_concepts.hpp"
#include "rewind/stop_condition.hpp"
#include "rewind/types.hpp"

namespace rwd::detail {

// Whether the stepper can end a run on an event inside its last step: it shortens its last step
// (rwd::LastStepShorteningStepper) and its problem gives dJ/dh of that step.
template <class Stepper>
constexpr bool locates_events() {
  if constexpr (LastStepShorteningStepper<Stepper>)
    return Stepper::differentiates_step_size();
  else
    return false;
}

// The stop condition of a run (none: the stepper's end) and the work vectors its event step
// needs, allocated once per run.
template <class Stepper>
class RunEnd {
 public:
  using B = typename Stepper::Backend;
  using Vector = typename B::Vector;

  RunEnd(Stepper& stepper, std::optional<StopCondition<B>> condition)
      : stepper_(stepper), condition_(std::move(condition)) {
    if (!condition_) return;
    condition_->validate();
    if (condition_->locates_event()) {
      if constexpr (!LastStepShorteningStepper<Stepper>)
        fail<InvalidArgument>(condition_->name,
                              ": this method cannot shorten its last step to an event (it is no "
                              "rwd::LastStepShorteningStepper: step_sized and "
                              "adjoint_step_sized, as explicit Runge-Kutta has)");
      else if constexpr (!Stepper::differentiates_step_size())
        fail<InvalidArgument>(condition_->name,
                              ": locating the event inside a step needs dJ/dh of the step, so "
                              "the problem must be autonomous (static constexpr bool "
                              "autonomous = true) or give vjp_time(t, y, theta, v)");
    }
  }

  bool has_condition() const { return condition_.has_value(); }
  bool locates_event() const { return condition_ && condition_->locates_event(); }
  // The run's length is known before it starts: fixed steps and no stop condition.
  bool length_known() const { return !condition_ && stepper_.planned_steps() >= 0; }

  // Called with the state y_n after each step of the first sweep (n >= 1): whether the run ends
  // here. The stepper's own end without the condition holding is an error (the cap).
  bool ends_at(const Carry& carry, const Vector& y) const {
    if (!condition_) return stepper_.finished(carry);
    if (condition_->holds(carry.t, y)) return true;
    if (stepper_.finished(carry))
      fail<SolverError>(condition_->name, " did not hold within the run: it ended at step ",
                        carry.step, ", t = ", carry.t,
                        " (the stepper's steps or t_final cap the run; raise them)");
    return false;
  }

  // The final state from y_{l−1}: the ordinary last step, or with event location the step of
  // size h* that ends on the event. `y_full` holds Φ(y_{l−1}) (the ordinary step, already taken)
  // and becomes the final state; `last` its carry.
  void finish(const Vector& y_prev, const Carry& carry_prev, const Vector& theta, Vector& y_full,
              Carry& last) {
    if constexpr (locates_events<Stepper>()) {
      if (locates_event()) shorten_to_event(y_prev, carry_prev, theta, y_full, last);
    }
  }

  // The step size of the event step (the last step); 0 when the run has no event.
  double event_step_size() const { return locates_event() ? event_h_ : 0.0; }

  // Reverses the last step, n = l − 1, from y_{l−1}: λ = ∂J/∂y_l becomes ∂J/∂y_{l−1}, μ grows.
  // Without an event this is the stepper's ordinary adjoint step. With one, λ·Φ_h and
  // (∂e/∂y)·Φ_h come from two reverse passes, then λ + s·∂e/∂y is reversed (s above).
  void reverse_last(const Vector& y_prev, const Carry& carry_prev, const Vector& theta,
                    const Vector& y_final, double t_final, Vector& lambda, Vector& mu) {
    if constexpr (locates_events<Stepper>()) {
      if (locates_event()) {
        reverse_event_step(y_prev, carry_prev, theta, y_final, t_final, lambda, mu);
        return;
      }
    }
    stepper_.adjoint_step(y_prev, carry_prev, theta, lambda, mu);
  }

 private:
  void shorten_to_event(const Vector& y_prev, const Carry& carry_prev, const Vector& theta,
                        Vector& y_full, Carry& last) {
    allocate(B::size(y_prev));
    const double h_full = last.t - carry_prev.t;
    const double e_start = condition_->event(carry_prev.t, y_prev);
    const double e_end = condition_->event(last.t, y_full);
    if (!std::isfinite(e_start) || !std::isfinite(e_end) || e_start == 0.0 ||
        ((e_start > 0.0) == (e_end > 0.0) && e_end != 0.0))
      fail<SolverError>(condition_->name, " held at step ", last.step, " (t = ", last.t,
                        ") but the event function does not change sign in that step (e = ", e_start,
                        " at t = ", carry_prev.t, ", ", e_end, " at t = ", last.t,
                        "): the event cannot be located inside the last step");
    event_h_ = e_end == 0.0 ? h_full : root(y_prev, carry_prev, theta, h_full, e_start, e_end);
    if (event_h_ != h_full) {
      B::copy(y_prev, y_full);
      last = carry_prev;
      stepper_.step_sized(y_full, last, theta, event_h_);
    }
  }

  void reverse_event_step(const Vector& y_prev, const Carry& carry_prev, const Vector& theta,
                          const Vector& y_final, double t_final, Vector& lambda, Vector& mu) {
    const double h = event_h_;
    const double de_dt = condition_->event_gradient(t_final, y_final, de_dy_);
    B::copy(lambda, scratch_lambda_);
    B::fill(scratch_mu_, 0.0);
    const double j_h =
        stepper_.adjoint_step_sized(y_prev, carry_prev, theta, h, scratch_lambda_, scratch_mu_);
    B::copy(de_dy_, scratch_lambda_);
    B::fill(scratch_mu_, 0.0);
    const double e_h =
        stepper_.adjoint_step_sized(y_prev, carry_prev, theta, h, scratch_lambda_, scratch_mu_);
    const double de_dh = de_dt + e_h;
    if (!std::isfinite(de_dh) || de_dh == 0.0 || !std::isfinite(j_h))
      fail<SolverError>(condition_->name, " at t = ", t_final,
                        ": the event function's rate along the step is ", de_dh,
                        " (a tangential or non-finite crossing), so the event time has no "
                        "derivative");
    B::axpy(-j_h / de_dh, de_dy_, lambda);
    stepper_.adjoint_step_sized(y_prev, carry_prev, theta, h, lambda, mu);
  }

  void allocate(Index n) {
    if (B::size(de_dy_) == n) return;
    de_dy_ = B::zeros(n);
    scratch_lambda_ = B::zeros(n);
    scratch_mu_ = B::zeros(stepper_.parameter_size());
    trial_ = B::zeros(n);
  }

  double event_at(const Vector& y_prev, const Carry& carry_prev, const Vector& theta, double h) {
    B::copy(y_prev, trial_);
    Carry c = carry_prev;
    stepper_.step_sized(trial_, c, theta, h);
    const double e = condition_->event(c.t, trial_);
    if (!std::isfinite(e))
      fail<SolverError>(condition_->name, ": the event function is ", e, " at t = ", c.t,
                        " while locating the event");
    return e;
  }

  // The Illinois variant of regula falsi (Dowell & Jarratt, BIT 11, 1971) on E(h) over
  // (0, h_full], bracketed by E(0) = e_start and E(h_full) = e_end of opposite signs; to
  // round-off in h. Deterministic: the same inputs give the same h* bits.
  double root(const Vector& y_prev, const Carry& carry_prev, const Vector& theta, double h_full,
              double e_start, double e_end) {
    double a = 0.0, fa = e_start, b = h_full, fb = e_end;
    int side = 0;
    for (int iteration = 0; iteration < 200; ++iteration) {
      double h = (a * fb - b * fa) / (fb - fa);
      if (!(h > a && h < b)) h = 0.5 * (a + b);
      if (!(h > a && h < b)) break;  // a and b adjacent doubles
      const double fh = event_at(y_prev, carry_prev, theta, h);
      if (fh == 0.0) return h;
      if ((fh > 0.0) == (fb > 0.0)) {
        b = h;
        fb = fh;
        if (side == -1) fa *= 0.5;
        side = -1;
      } else {
        a = h;
        fa = fh;
        if (side == +1) fb *= 0.5;
        side = +1;
      }
      if (b - a <= 4.0 * std::numeric_limits<double>::epsilon() * h_full) break;
    }
    // The end of the bracket on the event's far side: the state has crossed (e_end's sign), so
    // the condition holds at the final state as it did at the full step.
    if (b > 0.0) return b;
    fail<SolverError>(condition_->name, ": the event could not be located in (", carry_prev.t, ", ",
                      carry_prev.t + h_full, "]");
  }

  Stepper& stepper_;
  std::optional<StopCondition<B>> condition_;
  double event_h_ = 0.0;
  Vector de_dy_, scratch_lambda_, scratch_mu_, trial_;
};

}  // namespace rwd::detail
