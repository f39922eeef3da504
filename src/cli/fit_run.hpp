// src/cli/fit_run.hpp — what `rewind fit PROBLEM` computes: the named parameters of a built-in
// problem estimated from an observation file (rewind generate), every gradient by the
// checkpointed adjoint within the memory the checkpointing flags allow.
//
//   rwd::cli::FitCommandOptions options;
//   options.problem = "gray_scott";
//   options.observations = "gs.h5";
//   options.fit = "F,k";
//   options.start = "F=0.045,k=0.055";
//   options.checkpoint.snapshots = "20";
//   rwd::cli::FitReport report = rwd::cli::run_fit(rwd::cli::resolve_fit_settings(options));
//
// The run repeats the file's: problem, size, method (with its recorded tolerances, linear solver
// and Newton tolerances), step, horizon and initial state — unless --method and its flags name
// another method or settings, or --dt another step on which every observed time falls. Fitted
// parameters start at --start (else the problem's defaults) within --bounds (else the model's
// domain: [0, inf) for rates and diffusions, unbounded otherwise); the others keep the file's
// values unless --parameters gives them; --log-scale names fitted parameters the optimiser moves
// in log θ (rwd::FitOptions::log_scale). The misfit is J = 1/2 sum_k |H y_k - d_k|^2 / sigma^2
// with sigma = --sigma, else the file's noise (1 for noise-free data). Without checkpointing
// flags every state is kept (the store-all schedule).
//
// --fit-initial-state estimates y0 too (starting from the file's initial state). A measured
// series (--data FILE.csv) is fitted by data_fit_run.hpp instead, through rwd::fit.
//
// Free of CLI11/JSON.
#pragma once

#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint_flags.hpp"
#include "gradient_run.hpp"
#include "observation_run.hpp"
#include "problem_parameters.hpp"
#include "problem_registry.hpp"
#include "rewind/error.hpp"
#include "rewind/fit/fit_parameters.hpp"
#include "rewind/fit/misfit.hpp"
#include "rewind/fit/observations.hpp"
#include "rewind/fit/parameter_uncertainty.hpp"
#include "run_report.hpp"
#include "run_settings.hpp"

