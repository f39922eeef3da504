// rewind/integrators/stochastic_stepper.hpp — Euler–Maruyama and derivative-free Milstein steps
// for SDEs with diagonal noise, with the exact discrete adjoint of the pathwise map.
//
//   rwd::OrnsteinUhlenbeck<> ou;                                  // an rwd::SdeProblem
//   rwd::StochasticStepper stepper(ou, rwd::SdeScheme::milstein,
//                                  rwd::StepControl::fixed(0.0, 0.01, 1000), /*seed=*/7);
//   rwd::CheckpointedAdjoint driver(stepper, objective);          // any driver, any schedule
//   auto result = driver.run(y0, theta, rwd::revolve_schedule(20));
//
// With ξ_n the keyed standard normals of step n (rewind/integrators/keyed_noise.hpp: key =
// (carry_n.noise_seed, n, stage 0, Brownian increment), one per component), ΔW_n = √h ξ_n and
// all functions at (t_n, ·, θ):
//   Euler–Maruyama:  y_{n+1} = y_n + h f(y_n) + g(y_n) ∘ ΔW_n                  (strong order ½)
//   Milstein, derivative-free (Kloeden & Platen, Numerical Solution of SDEs, 1992, §11.1):
//     ŷ = y_n + h f(y_n) + √h g(y_n),
//     y_{n+1} = y_n + h f(y_n) + g(y_n) ∘ ΔW_n + (g(ŷ) − g(y_n)) ∘ (ΔW_n² − h) / (2√h).
//   The difference (g(ŷ) − g(y))/√h stands for g ∂g/∂y, so the scheme reaches strong order 1 for
//   diagonal noise whose g_i depends on y_i only (commutative noise); for other diagonal noise it
//   still runs, at strong order ½.
//
// Adjoint: for the fixed draws, each step is a smooth map y_n → y_{n+1}; adjoint_step applies
// the transpose of its exact derivative, built from the VJPs of f and g only. With λ = λ_{n+1}:
//   Euler–Maruyama:  λ_n = λ + (∂f/∂y)ᵀ(hλ) + (∂g/∂y)ᵀ(ΔW ∘ λ),
//                    dJ/dθ += (∂f/∂θ)ᵀ(hλ) + (∂g/∂θ)ᵀ(ΔW ∘ λ).
//   Milstein, with c = (ΔW² − h)/(2√h):  λ̂ = (∂g/∂y)ᵀ(c ∘ λ) at ŷ (the adjoint of ŷ), then
//     κ_f = h (λ + λ̂),  κ_g = (ΔW − c) ∘ λ + √h λ̂,
//     λ_n = λ + λ̂ + (∂f/∂y)ᵀκ_f + (∂g/∂y)ᵀκ_g,
//     dJ/dθ += (∂g/∂θ)ᵀ(c ∘ λ) at ŷ + (∂f/∂θ)ᵀκ_f + (∂g/∂θ)ᵀκ_g.
// The gradient is the pathwise derivative of the computed run for its seed — what finite
// differences with common random numbers (the same seed) converge to — and its mean over seeds
// estimates d E[J]/dθ of the discrete scheme.
//
// Replays: the seed lives in the carry (Carry::noise_seed, set by initial_carry), and every draw
// is keyed by the carry it steps from, so a replay from any snapshot — memory or disk — draws what
// the first sweep drew and reproduces it bit for bit; a replay with another key is a different
// state, which the drift monitor of the checkpointed driver reports with its step.
//
// A problem with `void begin_step(Index step) const` is told each step's index before the step's
// evaluations, forward or replayed for the adjoint, as rwd::ExplicitRungeKutta tells it.
//
// Counters: rhs_evaluations counts evaluations of f and of g, vjp_evaluations the VJPs of both.
// Steps are fixed (StepControl::fixed); adaptive step control is refused (choosing steps from
// the noise would need Brownian bridges). Every work vector is allocated in the constructor;
// step() and adjoint_step() do not allocate.
//
// Capabilities (rewind/integrators/stepper_concepts.hpp): TimeStepper, SelfDescribingStepper.
#pragma once

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>

#include "rewind/backend/backend.hpp"
#include "rewind/carry.hpp"
#include "rewind/error.hpp"
#include "rewind/host_device.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/integrators/keyed_noise.hpp"
#include "rewind/integrators/sde_problem.hpp"
#include "rewind/integrators/step_control.hpp"

