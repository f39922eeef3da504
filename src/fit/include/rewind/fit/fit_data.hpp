// rewind/fit/fit_data.hpp — fit a model to a measured series: times in the model's own unit,
// values of some state components, missing values allowed; estimates with standard errors.
//
//   auto problem = rwd::auto_problem(Sir{});                // or a built-in problem, or a plugin
//   rwd::TimeSeries data = rwd::load_data_csv("infected.csv");   // t,I — or fill it in code:
//   data.times = {0.5, 1, 2, 3.5, 5, 7, 10};                // days, strictly increasing, >= t0
//   data.columns = {"I"};                                   // state names (or column_indices)
//   data.values = values;                                   // times × columns; NaN: missing
//   rwd::FitSpec spec;
//   spec.fit = {{"beta", 0.4, 0.01, 2.0}, {"gamma", 0.2, 0.01, 1.0}};   // name, start, bounds
//   spec.fixed = {{"N", 1000.0}};                           // the rest: the model's defaults
//   spec.max_step = 0.1;                                    // days
//   rwd::DataFitResult r = rwd::fit(problem, data, spec);
//   r.estimates;  r.standard_errors;  r.sigma;  r.covariance;  r.residual_sum_of_squares;
//   r.iterations;  r.status;  r.converged;
//   Eigen::MatrixXd curve = rwd::predict(problem, times, spec, r.theta);   // times × states
//
// What it does. The run starts at spec.t0 from spec.initial_state, or else from the problem's
// initial_state(θ) (a templated model's, or a plugin's that has one, whose dependence on θ
// enters every gradient), or else from its default_initial_state(). Each interval between
// consecutive data times (t0 to the first one included) is cut into the fewest equal steps no
// longer than spec.max_step, and the run takes these steps as prescribed steps
// (rwd::StepControl::prescribed) with spec.method — an explicit Runge–Kutta method, or for a
// stiff model a diagonally implicit (esdirk43, …) or Rosenbrock (rodas4, …) one, whose
// discrete adjoints are exact too — so every data time is a step of the run: the
// time the stepper reaches there is the data time itself, bit for bit (a step whose rounded sum
// would miss it is adjusted by an ulp; rwd::data_step_grid). The steps do not depend on θ, so a
// fit compares the same steps of every run.
//
// With spec.fit_initial_state every component of y0 is estimated too, unbounded, starting from
// the y0 above (at the start θ): a first measurement is then not taken as exact, and a y0 that
// came from initial_state(θ) becomes free. The covariance and standard errors are then over
// the fitted parameters and y0's components jointly, in that order.
//
// The misfit is J(θ) = ½ Σ (y_k[c] − d_kc)² over every measured datum (rwd::component_misfit
// with σ = 1; NaN data are left out), minimised over the fitted parameters by NLopt's bounded
// L-BFGS (rwd::detail::fit_with_gradient, the optimiser of rwd::fit_parameters), every gradient
// an exact discrete adjoint through rwd::CheckpointedAdjoint with spec.plan, or else the plan of
// spec.checkpoints for the run's steps (store-all unless told). RSS = 2 J(θ̂).
//
// Noise and standard errors. σ is spec.sigma when it is given, else estimated from the residuals,
// σ̂² = RSS / (n − p) with n the measured data and p the estimated quantities (n > p needed). The
// covariance is σ² H⁻¹, H the Hessian of J at θ̂ by central differences of exact gradients
// (rwd::parameter_uncertainty's code). For least squares H = Sᵀ S + Σ r·∇²y: the Gauss–Newton
// (Fisher information) term Sᵀ S plus a term weighted by the residuals, which averages out at a
// fit with independent noise; this is the usual asymptotic covariance of nonlinear least squares
// (Seber & Wild, "Nonlinear Regression", Wiley 1989, §2.1–2.2). The standard errors are the
// square roots of its diagonal; NaN (and positive_definite false) when H is not positive
// definite — a parameter the data do not determine — or when spec.uncertainty is false.
//
// A run that turns non-finite (the driver names the step and time) or an optimiser failure ends
// the fit without an exception: converged is false, status says what happened, the estimates are
// the best found so far and the standard errors NaN.
//
// Bad input is refused before any work (rwd::InvalidArgument naming the value and the rule): a
// data time that is not finite, before t0, or not after the row before it (the row is named); a
// column that names no state of the model, or an index outside the state; values not times ×
// columns, an infinite value; no measured datum; a parameter name the model does not have, named
// twice, or both fitted and fixed; a start outside its bounds or bounds with lower >= upper; an
// unknown method, or bdf (CVODES chooses its own steps, which cannot land on every data time)
// or a stochastic scheme; max_step not finite or <= 0; σ <= 0; no σ and n <= p; a spec.plan for
// another number of steps than the run's.
//
// The command line's `rewind fit --data FILE.csv` is this call.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "rewind/adjoint/checkpoint_options.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/backend/eigen_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/fit/fit_parameters.hpp"
#include "rewind/fit/misfit.hpp"
#include "rewind/fit/observations.hpp"
#include "rewind/fit/parameter_uncertainty.hpp"
#include "rewind/integrators/butcher_tableau.hpp"
#include "rewind/integrators/diagonally_implicit_runge_kutta.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/integrators/implicit_tableau.hpp"
#include "rewind/integrators/rosenbrock.hpp"
#include "rewind/integrators/rosenbrock_tableau.hpp"
#include "rewind/integrators/step_control.hpp"
#include "rewind/objective.hpp"
#include "rewind/problem.hpp"
#include "rewind/schedule/checkpoint_plan.hpp"
#include "rewind/types.hpp"

