// rewind/problem.hpp — what a user's model must provide.
//
// A problem is any type with a backend, two sizes, a right-hand side and one combined
// vector-Jacobian product. State y, parameters θ and all work vectors are backend vectors, so a
// GPU model keeps θ on the device too.
//
//   struct Decay {                                // y' = -θ_0 y
//     using Backend = rwd::EigenBackend;
//     using Vector = Backend::Vector;
//     rwd::Index state_size() const { return 1; }
//     rwd::Index parameter_size() const { return 1; }
//     void rhs(double t, const Vector& y, const Vector& theta, Vector& f) const {
//       f[0] = -theta[0] * y[0];
//     }
//     // out_y = (∂f/∂y)ᵀ v and out_theta = (∂f/∂θ)ᵀ v, both overwritten.
//     void vjp(double t, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
//              Vector& out_theta) const {
//       out_y[0] = -theta[0] * v[0];
//       out_theta[0] = -y[0] * v[0];
//     }
//   };
//
// Contract: rhs and vjp overwrite their outputs (never accumulate), are deterministic (the same
// inputs give the same bits — replays from snapshots rely on it), and do not allocate if the
// caller wants allocation-free stepping. Check a new model's vjp with rwd::check_derivatives
// (rewind/derivative_checker.hpp) before trusting any gradient: a wrong Jacobian is the most
// common mistake, and no adjoint method can detect it on its own.
#pragma once

#include <concepts>

#include "rewind/backend/backend.hpp"
#include "rewind/types.hpp"

namespace rwd {

template <class P>
concept Problem = VectorBackend<typename P::Backend> &&
    requires(const P& p, double t, const typename P::Backend::Vector& y,
             const typename P::Backend::Vector& theta, const typename P::Backend::Vector& v,
             typename P::Backend::Vector& out, typename P::Backend::Vector& out_theta) {
  { p.state_size() } -> std::convertible_to<Index>;
  { p.parameter_size() } -> std::convertible_to<Index>;
  p.rhs(t, y, theta, out);
  p.vjp(t, y, theta, v, out, out_theta);
};

// A problem whose initial state may be a function of its parameters: y0 = initial_state(θ), and
// total_parameter_gradient(θ, dJ/dy0, dJ/dθ) = dJ/dθ + (∂y0/∂θ)ᵀ dJ/dy0 (rwd::AutoProblem,
// rwd::PluginModel). Whether a given model declares one is its own to say (a templated model's
// kHasInitialState, a plugin's has_initial_state()); the members refuse a model without one.
template <class P>
concept InitialStateFromParameters = requires(const P& p, const typename P::Backend::Vector& v) {
  p.initial_state(v);
  p.total_parameter_gradient(v, v, v);
};

}  // namespace rwd
