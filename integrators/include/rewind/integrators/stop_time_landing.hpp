// rewind/integrators/stop_time_landing.hpp — where an adaptive step must end: the rule every
// adaptive engine (explicit Runge–Kutta, diagonally implicit Runge–Kutta, Rosenbrock) follows to
// land exactly on its stop times and on t_final (rewind/integrators/step_control.hpp).
//
//   rwd::detail::StepLanding landing(control, carry.t, h_min);
//   double h = landing.attempt_size(carry.h, rejections);   // per attempt
//   …   // accepted:
//   next.t = landing.end_time(h);
//   next.h = landing.next_proposal(h * factor, carry.h, rejections);
//
// The step from t must not pass its target: the first stop time after t, else t_final. An
// attempt that would reach or pass the target, or end less than h_min short of it, is cut to end
// on it; the first attempt of a step towards a stop time also stretches to it when the target is
// within kStopStretch times the proposed size, so that no sliver of a step is left before it. A
// landed step's carry holds the target itself (not t + h rounded), and when a step's first attempt
// lands on a stop time and is accepted, the next step tries the larger of the controller's proposal
// and the size the step first tried, so that stop times cutting steps short do not drag the step
// size down. The same arithmetic in every engine, so the three behave alike and a step re-run
// from its (state, carry) gives the same bits.
#pragma once

#include <algorithm>

#include "rewind/integrators/step_control.hpp"

namespace rwd::detail {

// Whether every run under `control` has a state at exactly time t: t0, and with adaptive steps
// t_final and the stop times (what each engine's lands_on(t) answers; fixed and prescribed steps
// end where their sizes put them, which rounding may move).
inline bool run_lands_on(const StepControl& control, double t) {
  if (t == control.t0) return true;
  if (!control.is_adaptive()) return false;
  return t == control.t_final ||
         std::binary_search(control.stop_times.begin(), control.stop_times.end(), t);
}

// The target of one adaptive step from time t, and whether its last attempt lands on it.
class StepLanding {
 public:
  // How far past the controller's proposal a step may stretch to end on a stop time: the value
  // that measured best between extra steps and rejections (bench/results/adaptive_training.md).
  static constexpr double kStopStretch = 1.5;

  // h_min: the smallest step the run takes (a shorter remainder before the target is not left).
  StepLanding(const StepControl& control, double t, double h_min) : t_(t), h_min_(h_min) {
    const auto stop = std::upper_bound(control.stop_times.begin(), control.stop_times.end(), t);
    target_ = stop != control.stop_times.end() ? *stop : control.t_final;
    at_stop_time_ = target_ != control.t_final;
  }

  // The size of the attempt the controller proposes at size h after `rejections` rejected
  // attempts of this step: h, or the distance to the target when the attempt lands on it.
  double attempt_size(double h, int rejections) {
    const double reach = at_stop_time_ && rejections == 0 ? kStopStretch * h : h;
    lands_ = t_ + reach >= target_ || target_ - (t_ + h) < h_min_;
    return lands_ ? target_ - t_ : h;
  }

  // The time at the end of the last attempt, of size h (accepted): the target itself when it
  // landed there.
  double end_time(double h) const { return lands_ ? target_ : t_ + h; }

  // The next step's first size after the last attempt was accepted with `rejections` rejections
  // before it: the controller's proposal, or at least the size the step first tried (tried_first)
  // when that first attempt landed on a stop time.
  double next_proposal(double proposed, double tried_first, int rejections) const {
    return lands_ && at_stop_time_ && rejections == 0 ? std::max(proposed, tried_first) : proposed;
  }

 private:
  double t_, h_min_, target_ = 0.0;
  bool at_stop_time_ = false, lands_ = false;
};

}  // namespace rwd::detail