namespace rwd {

// A measured series: values of some state components at given times.
struct TimeSeries {
  std::vector<double> times;  // in the model's time unit; strictly increasing, finite, >= t0
  // Which state each column of values holds, by the model's state names ("I") — or, for a
  // problem without state names, leave this empty and give column_indices. Exactly one of the two.
  std::vector<std::string> columns;
  std::vector<Index> column_indices;  // state component indices, 0-based
  Eigen::MatrixXd values;             // times.size() × columns; NaN: not measured
};

// One parameter to estimate: its name, its start and its bounds (either may be infinite), and
// whether the optimiser moves it in log θ — for a positive rate known only to its order of
// magnitude (FitOptions::log_scale: a start > 0 and a lower bound >= 0 needed).
struct FittedParameter {
  std::string name;
  double start = 0.0;
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();
  bool log_scale = false;
};

// A parameter held at a value during the fit.
struct FixedParameter {
  std::string name;
  double value = 0.0;
};

struct FitSpec {
  std::vector<FittedParameter> fit;  // at least one
  // Held at these values; every other parameter not fitted is held at `parameters`' value, or
  // the problem's default_parameters() when `parameters` is empty.
  std::vector<FixedParameter> fixed;
  Eigen::VectorXd parameters;     // the full θ the others are taken from (empty: the defaults)
  Eigen::VectorXd initial_state;  // y0 (empty: the problem's initial_state(θ), see the top)
  double t0 = 0.0;                // time of y0, in the model's time unit
  // The method: an explicit Runge–Kutta tableau (rwd::ButcherTableau::by_name), a diagonally
  // implicit one (rwd::ImplicitTableau::names(): esdirk43, sdirk2, …) or a Rosenbrock one
  // (rwd::RosenbrockTableau::names(): rodas4, ros3p, …), each taking the steps described above.
  std::string method = "rk4";
  // Implicit methods: the Newton iteration's tolerances and the stage equations' linear solver;
  // Rosenbrock methods use its linear_solver alone; explicit ones none of it.
  NewtonOptions newton;
  double max_step = 0.0;  // longest step, in time units (0: a thousandth of the time to the last
                          // datum, so at least 1000 steps)
  double sigma = 0.0;     // the data's noise level, > 0; 0: estimated from the residuals
  PlanRequest checkpoints = PlanRequest::store_all();  // the plan of every gradient run
  CheckpointOptions checkpoint_options;                // stores, threads, drift policy
  // The plan of every gradient run, when the caller has made one (a budget in bytes, the
  // stage-aware chooser, measured disk costs): it must be for the run's steps
  // (rwd::data_step_grid(t0, times, max_step).step_sizes.size()). Empty: checkpoints' plan.
  std::optional<CheckpointPlan> plan;
  int max_evaluations = 200;  // most gradient runs of the fit, >= 1
  int restarts = 0;  // restarts after the optimiser's own stop (FitOptions::restarts), >= 0
  double relative_tolerance = 1e-10;  // stop when a step changes J by less than this fraction
  double x_tolerance = 1e-10;         // stop when a step changes every parameter by less
  bool fit_initial_state = false;     // estimate every component of y0 too (see the top)
  bool uncertainty = true;  // the standard errors (2 gradient runs per estimated quantity)
  // Called at every iteration of the optimiser, the start included (progress lines); θ is the
  // full θ, initial_state the y0 of that iteration. An exception it throws ends the fit.
  std::function<void(const FitIteration&)> on_iteration;
};

struct DataFitResult {
  std::vector<std::string> names;   // the fitted parameters, in FitSpec::fit's order
  Eigen::VectorXd estimates;        // θ̂ of each of them
  Eigen::VectorXd standard_errors;  // σ·sqrt(diag H⁻¹) (NaN unless positive_definite)
  // σ² H⁻¹ over the fitted parameters, then (with FitSpec::fit_initial_state) y0's components
  Eigen::MatrixXd covariance;
  bool positive_definite = false;        // whether H is, so that the two above mean something
  Eigen::VectorXd theta;                 // the full θ at the fit, held parameters included
  double residual_sum_of_squares = 0.0;  // Σ (y_k[c] − d_kc)² over the measured data at θ̂
  Index data_count = 0;                  // n: measured (non-NaN) data
  double sigma = 0.0;            // the noise level the standard errors use (given or estimated)
  bool sigma_estimated = false;  // σ = sqrt(RSS / (n − p)) rather than FitSpec::sigma
  int iterations = 0;            // improvements of J after the start
  int evaluations = 0;           // gradient runs of the fit (the standard errors' not included)
  std::string status;            // why the optimiser stopped, in words
  bool converged = false;  // it stopped on a tolerance (not on failure nor on max_evaluations)
  bool failed = false;     // a non-finite run or the optimiser's failure ended the fit
  Index steps = 0;         // steps of every run
  std::vector<Index> data_steps;  // the step of each data time
  Eigen::VectorXd initial_state;  // y0 at the fit: estimated, given, or initial_state(θ̂)
  // σ·sqrt of y0's diagonal entries of the covariance (FitSpec::fit_initial_state; else empty)
  Eigen::VectorXd initial_state_standard_errors;
  Eigen::VectorXd gradient;           // full dJ/dθ at the fit (σ = 1), held parameters included
  std::vector<FitIteration> history;  // every iteration, the start first
  Summary summary;                    // the last gradient run's (schedule counts, peak memory)
};

// The steps of a run from t0 that lands on every data time: each interval cut into the fewest
// equal steps no longer than max_step (0: a thousandth of the time to the last datum), the last
// step of an interval adjusted so that t + h rounds to the data time exactly. Refuses bad times
// naming the row, and a max_step that would take more than 10⁸ steps to an interval.
struct DataStepGrid {
  std::vector<double> step_sizes;
  std::vector<Index> data_steps;  // the step index of each data time
};
DataStepGrid data_step_grid(double t0, const std::vector<double>& times, double max_step);

namespace detail {

// The state component of each column: names looked up in state_names (the model's), or the
// indices checked against state_size. Refuses an unknown name or an index outside the state.
std::vector<Index> data_components(const TimeSeries& data,
                                   const std::vector<std::string>& state_names, Index state_size);

// θ_start with the fixed and fitted values put in, and FitOptions for the fitted names. Refuses
// an unknown, repeated or both fitted and fixed name, and a start outside its bounds.
struct ResolvedParameters {
  Eigen::VectorXd theta_start;
  FitOptions options;
  std::vector<std::string> names;
};
ResolvedParameters resolve_parameters(const FitSpec& spec, const std::vector<std::string>& names,
                                      Eigen::VectorXd base);

// The measured data as component_misfit wants them (components × times), and their count;
// refuses values of the wrong shape, infinite values, or no measured datum.
Eigen::MatrixXd misfit_data(const TimeSeries& data, Index columns, Index* measured);

// The result from the fit and its uncertainty at unit σ (see the top of the file).
DataFitResult data_fit_result(const ResolvedParameters& resolved, const FitResult& fit,
                              const ParameterUncertainty& unit_uncertainty, Index measured,
                              double given_sigma);

// Whether `problem` can give y0 = initial_state(θ): a templated model's (rwd::auto_problem)
// says so by its type, a plugin's (rwd::PluginModel) when it is loaded.
template <class P>
bool has_parameter_initial_state(const P& problem) {
  if constexpr (requires { P::kHasInitialState; })
    return P::kHasInitialState;
  else if constexpr (requires { problem.has_initial_state(); })
    return problem.has_initial_state();
  else
    return false;
}

template <class P>
constexpr bool has_default_parameters() {
  if constexpr (requires { P::kHasDefaultParameters; })
    return P::kHasDefaultParameters;
  else
    return requires(const P& p) {
      p.default_parameters();
    };
}

template <class P>
std::vector<std::string> state_names_of(const P& problem) {
  if constexpr (requires { problem.state_names(); }) {
    const auto names = problem.state_names();
    return std::vector<std::string>(names.begin(), names.end());
  } else {
    return {};
  }
}

template <class P>
std::vector<std::string> parameter_names_of(const P& problem) {
  if constexpr (requires { problem.parameter_names(); }) {
    const auto names = problem.parameter_names();
    return std::vector<std::string>(names.begin(), names.end());
  } else {
    return {};
  }
}

// Calls f(stepper) with the stepper of spec.method for `problem`, taking `grid`'s steps from
// spec.t0 (see FitSpec::method), and returns what f returns; the stepper lives for the call.
// Refuses bdf, a stochastic scheme and an unknown name (naming the methods a fit takes).
template <class P, class F>
decltype(auto) with_fit_stepper(const P& problem, const FitSpec& spec, const DataStepGrid& grid,
                                F&& f) {
  static_assert(std::is_same_v<typename P::Backend, EigenBackend>,
                "rwd::fit works on host (Eigen) problems");
  const StepControl control = StepControl::prescribed(spec.t0, grid.step_sizes);
  if (ImplicitTableau::known(spec.method)) {
    DiagonallyImplicitRungeKutta stepper(problem, ImplicitTableau::by_name(spec.method), control,
                                         spec.newton);
    return std::forward<F>(f)(stepper);
  }
  if (RosenbrockTableau::known(spec.method)) {
    RosenbrockStepper stepper(problem, RosenbrockTableau::by_name(spec.method), control,
                              spec.newton.linear_solver);
    return std::forward<F>(f)(stepper);
  }
  const std::vector<std::string> explicit_methods = ButcherTableau::names();
  if (std::find(explicit_methods.begin(), explicit_methods.end(), spec.method) ==
      explicit_methods.end())
    fail<InvalidArgument>(
        "rwd::fit: method '", spec.method,
        "' cannot fit data: a fit takes steps that land on every data time, which an explicit "
        "(euler, heun, rk4, rk38, bs3, dopri5, tsit5), implicit (backward_euler, trapezoid, "
        "sdirk2, esdirk32, esdirk43) or Rosenbrock (ros3p, ros34pw2, rodas4) Runge-Kutta method "
        "takes; bdf chooses its own steps, and a stochastic scheme's run is not one curve");
  ExplicitRungeKutta stepper(problem, ButcherTableau::by_name(spec.method), control);
  return std::forward<F>(f)(stepper);
}

// Everything a fit, a prediction or a gradient check of `problem` against data times needs
// beside the stepper S (with_fit_stepper's, taking the grid's steps): the misfit (σ = 1), the
// plan and the driver. The problem, the stepper and the grid must outlive it.
template <class P, class S>
class DataFitSetup {
 public:
  DataFitSetup(const P& problem, S& stepper, const DataStepGrid& grid, const TimeSeries& data,
               const FitSpec& spec)
      : problem_(problem),
        components_(data_components(data, state_names_of(problem), problem.state_size())),
        grid_(grid),
        stepper_(stepper),
        misfit_(
            component_misfit(grid_.data_steps, components_,
                             misfit_data(data, static_cast<Index>(components_.size()), &measured_),
                             problem.state_size(), 1.0)),
        plan_(plan_for(spec, static_cast<Index>(grid_.step_sizes.size()))),
        driver_(stepper_, misfit_, spec.checkpoint_options),
        initial_state_(spec.initial_state),
        y0_from_parameters_(initial_state_.size() == 0 && has_parameter_initial_state(problem)) {
    if (initial_state_.size() == 0) {
      if (!y0_from_parameters_) {
        if constexpr (requires { problem.default_initial_state(); })
          initial_state_ = problem.default_initial_state();
        else
          fail<InvalidArgument>(
              "rwd::fit: no initial state: give FitSpec::initial_state, or a model with "
              "initial_state(p, y0)");
      }
    } else {
      if (initial_state_.size() != problem.state_size())
        fail<InvalidArgument>("rwd::fit: FitSpec::initial_state has ", initial_state_.size(),
                              " components but the model has ", problem.state_size(), " states");
      if (!initial_state_.allFinite())
        fail<InvalidArgument>("rwd::fit: FitSpec::initial_state contains NaN or Inf");
    }
  }

