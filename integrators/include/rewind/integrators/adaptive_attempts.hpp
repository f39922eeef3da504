// rewind/integrators/adaptive_attempts.hpp — one adaptive step of an implicit engine (diagonally
// implicit Runge–Kutta, Rosenbrock): attempts of shrinking size until one is accepted, with the
// PI controller (rewind/integrators/step_control.hpp).
//
//   Carry next = rwd::detail::adaptive_step(control, controller, carry, "Newton did not converge",
//                                           counters.rejected_attempts, h_accepted,
//                                           [&](double h) -> std::optional<double> {
//                                             if (!solve(h)) return std::nullopt;   // failed
//                                             return error_norm;                    // ≤ 1: accept
//                                           });
//
// An attempt that cannot be solved (a Newton iteration that does not converge, a singular
// matrix) retries with a quarter of the step — a much smaller step starts closer and moves
// I − hγJ towards I; one whose error norm exceeds 1 shrinks by the controller's factor. A step
// lands exactly on the next stop time and the last one on t_final, by the explicit engine's rule
// (rewind/integrators/stop_time_landing.hpp): the carry's t is then that time itself, and the
// accepted size the distance to it, which the engine's adjoint uses. Refused with rwd::SolverError
// naming the step and the time: max_steps reached, more than max_rejections rejections in a row, a
// step below min_step_relative of the horizon. The caller keeps the accepted attempt's results.
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "rewind/carry.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/step_control.hpp"
#include "rewind/integrators/stop_time_landing.hpp"
#include "rewind/types.hpp"

namespace rwd::detail {

// carry_{n+1} of the accepted attempt; accepted_h its size. `attempt(h)` runs one attempt of
// size h from the carry's state: the error norm, or nullopt when it could not be solved
// (`failure` says how, in the refusal).
template <class Attempt>
Carry adaptive_step(const StepControl& control, const PiController& controller, const Carry& carry,
                    const char* failure, Index& rejected_attempts, double& accepted_h,
                    Attempt&& attempt) {
  if (carry.step >= control.max_steps)
    fail<SolverError>("adaptive run reached max_steps = ", control.max_steps, " at t = ", carry.t,
                      " before t_final = ", control.t_final);
  Carry next = carry;
  next.step = carry.step + 1;
  const double t = carry.t, t_final = control.t_final;
  const double h_min =
      control.min_step_relative * std::max(std::abs(t), std::abs(t_final - control.t0));
  StepLanding landing(control, t, h_min);  // the next stop time or t_final, as the explicit engine
  double h = carry.h;
  int rejections = 0;
  for (;;) {
    h = landing.attempt_size(h, rejections);
    const std::optional<double> err = attempt(h);
    if (err && *err <= 1.0) {
      const double grow =
          controller.accepted_factor(control, *err, carry.error_prev, rejections > 0);
      accepted_h = h;
      next.h = landing.next_proposal(h * grow, carry.h, rejections);
      next.error_prev = std::max(*err, 1e-4);
      next.t = landing.end_time(h);
      next.rejected = carry.rejected + rejections;
      return next;
    }
    const double factor = err ? controller.rejected_factor(control, *err) : 0.25;
    ++rejections;
    ++rejected_attempts;
    if (rejections > control.max_rejections)
      fail<SolverError>("step ", carry.step, " at t = ", t, ": ", rejections,
                        " consecutive rejected attempts (last ",
                        err ? "error norm " : "attempt: ", err ? std::to_string(*err) : failure,
                        ")");
    h *= factor;
    if (h < h_min)
      fail<SolverError>("step size underflow at step ", carry.step, ", t = ", t, ": h = ", h, " < ",
                        h_min);
  }
}

}  // namespace rwd::detail
