// rewind/adjoint/backsolve_system.hpp — the augmented adjoint system of the continuous
// ("backsolve") adjoint, in reversed time, as an ordinary rwd::Problem.
//
//   rwd::BacksolveSystem system(model, /*t_end=*/t_N);        // z = (y, a, g), size 2n + p
//   rwd::ExplicitRungeKutta backward(system, rwd::ButcherTableau::rk4(),
//                                    rwd::StepControl::fixed(0.0, dt, N));
//   // z ← (y_N, ∂J/∂y_N, 0); N steps of `backward` take it to (≈ y_0, ≈ dJ/dy0, ≈ dJ/dθ).
//
// The continuous adjoint of y' = f(t, y, θ) and J = g(y(t_N)) (Pontryagin; Cao, Li, Petzold &
// Serban, SIAM J. Sci. Comput. 24(3), 2003; Chen, Rubanova, Bettencourt & Duvenaud, "Neural
// Ordinary Differential Equations", NeurIPS 2018, Algorithm 1) solves, from t_N down to t_0,
//
//   dy/dt = f(t, y, θ),   da/dt = −(∂f/∂y)ᵀ a,   dg/dt = −(∂f/∂θ)ᵀ a,
//
// with a(t_N) = ∂J/∂y_N and g(t_N) = 0; then dJ/dy0 = a(t_0) and dJ/dθ = g(t_0). In reversed time
// τ = t_end − t the same system runs forwards, dz/dτ = −F(t_end − τ, z):
//
//   dy/dτ = −f,   da/dτ = (∂f/∂y)ᵀ a,   dg/dτ = (∂f/∂θ)ᵀ a     (all at t = t_end − τ, y),
//
// so any forward integrator steps it with positive step sizes, unchanged. The right-hand side
// costs one f and one vector-Jacobian product of the model.
//
// Only the right-hand side is ever needed: the system is integrated, never differentiated. Its
// vjp (required by the rwd::Problem concept) would need second derivatives of the model, which
// rewind's problems do not provide, so it throws rwd::InvalidArgument instead of returning
// something wrong.
//
// Backends: the segments of z are moved with device-neutral kernels over raw pointers, so the
// system runs on every backend the model runs on. rhs() does not allocate (its work vectors are
// made in the constructor).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "rewind/backend/backend.hpp"
#include "rewind/error.hpp"
#include "rewind/host_device.hpp"
#include "rewind/problem.hpp"
#include "rewind/types.hpp"

namespace rwd {
namespace detail {

// dst[i] = scale · src[i].
struct BacksolveScaledCopyKernel {
  const double* src;
  double* dst;
  double scale;
  REWIND_HOST_DEVICE void operator()(Index i) const { dst[i] = scale * src[i]; }
};

// (Σ (x_i − r_i)², Σ r_i²): the squared distance of x from a reference, and the reference's size.
struct BacksolveDistanceKernel {
  const double* x;
  const double* ref;
  REWIND_HOST_DEVICE Sums<2> operator()(Index i) const {
    const double d = x[i] - ref[i];
    Sums<2> s;
    s.v[0] = d * d;
    s.v[1] = ref[i] * ref[i];
    return s;
  }
};

// Non-finite entries of z in each segment: (y, a, g) for i in [0, n), [n, 2n), [2n, 2n + p).
struct BacksolveNonFiniteKernel {
  const double* z;
  Index n;
  REWIND_HOST_DEVICE Sums<3> operator()(Index i) const {
    Sums<3> s = Sums<3>::zero();
    if (!(z[i] - z[i] == 0.0)) s.v[i < n ? 0 : (i < 2 * n ? 1 : 2)] = 1.0;
    return s;
  }
};

// dst[i] += src[i].
struct BacksolveAddKernel {
  const double* src;
  double* dst;
  REWIND_HOST_DEVICE void operator()(Index i) const { dst[i] += src[i]; }
};

template <class B>
void backsolve_copy(const double* src, double* dst, Index count, double scale = 1.0) {
  B::for_each_index(count, BacksolveScaledCopyKernel{src, dst, scale});
}

// ‖x − ref‖₂ / ‖ref‖₂ over n entries (0 when they are equal; +∞ when ref = 0 and x ≠ 0).
template <class B>
double backsolve_relative_distance(const double* x, const double* ref, Index n) {
  const Sums<2> s = B::template sum_index<2>(n, BacksolveDistanceKernel{x, ref});
  if (s[0] == 0.0) return 0.0;
  return std::sqrt(s[0]) / std::max(std::sqrt(s[1]), std::numeric_limits<double>::min());
}

}  // namespace detail

template <Problem P>
class BacksolveSystem {
 public:
  using Backend = typename P::Backend;
  using Vector = typename Backend::Vector;
  using B = Backend;

  // The model must outlive the system. t_end: the time at which the backward solve starts
  // (τ = 0 there).
  BacksolveSystem(const P& model, double t_end)
      : model_(model),
        t_end_(t_end),
        n_(static_cast<Index>(model.state_size())),
        p_(static_cast<Index>(model.parameter_size())),
        y_(B::zeros(n_)),
        a_(B::zeros(n_)),
        f_(B::zeros(n_)),
        vjp_y_(B::zeros(n_)),
        vjp_theta_(B::zeros(p_)) {}

  const P& model() const { return model_; }
  double t_end() const { return t_end_; }
  // The model's sizes n and p; the augmented state z = (y, a, g) has 2n + p components.
  Index model_state_size() const { return n_; }
  Index state_size() const { return 2 * n_ + p_; }
  Index parameter_size() const { return p_; }

  // dz = (−f, (∂f/∂y)ᵀ a, (∂f/∂θ)ᵀ a) at t = t_end − τ and y = z[0, n), a = z[n, 2n).
  void rhs(double tau, const Vector& z, const Vector& theta, Vector& dz) const {
    if (B::size(z) != state_size() || B::size(dz) != state_size())
      detail::fail<InvalidArgument>("backsolve system: z has ", B::size(z), " and dz ", B::size(dz),
                                    " components; both must have 2n + p = ", state_size());
    const double t = t_end_ - tau;
    const double* zd = B::data(z);
    detail::backsolve_copy<B>(zd, B::data(y_), n_);
    detail::backsolve_copy<B>(zd + n_, B::data(a_), n_);
    model_.rhs(t, y_, theta, f_);
    model_.vjp(t, y_, theta, a_, vjp_y_, vjp_theta_);
    double* out = B::data(dz);
    detail::backsolve_copy<B>(B::data(f_), out, n_, -1.0);
    detail::backsolve_copy<B>(B::data(vjp_y_), out + n_, n_);
    detail::backsolve_copy<B>(B::data(vjp_theta_), out + 2 * n_, p_);
  }

  // Differentiating the augmented system would need second derivatives of the model (∂/∂y of
  // (∂f/∂y)ᵀ a). Nothing in the backsolve driver calls this; any other caller made a mistake.
  [[noreturn]] void vjp(double, const Vector&, const Vector&, const Vector&, Vector&,
                        Vector&) const {
    detail::fail<InvalidArgument>(
        "BacksolveSystem::vjp: the backsolve augmented system can only be integrated forwards; "
        "its vector-Jacobian product would need second derivatives of the model, which rewind "
        "does not have (use an exact discrete adjoint driver on the model instead)");
  }

 private:
  const P& model_;
  double t_end_;
  Index n_, p_;
  // Work vectors: rhs() is const for the Problem concept but needs contiguous y and a.
  mutable Vector y_, a_, f_, vjp_y_, vjp_theta_;
};

}  // namespace rwd