  // The full θ the fit starts from: FitSpec::parameters, or the problem's defaults.
  Eigen::VectorXd base_parameters(const FitSpec& spec) const {
    if (spec.parameters.size() > 0) {
      if (spec.parameters.size() != problem_.parameter_size())
        fail<InvalidArgument>("rwd::fit: FitSpec::parameters has ", spec.parameters.size(),
                              " values but the model has ", problem_.parameter_size(),
                              " parameters");
      return spec.parameters;
    }
    if constexpr (has_default_parameters<P>()) {
      return problem_.default_parameters();
    } else {
      fail<InvalidArgument>(
          "rwd::fit: the model has no default parameters: give FitSpec::parameters");
    }
  }

  // The y0 of a run with θ (when y0 is not estimated itself): given, default, or initial_state(θ).
  Eigen::VectorXd initial_state(const Eigen::VectorXd& theta) const {
    if constexpr (InitialStateFromParameters<P>)
      if (y0_from_parameters_) return problem_.initial_state(theta);
    return initial_state_;
  }

  // J(θ) (σ = 1) and dJ/dθ, through y0 too when the initial state depends on θ.
  FitGradient gradient(const Eigen::VectorXd& theta) {
    auto run = driver_.run(initial_state(theta), theta, plan_);
    FitGradient out{run.loss, std::move(run.grad_theta), Eigen::VectorXd(), std::move(run.summary)};
    if constexpr (InitialStateFromParameters<P>)
      if (y0_from_parameters_)
        out.grad_theta = problem_.total_parameter_gradient(theta, run.grad_y0, out.grad_theta);
    return out;
  }

