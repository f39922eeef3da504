// rewind/fit/gradient_check.hpp — check a whole gradient of your own model and driver settings
// against central finite differences of the same discrete map.
//
//   auto problem = rwd::auto_problem(Sir{});
//   rwd::GradientCheck check = rwd::check_gradient(problem, data, theta, spec);   // fit_data.hpp
//   check.passed;            // every relative error within check.tolerance
//   check.relative_error;    // one per parameter of θ
//   std::cout << check.report();
//
//   // any stepper and objective, y0 fixed:
//   check = rwd::check_gradient(stepper, objective, y0, theta, plan);
//
// What is compared. The adjoint gradient dJ/dθ of the run (rwd::CheckpointedAdjoint with the
// plan: the gradient a fit uses) against the central difference of J itself,
//   D_j = (J(θ + h_j e_j) − J(θ − h_j e_j)) / (θ_j⁺ − θ_j⁻),   h_j = ε^(1/3) · max(|θ_j|, 1),
// ε = 2⁻⁵² (ε^(1/3) ≈ 6.1e-6): the step that balances the central difference's truncation error
// O(h²) against the rounding error O(ε/h) of J (Nocedal & Wright, "Numerical Optimization",
// 2nd ed., §8.1), so D_j agrees with an exact gradient to about ε^(2/3) ≈ 4e-11 relative to the
// scale of J's derivatives. The divisor is the step actually taken (θ_j ± h_j rounds).
// relative_error_j = |g_j − D_j| / max(|g_j|, |D_j|, floor), with floor = 1e-8 · max_i |g_i| (and
// not below the smallest normal double): a component much smaller than the others is judged
// against the gradient's scale rather than against itself. The check passes when every
// relative error is at most `tolerance` (1e-6 by default: a wrong vjp, a wrong sign or a missing
// term gives errors of order 1; a correct one, about 1e-9 or less on a smooth model).
//
// It costs two runs per parameter beside the gradient run (the driver's runs, of which only J is
// used). InvalidArgument for θ of the wrong
// size or not finite, tolerance not in (0, 1), relative_step <= 0.
#pragma once

#include <Eigen/Core>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "rewind/adjoint/checkpoint_options.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/backend/eigen_backend.hpp"
#include "rewind/fit/fit_data.hpp"
#include "rewind/objective.hpp"
#include "rewind/schedule/checkpoint_plan.hpp"
#include "rewind/types.hpp"

namespace rwd {

struct GradientCheckOptions {
  double tolerance = 1e-6;  // largest relative error that passes, in (0, 1)
  // h_j / max(|θ_j|, 1); 0: ε^(1/3) (see the top of this file).
  double relative_step = 0.0;
};

struct GradientCheck {
  std::vector<std::string> names;     // one per parameter ("θ[j]" where the problem has none)
  Eigen::VectorXd adjoint;            // dJ/dθ from the adjoint run
  Eigen::VectorXd finite_difference;  // central differences of J
  Eigen::VectorXd relative_error;     // per parameter, as defined at the top of this file
  Eigen::VectorXd step;               // the step taken per parameter
  double loss = 0.0;                  // J(θ)
  double tolerance = 0.0;
  bool passed = false;  // every relative error <= tolerance
  Index worst = 0;      // the parameter with the largest relative error

  // One line per parameter (name, adjoint, finite difference, relative error) and the verdict.
  std::string report() const;
};

namespace detail {

// J and dJ/dθ at a full θ.
using LossAndGradient = std::function<std::pair<double, Eigen::VectorXd>(const Eigen::VectorXd&)>;

// The check of `evaluate` at θ (gradient_check.cpp): validates, runs, compares.
GradientCheck check_gradient_with(const LossAndGradient& evaluate, const Eigen::VectorXd& theta,
                                  std::vector<std::string> names,
                                  const GradientCheckOptions& options);

}  // namespace detail

// The gradient of `objective` by rwd::CheckpointedAdjoint(stepper, plan) at (y0, θ) against
// central differences of its J (fixed y0).
template <class Stepper>
GradientCheck check_gradient(Stepper& stepper, const Objective<EigenBackend>& objective,
                             const Eigen::VectorXd& y0, const Eigen::VectorXd& theta,
                             const CheckpointPlan& plan, const GradientCheckOptions& options = {},
                             const CheckpointOptions& checkpoint = {}) {
  static_assert(std::is_same_v<typename Stepper::Backend, EigenBackend>,
                "check_gradient works on host (Eigen) vectors");
  CheckpointedAdjoint<Stepper> driver(stepper, objective, checkpoint);
  return detail::check_gradient_with(
      [&](const Eigen::VectorXd& at) {
        auto run = driver.run(y0, at, plan);
        return std::pair<double, Eigen::VectorXd>(run.loss, std::move(run.grad_theta));
      },
      theta, {}, options);
}

// The gradient rwd::fit would use for `problem` against `data` with `spec`'s integration,
// checkpointing and initial state (σ = 1: J = ½ RSS), at the full θ, every parameter checked
// (those spec.fit names and the others alike; spec.fit itself may be empty). With adaptive
// steps, on the steps an adaptive run at θ chooses, held for the differences as a fit holds them.
template <class P>
GradientCheck check_gradient(const P& problem, const TimeSeries& data, const Eigen::VectorXd& theta,
                             const FitSpec& spec, const GradientCheckOptions& options = {}) {
  const DataStepGrid grid = fit_step_grid(problem, data.times, spec, theta);
  return detail::with_fit_stepper(problem, spec, grid, [&](auto& stepper) {
    detail::DataFitSetup setup(problem, stepper, grid, data, spec);
    return detail::check_gradient_with(
        [&](const Eigen::VectorXd& at) {
          auto run = setup.gradient(at);
          return std::pair<double, Eigen::VectorXd>(run.loss, std::move(run.grad_theta));
        },
        theta, detail::parameter_names_of(problem), options);
  });
}

}  // namespace rwd
