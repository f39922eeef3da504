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
// Adaptive steps instead (spec.rtol > 0, with spec.atol): for a stiff model whose data span
// decades of time, or a transient that fixed steps would have to resolve everywhere. The
// method's embedded error estimate and PI controller choose the steps to these tolerances
// (rwd::StepControl::adaptive from t0 to the last data time), every data time a stop time the run
// lands on exactly (rwd::adapted_step_grid). Steps that moved with θ would make J jump by the
// tolerance's order wherever the controller changes its mind, which stalls a line search near
// the minimum and leaves the Hessian meaningless; so the steps are chosen at the fit's start θ
// and then held (prescribed, as above) while the optimiser moves, and J is smooth. When it
// stops, the steps are chosen again at the estimate; if they differ, the fit goes on from there
// with the new steps, up to detail::kAdaptiveRounds (8) rounds, so that the estimate minimises J
// on the steps its own θ chooses (DataFitResult::step_rounds says how many rounds ran, and
// steps_settled whether the last choice changed nothing). A round that fails — a run on the held
// steps that cannot go on at a θ far from where they were chosen — goes on the same way from its
// best θ. Every gradient is the exact discrete adjoint of the
// steps it ran; max_step is not used.
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
// A parameter the data hardly determine (its standard error above its magnitude; no standard
// errors at all) is warned about (rwd::warn_if_poorly_determined, rewind/warning.hpp's handler).
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
// another number of steps than the run's; rtol < 0 or not finite, or rtol > 0 with atol <= 0
// or a method without an embedded error estimate (adaptive steps).
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
#include "rewind/adjoint/run_checks.hpp"
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
  // Adaptive steps (see the top): the error controller's tolerances; rtol = 0: the fixed steps of
  // max_step.
  double rtol = 0.0;
  double atol = 1e-9;
  double sigma = 0.0;  // the data's noise level, > 0; 0: estimated from the residuals
  PlanRequest checkpoints = PlanRequest::store_all();  // the plan of every gradient run
  CheckpointOptions checkpoint_options;                // stores, threads, drift policy
  // The plan of every gradient run, when the caller has made one (a budget in bytes, the
  // stage-aware chooser, measured disk costs): it must be for the run's steps
  // (rwd::data_step_grid(t0, times, max_step).step_sizes.size()). Empty: checkpoints' plan.
  std::optional<CheckpointPlan> plan;
  // The plan of every gradient run for its number of steps, when the caller plans per run (with
  // adaptive steps the rounds' step counts differ; a plan of a fixed count is refused there).
  // Set: used instead of `plan` and `checkpoints`.
  Planner planner;
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
  int optimizer_code = 0;  // NLopt's nlopt_result (0 when a run that failed stopped the fit)
  bool uncertainty_failed = false;  // a run of the standard errors' differences failed (status)
  Index steps = 0;                  // steps of every run (adaptive: of the last round's)
  std::vector<Index> data_steps;    // the step of each data time
  // Adaptive steps: the rounds of choosing steps and fitting on them (1 for fixed steps), and
  // whether the steps chosen again at the estimate were the ones it was fitted on.
  int step_rounds = 1;
  bool steps_settled = true;
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
  std::vector<double> times;      // the data times themselves
};
DataStepGrid data_step_grid(double t0, const std::vector<double>& times, double max_step);

namespace detail {
// The step h from t that lands on `target` exactly: t + h rounds to target (InvalidArgument when
// no double does).
double step_onto(double t, double target);
// Refuses a time not finite, before t0 or not after the one before it (naming the row), or no
// time after t0.
void require_data_times(double t0, const std::vector<double>& times);
}  // namespace detail

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