  // J and its gradients with respect to θ and y0 of a run from a y0 estimated in its own right
  // (FitSpec::fit_initial_state): θ reaches J only through the right-hand side.
  FitGradient gradient_from(const Eigen::VectorXd& theta, const Eigen::VectorXd& y0) {
    auto run = driver_.run(y0, theta, plan_);
    return {run.loss, std::move(run.grad_theta), std::move(run.grad_y0), std::move(run.summary)};
  }

  // The states at every data time from y0 with θ: times × states.
  Eigen::MatrixXd states_at_data(const Eigen::VectorXd& y0, const Eigen::VectorXd& theta) {
    const ObservedField all{"all", 0, problem_.state_size()};
    return observe_trajectory(stepper_, y0, theta, grid_.data_steps, all, 0.0, 0).transpose();
  }

  Index measured() const { return measured_; }
  const DataStepGrid& grid() const { return grid_; }
  const P& problem() const { return problem_; }

 private:
  static CheckpointPlan plan_for(const FitSpec& spec, Index steps) {
    if (!spec.plan) return plan_checkpoints(spec.checkpoints, steps);
    if (spec.plan->steps != steps)
      fail<InvalidArgument>("rwd::fit: FitSpec::plan is for ", spec.plan->steps,
                            " steps but the run to the last data time takes ", steps);
    return *spec.plan;
  }

