// rewind/integrators/step_control.hpp — how a Runge–Kutta or Rosenbrock run chooses its steps.
//
//   auto fixed = rwd::StepControl::fixed(/*t0=*/0.0, /*dt=*/0.01, /*steps=*/1000);
//   auto adapt = rwd::StepControl::adaptive(/*t0=*/0.0, /*t_final=*/10.0, /*rtol=*/1e-6,
//                                           /*atol=*/1e-9);
//   adapt.validate();   // throws rwd::InvalidArgument naming the field and the rule
//   auto frozen = rwd::StepControl::prescribed(0.0, sizes);   // replay given step sizes
//
// Prescribed steps replay a given sequence h_0, h_1, … (t_{n+1} = t_n + h_n). The gradient of an
// adaptive run treats its accepted steps as constants, so it is exactly the gradient of the
// prescribed run with those steps: use this to check adaptive gradients by finite differences,
// or to keep the step sequence fixed while an optimiser perturbs parameters.
//
// Adaptive stepping uses the embedded error estimate of the tableau, the scaled RMS norm
// ‖e_i / (atol + rtol·max(|y_n,i|, |y_n+1,i|))‖ and a PI controller (Gustafsson 1991; Hairer &
// Wanner, Solving ODEs II, §IV.2):  h_new = h · safety · err^(−α) · err_prev^(β) with
// α = 0.7/(q+1), β = 0.4/(q+1), q the lower order of the pair, clamped to
// [min_factor, max_factor]. A step is accepted when err ≤ 1.
//
// Stop times (adaptive): a step that would pass the next stop time, or end less than half a
// proposed step short of it, ends on it exactly (t_{n+1} is the stop time itself, not t_n + h
// rounded), so observations at those times see a state of the run rather than an interpolant,
// and the gradient stays the exact discrete adjoint of the accepted steps. The step after a
// shortened one tries the larger of the controller's proposal and the size the shortening cut,
// so dense stop times do not drag the step size down.
//
//   auto c = rwd::StepControl::adaptive(0.0, 2.0, 1e-6, 1e-8);
//   c.stop_times = {0.5, 1.0, 1.5};   // strictly increasing, inside (t0, t_final]
#pragma once

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/types.hpp"

namespace rwd {

struct StepControl {
  enum class Mode { fixed, adaptive, prescribed };
  Mode mode = Mode::fixed;

  double t0 = 0.0;  // initial time
  // fixed: the step size; adaptive: the first step tried (0 = chosen from the problem by
  // Hairer's starting-step heuristic, Solving ODEs I, §II.4).
  double dt = 0.0;
  Index steps = 0;                 // fixed: number of steps (the run ends at t0 + steps·dt)
  double t_final = 0.0;            // adaptive: end of the interval (must be > t0)
  std::vector<double> step_sizes;  // prescribed: h_n for every step, each finite and > 0
  std::vector<double> stop_times;  // adaptive: times every run lands on exactly (see above)

  double rtol = 1e-6;             // adaptive: relative tolerance, > 0
  double atol = 1e-9;             // adaptive: absolute tolerance, > 0
  double safety = 0.9;            // adaptive: factor applied to the optimal step, in (0, 1]
  double min_factor = 0.2;        // adaptive: smallest step ratio, in (0, 1)
  double max_factor = 5.0;        // adaptive: largest step ratio, > 1
  Index max_steps = 100'000'000;  // adaptive: refuse to go on past this many accepted steps
  int max_rejections = 50;        // adaptive: consecutive rejections before giving up
  // adaptive: steps below min_step_relative·max(|t|, |t_final − t0|) are a step-size underflow.
  double min_step_relative = 1e-14;

  static StepControl fixed(double t0, double dt, Index steps) {
    StepControl c;
    c.mode = Mode::fixed;
    c.t0 = t0;
    c.dt = dt;
    c.steps = steps;
    return c;
  }
  static StepControl adaptive(double t0, double t_final, double rtol, double atol,
                              double dt0 = 0.0) {
    StepControl c;
    c.mode = Mode::adaptive;
    c.t0 = t0;
    c.t_final = t_final;
    c.rtol = rtol;
    c.atol = atol;
    c.dt = dt0;
    return c;
  }

  static StepControl prescribed(double t0, std::vector<double> sizes) {
    StepControl c;
    c.mode = Mode::prescribed;
    c.t0 = t0;
    c.steps = static_cast<Index>(sizes.size());
    c.step_sizes = std::move(sizes);
    return c;
  }

  bool is_adaptive() const { return mode == Mode::adaptive; }
  bool is_prescribed() const { return mode == Mode::prescribed; }