namespace rwd {

enum class SdeScheme { euler_maruyama, milstein };

inline const char* scheme_name(SdeScheme scheme) {
  return scheme == SdeScheme::milstein ? "milstein" : "euler_maruyama";
}

namespace detail {

// y_{n+1} = y + h f + g ∘ ΔW, in place.
struct EulerMaruyamaUpdateKernel {
  double* y;
  const double* f;
  const double* g;
  const double* dw;
  double h;
  REWIND_HOST_DEVICE void operator()(Index i) const { y[i] = y[i] + h * f[i] + g[i] * dw[i]; }
};

// The supporting value ŷ = y + h f + √h g.
struct MilsteinSupportKernel {
  double* y_hat;
  const double* y;
  const double* f;
  const double* g;
  double h, sqrt_h;
  REWIND_HOST_DEVICE void operator()(Index i) const { y_hat[i] = y[i] + h * f[i] + sqrt_h * g[i]; }
};

REWIND_HOST_DEVICE inline double milstein_weight(double dw, double h, double sqrt_h) {
  return (dw * dw - h) / (2.0 * sqrt_h);
}

// y_{n+1} = y + h f + g ∘ ΔW + (ĝ − g) ∘ (ΔW² − h)/(2√h), in place.
struct MilsteinUpdateKernel {
  double* y;
  const double* f;
  const double* g;
  const double* g_hat;
  const double* dw;
  double h, sqrt_h;
  REWIND_HOST_DEVICE void operator()(Index i) const {
    y[i] = y[i] + h * f[i] + g[i] * dw[i] + (g_hat[i] - g[i]) * milstein_weight(dw[i], h, sqrt_h);
  }
};

// Euler–Maruyama cotangents: κ_f = h λ, κ_g = ΔW ∘ λ.
struct EulerMaruyamaCotangentKernel {
  double* kappa_f;
  double* kappa_g;
  const double* lambda;
  const double* dw;
  double h;
  REWIND_HOST_DEVICE void operator()(Index i) const {
    kappa_f[i] = h * lambda[i];
    kappa_g[i] = dw[i] * lambda[i];
  }
};

// Milstein, first: the cotangent of g(ŷ), c ∘ λ.
struct MilsteinHatCotangentKernel {
  double* v_hat;
  const double* lambda;
  const double* dw;
  double h, sqrt_h;
  REWIND_HOST_DEVICE void operator()(Index i) const {
    v_hat[i] = milstein_weight(dw[i], h, sqrt_h) * lambda[i];
  }
};

// Milstein, then: κ_f = h (λ + λ̂), κ_g = (ΔW − c) ∘ λ + √h λ̂.
struct MilsteinCotangentKernel {
  double* kappa_f;
  double* kappa_g;
  const double* lambda;
  const double* lambda_hat;
  const double* dw;
  double h, sqrt_h;
  REWIND_HOST_DEVICE void operator()(Index i) const {
    const double c = milstein_weight(dw[i], h, sqrt_h);
    kappa_f[i] = h * (lambda[i] + lambda_hat[i]);
    kappa_g[i] = (dw[i] - c) * lambda[i] + sqrt_h * lambda_hat[i];
  }
};

}  // namespace detail

template <SdeProblem P>
class StochasticStepper {
 public:
  using Backend = typename P::Backend;
  using Vector = typename Backend::Vector;
  using B = Backend;

  // Validates the step control (fixed steps only) and the problem's sizes; any 64-bit seed is a
  // valid key.
  StochasticStepper(const P& problem, SdeScheme scheme, StepControl control, std::uint64_t seed)
      : problem_(problem), scheme_(scheme), control_(control), seed_(seed) {
    control_.validate();
    if (control_.is_adaptive() || control_.is_prescribed())
      detail::fail<InvalidArgument>(
          "the ", scheme_name(scheme_),
          " stepper takes fixed steps only (StepControl::fixed); adaptive or prescribed step "
          "sizes are not supported for SDEs");
    n_ = static_cast<Index>(problem_.state_size());
    p_ = static_cast<Index>(problem_.parameter_size());
    if (n_ < 1) detail::fail<InvalidArgument>("problem state_size = ", n_, " must be >= 1");
    if (p_ < 0) detail::fail<InvalidArgument>("problem parameter_size = ", p_, " must be >= 0");
    if constexpr (requires { problem_.noise_size(); }) {
      const auto m = static_cast<Index>(problem_.noise_size());
      if (m != n_)
        detail::fail<InvalidArgument>("the problem has ", m, " Wiener processes for ", n_,
                                      " state components; the ", scheme_name(scheme_),
                                      " stepper supports diagonal noise only (one per component)");
    }
    if (n_ > kMaxNoiseComponents)
      detail::fail<InvalidArgument>("state_size = ", n_, " exceeds the ", kMaxNoiseComponents,
                                    " components a noise key can draw");
    f_ = B::zeros(n_);
    g_ = B::zeros(n_);
    dw_ = B::zeros(n_);
    kappa_f_ = B::zeros(n_);
    kappa_g_ = B::zeros(n_);
    nu_f_ = B::zeros(n_);
    nu_g_ = B::zeros(n_);
    mu_part_ = B::zeros(p_);
    if (scheme_ == SdeScheme::milstein) {
      y_hat_ = B::zeros(n_);
      g_hat_ = B::zeros(n_);
      nu_hat_ = B::zeros(n_);
    }
  }