  const P& problem_;
  std::vector<Index> components_;
  const DataStepGrid& grid_;
  S& stepper_;
  Index measured_ = 0;
  Objective<EigenBackend> misfit_;
  CheckpointPlan plan_;
  CheckpointedAdjoint<S> driver_;
  Eigen::VectorXd initial_state_;
  bool y0_from_parameters_ = false;
};

// The joint (θ, y0) uncertainty of a fit that estimated y0 too, and θ's alone otherwise, at unit
// σ; NaN when the fit failed or `wanted` is false.
template <class P, class S>
ParameterUncertainty unit_uncertainty(DataFitSetup<P, S>& setup, const FitResult& fitted,
                                      const FitOptions& options, bool wanted) {
  const Index p = fitted.theta.size(), n = fitted.initial_state.size();
  const Index estimated =
      static_cast<Index>(options.fitted.size() + options.fitted_initial_state.size());
  ParameterUncertainty unit;
  unit.covariance =
      Eigen::MatrixXd::Constant(estimated, estimated, std::numeric_limits<double>::quiet_NaN());
  unit.standard_errors =
      Eigen::VectorXd::Constant(estimated, std::numeric_limits<double>::quiet_NaN());
  if (fitted.failed || !wanted) return unit;
  if (options.fitted_initial_state.empty())
    return uncertainty_from_gradients(
        [&](const Eigen::VectorXd& theta) { return setup.gradient(theta).grad_theta; },
        fitted.theta, options.fitted);
  std::vector<Index> joint = options.fitted;
  for (const Index i : options.fitted_initial_state) joint.push_back(p + i);
  Eigen::VectorXd z(p + n);
  z << fitted.theta, fitted.initial_state;
  return uncertainty_from_gradients(
      [&](const Eigen::VectorXd& at) {
        FitGradient g = setup.gradient_from(at.head(p).eval(), at.tail(n).eval());
        Eigen::VectorXd both(p + n);
        both << g.grad_theta, g.grad_y0;
        return both;
      },
      z, joint);
}

// rwd::fit (below) with the setup made.
template <class P, class S>
DataFitResult fit_with(DataFitSetup<P, S>& setup, const FitSpec& spec) {
  auto resolved =
      resolve_parameters(spec, parameter_names_of(setup.problem()), setup.base_parameters(spec));
  const Eigen::VectorXd y0_start = setup.initial_state(resolved.theta_start);
  if (spec.fit_initial_state)
    for (Index i = 0; i < y0_start.size(); ++i) {
      resolved.options.fitted_initial_state.push_back(i);
      resolved.options.initial_state_bounds.push_back({});
    }
  const Index estimated = static_cast<Index>(resolved.options.fitted.size() +
                                             resolved.options.fitted_initial_state.size());
  if (spec.sigma == 0.0 && setup.measured() <= estimated)
    detail::fail<InvalidArgument>("rwd::fit: ", setup.measured(), " measured data for ", estimated,
                                  " estimated quantities leave no degree of freedom to estimate "
                                  "σ; give FitSpec::sigma");
  resolved.options.on_iteration = spec.on_iteration;
  const auto gradient = [&](const Eigen::VectorXd& theta, const Eigen::VectorXd& y0) {
    return spec.fit_initial_state ? setup.gradient_from(theta, y0) : setup.gradient(theta);
  };
  FitResult fitted =
      detail::fit_with_initial_state(gradient, resolved.theta_start, y0_start, resolved.options);
  if (!spec.fit_initial_state) {
    // The optimiser reports the start's y0; a y0 from initial_state(θ) moved with θ.
    fitted.initial_state = setup.initial_state(fitted.theta);
    for (FitIteration& it : fitted.history) it.initial_state = setup.initial_state(it.theta);
  }
  // A fit that a non-finite run or the optimiser ended keeps its best θ and says why in
  // `status`; its standard errors are NaN rather than computed around a point that is no fit.
  const ParameterUncertainty unit =
      detail::unit_uncertainty(setup, fitted, resolved.options, spec.uncertainty);
  DataFitResult result =
      detail::data_fit_result(resolved, fitted, unit, setup.measured(), spec.sigma);
  result.steps = static_cast<Index>(setup.grid().step_sizes.size());
  result.data_steps = setup.grid().data_steps;
  return result;
}

}  // namespace detail

// Fits spec.fit's parameters of `problem` to `data` (see the top of this file).
template <class P>
DataFitResult fit(const P& problem, const TimeSeries& data, const FitSpec& spec) {
  if (!(spec.sigma >= 0.0) || !std::isfinite(spec.sigma))
    detail::fail<InvalidArgument>("rwd::fit: FitSpec::sigma = ", spec.sigma,
                                  " must be finite and > 0 (or 0: estimated from the residuals)");
  const DataStepGrid grid = data_step_grid(spec.t0, data.times, spec.max_step);
  return detail::with_fit_stepper(problem, spec, grid, [&](auto& stepper) {
    detail::DataFitSetup setup(problem, stepper, grid, data, spec);
    return detail::fit_with(setup, spec);
  });
}

// The states at `times` of the run fit() makes with spec (its t0, initial state, method and
// steps) at θ — the model's curve for plots and held-out points: times × states. y0: that run's
// start (empty: spec.initial_state, else initial_state(θ), else the default initial state).
// `times` as fit() takes data times (finite, strictly increasing, >= t0); the steps are cut as
// fit() cuts them, so at the data times themselves this repeats fit()'s run step for step (other
// times cut the intervals differently, a difference of the integrator's error).
template <class P>
Eigen::MatrixXd predict(const P& problem, const std::vector<double>& times, const FitSpec& spec,
                        const Eigen::VectorXd& theta, const Eigen::VectorXd& y0 = {}) {
  TimeSeries at;
  at.times = times;
  at.column_indices = {0};
  at.values = Eigen::MatrixXd::Zero(static_cast<Index>(times.size()), 1);
  FitSpec run = spec;
  run.plan.reset();
  run.checkpoints = PlanRequest::store_all();
  if (theta.size() != problem.parameter_size())
    detail::fail<InvalidArgument>("rwd::predict: θ has ", theta.size(),
                                  " values but the model has ", problem.parameter_size(),
                                  " parameters");
  if (y0.size() != 0 && y0.size() != problem.state_size())
    detail::fail<InvalidArgument>("rwd::predict: y0 has ", y0.size(), " values but the model has ",
                                  problem.state_size(), " states");
  const DataStepGrid grid = data_step_grid(run.t0, at.times, run.max_step);
  return detail::with_fit_stepper(problem, run, grid, [&](auto& stepper) {
    detail::DataFitSetup setup(problem, stepper, grid, at, run);
    return setup.states_at_data(y0.size() ? y0 : setup.initial_state(theta), theta);
  });
}

}  // namespace rwd
