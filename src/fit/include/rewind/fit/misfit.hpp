// rewind/fit/misfit.hpp — the data misfit of a set of observations as an rwd::Objective.
//
//   rwd::Observations obs = rwd::load_observations("gray_scott.h5");
//   auto J = rwd::observation_misfit(obs, rwd::misfit_sigma(obs));
//   rwd::CheckpointedAdjoint driver(stepper, J);
//   auto result = driver.run(obs.initial_state, theta, plan);   // J(θ), dJ/dθ, dJ/dy0
//
//   J(θ, y0) = ½ Σ_k |H y_k − d_k|² / σ²    over the observed steps k,
//
// with H y = y[offset, offset + count) (Observations::field). The terms are observation terms
// of rwd::Objective (no terminal cost), so the checkpointed driver evaluates each one where it
// meets step k — in the first sweep for J, and inside the recomputed segment during the reverse
// sweep for its gradient ∂/∂y_k = Hᵀ(H y_k − d_k)/σ² — and the gradient is bit for bit the
// store-all driver's whatever the schedule (tests/fit/misfit_test.cpp).
//
// With σ the noise level of the data, 2J is the χ² of the residuals and J the negative
// log-likelihood of Gaussian noise up to a constant: at the true θ, E[2J] ≈ (number of data).
#pragma once

#include <Eigen/Core>
#include <vector>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/fit/observations.hpp"
#include "rewind/objective.hpp"
#include "rewind/types.hpp"

namespace rwd {

// J = ½ Σ_k |H y_k − d_k|² / σ² over obs.observed_steps. Validates `obs`; σ must be finite and
// > 0 (InvalidArgument). A state of another length than obs.state_size is refused when a term is
// evaluated (InvalidArgument naming the step). The data are shared, not copied, between the
// copies of the objective that drivers make.
Objective<EigenBackend> observation_misfit(const Observations& obs, double sigma);

// J = ½ Σ_k Σ_i (y_k[components[i]] − data(i, k))² / σ² over the given steps (strictly
// increasing, >= 0; column k of data belongs to steps[k]), for any set of distinct state
// components, not only a contiguous block. A datum that is NaN was not measured and adds nothing
// (missing values of a measured series). InvalidArgument before any work: σ not finite or <= 0,
// no step or component, steps not increasing, a component outside [0, state_size) or repeated,
// data not components.size() × steps.size(), an infinite datum.
Objective<EigenBackend> component_misfit(std::vector<Index> steps, std::vector<Index> components,
                                         Eigen::MatrixXd data, Index state_size, double sigma);

// The σ to weigh the misfit by: the noise level recorded with the data when it is > 0, else 1 —
// noise-free (synthetic, exact) data give a plain least-squares misfit ½ Σ_k |H y_k − d_k|².
double misfit_sigma(const Observations& obs);

}  // namespace rwd