  const P& problem() const { return problem_; }
  SdeScheme scheme() const { return scheme_; }
  const StepControl& control() const { return control_; }
  std::uint64_t seed() const { return seed_; }
  Index state_size() const { return n_; }
  Index parameter_size() const { return p_; }
  Index planned_steps() const { return control_.steps; }
  double last_step_size() const { return control_.dt; }

  const StepperCounters& counters() const { return counters_; }
  void reset_counters() { counters_ = {}; }

  std::string describe() const {
    std::ostringstream out;
    out.precision(6);
    out << scheme_name(scheme_) << ", fixed dt = " << control_.dt << ", noise seed = " << seed_;
    return out.str();
  }

  // The carry of y_0; its noise_seed is the stepper's seed, the key of every draw of the run.
  Carry initial_carry(const Vector& y0, const Vector& theta) const {
    check_sizes(y0, theta);
    Carry c;
    c.t = control_.t0;
    c.h = control_.dt;
    c.step = 0;
    c.noise_seed = seed_;
    return c;
  }

  bool finished(const Carry& c) const { return c.step >= control_.steps; }

  // One step: y ← y_{n+1}, carry ← carry_{n+1}; the draws are keyed by the carry it starts from.
  void step(Vector& y, Carry& carry, const Vector& theta) {
    if (finished(carry))
      detail::fail<InvalidArgument>("step() called at step ", carry.step, " (t = ", carry.t,
                                    ") after the end of the run");
    evaluate(y, carry, theta);
    const double h = control_.dt;
    if (scheme_ == SdeScheme::euler_maruyama) {
      B::for_each_index(n_, detail::EulerMaruyamaUpdateKernel{B::data(y), B::data(f_), B::data(g_),
                                                              B::data(dw_), h});
    } else {
      B::for_each_index(
          n_, detail::MilsteinUpdateKernel{B::data(y), B::data(f_), B::data(g_), B::data(g_hat_),
                                           B::data(dw_), h, std::sqrt(h)});
    }
    carry.step += 1;
    // t_n = t0 + n·dt rather than a running sum, as the Runge–Kutta engine does.
    carry.t = control_.t0 + static_cast<double>(carry.step) * h;
    ++counters_.steps;
  }

  // λ ← λ_n = (∂y_{n+1}/∂y_n)ᵀ λ_{n+1};  mu ← mu + (∂y_{n+1}/∂θ)ᵀ λ_{n+1}, for the draws keyed by
  // carry_n. Re-runs the step's evaluations from (y_n, carry_n) first.
  void adjoint_step(const Vector& y_n, const Carry& carry_n, const Vector& theta, Vector& lambda,
                    Vector& mu) {
    if (B::size(lambda) != n_ || B::size(mu) != p_)
      detail::fail<InvalidArgument>("adjoint vectors have sizes (", B::size(lambda), ", ",
                                    B::size(mu), "); expected (", n_, ", ", p_, ")");
    evaluate(y_n, carry_n, theta);
    const double h = control_.dt;
    const double sqrt_h = std::sqrt(h);
    const double t = carry_n.t;
    if (scheme_ == SdeScheme::euler_maruyama) {
      B::for_each_index(n_,
                        detail::EulerMaruyamaCotangentKernel{B::data(kappa_f_), B::data(kappa_g_),
                                                             B::data(lambda), B::data(dw_), h});
      drift_and_diffusion_vjp(t, y_n, theta, mu);
      const double coeff[] = {1.0, 1.0};
      const Vector* vecs[] = {&nu_f_, &nu_g_};
      B::linear_combination(lambda, 1.0, lambda, coeff, vecs);
    } else {
      // The branch through g(ŷ) first: it feeds ŷ's adjoint λ̂ into both cotangents below.
      B::for_each_index(n_, detail::MilsteinHatCotangentKernel{B::data(kappa_g_), B::data(lambda),
                                                               B::data(dw_), h, sqrt_h});
      diffusion_vjp(t, y_hat_, theta, kappa_g_, nu_hat_);
      if (p_ > 0) B::axpy(1.0, mu_part_, mu);
      B::for_each_index(
          n_, detail::MilsteinCotangentKernel{B::data(kappa_f_), B::data(kappa_g_), B::data(lambda),
                                              B::data(nu_hat_), B::data(dw_), h, sqrt_h});
      drift_and_diffusion_vjp(t, y_n, theta, mu);
      const double coeff[] = {1.0, 1.0, 1.0};
      const Vector* vecs[] = {&nu_hat_, &nu_f_, &nu_g_};
      B::linear_combination(lambda, 1.0, lambda, coeff, vecs);
    }
    ++counters_.adjoint_steps;
  }

