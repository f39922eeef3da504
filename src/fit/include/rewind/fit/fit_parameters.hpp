// rewind/fit/fit_parameters.hpp — estimate a simulation's parameters from observations: a
// bound-constrained L-BFGS fit whose every gradient is an exact discrete adjoint through the
// checkpointed driver, in the memory its plan allows.
//
//   rwd::Observations obs = rwd::load_observations("lv.h5");
//   rwd::LotkaVolterra<> model;
//   rwd::ExplicitRungeKutta stepper(model, rwd::ButcherTableau::by_name(obs.method),
//                                   rwd::StepControl::fixed(0.0, obs.dt, obs.steps));
//   const auto misfit = rwd::observation_misfit(obs, rwd::misfit_sigma(obs));
//   rwd::FitOptions options;
//   options.fitted = {0, 3};                          // α and γ; β and δ stay at θ_start's values
//   options.bounds = {{0.5, 3.0}, {1.0, 6.0}};        // one per fitted index
//   options.on_iteration = [](const rwd::FitIteration& it) { std::cout << it.loss << "\n"; };
//   auto plan = rwd::plan_checkpoints(rwd::PlanRequest::revolve(8), obs.steps);
//   rwd::FitResult fit = rwd::fit_parameters(stepper, misfit, obs.initial_state, theta_start,
//                                            options, plan);
//   fit.theta;  fit.loss;  fit.iterations;  fit.evaluations;  fit.stop_reason;  fit.failed;
//
// The initial state can be estimated with θ (data that start from a measured, noisy state):
//   options.fitted_initial_state = {0, 1};                      // both components of y0
//   options.initial_state_bounds = {{0.0, inf}, {0.0, inf}};    // one per fitted component
//   fit = rwd::fit_parameters(stepper, misfit, y0_start, theta_start, options, plan);
//   fit.initial_state;                                         // the estimated y0
// Each gradient then uses the driver's dJ/dy0 beside dJ/dθ (the same adjoint run), and the
// optimiser sees the fitted components of θ and of y0 as one vector, scaled alike.
//
// The optimiser is NLopt's LD_LBFGS with bounds (rwd::minimize_bounded: Lukšan's limited-memory
// BFGS, after Nocedal 1980 and Liu & Nocedal 1989; see minimize_bounded.hpp for how its bounds
// differ from L-BFGS-B, Byrd, Lu, Nocedal & Zhu 1995). Every evaluation is one gradient run of
// rwd::CheckpointedAdjoint with `plan` (J and dJ/dθ together, the first sweep giving J), so the
// memory of a fit is the plan's whatever the horizon. The gradient is bitwise the same for every
// plan (store-all, revolve with any budget, disk levels), so the iterates are too: a fit in a
// small budget follows the store-all fit's path bit for bit.
//
// Scaling: the optimiser sees x_i = θ_i / s_i with s_i = |θ_start,i| (1 where θ_start,i = 0), and
// the bounds scaled the same way, so parameters of very different magnitudes (a diffusion
// coefficient of 0.1 and a rate of 1e-3) are conditioned alike; its tolerances are relative.
//
// Log scale (FitOptions::log_scale): a positive parameter known only to its order of magnitude
// (rate constants spanning 10⁻² to 10⁷) is better fitted in log θ: the optimiser sees
// x_i = 1 + ln(θ_i / θ_start,i) (1 at the start, so a step of 0.1 is 10 % of θ as for the linear
// scaling), its gradient dJ/dx_i = θ_i · dJ/dθ_i by the chain rule, and the bounds mapped the same
// way (a lower bound of 0 becomes no bound: log θ is unbounded below). Start values, bounds,
// iterations and results stay in θ. Such a parameter needs a start > 0 and a lower bound >= 0.
//
// Restarts: NLopt's L-BFGS also stops when its gradient test passes, and that test is absolute
// (10⁻⁸ on the scaled J above), so a fit whose J fell by many orders from a far start can stop
// short of the minimum while reporting success. FitOptions::restarts = R starts it again from
// the best θ so far, the objective scaled afresh there, up to R times — only after such a stop
// (not after J's or θ's relative tolerance, a failure or the evaluation limit) and only while a
// round still lowers J. Iterations, evaluations and the history run on across restarts; the
// evaluation limit is the whole fit's.
//
// Iterations: NLopt has no iteration callback, so an *iteration* here is an evaluation that
// lowered the best J so far. The first evaluation (at θ_start) is iteration 0; `iterations`
// counts the improvements after it. Line-search trials that did not improve are evaluations
// but not iterations.
//
// Failure: a state, adjoint or J that turns non-finite (the driver's NumericalError, naming the
// step and t), or an integrator that cannot proceed (SolverError), ends the fit without an
// exception: failed = true, failure says which evaluation and why, theta is the best θ found so
// far. Other errors (a full disk under a disk plan, bad input) propagate as exceptions.
#pragma once