namespace rwd::cli {

// The options of `rewind fit` as given; std::nullopt = not given.
struct FitCommandOptions {
  std::string problem;       // PROBLEM: must be the observation file's
  std::string model;         // --model PATH: a model plugin instead of PROBLEM
  std::optional<Index> n;    // --n: when given, must be the file's
  std::string observations;  // --observations FILE.h5
  std::string data;          // --data FILE.csv: a measured series instead
  double validation = 0.0;   // --validation F: hold out the last fraction (--data)
  // --dt: the longest step of the run (--data); with --observations the step to refit on (every
  // observed time must be a multiple of it; default the file's).
  std::optional<double> dt;
  // --method, --rtol, --atol, --linear-solver, --newton-rtol, --newton-atol as `rewind run`
  // reads them (method_flag_options.hpp; its other fields are unused). With --observations:
  // the method to refit with (empty: the file's), and its settings (not given: the file's when
  // the method is the file's, else the method's defaults). With --data: an explicit method.
  RunOptions method_flags;
  std::optional<std::string> log_scale;   // --log-scale NAME,...: fitted in log θ
  std::optional<double> t0;               // --t0: the time of the initial state (--data)
  bool fit_initial_state = false;         // --fit-initial-state: estimate y0 too
  std::string fit;                        // --fit NAME,... (required)
  std::optional<std::string> start;       // --start NAME=VALUE,...
  std::optional<std::string> bounds;      // --bounds NAME=LO:HI,...
  std::optional<std::string> parameters;  // --parameters NAME=VALUE,... (the fixed ones)
  std::optional<double> sigma;            // --sigma
  int max_evaluations = 60;               // --max-evaluations
  int restarts = 0;                       // --restarts R (rwd::FitOptions::restarts)
  bool uncertainty = true;                // false: --no-uncertainty (skips 2 gradients a parameter)
  int stages = 1;                         // --stages S: fit growing horizons, each from the last
  bool progress = false;                  // progress bar of each gradient (a terminal)
  CheckpointFlags checkpoint;             // as in run; --steps is the file's
};

struct FitSettings {
  Observations observations;       // what is fitted
  bool fit_initial_state = false;  // y0 estimated too, unbounded, from observations.initial_state
  RunSettings run;                 // the file's problem, size, method, step and horizon
  std::vector<NamedParameter> fitted;     // with their start values
  std::vector<ParameterBounds> bounds;    // one per fitted parameter
  std::vector<NamedParameter> log_scale;  // fitted in log θ (FitOptions::log_scale)
  Eigen::VectorXd theta_start;            // the whole θ the fit starts from
  double sigma = 1.0;
  int max_evaluations = 60;
  int restarts = 0;  // after NLopt's optimality test, from the best θ (FitOptions::restarts)
  bool uncertainty = true;  // standard errors from the Hessian at the fit
  // Continuation over the horizon: stage s fits the observations up to s/stages of the last
  // observed step, starting where stage s − 1 ended; the last stage fits them all. Long horizons
  // of pattern-forming or chaotic models make J rough far from the optimum; short ones do not,
  // and their optimum is a start in the right basin for the next.
  int stages = 1;
};

struct FitReport {
  FitSettings settings;
  FitResult result;
  std::vector<std::string> parameter_names;
  Index state_size = 0;
  CheckpointReport checkpoint;  // the plan every gradient ran under
  // One entry per stage of a continuation (one for a plain fit): horizon and observations fitted,
  // where it ended. `result` is the last stage's, with the histories of all stages joined.
  struct Stage {
    Index steps = 0;
    Index observations = 0;
    int iterations = 0;
    int evaluations = 0;
    double loss = 0.0;
    Eigen::VectorXd theta;
    std::string stop_reason;
  };
  std::vector<Stage> stages;
  std::vector<int> history_stage;  // the stage (1-based) of each entry of result.history
  // Standard errors at the fit (rwd::parameter_uncertainty); empty when skipped or failed. With
  // --fit-initial-state: the fitted parameters', then y0's, from one joint Hessian.
  std::optional<ParameterUncertainty> uncertainty;
  // H y_k at the observed steps (columns), with θ at the start and at the fit: the pictures'.
  // Empty when that run does not stay finite (a start far from the data, a failed fit).
  Eigen::MatrixXd start_prediction;
  Eigen::MatrixXd fit_prediction;
  double seconds = 0.0;
};

namespace detail {

// "LO:HI" with either side a number, -inf/inf, or empty (unbounded).
inline ParameterBounds parse_bounds_text(const char* flag, const std::string& name,
                                         const std::string& text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos)
    rwd::detail::fail<InvalidArgument>(flag, ": ", name, " = '", text,
                                       "' is not LO:HI (e.g. F=0.01:0.1)");
  const auto side = [&](std::string part, double unbounded) {
    part = trimmed(part);
    if (part.empty()) return unbounded;
    if (part == "inf" || part == "+inf") return std::numeric_limits<double>::infinity();
    if (part == "-inf") return -std::numeric_limits<double>::infinity();
    const std::optional<double> value = read_number(part);
    if (!value)
      rwd::detail::fail<InvalidArgument>(flag, ": ", name, " bound '", part, "' is not a number");
    return *value;
  };
  ParameterBounds b{side(text.substr(0, colon), -std::numeric_limits<double>::infinity()),
                    side(text.substr(colon + 1), std::numeric_limits<double>::infinity())};
  if (!(b.lower < b.upper))
    rwd::detail::fail<InvalidArgument>(flag, ": ", name, " = ", text,
                                       " is empty: the lower bound must be below the upper");
  return b;
}

// rwd::warn_if_poorly_determined over the fitted parameters of an observation fit (the
// uncertainty's y0 part, when y0 was fitted too, left out).
inline void warn_if_poorly_determined(const FitSettings& settings, const FitResult& result,
                                      const ParameterUncertainty& uncertainty) {
  const auto p = static_cast<Index>(settings.fitted.size());
  std::vector<std::string> names;
  Eigen::VectorXd estimates(p);
  for (Index i = 0; i < p; ++i) {
    const NamedParameter& fitted = settings.fitted[static_cast<std::size_t>(i)];
    names.push_back(fitted.name);
    estimates[i] = result.theta[fitted.index];
  }
  rwd::warn_if_poorly_determined(names, estimates, uncertainty.standard_errors.head(p),
                                 uncertainty.covariance.topLeftCorner(p, p),
                                 uncertainty.positive_definite);
}

// The bounds a parameter has without --bounds: its model's domain.
inline ParameterBounds domain_bounds(const ProblemInfo& info, const std::string& name) {
  const double inf = std::numeric_limits<double>::infinity();
  return info.parameter_domain(name) == ParameterDomain::any ? ParameterBounds{-inf, inf}
                                                             : ParameterBounds{0.0, inf};
}

}  // namespace detail

