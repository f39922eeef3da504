// src/cli/data_fit_run.hpp — what `rewind fit --data FILE.csv` computes: a built-in problem's or
// a model plugin's parameters estimated from a measured series by rwd::fit
// (rewind/fit/fit_data.hpp), every gradient by the checkpointed adjoint within the memory the
// checkpointing flags allow.
//
//   rwd::cli::FitCommandOptions options;
//   options.model = "build/examples/sir_model.so";
//   options.data = "data/sir_infected.csv";          // t,I: only I is measured
//   options.fit = "beta,gamma";
//   options.start = "beta=0.4,gamma=0.15";
//   rwd::cli::DataFitReport report =
//       rwd::cli::run_data_fit(rwd::cli::resolve_data_fit_settings(options));
//
// The file (rwd::load_data_csv): a header naming time and the measured columns, one row per
// time, empty cells missing. Its columns name states of the model (S, I, R); a built-in problem
// whose states have other names takes a file that gives every state, in order, by position (the
// hare–lynx pelts as Lotka–Volterra's prey and predator).
//
// Where the run starts. A model with initial_state(θ) starts from it at --t0 (default 0), so a
// fitted parameter moves y0 too. A built-in problem starts from the first row at its time when
// that row gives every state and --t0 is not given; otherwise from its default initial state at
// --t0 (default 0). --fit-initial-state estimates every component of y0 as well, from there.
//
// The run: --method (rk4, esdirk43 for the stiff built-ins; for a stiff model an implicit
// method such as esdirk43, with
// --linear-solver and the Newton tolerances, or a Rosenbrock method such as rodas4 — exact
// discrete adjoints all) with each interval between data times cut into the fewest equal steps
// no longer than --dt (default: a thousandth of the time to the last fitted point), landing on
// every data time exactly. The last --validation fraction of the rows is held out: not fitted,
// predicted from the fit, its RMSE reported per column. σ = --sigma, else estimated from the
// residuals (then the standard errors use it). --stages S fits the rows up to 1/S, 2/S, … of the
// fitted span in turn, each from where the last ended.
//
// Free of CLI11/JSON.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fit_run.hpp"
#include "gradient_run.hpp"
#include "problem_parameters.hpp"
#include "problem_registry.hpp"
#include "rewind/error.hpp"
#include "rewind/fit/data_csv.hpp"
#include "rewind/fit/fit_data.hpp"
#include "run_report.hpp"
#include "run_settings.hpp"

