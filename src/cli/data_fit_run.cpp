// src/cli/data_fit_run.cpp — resolve_data_fit_settings (data_fit_run.hpp).
#include "data_fit_run.hpp"

#include <cctype>
#include <cmath>
#include <filesystem>
#include <string>
#include <variant>

#include "rewind/integrators/stepper_factory.hpp"
#include "rewind/neural/time_series.hpp"

namespace rwd::cli {
namespace {

using rwd::detail::fail;

void check_scalar_options(const FitCommandOptions& options) {
  if (!options.observations.empty())
    fail<InvalidArgument>(
        "give one of --observations FILE.h5 (write one with rewind generate) or --data "
        "FILE.csv (a measured series), not both");
  // The command line registers no --steps for fit (FlagUse::fit); a caller filling the options
  // in code is told the same.
  if (options.checkpoint.steps)
    fail<InvalidArgument>("--steps: a data fit runs to the last data time");
  if (options.max_evaluations < 1)
    fail<InvalidArgument>("--max-evaluations = ", options.max_evaluations, " must be >= 1");
  if (options.sigma && (!std::isfinite(*options.sigma) || *options.sigma <= 0.0))
    fail<InvalidArgument>("--sigma = ", *options.sigma, " must be finite and > 0");
  if (!(options.validation >= 0.0 && options.validation < 1.0))
    fail<InvalidArgument>("--validation = ", options.validation, " must be a fraction in [0, 1)");
  if (options.dt && !(std::isfinite(*options.dt) && *options.dt > 0.0))
    fail<InvalidArgument>("--dt = ", *options.dt, " must be finite and > 0");
  if (options.t0 && !std::isfinite(*options.t0))
    fail<InvalidArgument>("--t0 = ", *options.t0, " must be finite");
}

// The Newton settings and linear solver of an implicit method, the linear solver of a Rosenbrock
// one (FitSpec::newton); an explicit method's are the defaults, which it does not use.
NewtonOptions newton_options_of(const Method& method) {
  if (const auto* implicit = std::get_if<ImplicitRungeKuttaMethod>(&method))
    return implicit->newton;
  NewtonOptions newton;
  if (const auto* rosenbrock = std::get_if<RosenbrockMethod>(&method))
    newton.linear_solver = rosenbrock->linear_solver;
  return newton;
}

// The measured series of `path`: a CSV file (rwd::load_data_csv), or an HDF5 time series as
// `rewind train --data` reads it (rwd::training::load_time_series: t, y and the names attribute;
// unnamed components are y0, y1, …).
TimeSeries load_series(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (extension != ".h5" && extension != ".hdf5") return load_data_csv(path);
  if (!std::filesystem::exists(path)) fail<InvalidArgument>("--data '", path, "' does not exist");
  const training::TimeSeries series = training::load_time_series(path);
  series.validate(path);
  TimeSeries data;
  data.times = series.times;
  for (Index i = 0; i < series.dimension(); ++i)
    data.columns.push_back(series.names.empty() ? std::string("y").append(std::to_string(i))
                                                : series.names[static_cast<std::size_t>(i)]);
  data.values = series.values.transpose();
  return data;
}

// Where the run starts (data_fit_run.hpp's rules): spec.t0, spec.initial_state and the words for
// the reports.
void choose_start(const FitCommandOptions& options, const ProblemDefaults& defaults,
                  DataFitSettings& settings) {
  FitSpec& spec = settings.spec;
  const bool model_start = !settings.model.empty();  // a plugin the tool runs has initial_state
  if (model_start) {
    spec.t0 = options.t0.value_or(0.0);
    settings.initial_state_source = "the model's initial_state(theta) at t0";
    return;
  }
  const Index states = static_cast<Index>(defaults.initial_state.size());
  const TimeSeries& data = settings.data;
  bool first_row_complete = data.values.cols() == states;
  for (Index c = 0; first_row_complete && c < data.values.cols(); ++c)
    first_row_complete = !std::isnan(data.values(0, c));
  if (!options.t0 && first_row_complete) {
    spec.t0 = data.times.front();
    spec.initial_state.resize(states);
    for (Index c = 0; c < states; ++c)
      spec.initial_state[data.column_indices[static_cast<std::size_t>(c)]] = data.values(0, c);
    settings.initial_state_source = "the first row of the data, t0";
    return;
  }
  spec.t0 = options.t0.value_or(0.0);
  spec.initial_state = defaults.initial_state;
  settings.initial_state_source = "the problem's default initial state at t0";
}

}  // namespace

DataFitSettings resolve_data_fit_settings(const FitCommandOptions& options) {
  check_scalar_options(options);
  DataFitSettings settings;
  const ProblemInfo& info = require_problem_or_model(options.problem, options.model);
  settings.problem = &info;
  settings.model = options.model;
  if (info.noise)
    fail<InvalidArgument>(info.name,
                          " has noise: a data fit compares one deterministic run with the data "
                          "(least squares), which a stochastic model's paths are not");
  if (options.restarts < 0)
    fail<InvalidArgument>("--restarts = ", options.restarts, " must be >= 0");
  const RunOptions& flags = options.method_flags;
  // A stiff built-in problem (robertson, brusselator: BDF in `rewind run`) defaults to esdirk43,
  // which takes steps that land on every row; the others to rk4.
  const std::string method = !flags.method.empty() ? flags.method : info.stiff ? "esdirk43" : "rk4";
  if ((flags.rtol || flags.atol) && !flags.adaptive)
    fail<InvalidArgument>(flags.rtol ? "--rtol" : "--atol",
                          " sets adaptive steps' tolerance: add --adaptive (a data fit takes "
                          "fixed steps that land on every data time unless told, --dt capping "
                          "them)");
  if (flags.adaptive && options.dt)
    fail<InvalidArgument>(
        "--dt caps fixed steps; with --adaptive the error controller chooses "
        "them (--rtol, --atol)");
  if (method == "bdf")
    fail<InvalidArgument>(
        "--method bdf: a data fit takes steps that land on every data time, "
        "and BDF chooses its own; for a stiff model use an implicit (esdirk43, "
        "sdirk2, ...) or Rosenbrock (rodas4, ros3p, ...) method");

  // The run's settings: the problem, its size, the checkpointing flags (dt and steps are the
  // data's, set per stage).
  RunOptions run;
  run.problem = options.problem;
  run.model = options.model;
  run.n = options.n;
  run.method = method;
  run.linear_solver = flags.linear_solver;
  run.newton_rtol = flags.newton_rtol;
  run.newton_atol = flags.newton_atol;
  run.max_substeps = flags.max_substeps;
  run.adaptive = flags.adaptive;  // its tolerances and method checked as `rewind run`'s
  run.rtol = flags.rtol;
  run.atol = flags.atol;
  run.dt = 1.0;
  run.no_fd_check = true;
  run.progress = options.progress;
  run.checkpoint = options.checkpoint;
  run.checkpoint.steps = "1";
  settings.run = resolve_run_settings(run);
  if (!settings.run.checkpoint.checkpointed)
    settings.run.checkpoint.request = PlanRequest::store_all();
  settings.n = settings.run.n;

  const ProblemDefaults defaults = info.defaults(settings.n);
  const auto states = static_cast<Index>(defaults.initial_state.size());
  settings.state_names = detail::state_names_of(info, states);
  settings.parameter_names = defaults.parameter_names;

  settings.data_file = options.data;
  settings.data = load_series(options.data);
  settings.column_names = settings.data.columns;
  settings.data.column_indices =
      detail::column_states(settings, options.model.empty(), &settings.columns_by_position);
  settings.data.columns.clear();
  for (std::size_t c = 0; c < settings.data.column_indices.size(); ++c)
    for (std::size_t earlier = 0; earlier < c; ++earlier)
      if (settings.data.column_indices[earlier] == settings.data.column_indices[c])
        fail<InvalidArgument>("--data '", options.data, "': columns '",
                              settings.column_names[earlier], "' and '", settings.column_names[c],
                              "' give the same state");

  const auto rows = static_cast<Index>(settings.data.times.size());
  const auto held = static_cast<Index>(std::ceil(options.validation * static_cast<double>(rows)));
  settings.training_points = rows - held;
  if (settings.training_points < 2)
    fail<InvalidArgument>("--validation ", options.validation, " leaves '", options.data, "' with ",
                          settings.training_points, " rows to fit; at least 2 are needed");

  choose_start(options, defaults, settings);
  FittedParameters chosen = resolve_fitted_parameters(options, info, settings.parameter_names,
                                                      defaults.parameters, defaults.parameters);
  settings.fitted = std::move(chosen.fitted);
  settings.bounds = std::move(chosen.bounds);
  settings.log_scale = std::move(chosen.log_scale);
  settings.theta_start = std::move(chosen.theta_start);

  FitSpec& spec = settings.spec;
  const double last_fitted =
      settings.data.times[static_cast<std::size_t>(settings.training_points - 1)];
  spec.method = method;
  spec.newton = newton_options_of(settings.run.method);
  spec.max_step = options.dt.value_or((last_fitted - spec.t0) / 1000.0);
  if (settings.run.control.is_adaptive()) {  // --adaptive, checked by resolve_run_settings
    spec.rtol = settings.run.control.rtol;
    spec.atol = settings.run.control.atol;
  }
  spec.sigma = options.sigma.value_or(0.0);
  spec.max_evaluations = options.max_evaluations;
  spec.restarts = options.restarts;
  spec.fit_initial_state = options.fit_initial_state;
  spec.uncertainty = options.uncertainty;
  // The times against t0 and the step, refused here (naming the row) before any work.
  (void)data_step_grid(spec.t0, settings.data.times, spec.max_step);

  if (options.stages < 1 || options.stages > settings.training_points)
    fail<InvalidArgument>("--stages = ", options.stages, " must lie in [1, ",
                          settings.training_points, "] (the rows fitted)");
  settings.stages = options.stages;
  return settings;
}

}  // namespace rwd::cli
