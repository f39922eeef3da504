// rewind/integrators/sde_problem.hpp — what a stochastic model with diagonal noise provides.
//
// An SDE problem is a rwd::Problem (the drift f(t, y, θ) with its vector-Jacobian product) plus a
// diagonal diffusion g(t, y, θ), a vector of the state's size:  dy_i = f_i dt + g_i dW_i, with
// independent Wiener processes W_i. Besides g it provides the vector-Jacobian product of the
// vector-valued g:
//
//   struct Ou {                                       // dy = κ(μ − y) dt + σ dW, θ = (κ, μ, σ)
//     ...                                             // state_size, parameter_size, rhs, vjp
//     void diffusion(double t, const Vector& y, const Vector& theta, Vector& g) const {
//       g[0] = theta[2];
//     }
//     // out_y = (∂g/∂y)ᵀ v, out_theta = (∂g/∂θ)ᵀ v, both overwritten.
//     void diffusion_vjp(double t, const Vector& y, const Vector& theta, const Vector& v,
//                        Vector& out_y, Vector& out_theta) const {
//       out_y[0] = 0.0;
//       out_theta[0] = 0.0; out_theta[1] = 0.0; out_theta[2] = v[0];
//     }
//   };
//
// Since g is diagonal, (∂g/∂y)ᵀ v is Σ_i v_i ∂g_i/∂y: for noise where g_i depends on y_i only it
// is the element-wise product v ∘ g'(y). The same contract as rhs/vjp holds: outputs are
// overwritten, the same inputs give the same bits, no allocation.
//
// A problem may also declare noise_size(), the number of Wiener processes it expects; the
// steppers refuse one that is not state_size() (only diagonal noise is supported).
#pragma once

#include <concepts>

#include "rewind/problem.hpp"

namespace rwd {

template <class P>
concept SdeProblem = Problem<P> &&
    requires(const P& p, double t, const typename P::Backend::Vector& y,
             const typename P::Backend::Vector& theta, const typename P::Backend::Vector& v,
             typename P::Backend::Vector& out, typename P::Backend::Vector& out_theta) {
  p.diffusion(t, y, theta, out);
  p.diffusion_vjp(t, y, theta, v, out, out_theta);
};

}  // namespace rwd