namespace detail {

// The method a fit of `observations` runs: the flags' (--method and its settings), where a flag
// is not given the file's — its method, and its recorded tolerances, linear solver and Newton
// tolerances when the method is the file's (another method starts from its own defaults).
inline RunOptions fit_method_options(const RunOptions& flags, const Observations& observations) {
  RunOptions run;
  run.method = flags.method.empty() ? observations.method : flags.method;
  run.rtol = flags.rtol;
  run.atol = flags.atol;
  run.linear_solver = flags.linear_solver;
  run.newton_rtol = flags.newton_rtol;
  run.newton_atol = flags.newton_atol;
  run.max_substeps = flags.max_substeps;
  if (run.method != observations.method) return run;
  const MethodSettings& recorded = observations.method_settings;
  const auto recorded_value = [](double value) {
    return value > 0.0 ? std::optional<double>(value) : std::nullopt;
  };
  if (!run.rtol) run.rtol = recorded_value(recorded.rtol);
  if (!run.atol) run.atol = recorded_value(recorded.atol);
  if (run.linear_solver.empty()) run.linear_solver = recorded.linear_solver;
  if (!run.newton_rtol) run.newton_rtol = recorded_value(recorded.newton_rtol);
  if (!run.newton_atol) run.newton_atol = recorded_value(recorded.newton_atol);
  return run;
}

// `observations` on steps of `dt` (--dt with --observations: refit with another step, or BDF's
// intervals as steps of another method): observed step k, at time k · dt_file, becomes step
// k · dt_file / dt, which must be a whole number to 10⁻⁹ (the times are the file's, not
// rounded to the new steps); the horizon likewise.
inline Observations on_steps_of(const Observations& observations, double dt,
                                const std::string& source) {
  if (!(std::isfinite(dt) && dt > 0.0))
    rwd::detail::fail<InvalidArgument>("--dt = ", shortest(dt), " must be finite and > 0");
  const auto step_at = [&](Index file_step, const char* what) {
    const double ratio = static_cast<double>(file_step) * observations.dt / dt;
    const double whole = std::round(ratio);
    if (!(std::abs(ratio - whole) <= 1e-9 * std::max(1.0, ratio)) || (file_step > 0 && whole < 1.0))
      rwd::detail::fail<InvalidArgument>(
          "--dt = ", shortest(dt), ": ", what,
          " t = ", shortest(static_cast<double>(file_step) * observations.dt), " of '", source,
          "' (step ", file_step, " of ", shortest(observations.dt),
          ") is not a whole number of steps of ", shortest(dt));
    return static_cast<Index>(whole);
  };
  Observations out = observations;
  out.dt = dt;
  for (Index& step : out.observed_steps) step = step_at(step, "the observed time");
  out.steps = step_at(observations.steps, "the horizon");
  return out;
}

}  // namespace detail

// The fitted parameters (--fit) with their starts (--start, else the problem's defaults) and
// bounds (--bounds, else the model's domain), and the whole θ the fit starts from: `base` with
// --parameters and the starts written in. Refuses a name the problem does not have, a name
// given twice, a start for a parameter not fitted, a value for one fitted, and a start outside
// its bounds.
struct FittedParameters {
  std::vector<NamedParameter> fitted;     // with their start values
  std::vector<ParameterBounds> bounds;    // one per fitted parameter
  std::vector<NamedParameter> log_scale;  // --log-scale: fitted in log θ
  Eigen::VectorXd theta_start;
};