#include <Eigen/Core>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/summary.hpp"
#include "rewind/backend/eigen_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/objective.hpp"
#include "rewind/schedule/checkpoint_plan.hpp"
#include "rewind/types.hpp"

namespace rwd {

// Bounds of one fitted parameter; either may be infinite (no bound on that side).
struct ParameterBounds {
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();
};

// One iteration: an evaluation that lowered the best J so far (iteration 0: the start).
struct FitIteration {
  int iteration = 0;              // 0 for θ_start, then 1, 2, …
  int evaluations = 0;            // gradient evaluations so far, this one included
  double loss = 0.0;              // J(θ)
  double gradient_norm = 0.0;     // |dJ/dθ| over the fitted components (unscaled)
  Eigen::VectorXd theta;          // the full θ
  Eigen::VectorXd initial_state;  // the full y0 (the given y0 unless some of it is fitted)
  double seconds = 0.0;           // since the fit started
};

struct FitOptions {
  std::vector<Index> fitted;  // indices into θ to estimate (distinct); the others stay fixed
  std::vector<ParameterBounds> bounds;  // one per fitted index, in the same order (may be ±inf)
  // Indices into θ (each one of `fitted`, distinct) that the optimiser moves in log θ (see above);
  // empty: every fitted parameter on the linear scale.
  std::vector<Index> log_scale;
  // Indices into y0 to estimate as well (distinct; empty: y0 is given). fit_parameters' y0 is
  // their start; the others stay fixed. Gradient-norm and J are over θ and y0 together.
  std::vector<Index> fitted_initial_state;
  std::vector<ParameterBounds> initial_state_bounds;  // one per fitted_initial_state index
  int max_evaluations = 100;  // most gradient evaluations, >= 1 (NLopt's maxeval)
  double relative_tolerance =
      1e-8;                    // stop when a step changes J by less than this fraction (ftol_rel)
  double x_tolerance = 1e-10;  // stop when a step changes every scaled parameter by less than this
                               // fraction (xtol_rel)
  // Restarts after NLopt's own optimality test (see "Restarts" above), >= 0; 0: none.
  int restarts = 0;
  // Called at every iteration, in order, the start included (progress lines, plots). An exception
  // it throws ends the fit and reaches the caller of fit_parameters unchanged.
  std::function<void(const FitIteration&)> on_iteration;

  // InvalidArgument naming the rule, before any work: no fitted index, an index out of range or
  // repeated, bounds not one per fitted index, lower >= upper (or NaN), θ_start not finite or a
  // fitted component outside its bounds, max_evaluations < 1, tolerances or restarts negative; a
  // log_scale index not fitted or repeated, or whose start is not > 0 or lower bound is negative.
  void validate(const Eigen::VectorXd& theta_start) const;
  // The same rules for fitted_initial_state and initial_state_bounds against the start y0.
  void validate_initial_state(const Eigen::VectorXd& y0_start) const;
};

struct FitResult {
  Eigen::VectorXd theta;     // best θ found (θ_start when not even the start could be evaluated)
  double loss = 0.0;         // J(theta) (NaN when not even the start could be evaluated)
  Eigen::VectorXd gradient;  // full dJ/dθ at theta, fixed components included (NaN as for loss)
  Eigen::VectorXd initial_state;           // y0 at the fit (the given y0 when none is fitted)
  Eigen::VectorXd initial_state_gradient;  // dJ/dy0 there (NaN as for loss; empty if y0 is given)
  int iterations = 0;                      // improvements after the start (history.size() − 1)
  int evaluations = 0;                     // gradient evaluations, a failed one included
  int restarts = 0;                        // restarts made (FitOptions::restarts)
  std::vector<FitIteration> history;       // every iteration, the start first
  std::string stop_reason;  // why the fit stopped, in words (NLopt's result, or the failure)
  int optimizer_code = 0;   // NLopt's nlopt_result (0 when a failed evaluation stopped it)
  bool failed = false;      // a non-finite evaluation (or the optimiser's failure) ended the fit
  std::string
      failure;  // what failed: "evaluation 7 (θ = …): state became non-finite … at step 812, t = …"
  Summary summary;  // the last successful gradient run's summary (schedule counts, peak memory)
};

namespace detail {

// One gradient evaluation as the fit sees it.
struct FitGradient {
  double loss = 0.0;
  Eigen::VectorXd grad_theta;
  Eigen::VectorXd grad_y0;  // needed only when some of y0 is fitted
  Summary summary;
};

// What the optimiser sees of the fitted parameters (the scaling and log scale above): its
// coordinates x, their bounds, and the maps between x and θ with the gradient's chain rule.
// Built from validated options; fit_parameters.cpp uses it, tests check its chain rule.
class FitCoordinates {
 public:
  FitCoordinates(const Eigen::VectorXd& theta_start, const FitOptions& options);
  const std::vector<double>& start() const { return x0_; }
  const std::vector<double>& lower() const { return lower_; }
  const std::vector<double>& upper() const { return upper_; }
  // x for θ (clamped into x's bounds): where a restart starts.
  std::vector<double> to_x(const Eigen::VectorXd& theta) const;
  // Writes the fitted components of θ for x, clamped into their bounds (x's bounds are rounded
  // images of θ's, so a value may land an ulp outside); the others are left as they are.
  void to_theta(const std::vector<double>& x, Eigen::VectorXd& theta) const;
  // dJ/dx from dJ/dθ at θ: dJ/dθ_i · s_i on the linear scale, dJ/dθ_i · θ_i on the log scale.
  void to_gradient(const Eigen::VectorXd& theta, const Eigen::VectorXd& grad_theta,
                   std::vector<double>& g) const;