 private:
  void check_sizes(const Vector& y, const Vector& theta) const {
    if (B::size(y) != n_)
      detail::fail<InvalidArgument>("state has ", B::size(y), " components; the problem has ", n_);
    if (B::size(theta) != p_)
      detail::fail<InvalidArgument>("parameter vector has ", B::size(theta),
                                    " components; the problem has ", p_);
  }

  // g into `out`, refusing a diffusion that changed its output's size (a non-diagonal g that
  // resized the vector): integer checks only, so the wrong noise dimension is never silent.
  void diffusion(double t, const Vector& y, const Vector& theta, Vector& out) {
    problem_.diffusion(t, y, theta, out);
    ++counters_.rhs_evaluations;
    if (B::size(out) != n_)
      detail::fail<InvalidArgument>("the problem's diffusion returned ", B::size(out),
                                    " values for ", n_,
                                    " state components; diagonal noise needs one per component");
  }

  void diffusion_vjp(double t, const Vector& y, const Vector& theta, const Vector& v,
                     Vector& out_y) {
    problem_.diffusion_vjp(t, y, theta, v, out_y, mu_part_);
    ++counters_.vjp_evaluations;
  }

  // (∂f/∂y)ᵀκ_f into nu_f_, (∂g/∂y)ᵀκ_g into nu_g_, both θ parts added to mu (f's first).
  void drift_and_diffusion_vjp(double t, const Vector& y, const Vector& theta, Vector& mu) {
    problem_.vjp(t, y, theta, kappa_f_, nu_f_, mu_part_);
    ++counters_.vjp_evaluations;
    if (p_ > 0) B::axpy(1.0, mu_part_, mu);
    diffusion_vjp(t, y, theta, kappa_g_, nu_g_);
    if (p_ > 0) B::axpy(1.0, mu_part_, mu);
  }

  // f, g and ΔW at (y, carry) — and for Milstein ŷ and g(ŷ) — the same operations in the same
  // order in step() and in adjoint_step()'s replay, so both see the same bits.
  void evaluate(const Vector& y, const Carry& carry, const Vector& theta) {
    check_sizes(y, theta);
    const double h = control_.dt;
    const double sqrt_h = std::sqrt(h);
    const NoiseKey key{.seed = carry.noise_seed,
                       .step = carry.step,
                       .stage = 0,
                       .purpose = NoisePurpose::brownian_increment};
    if constexpr (requires(const P& p) { p.begin_step(carry.step); })
      problem_.begin_step(carry.step);
    problem_.rhs(carry.t, y, theta, f_);
    ++counters_.rhs_evaluations;
    diffusion(carry.t, y, theta, g_);
    fill_keyed_normals<B>(key, sqrt_h, dw_);
    if (scheme_ == SdeScheme::milstein) {
      B::for_each_index(n_, detail::MilsteinSupportKernel{B::data(y_hat_), B::data(y), B::data(f_),
                                                          B::data(g_), h, sqrt_h});
      diffusion(carry.t, y_hat_, theta, g_hat_);
    }
  }

  const P& problem_;
  SdeScheme scheme_;
  StepControl control_;
  std::uint64_t seed_ = 0;
  Index n_ = 0, p_ = 0;
  Vector f_, g_, dw_, y_hat_, g_hat_;
  Vector kappa_f_, kappa_g_, nu_f_, nu_g_, nu_hat_, mu_part_;
  StepperCounters counters_;
};

}  // namespace rwd
