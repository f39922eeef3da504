// rewind/adjoint/gradient_health.hpp — does a gradient say anything? Every driver fills
// Summary::health, so that a gradient that underflowed, or a run whose state stopped changing
// before its end, is reported (Summary::brief(), Summary::full(), the `rewind` reports) instead
// of being read as a silent zero.
//
//   auto result = driver.run(y0, theta);
//   if (result.summary.health.degenerate())
//     std::cerr << result.summary.health.describe() << "\n";   // one line
//
// Two checks, both free of units:
//
//   negligible gradient   ρ = (‖y0‖·‖∂J/∂y0‖ + ‖θ‖·‖∂J/∂θ‖) / |J|  ≤  kNegligibleSensitivity = 1e-8
//     ρ is the normwise relative condition number of J in (y0, θ): to first order, moving y0 and
//     θ by 100 % of their own size changes J by at most ρ·|J|. Below 1e-8 (≈ √ε of double) no
//     information about y0 and θ reaches J — typically because the sensitivities decayed
//     exponentially over the horizon (a dissipative system forgot its start, a pattern died).
//     A gradient that is exactly zero (or underflowed to zero) is negligible whatever J is.
//     |J| counts as at least the smallest normal double (2.2e-308), so that a J that
//     underflowed to 0 still weighs a gradient that underflowed with it (a decayed state). A
//     zero y0 or θ counts with size 1, so the gradient with respect to it is weighed in absolute
//     units. Norms are 2-norms computed with scaling: neither a tiny nor a huge gradient over-
//     or underflows.
//
//   stationary state      ‖y_N − y_{N−1}‖ ≤ kStationaryChange · ‖y_N‖,  kStationaryChange = 1e-12
//     The last step changed the state by a few thousand roundings (1e-12 ≈ 4500 ε) or less:
//     the state stopped evolving before the end of the run (a pattern died, a decaying
//     solution reached its steady state), so a longer horizon would give the same y_N. With
//     y_N = 0 the state is stationary when y_{N−1} = 0 too. The drivers measure the last step
//     they took; the backsolve driver compares y_N with its first backward step, which
//     reconstructs y_{N−1} to the method's local error.
//
// A stationary state does not always make the gradient meaningless (a steady Turing pattern
// still depends on θ), but it means the horizon is longer than the dynamics: both are reported.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "rewind/host_device.hpp"
#include "rewind/types.hpp"

namespace rwd {

struct GradientHealth {
  // ρ at or below this is a negligible gradient (see the top of this file).
  static constexpr double kNegligibleSensitivity = 1e-8;
  // ‖y_N − y_{N−1}‖ / ‖y_N‖ at or below this is a stationary state.
  static constexpr double kStationaryChange = 1e-12;

  bool assessed = false;  // false until a driver filled this in
  // ρ = (‖y0‖·‖∂J/∂y0‖ + ‖θ‖·‖∂J/∂θ‖) / max(|J|, 2.2e-308); 0 for a zero gradient.
  double sensitivity = std::numeric_limits<double>::quiet_NaN();
  // ‖y_N − y_{N−1}‖ / ‖y_N‖ of the last step; NaN for a run of no steps.
  double final_step_change = std::numeric_limits<double>::quiet_NaN();
  Index final_step = 0;        // N, the step the change was measured at
  bool gradient_zero = false;  // ∂J/∂y0 and ∂J/∂θ are exactly zero (or underflowed to it)
  bool gradient_negligible = false;  // ρ ≤ kNegligibleSensitivity (zero gradients included)
  bool state_stationary = false;     // final_step_change ≤ kStationaryChange

  bool degenerate() const { return gradient_negligible || state_stationary; }
  // One line saying what is degenerate and by how much; empty when nothing is.
  std::string describe() const;
};

namespace detail {

// Σ (s·x_i)².
struct ScaledSquareKernel {
  const double* x;
  double s;
  REWIND_HOST_DEVICE Sums<1> operator()(Index i) const {
    const double a = s * x[i];
    Sums<1> r;
    r.v[0] = a * a;
    return r;
  }
};

// (Σ (s·x_i − s·ref_i)², Σ (s·ref_i)²).
struct ScaledDistanceKernel {
  const double* x;
  const double* ref;
  double s;
  REWIND_HOST_DEVICE Sums<2> operator()(Index i) const {
    const double r = s * ref[i], d = s * x[i] - r;
    Sums<2> out;
    out.v[0] = d * d;
    out.v[1] = r * r;
    return out;
  }
};

// The factor that brings numbers of size m (> 0, finite) near 1: 1/m, at most 2^1000 (1/m
// overflows for subnormal m; 2^1000 still lifts them far above underflow when squared).
inline double scale_for(double m) {
  return std::min(1.0 / m, 0x1p1000);
}

// ‖x‖₂ without over- or underflow: ‖s·x‖₂ / s with s = scale_for(max |x_i|). +∞ if x holds Inf,
// NaN if NaN.
template <class B>
double scaled_norm(const typename B::Vector& x) {
  const double m = B::max_norm(x);
  if (!(m > 0.0) || !std::isfinite(m)) return m;
  const double s = scale_for(m);
  const Sums<1> sum = B::template sum_index<1>(B::size(x), ScaledSquareKernel{B::data(x), s});
  return std::sqrt(sum[0]) / s;
}

}  // namespace detail

// ‖y_last − y_prev‖₂ / ‖y_last‖₂ (0 when they are equal, +∞ when y_last = 0 ≠ y_prev), both
// scaled by the largest entry so that neither norm over- or underflows.
template <class B>
double relative_step_change(const typename B::Vector& y_last, const typename B::Vector& y_prev) {
  const Index n = B::size(y_last);
  const double m = std::max(B::max_norm(y_last), B::max_norm(y_prev));
  if (!(m > 0.0)) return 0.0;  // both zero
  const Sums<2> s = B::template sum_index<2>(
      n, detail::ScaledDistanceKernel{B::data(y_prev), B::data(y_last), detail::scale_for(m)});
  if (s[0] == 0.0) return 0.0;
  if (s[1] == 0.0) return std::numeric_limits<double>::infinity();
  return std::sqrt(s[0] / s[1]);
}

// The health of a gradient (see the top of this file). final_step_change: relative_step_change
// of the last step (NaN when the run took no step); final_step: N.
template <class B>
GradientHealth assess_gradient(double loss, const typename B::Vector& y0,
                               const typename B::Vector& theta, const typename B::Vector& grad_y0,
                               const typename B::Vector& grad_theta, double final_step_change,
                               Index final_step) {
  GradientHealth h;
  h.assessed = true;
  const double gy = detail::scaled_norm<B>(grad_y0), gt = detail::scaled_norm<B>(grad_theta);
  const double ny = detail::scaled_norm<B>(y0), nt = detail::scaled_norm<B>(theta);
  const double weighted = (ny > 0.0 ? ny : 1.0) * gy + (nt > 0.0 ? nt : 1.0) * gt;
  h.gradient_zero = gy == 0.0 && gt == 0.0;
  const double scale = std::max(std::abs(loss), std::numeric_limits<double>::min());
  h.sensitivity = h.gradient_zero ? 0.0 : weighted / scale;
  h.gradient_negligible =
      h.gradient_zero || h.sensitivity <= GradientHealth::kNegligibleSensitivity;
  h.final_step_change = final_step_change;
  h.final_step = final_step;
  h.state_stationary = final_step_change <= GradientHealth::kStationaryChange;  // false for NaN
  return h;
}

}  // namespace rwd