 private:
  std::vector<Index> fitted_;
  std::vector<ParameterBounds> bounds_;
  std::vector<char> log_;      // per fitted parameter: 1 on the log scale
  std::vector<double> scale_;  // linear: s = |θ_start| (1 for 0); log: θ_start
  std::vector<double> x0_, lower_, upper_;
};

// The part of fit_parameters that does not depend on the stepper (fit_options.cpp): scaling,
// NLopt, the best-so-far bookkeeping, iterations, failures. `gradient` computes J and dJ/dθ at
// a full θ; its NumericalError or SolverError ends the fit as described above.
FitResult fit_with_gradient(
    const std::function<FitGradient(const Eigen::VectorXd& theta)>& gradient,
    const Eigen::VectorXd& theta_start, const FitOptions& options);

// fit_with_gradient over θ and the fitted components of y0 together: `gradient` takes both and
// must fill grad_y0. Without fitted_initial_state it is fit_with_gradient (y0 fixed).
FitResult fit_with_initial_state(
    const std::function<FitGradient(const Eigen::VectorXd& theta, const Eigen::VectorXd& y0)>&
        gradient,
    const Eigen::VectorXd& theta_start, const Eigen::VectorXd& y0_start, const FitOptions& options);

}  // namespace detail

// Fits θ to minimise `objective` (e.g. rwd::observation_misfit) from `theta_start`, integrating
// with `stepper` from y0 (the start of y0's fitted components, if any); every gradient through
// rwd::CheckpointedAdjoint with `plan` and `checkpoint` options. The stepper must outlive the call.
// Bad input is refused before any work (InvalidArgument): options (FitOptions::validate), θ_start
// or y0 of the wrong size or not finite, an adaptive stepper, a plan for another number of steps
// than the stepper takes, an objective observing beyond the horizon.
template <class Stepper>
FitResult fit_parameters(Stepper& stepper, const Objective<EigenBackend>& objective,
                         const Eigen::VectorXd& y0, const Eigen::VectorXd& theta_start,
                         const FitOptions& options, const CheckpointPlan& plan,
                         const CheckpointOptions& checkpoint = {}) {
  static_assert(std::is_same_v<typename Stepper::Backend, EigenBackend>,
                "fit_parameters works on host (Eigen) vectors");
  if (theta_start.size() != stepper.parameter_size())
    detail::fail<InvalidArgument>("fit_parameters: theta_start has ", theta_start.size(),
                                  " components but the stepper's problem has ",
                                  stepper.parameter_size(), " parameters");
  options.validate(theta_start);
  if (y0.size() != stepper.state_size())
    detail::fail<InvalidArgument>("fit_parameters: y0 has ", y0.size(),
                                  " components but the stepper's state has ", stepper.state_size());
  if (!y0.allFinite()) detail::fail<InvalidArgument>("fit_parameters: y0 contains NaN or Inf");
  options.validate_initial_state(y0);
  if (stepper.planned_steps() < 0)
    detail::fail<InvalidArgument>(
        "fit_parameters needs a fixed-step stepper: an adaptive run's number of steps "
        "changes with θ, and the plan is made for one number of steps");
  if (plan.steps != stepper.planned_steps())
    detail::fail<InvalidArgument>("fit_parameters: the plan '", plan.name, "' is for ", plan.steps,
                                  " steps but the stepper takes ", stepper.planned_steps());
  if (objective.last_observation_step() > plan.steps)
    detail::fail<InvalidArgument>("fit_parameters: the objective observes step ",
                                  objective.last_observation_step(), " but the run has only ",
                                  plan.steps, " steps");
  checkpoint.validate();

  CheckpointedAdjoint<Stepper> driver(stepper, objective, checkpoint);
  return detail::fit_with_initial_state(
      [&](const Eigen::VectorXd& theta, const Eigen::VectorXd& y0_now) {
        auto run = driver.run(y0_now, theta, plan);
        return detail::FitGradient{run.loss, std::move(run.grad_theta), std::move(run.grad_y0),
                                   std::move(run.summary)};
      },
      theta_start, y0, options);
}

}  // namespace rwd
