// rewind/adjoint/parameter_gradient_watch.hpp — the NaN/Inf checks of a driver's reverse sweep,
// at a cadence that costs little, and the clean-up of a sweep that an error abandons.
//
// Checks. λ is checked after every reversed step. μ, the parameter gradient, is checked after
// every step too while it is at most kParameterCheckRatio times λ's size; a larger μ (a neural
// ODE's per-sample parameter copies: 4611 × 32 values against λ's 96, where the check had been
// 7 % of a training iteration) every ⌈|μ| / (kParameterCheckRatio·|λ|)⌉ steps and after the last
// one, so that its checks cost about one λ-sized pass per step. A μ that becomes non-finite stays
// non-finite (its entries only ever have terms added), so a later check cannot miss it; the error
// names the steps reversed since the last check.
//
// Abandoned sweeps. A problem may hold a step's parameter-gradient terms back until the step's
// last stage (rwd::nn::NeuralOde::defer_parameter_gradients). If an error leaves a sweep between
// two stages, the watch's destructor has the stepper drop them, so that they can never be added
// into a μ that no longer exists, or into the next run's.
#pragma once

#include <algorithm>

#include "rewind/adjoint/run_checks.hpp"
#include "rewind/carry.hpp"
#include "rewind/integrators/stepper_concepts.hpp"
#include "rewind/types.hpp"

namespace rwd::detail {

inline constexpr Index kParameterCheckRatio = 16;

template <class B, class Stepper>
class ParameterGradientWatch {
 public:
  using Vector = typename B::Vector;

  ParameterGradientWatch(Stepper& stepper, Index state_size, Index parameter_size,
                         bool check_finite)
      : stepper_(stepper),
        check_finite_(check_finite),
        check_every_(std::max<Index>(
            1, ceil_div(parameter_size, kParameterCheckRatio * std::max<Index>(state_size, 1)))) {}
  ~ParameterGradientWatch() {
    if constexpr (HeldTermsDroppingStepper<Stepper>) stepper_.drop_held_parameter_terms();
  }
  ParameterGradientWatch(const ParameterGradientWatch&) = delete;
  ParameterGradientWatch& operator=(const ParameterGradientWatch&) = delete;

  // ⌈a / b⌉ for a ≥ 0, b > 0.
  static Index ceil_div(Index a, Index b) { return (a + b - 1) / b; }

  // Steps between two checks of μ (1: every step).
  Index check_every() const { return check_every_; }

  // After the reverse of step at.step (λ, μ: the adjoint there); last: the sweep's final reverse.
  void after_reverse(const Vector& lambda, const Vector& mu, const Carry& at, bool last) {
    if (!check_finite_) return;
    if (!B::all_finite(lambda))
      fail<NumericalError>("adjoint state became non-finite (NaN or Inf) while reversing step ",
                           at.step, " (t = ", at.t,
                           "); sensitivities overflow, as in chaotic systems over long horizons");
    if (unchecked_ == 0) first_unchecked_ = at.step;
    if (++unchecked_ < check_every_ && !last) return;
    unchecked_ = 0;
    if (B::all_finite(mu)) return;
    if (first_unchecked_ == at.step)
      fail<NumericalError>(
          "parameter gradient became non-finite (NaN or Inf) while reversing step ", at.step,
          " (t = ", at.t, ")");
    fail<NumericalError>("parameter gradient became non-finite (NaN or Inf) while reversing steps ",
                         first_unchecked_, " down to ", at.step, " (t = ", at.t,
                         "; it is checked every ", check_every_, " steps, being ",
                         "much longer than the state)");
  }

 private:
  Stepper& stepper_;
  bool check_finite_;
  Index check_every_;
  Index unchecked_ = 0, first_unchecked_ = -1;
};

}  // namespace rwd::detail