namespace rwd::cli {

struct DataFitSettings {
  const ProblemInfo* problem = nullptr;
  std::string model;  // --model PATH (empty for a built-in problem)
  Index n = 0;        // the built-in problem's size (0 for fixed-size problems and models)
  std::string data_file;
  TimeSeries data;                        // every row; columns as state indices
  std::vector<std::string> column_names;  // as the file names them
  bool columns_by_position = false;       // a built-in whose states the file names otherwise
  Index training_points = 0;              // rows fitted; the rest are held out
  std::vector<std::string> state_names;   // the problem's (y0, y1, … when it names none)
  std::vector<std::string> parameter_names;
  std::vector<NamedParameter> fitted;     // with their start values
  std::vector<ParameterBounds> bounds;    // one per fitted parameter
  std::vector<NamedParameter> log_scale;  // --log-scale: fitted in log θ
  Eigen::VectorXd theta_start;            // the whole θ the fit starts from
  // What rwd::fit is given: t0, the initial state (empty: initial_state(θ)), method, max_step,
  // σ (0: estimated), evaluations, restarts, fit_initial_state, uncertainty. The fitted list is
  // built per stage from `fitted`, `bounds`, `log_scale` and `theta_start`.
  FitSpec spec;
  std::string initial_state_source;  // in words, for the reports
  int stages = 1;
  RunSettings run;  // the checkpointing flags, --json, progress; dt = max_step
};

// One stage of a continuation, as it ended.
struct DataFitStage {
  Index rows = 0;   // data rows fitted
  Index steps = 0;  // steps of its run
  int iterations = 0;
  int evaluations = 0;
  double loss = 0.0;
  Eigen::VectorXd theta;
  std::string status;
};

struct DataFitReport {
  DataFitSettings settings;
  DataFitResult result;  // the last stage's, with every stage's history joined
  std::vector<DataFitStage> stages;
  std::vector<int> history_stage;       // the stage (1-based) of each entry of result.history
  Eigen::VectorXd initial_state_start;  // y0 at the start θ
  CheckpointReport checkpoint;          // the plan of the last stage's gradients
  // The model at every row (rows × states) from the fit, and the RMSE per column over the
  // held-out rows (NaN for a column with no measured held-out value; empty without held-out rows).
  Eigen::MatrixXd prediction;
  Eigen::VectorXd held_out_rmse;
  // The model on an even grid of times from t0 to the last row, at the start and at the fit
  // (rows × states; the plots' curves). Empty when that run turned non-finite.
  std::vector<double> curve_times;
  Eigen::MatrixXd start_curve;
  Eigen::MatrixXd fit_curve;
  double seconds = 0.0;
};

namespace detail {

// The problem's state names: its one-component fields in state order, else y0, y1, ….
inline std::vector<std::string> state_names_of(const ProblemInfo& info, Index state_size) {
  std::vector<std::string> names(static_cast<std::size_t>(state_size));
  bool named = true;
  for (Index i = 0; i < state_size; ++i) {
    named = named && static_cast<Index>(info.fields.size()) == state_size &&
            info.fields[static_cast<std::size_t>(i)].blocks == state_size &&
            info.fields[static_cast<std::size_t>(i)].block == i;
    if (named) names[static_cast<std::size_t>(i)] = info.fields[static_cast<std::size_t>(i)].name;
  }
  if (!named)
    for (Index i = 0; i < state_size; ++i)
      names[static_cast<std::size_t>(i)] = std::string("y").append(std::to_string(i));
  return names;
}

// The state index of each of the file's columns: by name, or (a built-in problem, every state
// given) by position. Refuses a column that names no state, naming it and the states.
inline std::vector<Index> column_states(const DataFitSettings& settings, bool builtin,
                                        bool* by_position) {
  const std::vector<std::string>& states = settings.state_names;
  const std::vector<std::string>& columns = settings.column_names;
  std::vector<Index> out;
  std::string unknown;
  for (const std::string& column : columns) {
    const auto at = std::find(states.begin(), states.end(), column);
    if (at == states.end()) {
      if (unknown.empty()) unknown = column;
      continue;
    }
    out.push_back(static_cast<Index>(at - states.begin()));
  }
  *by_position = false;
  if (unknown.empty()) return out;
  if (builtin && columns.size() == states.size()) {
    *by_position = true;
    out.clear();
    for (std::size_t i = 0; i < columns.size(); ++i) out.push_back(static_cast<Index>(i));
    return out;
  }
  rwd::detail::fail<InvalidArgument>(
      "--data '", settings.data_file, "': column '", unknown, "' names no state of ",
      settings.problem->name, " (its states: ", joined(states), ")",
      builtin ? "; name the columns by state, or give every state in order" : "");
}

// The first `rows` rows of a series.
inline TimeSeries first_rows(const TimeSeries& data, Index rows) {
  TimeSeries part = data;
  part.times.resize(static_cast<std::size_t>(rows));
  part.values = data.values.topRows(rows).eval();
  return part;
}

// How many of the training rows stage s of `stages` fits: those at or before s/stages of the
// fitted span after t0, at least one; the last stage fits them all.
inline Index stage_rows(const DataFitSettings& settings, int stage) {
  if (stage >= settings.stages) return settings.training_points;
  const double t0 = settings.spec.t0;
  const double end = settings.data.times[static_cast<std::size_t>(settings.training_points - 1)];
  const double limit = t0 + (end - t0) * stage / settings.stages;
  Index rows = 0;
  while (rows < settings.training_points &&
         settings.data.times[static_cast<std::size_t>(rows)] <= limit)
    ++rows;
  return std::max<Index>(rows, 1);
}

// Per column, the RMSE of the prediction over the held-out rows where the file has a value.
inline Eigen::VectorXd held_out_rmse(const DataFitSettings& settings,
                                     const Eigen::MatrixXd& prediction) {
  const Index rows = static_cast<Index>(settings.data.times.size());
  if (settings.training_points >= rows) return {};
  const Index columns = settings.data.values.cols();
  Eigen::VectorXd out(columns);
  for (Index c = 0; c < columns; ++c) {
    const Index state = settings.data.column_indices[static_cast<std::size_t>(c)];
    double sum = 0.0;
    Index count = 0;
    for (Index k = settings.training_points; k < rows; ++k) {
      const double measured = settings.data.values(k, c);
      if (std::isnan(measured)) continue;
      sum += (prediction(k, state) - measured) * (prediction(k, state) - measured);
      ++count;
    }
    out[c] = count ? std::sqrt(sum / static_cast<double>(count))
                   : std::numeric_limits<double>::quiet_NaN();
  }
  return out;
}

}  // namespace detail

// The settings of `rewind fit --data`, checked before any work (see the top of the file).
DataFitSettings resolve_data_fit_settings(const FitCommandOptions& options);

namespace detail {

// The spec of one stage: the settings' with the fit starting at θ (the fitted values clamped
// into their bounds) and y0 (empty: initial_state(θ)); an early stage skips the standard errors
// and, without --sigma, weighs the misfit with σ = 1 (no σ is reported for it).
inline FitSpec stage_spec(const DataFitSettings& settings, const Eigen::VectorXd& theta,
                          const Eigen::VectorXd& y0, bool last) {
  FitSpec spec = settings.spec;
  spec.initial_state = y0;
  spec.parameters = theta;
  spec.fit.clear();
  for (std::size_t i = 0; i < settings.fitted.size(); ++i) {
    const ParameterBounds& b = settings.bounds[i];
    const Index index = settings.fitted[i].index;
    const bool log_scale = std::any_of(settings.log_scale.begin(), settings.log_scale.end(),
                                       [&](const NamedParameter& p) { return p.index == index; });
    spec.fit.push_back({settings.fitted[i].name, std::clamp(theta[index], b.lower, b.upper),
                        b.lower, b.upper, log_scale});
  }
  if (!last) {
    spec.uncertainty = false;
    if (spec.sigma == 0.0) spec.sigma = 1.0;
  }
  return spec;
}

// The plan of a stage's gradients within the flags' memory, the costs it weighs measured on
// this problem's step (a first stage's disk costs reused by the later ones), into spec.
template <class P>
void plan_stage(const P& problem, const DataFitSettings& settings, Index steps,
                const Eigen::VectorXd& y0, const Eigen::VectorXd& theta, FitSpec& spec,
                CheckpointReport& checkpoint) {
  RunSettings run = settings.run;
  run.control = StepControl::fixed(spec.t0, spec.max_step, steps);
  if (checkpoint.disk_costs_measured) {
    run.checkpoint.disk_write_cost = checkpoint.plan.costs.disk_write_time;
    run.checkpoint.disk_read_cost = checkpoint.plan.costs.disk_read_time;
  }
  auto [request, driver_options] = checkpoint_request(problem, run, y0, theta, checkpoint);
  spec.checkpoint_options = driver_options;
  if (spec.rtol > 0.0) {
    // Adaptive steps: each round's runs are planned for that round's steps.
    spec.planner = [request = std::move(request), &checkpoint](Index round_steps) {
      return plan_within_memory(request, round_steps, checkpoint);
    };
    return;
  }
  spec.plan = plan_within_memory(request, steps, checkpoint);
}

// `joined` carried on by a stage's result: its history after the earlier stages' (evaluations
// and seconds counted from the fit's start), the counts summed, the rest the stage's.
inline void join_stage(DataFitResult& joined, DataFitResult result, int stage, double stage_start,
                       std::vector<int>& history_stage) {
  std::vector<FitIteration> history = std::move(joined.history);
  for (FitIteration it : result.history) {
    it.evaluations += joined.evaluations;
    it.seconds += stage_start;
    history.push_back(std::move(it));
    history_stage.push_back(stage);
  }
  const int iterations = joined.iterations + result.iterations;
  const int evaluations = joined.evaluations + result.evaluations;
  joined = std::move(result);
  joined.history = std::move(history);
  joined.iterations = iterations;
  joined.evaluations = evaluations;
}

// The model at every row (held-out ones included) and on an even grid of times from t0 to the
// last row, at the start and at the fit.
template <class P>
void predict_series(const P& problem, DataFitReport& report) {
  const DataFitSettings& settings = report.settings;
  const DataFitResult& result = report.result;
  if (!result.failed) {
    report.prediction = rwd::predict(problem, settings.data.times, settings.spec, result.theta,
                                     result.initial_state);
    report.held_out_rmse = held_out_rmse(settings, report.prediction);
  }
  constexpr int kCurvePoints = 400;
  const double t0 = settings.spec.t0, end = settings.data.times.back();
  for (int i = 1; i <= kCurvePoints; ++i)
    report.curve_times.push_back(i == kCurvePoints ? end : t0 + (end - t0) * i / kCurvePoints);
  try {
    report.start_curve = rwd::predict(problem, report.curve_times, settings.spec,
                                      settings.theta_start, report.initial_state_start);
    report.fit_curve = rwd::predict(problem, report.curve_times, settings.spec, result.theta,
                                    result.initial_state);
  } catch (const NumericalError&) {
    // A start (or a failed fit) whose run does not stay finite has no curve to draw.
    report.start_curve.resize(0, 0);
    report.fit_curve.resize(0, 0);
  } catch (const SolverError&) {
    // Nor one whose implicit solver fails (a Newton iteration, a singular stage matrix).
    report.start_curve.resize(0, 0);
    report.fit_curve.resize(0, 0);
  }
}

}  // namespace detail

// The fit of `problem` (on the Eigen backend): what ProblemInfo::fit_data does. Each stage fits
// the rows up to its share of the span from where the last ended (one stage: all of them).
template <class P>
DataFitReport run_data_fit_on(const P& problem, const DataFitSettings& settings,
                              const FitIterationCallback& on_iteration,
                              const FitStageCallback& on_stage) {
  const auto start = std::chrono::steady_clock::now();
  const auto since_start = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  DataFitReport report;
  report.settings = settings;
  const auto initial_state_at = [&](const Eigen::VectorXd& theta) {
    return settings.problem->initial_state(settings.n, theta);
  };
  report.initial_state_start = settings.spec.initial_state.size()
                                   ? settings.spec.initial_state
                                   : initial_state_at(settings.theta_start);
  Eigen::VectorXd theta = settings.theta_start;
  Eigen::VectorXd y0 = settings.spec.initial_state;  // empty: initial_state(θ)
  DataFitResult& joined = report.result;
  for (int stage = 1; stage <= settings.stages; ++stage) {
    const bool last = stage == settings.stages;
    const Index rows = detail::stage_rows(settings, stage);
    const TimeSeries part = detail::first_rows(settings.data, rows);
    FitSpec spec = detail::stage_spec(settings, theta, y0, last);
    const Eigen::VectorXd stage_y0 = y0.size() ? y0 : initial_state_at(theta);
    // The steps the stage starts on: fixed ones, or those an adaptive run from there chooses.
    const auto steps = static_cast<Index>(
        fit_step_grid(problem, part.times, spec, theta, stage_y0).step_sizes.size());
    if (on_stage) on_stage(stage, settings.stages, steps, rows);
    const double stage_start = since_start();
    const int earlier_evaluations = joined.evaluations;
    if (on_iteration)
      spec.on_iteration = [&](const FitIteration& it) {
        FitIteration shifted = it;
        shifted.seconds += stage_start;
        shifted.evaluations += earlier_evaluations;
        on_iteration(shifted);
      };
    detail::plan_stage(problem, settings, steps, stage_y0, theta, spec, report.checkpoint);
    DataFitResult result = rwd::fit(problem, part, spec);
    report.stages.push_back({rows, result.steps, result.iterations, result.evaluations,
                             result.residual_sum_of_squares / 2.0, result.theta, result.status});
    detail::join_stage(joined, std::move(result), stage, stage_start, report.history_stage);
    theta = joined.theta;
    if (settings.spec.fit_initial_state || settings.spec.initial_state.size())
      y0 = joined.initial_state;
    if (joined.failed) {
      if (!last)
        joined.status = "stage " + std::to_string(stage) + " of " +
                        std::to_string(settings.stages) + ": " + joined.status;
      break;
    }
  }
  detail::predict_series(problem, report);
  report.seconds = since_start();
  return report;
}

inline DataFitReport run_data_fit(const DataFitSettings& settings,
                                  const FitIterationCallback& on_iteration = {},
                                  const FitStageCallback& on_stage = {}) {
  return settings.problem->fit_data(settings, on_iteration, on_stage);
}

}  // namespace rwd::cli