  // Refuses anything that would make the run meaningless, before any work is done.
  void validate() const {
    using detail::fail;
    if (!std::isfinite(t0)) fail<InvalidArgument>("t0 = ", t0, " must be finite");
    if (mode != Mode::adaptive && !stop_times.empty())
      fail<InvalidArgument>(
          "stop times are for adaptive steps; fixed and prescribed steps end "
          "where their sizes put them");
    if (mode == Mode::prescribed) {
      if (step_sizes.empty())
        fail<InvalidArgument>("prescribed steps: the list of step sizes is empty");
      if (steps != static_cast<Index>(step_sizes.size()))
        fail<InvalidArgument>("prescribed steps: steps = ", steps, " but ", step_sizes.size(),
                              " step sizes were given");
      for (std::size_t i = 0; i < step_sizes.size(); ++i)
        if (!(step_sizes[i] > 0.0) || !std::isfinite(step_sizes[i]))
          fail<InvalidArgument>("prescribed step ", i, " has size ", step_sizes[i],
                                "; every step size must be finite and > 0");
      return;
    }
    if (mode == Mode::fixed) {
      if (!(dt > 0.0) || !std::isfinite(dt))
        fail<InvalidArgument>("dt = ", dt, " must be a finite step size > 0");
      if (steps < 1) fail<InvalidArgument>("steps = ", steps, " must be >= 1");
      if (!std::isfinite(t0 + static_cast<double>(steps) * dt))
        fail<InvalidArgument>("t0 + steps*dt overflows (steps = ", steps, ", dt = ", dt, ")");
      return;
    }
    if (!std::isfinite(t_final) || !(t_final > t0))
      fail<InvalidArgument>("t_final = ", t_final, " must be finite and > t0 = ", t0);
    for (std::size_t i = 0; i < stop_times.size(); ++i) {
      const double s = stop_times[i];
      if (!std::isfinite(s) || !(s > t0) || s > t_final)
        fail<InvalidArgument>("stop time ", i, " = ", s, " must be finite and in (t0, t_final] = (",
                              t0, ", ", t_final, "]");
      if (i > 0 && !(s > stop_times[i - 1]))
        fail<InvalidArgument>("stop times must increase strictly, but stop time ", i, " = ", s,
                              " follows ", stop_times[i - 1]);
    }
    if (!(rtol > 0.0) || !std::isfinite(rtol))
      fail<InvalidArgument>("rtol = ", rtol, " must be finite and > 0");
    if (rtol < 1e-15)
      fail<InvalidArgument>("rtol = ", rtol,
                            " is below double-precision round-off; use rtol >= 1e-15");
    if (!(atol > 0.0) || !std::isfinite(atol))
      fail<InvalidArgument>("atol = ", atol, " must be finite and > 0");
    if (dt < 0.0 || !std::isfinite(dt))
      fail<InvalidArgument>("initial dt = ", dt, " must be finite and >= 0 (0 = automatic)");
    if (!(safety > 0.0 && safety <= 1.0))
      fail<InvalidArgument>("safety = ", safety, " must be in (0, 1]");
    if (!(min_factor > 0.0 && min_factor < 1.0))
      fail<InvalidArgument>("min_factor = ", min_factor, " must be in (0, 1)");
    if (!(max_factor > 1.0)) fail<InvalidArgument>("max_factor = ", max_factor, " must be > 1");
    if (max_steps < 1) fail<InvalidArgument>("max_steps = ", max_steps, " must be >= 1");
    if (max_rejections < 1)
      fail<InvalidArgument>("max_rejections = ", max_rejections, " must be >= 1");
    if (!(min_step_relative > 0.0 && min_step_relative < 1.0))
      fail<InvalidArgument>("min_step_relative = ", min_step_relative, " must be in (0, 1)");
  }
};

// The PI step-size controller of the adaptive Runge–Kutta engines (the formulas at the top of
// this file), for a pair whose lower order is q: α = 0.7/(q + 1), β = 0.4/(q + 1).
struct PiController {
  double alpha = 0.0, beta = 0.0;

  static PiController for_order(int q) { return {0.7 / (q + 1), 0.4 / (q + 1)}; }

  // The next step's size over this one's after an accepted step of error norm err ≤ 1, the
  // previous accepted step's being error_prev; at most 1 right after a rejection.
  double accepted_factor(const StepControl& c, double err, double error_prev,
                         bool after_rejection) const {
    const double e = std::max(err, 1e-10);
    double factor = c.safety * std::pow(e, -alpha) * std::pow(error_prev, beta);
    factor = std::clamp(factor, c.min_factor, c.max_factor);
    if (after_rejection) factor = std::min(factor, 1.0);
    return factor;
  }

  // The factor a rejected attempt of error norm err shrinks by (min_factor for a non-finite
  // error).
  double rejected_factor(const StepControl& c, double err) const {
    return std::isfinite(err) ? std::max(c.min_factor, c.safety * std::pow(err, -alpha))
                              : c.min_factor;
  }
};

}  // namespace rwd