// Whether P's initial_state(θ) may be called: a templated model without one still has the
// member (rwd::AutoProblem), which refuses it at compile time.
template <class P>
constexpr bool initial_state_callable() {
  if constexpr (!InitialStateFromParameters<P>)
    return false;
  else if constexpr (requires { P::kHasInitialState; })
    return P::kHasInitialState;
  else
    return true;
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

// Whether spec asks for adaptive steps (FitSpec::rtol > 0); refuses tolerances that mean nothing.
inline bool adaptive_steps(const FitSpec& spec) {
  if (!(spec.rtol >= 0.0) || !std::isfinite(spec.rtol))
    fail<InvalidArgument>("rwd::fit: FitSpec::rtol = ", spec.rtol,
                          " must be finite and >= 0 (0: fixed steps of max_step)");
  if (spec.rtol > 0.0 && !(spec.atol > 0.0 && std::isfinite(spec.atol)))
    fail<InvalidArgument>("rwd::fit: FitSpec::atol = ", spec.atol,
                          " must be finite and > 0 with adaptive steps (rtol = ", spec.rtol, ")");
  if (spec.rtol > 0.0 && spec.plan && !spec.planner)
    fail<InvalidArgument>(
        "rwd::fit: FitSpec::plan is for a fixed number of steps, and adaptive steps (rtol > 0) "
        "change theirs from round to round; give FitSpec::planner or checkpoints");
  return spec.rtol > 0.0;
}

// The full θ a fit starts from: FitSpec::parameters, or the problem's defaults.
template <class P>
Eigen::VectorXd base_parameters(const P& problem, const FitSpec& spec) {
  if (spec.parameters.size() > 0) {
    if (spec.parameters.size() != problem.parameter_size())
      fail<InvalidArgument>("rwd::fit: FitSpec::parameters has ", spec.parameters.size(),
                            " values but the model has ", problem.parameter_size(), " parameters");
    return spec.parameters;
  }
  if constexpr (has_default_parameters<P>()) {
    return problem.default_parameters();
  } else {
    fail<InvalidArgument>(
        "rwd::fit: the model has no default parameters: give FitSpec::parameters");
  }
}

// Where a fit's runs start (see the top): `given` (FitSpec::initial_state, checked), else the
// problem's initial_state(θ), else its default initial state.
template <class P>
class FitStart {
 public:
  FitStart(const P& problem, Eigen::VectorXd given)
      : problem_(problem),
        given_(std::move(given)),
        from_parameters_(given_.size() == 0 && has_parameter_initial_state(problem)) {
    if (given_.size() == 0) {
      if (!from_parameters_) {
        if constexpr (requires { problem.default_initial_state(); })
          given_ = problem.default_initial_state();
        else
          fail<InvalidArgument>(
              "rwd::fit: no initial state: give FitSpec::initial_state, or a model with "
              "initial_state(p, y0)");
      }
    } else {
      if (given_.size() != problem.state_size())
        fail<InvalidArgument>("rwd::fit: FitSpec::initial_state has ", given_.size(),
                              " components but the model has ", problem.state_size(), " states");
      if (!given_.allFinite())
        fail<InvalidArgument>("rwd::fit: FitSpec::initial_state contains NaN or Inf");
    }
  }
  // y0 of a run with θ.
  Eigen::VectorXd at(const Eigen::VectorXd& theta) const {
    if constexpr (initial_state_callable<P>())
      if (from_parameters_) return problem_.initial_state(theta);
    return given_;
  }
  // Whether y0 moves with θ (initial_state(θ)).
  bool from_parameters() const { return from_parameters_; }

 private:
  const P& problem_;
  Eigen::VectorXd given_;
  bool from_parameters_ = false;
};

// The stepper of spec.method for `problem` under `control` (see FitSpec::method), handed to f.
// Refuses bdf, a stochastic scheme and an unknown name (naming the methods a fit takes).
template <class P, class F>
decltype(auto) with_method_stepper(const P& problem, const FitSpec& spec,
                                   const StepControl& control, F&& f) {
  static_assert(std::is_same_v<typename P::Backend, EigenBackend>,
                "rwd::fit works on host (Eigen) problems");
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

// The steps one adaptive run of spec.method (spec.rtol, spec.atol) from y0 at t0 with θ accepts,
// to the last of `times`, landing on every one of them, as a grid the fit replays: each size
// adjusted (detail::step_onto) so that t_n + h_n is the run's t_{n+1} exactly — the adaptive
// run's steps, each to an ulp, landing on every data time exactly. A run that turns non-finite
// stops with rwd::NumericalError naming the step and the time; one the controller cannot continue
// with rwd::SolverError.
template <class P>
DataStepGrid adapted_step_grid(const P& problem, const FitSpec& spec,
                               const std::vector<double>& times, const Eigen::VectorXd& y0,
                               const Eigen::VectorXd& theta) {
  detail::require_data_times(spec.t0, times);
  StepControl control = StepControl::adaptive(spec.t0, times.back(), spec.rtol, spec.atol);
  for (const double t : times)
    if (t > spec.t0 && t < times.back()) control.stop_times.push_back(t);
  return with_method_stepper(problem, spec, control, [&](auto& stepper) {
    DataStepGrid grid;
    grid.times = times;
    Eigen::VectorXd y = y0;
    Carry carry = stepper.initial_carry(y, theta);
    auto next_time = times.begin();
    for (; next_time != times.end() && *next_time == spec.t0; ++next_time)
      grid.data_steps.push_back(0);
    while (!stepper.finished(carry)) {
      const double t = carry.t;
      stepper.step(y, carry, theta);
      require_finite_state<EigenBackend>(y, carry);
      grid.step_sizes.push_back(step_onto(t, carry.t));
      if (next_time != times.end() && carry.t == *next_time) {
        grid.data_steps.push_back(carry.step);
        ++next_time;
      }
    }
    if (next_time != times.end())
      fail<SolverError>("rwd::fit: the adaptive run ended at t = ", carry.t,
                        " without landing on the data time ", *next_time);
    return grid;
  });
}

// Calls f(stepper) with the stepper of spec.method for `problem`, taking `grid`'s steps from
// spec.t0 (see FitSpec::method), and returns what f returns; the stepper lives for the call.
// Refuses bdf, a stochastic scheme and an unknown name (naming the methods a fit takes).
template <class P, class F>
decltype(auto) with_fit_stepper(const P& problem, const FitSpec& spec, const DataStepGrid& grid,
                                F&& f) {
  return with_method_stepper(problem, spec, StepControl::prescribed(spec.t0, grid.step_sizes),
                             std::forward<F>(f));
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
        start_(problem, spec.initial_state) {}

  // The full θ the fit starts from: FitSpec::parameters, or the problem's defaults.
  Eigen::VectorXd base_parameters(const FitSpec& spec) const {
    return detail::base_parameters(problem_, spec);
  }

  // The y0 of a run with θ (when y0 is not estimated itself): given, default, or initial_state(θ).
  Eigen::VectorXd initial_state(const Eigen::VectorXd& theta) const { return start_.at(theta); }

  // J(θ) (σ = 1) and dJ/dθ, through y0 too when the initial state depends on θ.
  FitGradient gradient(const Eigen::VectorXd& theta) {
    auto run = driver_.run(initial_state(theta), theta, plan_);
    FitGradient out{run.loss, std::move(run.grad_theta), Eigen::VectorXd(), std::move(run.summary)};
    if constexpr (initial_state_callable<P>())
      if (start_.from_parameters())
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
    if (spec.planner) return spec.planner(steps);
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
  FitStart<P> start_;
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
  // A run of the Hessian's differences that cannot go on (a Newton iteration a little off the
  // fit) leaves the standard errors NaN and says so; the fit itself stands.
  std::string uncertainty_failure;
  ParameterUncertainty unit;
  try {
    unit = detail::unit_uncertainty(setup, fitted, resolved.options, spec.uncertainty);
  } catch (const NumericalError& e) {
    uncertainty_failure = e.what();
  } catch (const SolverError& e) {
    uncertainty_failure = e.what();
  }
  if (!uncertainty_failure.empty())
    unit = detail::unit_uncertainty(setup, fitted, resolved.options, false);
  DataFitResult result =
      detail::data_fit_result(resolved, fitted, unit, setup.measured(), spec.sigma);
  if (!uncertainty_failure.empty()) {
    result.uncertainty_failed = true;
    result.status +=
        "; no standard errors: a run of their differences failed (" + uncertainty_failure + ")";
  }
  result.steps = static_cast<Index>(setup.grid().step_sizes.size());
  result.data_steps = setup.grid().data_steps;
  return result;
}

// Fits spec.fit's parameters of `problem` to `data` on `grid`'s steps.
template <class P>
DataFitResult fit_on(const P& problem, const TimeSeries& data, const FitSpec& spec,
                     const DataStepGrid& grid) {
  return with_fit_stepper(problem, spec, grid, [&](auto& stepper) {
    DataFitSetup setup(problem, stepper, grid, data, spec);
    return fit_with(setup, spec);
  });
}

// `result` carried on by a later round's: its history after the earlier rounds' (numbered on
// from them, as the progress lines are), the counts summed, the rest the round's.
inline void join_round(DataFitResult& joined, DataFitResult round) {
  std::vector<FitIteration> history = std::move(joined.history);
  for (FitIteration& it : round.history) {
    it.iteration += joined.iterations + 1;
    it.evaluations += joined.evaluations;
    history.push_back(std::move(it));
  }
  const int iterations = joined.iterations + round.iterations;
  const int evaluations = joined.evaluations + round.evaluations;
  const int rounds = joined.step_rounds + 1;
  joined = std::move(round);
  joined.history = std::move(history);
  joined.iterations = iterations;
  joined.evaluations = evaluations;
  joined.step_rounds = rounds;
}

// The rounds of an adaptive fit (see the top of this file): steps chosen at θ, a fit on them, and
// again from the estimate while the steps it chooses differ.
inline constexpr int kAdaptiveRounds = 8;

// Whether a fit lowered J below its start's by more than the relative tolerance.
inline bool lowered_j(const DataFitResult& result, double relative_tolerance) {
  if (result.history.empty()) return false;
  return result.residual_sum_of_squares / 2.0 <
         result.history.front().loss * (1.0 - relative_tolerance);
}

template <class P>
DataFitResult fit_adaptive(const P& problem, const TimeSeries& data, const FitSpec& spec) {
  const FitStart<P> start(problem, spec.initial_state);
  FitSpec round = spec;
  const ResolvedParameters first =
      resolve_parameters(spec, parameter_names_of(problem), base_parameters(problem, spec));
  Eigen::VectorXd theta = first.theta_start;
  Eigen::VectorXd y0 = start.at(theta);
  DataStepGrid grid = adapted_step_grid(problem, spec, data.times, y0, theta);
  DataFitResult joined;
  for (int r = 1;; ++r) {
    // Progress lines count on from the earlier rounds.
    if (spec.on_iteration && r > 1)
      round.on_iteration = [&spec, iterations = joined.iterations + 1,
                            evaluations = joined.evaluations](const FitIteration& it) {
        FitIteration shifted = it;
        shifted.iteration += iterations;
        shifted.evaluations += evaluations;
        spec.on_iteration(shifted);
      };
    DataFitResult result = fit_on(problem, data, round, grid);
    const bool optimiser_failed = result.failed && result.optimizer_code != 0;
    if (r > 1 && optimiser_failed && !lowered_j(result, spec.relative_tolerance)) {
      // A later round starts at the previous estimate. When its optimiser could not lower J from
      // there at all (a line search lost in J's round-off at the minimum), that estimate is the
      // minimum on these steps: its standard errors and status from one evaluation there.
      FitSpec at_estimate = round;
      at_estimate.max_evaluations = 1;
      at_estimate.on_iteration = {};
      result = fit_on(problem, data, at_estimate, grid);
      result.converged = true;
      result.status =
          "the estimate minimises J on the steps it chooses (a round from it could "
          "not lower J further)";
    }
    if (r == 1)
      joined = std::move(result);
    else
      join_round(joined, std::move(result));
    theta = joined.theta;  // the best θ of a failed round
    y0 = joined.initial_state;
    DataStepGrid again;
    std::string unchosen;
    try {
      again = adapted_step_grid(problem, spec, data.times, y0, theta);
    } catch (const NumericalError& e) {
      unchosen = e.what();
    } catch (const SolverError& e) {
      unchosen = e.what();
    }
    if (!unchosen.empty()) {
      joined.failed = true;
      joined.converged = false;
      joined.status = "choosing the steps again at the estimate: " + unchosen;
      return joined;
    }
    joined.steps_settled = again.step_sizes == grid.step_sizes;
    // A round that failed — a run on the held steps that could not go on (a Newton iteration at
    // a θ far from where they were chosen) or a line search that could not lower J — goes on
    // from its best θ on the steps chosen there, while rounds remain and those steps differ.
    if (joined.steps_settled || r == kAdaptiveRounds) return joined;
    // Go on from the estimate: every parameter (fitted or held) at its value there, y0 too when
    // it is estimated, on the steps the estimate chose.
    round.parameters = theta;
    for (std::size_t i = 0; i < round.fit.size(); ++i)
      round.fit[i].start = theta[first.options.fitted[i]];
    if (spec.fit_initial_state) round.initial_state = y0;
    grid = std::move(again);
  }
}

}  // namespace detail

// Fits spec.fit's parameters of `problem` to `data` (see the top of this file).
template <class P>
DataFitResult fit(const P& problem, const TimeSeries& data, const FitSpec& spec) {
  if (!(spec.sigma >= 0.0) || !std::isfinite(spec.sigma))
    detail::fail<InvalidArgument>("rwd::fit: FitSpec::sigma = ", spec.sigma,
                                  " must be finite and > 0 (or 0: estimated from the residuals)");
  DataFitResult result =
      detail::adaptive_steps(spec)
          ? detail::fit_adaptive(problem, data, spec)
          : detail::fit_on(problem, data, spec, data_step_grid(spec.t0, data.times, spec.max_step));
  if (spec.uncertainty && !result.failed && !result.uncertainty_failed) {
    const Index p = result.estimates.size();
    warn_if_poorly_determined(result.names, result.estimates, result.standard_errors,
                              result.covariance.topLeftCorner(p, p), result.positive_definite);
  }
  return result;
}

// The grid of `spec`'s runs at θ for `times`: max_step's fixed steps, or the steps an adaptive run
// from y0 (empty: the fit's start at θ) chooses.
template <class P>
DataStepGrid fit_step_grid(const P& problem, const std::vector<double>& times, const FitSpec& spec,
                           const Eigen::VectorXd& theta, const Eigen::VectorXd& y0 = {}) {
  if (!detail::adaptive_steps(spec)) return data_step_grid(spec.t0, times, spec.max_step);
  const Eigen::VectorXd start =
      y0.size() ? y0 : detail::FitStart<P>(problem, spec.initial_state).at(theta);
  return detail::adapted_step_grid(problem, spec, times, start, theta);
}

// The states at `times` of the run fit() makes with spec (its t0, initial state, method and
// steps) at θ — the model's curve for plots and held-out points: times × states. y0: that run's
// start (empty: spec.initial_state, else initial_state(θ), else the default initial state).
// `times` as fit() takes data times (finite, strictly increasing, >= t0); the steps are cut as
// fit() cuts them, so at the data times themselves this repeats fit()'s run step for step (other
// times cut the intervals differently, a difference of the integrator's error). With adaptive
// steps, the steps an adaptive run at θ landing on `times` chooses.
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
  const DataStepGrid grid = fit_step_grid(problem, at.times, run, theta, y0);
  return detail::with_fit_stepper(problem, run, grid, [&](auto& stepper) {
    detail::DataFitSetup setup(problem, stepper, grid, at, run);
    return setup.states_at_data(y0.size() ? y0 : setup.initial_state(theta), theta);
  });
}

}  // namespace rwd
