// rewind/fit/parameter_uncertainty.hpp — how well the data determine fitted parameters: standard
// errors from the curvature of the misfit at its minimum.
//
//   rwd::FitResult fit = rwd::fit_parameters(stepper, misfit, y0, theta_start, options, plan);
//   rwd::ParameterUncertainty u =
//       rwd::parameter_uncertainty(stepper, misfit, y0, fit.theta, options.fitted, plan);
//   u.standard_errors;   // one per fitted index: the 1-sigma spread the noise allows
//   // A fit that estimated part of y0 too (FitOptions::fitted_initial_state):
//   u = rwd::parameter_uncertainty(stepper, misfit, fit, options, plan);
//   u.standard_errors;   // the fitted θ's in options.fitted's order, then the fitted y0's
//
// With J = ½ Σ |H y_k − d_k|² / σ² = ½ χ² and σ the data's noise, the estimate's covariance is
// about H⁻¹, the inverse Hessian of J in the fitted parameters at the minimum (the Laplace or
// Gauss–Newton approximation of the least-squares posterior; e.g. Tarantola, "Inverse Problem
// Theory", SIAM 2005, §3.2). H comes from central differences of exact adjoint gradients,
//   H[:, j] = (g(θ + h_j e_j) − g(θ − h_j e_j)) / (2 h_j),   h_j = 1e-4 · max(|θ_j|, 1e-12),
// symmetrised: two gradient runs per fitted parameter, with the same plan as the fit. Central
// differences of a gradient are exact for a quadratic J and second-order accurate otherwise.
// When H is not positive definite (not a minimum, or a parameter the data do not determine),
// positive_definite is false and the standard errors are NaN — never a made-up number.
#pragma once

#include <Eigen/Core>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/backend/eigen_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/fit/fit_parameters.hpp"
#include "rewind/objective.hpp"
#include "rewind/schedule/checkpoint_plan.hpp"
#include "rewind/types.hpp"

namespace rwd {

struct ParameterUncertainty {
  Eigen::MatrixXd hessian;          // d²J/dθ_i dθ_j over the fitted indices, symmetrised
  Eigen::MatrixXd covariance;       // H⁻¹ (NaN when H is not positive definite)
  Eigen::VectorXd standard_errors;  // sqrt(diag(H⁻¹)), one per fitted index
  bool positive_definite = false;   // whether H is (so that the above mean something)
  int evaluations = 0;              // gradient runs spent (2 per fitted index)
};

// Warns (rwd::warn, source "fit"; rewind/warning.hpp) about what an uncertainty says the data do
// not determine, so that a fit which converged to a number the data do not fix is not taken at
// its word: a Hessian that is not positive definite (no standard errors), and each estimate whose
// standard error exceeds its magnitude, or a tenth of it when it is correlated |ρ| ≥ 0.999 with
// another (a valley the data barely bound) — naming that correlate when |ρ| ≥ 0.99 (the data fix
// mainly a combination of the two). Silent for a well-determined fit, however correlated. `names`,
// `estimates`, `standard_errors` and `covariance` are over the same quantities.
void warn_if_poorly_determined(const std::vector<std::string>& names,
                               const Eigen::VectorXd& estimates,
                               const Eigen::VectorXd& standard_errors,
                               const Eigen::MatrixXd& covariance, bool positive_definite);

namespace detail {

// The stepper-free part: `gradient` gives dJ/dθ (full θ) at a full θ.
ParameterUncertainty uncertainty_from_gradients(
    const std::function<Eigen::VectorXd(const Eigen::VectorXd& theta)>& gradient,
    const Eigen::VectorXd& theta, const std::vector<Index>& fitted);

}  // namespace detail

// Standard errors of θ[fitted] at `theta` (a minimum of `objective`, e.g. FitResult::theta), every
// gradient through rwd::CheckpointedAdjoint with `plan`. InvalidArgument for an index out of range
// or repeated, or a θ not finite; the driver's errors (non-finite states) propagate.
template <class Stepper>
ParameterUncertainty parameter_uncertainty(Stepper& stepper,
                                           const Objective<EigenBackend>& objective,
                                           const Eigen::VectorXd& y0, const Eigen::VectorXd& theta,
                                           const std::vector<Index>& fitted,
                                           const CheckpointPlan& plan,
                                           const CheckpointOptions& checkpoint = {}) {
  static_assert(std::is_same_v<typename Stepper::Backend, EigenBackend>,
                "parameter_uncertainty works on host (Eigen) vectors");
  CheckpointedAdjoint<Stepper> driver(stepper, objective, checkpoint);
  return detail::uncertainty_from_gradients(
      [&](const Eigen::VectorXd& at) { return driver.run(y0, at, plan).grad_theta; }, theta,
      fitted);
}

// Standard errors of everything `fit` estimated with `options` (fit_parameters' result): the
// components options.fitted of θ, then options.fitted_initial_state of y0, in that order (the
// Hessian and covariance are over them jointly), at fit.theta and fit.initial_state.
template <class Stepper>
ParameterUncertainty parameter_uncertainty(Stepper& stepper,
                                           const Objective<EigenBackend>& objective,
                                           const FitResult& fit, const FitOptions& options,
                                           const CheckpointPlan& plan,
                                           const CheckpointOptions& checkpoint = {}) {
  static_assert(std::is_same_v<typename Stepper::Backend, EigenBackend>,
                "parameter_uncertainty works on host (Eigen) vectors");
  const Index p = fit.theta.size(), n = fit.initial_state.size();
  if (n != stepper.state_size())
    detail::fail<InvalidArgument>("parameter_uncertainty: the fit's initial state has ", n,
                                  " components but the stepper's state has ", stepper.state_size());
  std::vector<Index> joint = options.fitted;
  for (Index i : options.fitted_initial_state) {
    if (i < 0 || i >= n)
      detail::fail<InvalidArgument>("parameter_uncertainty: fitted initial-state index ", i,
                                    " is outside y0 (", n, " components)");
    joint.push_back(p + i);
  }
  Eigen::VectorXd z(p + n);
  z << fit.theta, fit.initial_state;
  CheckpointedAdjoint<Stepper> driver(stepper, objective, checkpoint);
  return detail::uncertainty_from_gradients(
      [&](const Eigen::VectorXd& at) {
        auto run = driver.run(at.tail(n).eval(), at.head(p).eval(), plan);
        Eigen::VectorXd both(p + n);
        both << run.grad_theta, run.grad_y0;
        return both;
      },
      z, joint);
}

}  // namespace rwd