namespace detail {

// H y_k at the observed steps from (y0, θ), or an empty matrix when that run does not stay
// finite or its solver fails: a failed fit (or a start far from the data) still reports, its
// pictures without that curve.
template <class Stepper>
Eigen::MatrixXd prediction_or_none(Stepper& stepper, const Eigen::VectorXd& y0,
                                   const Eigen::VectorXd& theta, const Observations& observed) {
  try {
    return observe_trajectory(stepper, y0, theta, observed.observed_steps, observed.field, 0.0, 0);
  } catch (const NumericalError&) {
    return {};
  } catch (const SolverError&) {
    return {};
  }
}

// --log-scale NAME,...: each a fitted parameter, with a start > 0 and a lower bound >= 0 (log θ
// needs θ > 0; a lower bound of 0 becomes no bound in log θ).
inline std::vector<NamedParameter> resolve_log_scale(const FitCommandOptions& options,
                                                     const ProblemInfo& info,
                                                     const std::vector<std::string>& names,
                                                     const FittedParameters& chosen) {
  if (!options.log_scale) return {};
  std::vector<NamedParameter> log_scale =
      parse_parameter_names("--log-scale", *options.log_scale, info, names);
  for (NamedParameter& p : log_scale) {
    std::size_t i = 0;
    while (i < chosen.fitted.size() && chosen.fitted[i].index != p.index) ++i;
    if (i == chosen.fitted.size())
      rwd::detail::fail<InvalidArgument>("--log-scale: ", p.name, " is not fitted (--fit ",
                                         options.fit, ")");
    p.value = chosen.fitted[i].value;
    if (!(p.value > 0.0))
      rwd::detail::fail<InvalidArgument>("--log-scale: ", p.name, " starts at ", p.value,
                                         ", and a log scale needs a start > 0 (--start)");
    if (chosen.bounds[i].lower < 0.0)
      rwd::detail::fail<InvalidArgument>("--log-scale: ", p.name, " has the lower bound ",
                                         chosen.bounds[i].lower,
                                         ", and a log scale needs one >= 0 (--bounds)");
  }
  return log_scale;
}

}  // namespace detail

inline FittedParameters resolve_fitted_parameters(const FitCommandOptions& options,
                                                  const ProblemInfo& info,
                                                  const std::vector<std::string>& names,
                                                  const Eigen::VectorXd& defaults,
                                                  const Eigen::VectorXd& base) {
  if (options.fit.empty())
    rwd::detail::fail<InvalidArgument>("--fit NAME,... is required: the parameters to estimate");
  FittedParameters settings;
  settings.fitted = parse_parameter_names("--fit", options.fit, info, names);
  const auto fitted_at = [&](Index index) -> NamedParameter* {
    for (NamedParameter& p : settings.fitted)
      if (p.index == index) return &p;
    return nullptr;
  };
  for (NamedParameter& p : settings.fitted) p.value = defaults[p.index];

  settings.theta_start = base;
  if (options.parameters)
    for (const NamedParameter& given :
         parse_parameter_values("--parameters", *options.parameters, info, names)) {
      if (fitted_at(given.index))
        rwd::detail::fail<InvalidArgument>("--parameters: ", given.name,
                                           " is fitted; its start value goes in --start");
      settings.theta_start[given.index] = given.value;
    }
  if (options.start)
    for (const NamedParameter& given :
         parse_parameter_values("--start", *options.start, info, names)) {
      NamedParameter* p = fitted_at(given.index);
      if (!p)
        rwd::detail::fail<InvalidArgument>("--start: ", given.name, " is not fitted (--fit ",
                                           options.fit, "); fixed values go in --parameters");
      p->value = given.value;
    }

  for (const NamedParameter& p : settings.fitted)
    settings.bounds.push_back(detail::domain_bounds(info, p.name));
  if (options.bounds)
    for (const std::string& item : detail::list_items("--bounds", *options.bounds)) {
      const auto [name, text] = split_assignment("--bounds", item, "NAME=LO:HI (e.g. F=0.01:0.1)");
      const Index index = parameter_index("--bounds", name, info, names);
      bool fitted = false;
      for (std::size_t i = 0; i < settings.fitted.size(); ++i)
        if (settings.fitted[i].index == index) {
          settings.bounds[i] = detail::parse_bounds_text("--bounds", settings.fitted[i].name, text);
          fitted = true;
        }
      if (!fitted)
        rwd::detail::fail<InvalidArgument>("--bounds: ", names[static_cast<std::size_t>(index)],
                                           " is not fitted (--fit ", options.fit, ")");
    }
  for (std::size_t i = 0; i < settings.fitted.size(); ++i) {
    const NamedParameter& p = settings.fitted[i];
    const ParameterBounds& b = settings.bounds[i];
    if (!(p.value >= b.lower && p.value <= b.upper))
      rwd::detail::fail<InvalidArgument>("--start: ", p.name, " = ", p.value,
                                         " lies outside its bounds [", b.lower, ", ", b.upper, "]");
    settings.theta_start[p.index] = p.value;
  }
  settings.log_scale = detail::resolve_log_scale(options, info, names, settings);
  return settings;
}

inline FitSettings resolve_fit_settings(const FitCommandOptions& options) {
  FitSettings settings;
  const ProblemInfo& info = require_problem_or_model(options.problem, options.model);
  if (options.observations.empty())
    rwd::detail::fail<InvalidArgument>(
        "give one of --observations FILE.h5 (write one with rewind generate) or --data "
        "FILE.csv (a measured series)");
  if (options.validation != 0.0 || options.t0)
    rwd::detail::fail<InvalidArgument>(
        "--validation and --t0 go with --data; an observation file records its own observed "
        "steps and initial state");
  if (options.method_flags.adaptive)
    rwd::detail::fail<InvalidArgument>(
        "--adaptive goes with --data (a series of times); an observation file compares step "
        "indices of fixed steps, which adaptive steps would move");
  // The command line registers no --steps for fit (FlagUse::fit); a caller filling the options
  // in code is told the same.
  if (options.checkpoint.steps)
    rwd::detail::fail<InvalidArgument>("--steps: a fit runs the observation file's horizon");
  if (options.max_evaluations < 1)
    rwd::detail::fail<InvalidArgument>("--max-evaluations = ", options.max_evaluations,
                                       " must be >= 1");
  if (options.sigma && (!std::isfinite(*options.sigma) || *options.sigma <= 0.0))
    rwd::detail::fail<InvalidArgument>("--sigma = ", *options.sigma, " must be finite and > 0");

  Observations& observations = settings.observations;
  if (!std::filesystem::exists(options.observations))
    rwd::detail::fail<InvalidArgument>("--observations '", options.observations,
                                       "' does not exist (write one with rewind generate)");
  observations = load_observations(options.observations);
  const std::string& source = options.observations;
  // A model's file names the model (rewind generate --model writes its type name).
  const bool same_problem = options.model.empty() ? find_problem(observations.problem) == &info
                                                  : observations.problem == info.name;
  if (!same_problem)
    rwd::detail::fail<InvalidArgument>("--observations '", source, "' observes ",
                                       observations.problem, ", not ", info.name);
  if (options.n && (!info.sized() || *options.n != observations.size))
    rwd::detail::fail<InvalidArgument>("--n = ", *options.n, ": '", source, "' observes ",
                                       info.name, " of size ", observations.size);

  if (options.dt) observations = detail::on_steps_of(observations, *options.dt, source);
  RunOptions run = detail::fit_method_options(options.method_flags, observations);
  observations.method = run.method;
  run.problem = options.problem;
  run.model = options.model;
  if (info.sized()) run.n = observations.size;
  run.dt = observations.dt;
  run.no_fd_check = true;
  run.progress = options.progress;
  run.checkpoint = options.checkpoint;
  run.checkpoint.steps = std::to_string(observations.steps);
  settings.run = resolve_run_settings(run);
  observations.method_settings = recorded_method_settings(settings.run, run);
  if (!settings.run.checkpoint.checkpointed)
    settings.run.checkpoint.request = PlanRequest::store_all();

  // The problem's names and default θ (the start of a fitted parameter without --start).
  const ProblemDefaults problem_defaults = info.defaults(settings.run.n);
  const std::vector<std::string>& names = problem_defaults.parameter_names;
  const Eigen::VectorXd& defaults = problem_defaults.parameters;
  if (names != observations.parameter_names)
    rwd::detail::fail<InvalidArgument>("--observations '", source, "' names other parameters than ",
                                       info.name, " has");
  FittedParameters chosen =
      resolve_fitted_parameters(options, info, names, defaults, observations.parameters);
  settings.fitted = std::move(chosen.fitted);
  settings.bounds = std::move(chosen.bounds);
  settings.log_scale = std::move(chosen.log_scale);
  settings.theta_start = std::move(chosen.theta_start);
  settings.sigma = options.sigma.value_or(misfit_sigma(observations));
  settings.max_evaluations = options.max_evaluations;
  if (options.restarts < 0)
    rwd::detail::fail<InvalidArgument>("--restarts = ", options.restarts, " must be >= 0");
  settings.restarts = options.restarts;
  settings.uncertainty = options.uncertainty;
  if (options.stages < 1 || options.stages > static_cast<int>(observations.observed_steps.size()))
    rwd::detail::fail<InvalidArgument>("--stages = ", options.stages, " must lie in [1, ",
                                       observations.observed_steps.size(),
                                       "] (the number of observed steps)");
  settings.stages = options.stages;
  settings.fit_initial_state = options.fit_initial_state;
  return settings;
}

// The observations of a shorter run: the first `count` observed steps, the horizon ending at the
// last of them (what a file generated with that horizon would hold).
inline Observations first_observations(const Observations& observations, Index count) {
  Observations part = observations;
  part.observed_steps.resize(static_cast<std::size_t>(count));
  part.data = observations.data.leftCols(count).eval();
  part.steps = part.observed_steps.back();
  return part;
}

// How many observed steps stage s of `stages` fits (a continuation over the horizon): those at or
// before s/stages of the last observed step, at least one; the last stage fits them all.
inline Index stage_observation_count(const Observations& observations, int stage, int stages) {
  const Index total = static_cast<Index>(observations.observed_steps.size());
  if (stage >= stages) return total;
  const double limit = static_cast<double>(observations.observed_steps.back()) * stage / stages;
  Index count = 0;
  while (count < total &&
         static_cast<double>(observations.observed_steps[static_cast<std::size_t>(count)]) <= limit)
    ++count;
  return std::max<Index>(count, 1);
}

// The fit of `problem` (on the Eigen backend): what ProblemInfo::fit does for a built-in problem.
template <class P>
FitReport run_fit_on(const P& problem, const FitSettings& settings,
                     const FitIterationCallback& on_iteration, const FitStageCallback& on_stage) {
  const auto start = std::chrono::steady_clock::now();
  const Observations& observations = settings.observations;
  const ProblemInfo& info = *settings.run.problem;
  FitReport report;
  report.settings = settings;
  const std::vector<std::string> names = problem.parameter_names();
  report.parameter_names = names;
  Eigen::VectorXd y0 = observations.initial_state;  // the start; fitted in turn if asked
  if (y0.size() != problem.state_size())
    rwd::detail::fail<InvalidArgument>("the observation file's initial state has ", y0.size(),
                                       " components; ", info.name, " of this size has ",
                                       problem.state_size());
  report.state_size = static_cast<Index>(y0.size());
  rwd::FitOptions fit;
  for (const NamedParameter& p : settings.fitted) fit.fitted.push_back(p.index);
  fit.bounds = settings.bounds;
  for (const NamedParameter& p : settings.log_scale) fit.log_scale.push_back(p.index);
  fit.max_evaluations = settings.max_evaluations;
  fit.restarts = settings.restarts;
  if (settings.fit_initial_state)
    for (Index i = 0; i < y0.size(); ++i) {
      fit.fitted_initial_state.push_back(i);
      fit.initial_state_bounds.push_back({});
    }
  double stage_start = 0.0;  // seconds since the fit began, when this stage began
  const auto since_start = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  if (on_iteration)
    fit.on_iteration = [&](const FitIteration& it) {
      FitIteration shifted = it;
      shifted.seconds += stage_start;
      on_iteration(shifted);
    };
  Eigen::VectorXd theta = settings.theta_start;
  FitResult joined;
  for (int stage = 1; stage <= settings.stages; ++stage) {
    const bool last = stage == settings.stages;
    const Observations part =
        last ? observations
             : first_observations(observations,
                                  stage_observation_count(observations, stage, settings.stages));
    if (on_stage)
      on_stage(stage, settings.stages, part.steps, static_cast<Index>(part.observed_steps.size()));
    stage_start = since_start();
    RunSettings run = settings.run;
    // A two-level plan's disk costs depend on the step, not the horizon: measured in the
    // first stage, reused by the others.
    if (report.checkpoint.disk_costs_measured) {
      run.checkpoint.disk_write_cost = report.checkpoint.plan.costs.disk_write_time;
      run.checkpoint.disk_read_cost = report.checkpoint.plan.costs.disk_read_time;
    }
    run.control.steps = part.steps;  // BDF: as many macro-intervals
    const Objective<EigenBackend> objective = observation_misfit(part, settings.sigma);
    with_stepper(problem, run, run.control, [&](auto& stepper) {
      CheckpointReport checkpointing = report.checkpoint;  // the measured costs carry on
      auto [request, driver_options] = checkpoint_request(problem, run, y0, theta, checkpointing);
      const CheckpointPlan& plan = plan_within_memory(request, part.steps, checkpointing);
      report.checkpoint = checkpointing;
      const FitResult result =
          fit_parameters(stepper, objective, y0, theta, fit, plan, driver_options);
      report.stages.push_back({part.steps, static_cast<Index>(part.observed_steps.size()),
                               result.iterations, result.evaluations, result.loss, result.theta,
                               result.stop_reason});
      const int previous_evaluations = joined.evaluations;
      for (FitIteration it : result.history) {
        it.evaluations += previous_evaluations;
        it.seconds += stage_start;
        joined.history.push_back(it);
        report.history_stage.push_back(stage);
      }
      joined.iterations += result.iterations;
      joined.evaluations += result.evaluations;
      joined.restarts += result.restarts;
      joined.theta = result.theta;
      joined.loss = result.loss;
      joined.gradient = result.gradient;
      joined.initial_state = result.initial_state;
      joined.initial_state_gradient = result.initial_state_gradient;
      joined.stop_reason = result.stop_reason;
      joined.failed = result.failed;
      joined.failure = result.failure;
      joined.summary = result.summary;
      theta = result.theta;
      y0 = result.initial_state;
      if (!last) return;
      if (settings.uncertainty && !result.failed) {
        report.uncertainty =
            parameter_uncertainty(stepper, objective, result, fit, plan, driver_options);
        detail::warn_if_poorly_determined(settings, result, *report.uncertainty);
      }
      report.start_prediction = detail::prediction_or_none(stepper, observations.initial_state,
                                                           settings.theta_start, observations);
      report.fit_prediction =
          detail::prediction_or_none(stepper, result.initial_state, result.theta, observations);
    });
    if (joined.failed) break;
  }
  if (joined.failed && report.stages.size() < static_cast<std::size_t>(settings.stages))
    joined.failure = "stage " + std::to_string(report.stages.size()) + " of " +
                     std::to_string(settings.stages) + ": " + joined.failure;
  report.result = std::move(joined);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

inline FitReport run_fit(const FitSettings& settings, const FitIterationCallback& on_iteration = {},
                         const FitStageCallback& on_stage = {}) {
  return settings.run.problem->fit(settings, on_iteration, on_stage);
}

}  // namespace rwd::cli
