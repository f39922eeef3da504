// src/cli/fit_command.cpp — see fit_command.hpp.
#include "fit_command.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "checkpoint_flag_options.hpp"
#include "data_fit_report.hpp"
#include "data_fit_run.hpp"
#include "exit_status.hpp"
#include "fit_json.hpp"
#include "fit_run.hpp"
#include "integer_option.hpp"
#include "method_flag_options.hpp"
#include "process_group.hpp"
#include "progress.hpp"
#include "report_output.hpp"
#include "rewind/error.hpp"
#include "rewind/parallel.hpp"
#include "text_report.hpp"

namespace rwd::cli {
namespace {

using Json = nlohmann::ordered_json;

std::string format(const char* spec, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, spec, value);
  return buffer;
}

Json number(double x) {
  return std::isfinite(x) ? Json(x) : Json(nullptr);
}

// {name: θ[i]} over the given indices (all of θ when `indices` is empty).
Json by_name(const std::vector<std::string>& names, const Eigen::VectorXd& theta,
             const std::vector<NamedParameter>& only = {}) {
  Json out = Json::object();
  if (only.empty()) {
    for (Eigen::Index i = 0; i < theta.size(); ++i)
      out[names[static_cast<std::size_t>(i)]] = number(theta[i]);
  } else {
    for (const NamedParameter& p : only) out[p.name] = number(theta[p.index]);
  }
  return out;
}

// The method's settings an observation file records (and a refit repeats).
Json method_settings_json(const MethodSettings& method) {
  return {{"rtol", method.rtol},
          {"atol", method.atol},
          {"linear_solver", method.linear_solver},
          {"newton_rtol", method.newton_rtol},
          {"newton_atol", method.newton_atol}};
}

Json fit_json(const FitReport& report) {
  const FitSettings& settings = report.settings;
  const Observations& observations = settings.observations;
  const FitResult& result = report.result;
  const CheckpointReport& checkpointing = report.checkpoint;
  const std::vector<std::string>& names = report.parameter_names;
  Json j;
  j["rewind_version"] = REWIND_VERSION;
  j["problem"] = settings.run.problem->name;
  j["n"] = settings.run.problem->sized() ? Json(settings.run.n) : Json(nullptr);
  j["state_size"] = report.state_size;
  j["threads"] = rwd::thread_count();
  j["method"] = observations.method;
  j["method_settings"] = method_settings_json(observations.method_settings);
  j["dt"] = observations.dt;
  j["steps"] = observations.steps;
  j["observations"] = {{"field", observations.field.name},
                       {"components", observations.field.count},
                       {"observed_steps", observations.observed_steps.size()},
                       {"first_step", observations.observed_steps.front()},
                       {"last_step", observations.observed_steps.back()},
                       {"noise", observations.noise},
                       {"sigma", settings.sigma}};
  Json fitted = Json::array();
  for (const NamedParameter& p : settings.fitted) fitted.push_back(p.name);
  j["fitted"] = fitted;
  Json log_scale = Json::array();
  for (const NamedParameter& p : settings.log_scale) log_scale.push_back(p.name);
  j["log_scale"] = log_scale;
  j["parameters"] = by_name(names, result.theta);
  j["start"] = by_name(names, settings.theta_start, settings.fitted);
  j["generating_parameters"] = by_name(names, observations.parameters);
  const auto vector_json = [](const Eigen::VectorXd& v) {
    Json out = Json::array();
    for (Eigen::Index i = 0; i < v.size(); ++i) out.push_back(number(v[i]));
    return out;
  };
  // y0: where the fit started and ended (the same when not fitted), its standard errors (after
  // the fitted parameters' in the joint Hessian; null when not fitted or not computed).
  Json initial_errors = nullptr;
  if (settings.fit_initial_state && report.uncertainty) {
    const Eigen::Index p = static_cast<Eigen::Index>(settings.fitted.size());
    initial_errors =
        vector_json(report.uncertainty->standard_errors.segment(p, report.state_size).eval());
  }
  j["initial_state"] = {
      {"fitted", settings.fit_initial_state},
      {"start", vector_json(observations.initial_state)},
      {"fit", result.initial_state.size() ? vector_json(result.initial_state) : Json(nullptr)},
      {"standard_errors", initial_errors}};
  Json bounds = Json::object();
  for (std::size_t i = 0; i < settings.fitted.size(); ++i)
    bounds[settings.fitted[i].name] = {number(settings.bounds[i].lower),
                                       number(settings.bounds[i].upper)};
  j["bounds"] = bounds;
  j["loss"] = number(result.loss);
  j["gradient"] =
      result.gradient.size() ? by_name(names, result.gradient, settings.fitted) : Json(nullptr);
  Json errors = nullptr;
  if (report.uncertainty) {
    errors = Json::object();
    for (std::size_t i = 0; i < settings.fitted.size(); ++i)
      errors[settings.fitted[i].name] =
          number(report.uncertainty->standard_errors[static_cast<Eigen::Index>(i)]);
  }
  // 1-sigma spread the noise allows (inverse Hessian of J at the fit); null entries when the
  // Hessian is not positive definite, null when not computed (--no-uncertainty, a failed fit).
  j["standard_errors"] = errors;
  // The covariance H⁻¹ in the order of "fitted" (null when not computed or not a minimum):
  // long-horizon estimates are often strongly correlated, so the errors are not independent.
  Json covariance = nullptr;
  if (report.uncertainty && report.uncertainty->positive_definite) {
    covariance = Json::array();
    const Eigen::MatrixXd& c = report.uncertainty->covariance;
    for (Eigen::Index r = 0; r < c.rows(); ++r) {
      Json row = Json::array();
      for (Eigen::Index k = 0; k < c.cols(); ++k) row.push_back(number(c(r, k)));
      covariance.push_back(row);
    }
  }
  j["covariance"] = covariance;
  j["iterations"] = result.iterations;
  j["evaluations"] = result.evaluations;
  j["restarts"] = result.restarts;
  j["stop_reason"] = result.stop_reason;
  // The last gradient run's verdict: a zero or negligible gradient, or a stationary state (a
  // start or a fit in a regime where the model's pattern has died), else null.
  j["degenerate"] =
      result.summary.health.degenerate() ? Json(result.summary.health.describe()) : Json(nullptr);
  j["failed"] = result.failed;
  j["failure"] = result.failed ? Json(result.failure) : Json(nullptr);
  j["history"] = history_json(result.history, report.history_stage, settings.fitted);
  Json stages = Json::array();
  for (const FitReport::Stage& stage : report.stages)
    stages.push_back({{"steps", stage.steps},
                      {"observed_steps", stage.observations},
                      {"iterations", stage.iterations},
                      {"evaluations", stage.evaluations},
                      {"loss", number(stage.loss)},
                      {"parameters", by_name(names, stage.theta, settings.fitted)},
                      {"stop_reason", stage.stop_reason}});
  j["stages"] = stages;
  const CheckpointPlan& plan = checkpointing.plan;
  j["schedule"] = {
      {"name", plan.name},
      {"snapshots", plan.snapshots},
      {"recomputed_steps", plan.advances},
      {"recompute_ratio", plan.recompute_ratio()},
      {"peak_memory_bytes", result.summary.storage.peak_bytes_on(LevelKind::memory)},
      {"snapshot_bytes", checkpointing.snapshot_bytes},
      {"store_all_bytes", checkpointing.store_all_bytes},
      {"store_all_over_peak",
       result.summary.storage.peak_bytes_on(LevelKind::memory) > 0
           ? Json(checkpointing.store_all_bytes /
                  static_cast<double>(result.summary.storage.peak_bytes_on(LevelKind::memory)))
           : Json(nullptr)}};
  j["seconds"] = report.seconds;
  return j;
}

// What the pictures need besides fit_json: the observed field and the model's at the start and
// at the fit — the last observed frame as an n × n image for grid problems, every observed step
// as time series otherwise (scripts/plot_fit.py documents the format).
Json plot_json(const FitReport& report) {
  const FitSettings& settings = report.settings;
  const Observations& observations = settings.observations;
  Json j = fit_json(report);
  const Index n = settings.run.n;
  const Index cells = n * n;
  const Index count = observations.field.count;
  const bool grid = settings.run.problem->grid_fields && cells > 0 && count % cells == 0;
  // An empty prediction (its run did not stay finite: FitReport) is null.
  const auto column = [](const Eigen::MatrixXd& m, Eigen::Index k, Index from, Index size) {
    if (m.size() == 0) return Json(nullptr);
    Json out = Json::array();
    for (Index i = 0; i < size; ++i) out.push_back(m(from + i, k));
    return out;
  };
  Json fields;
  if (grid) {
    // The last n² components of the last observed step (Gray–Scott "all": v).
    const Eigen::Index last = observations.data.cols() - 1;
    fields = {{"kind", "grid"},
              {"side", n},
              {"step", observations.observed_steps.back()},
              {"observed", column(observations.data, last, count - cells, cells)},
              {"start", column(report.start_prediction, last, count - cells, cells)},
              {"fit", column(report.fit_prediction, last, count - cells, cells)}};
  } else {
    Json steps = Json::array();
    for (Index s : observations.observed_steps)
      steps.push_back(static_cast<double>(s) * observations.dt);
    const Index shown = std::min<Index>(count, 6);
    const auto series = [&](const Eigen::MatrixXd& m) {
      if (m.size() == 0) return Json(nullptr);
      Json out = Json::array();
      for (Index i = 0; i < shown; ++i) {
        Json row = Json::array();
        for (Eigen::Index k = 0; k < m.cols(); ++k) row.push_back(m(i, k));
        out.push_back(row);
      }
      return out;
    };
    fields = {{"kind", "series"},
              {"t", steps},
              {"components", shown},
              {"observed", series(observations.data)},
              {"start", series(report.start_prediction)},
              {"fit", series(report.fit_prediction)}};
  }
  j["fields"] = fields;
  return j;
}

void write_plots(const FitReport& report, const std::string& prefix) {
  draw_fit_plots(plot_json(report).dump(1), prefix);
}

void print_text(std::ostream& out, const FitReport& report) {
  const FitSettings& settings = report.settings;
  const FitResult& result = report.result;
  out << "\n";
  out << (result.failed ? "fit stopped: " + result.failure : "fit: " + result.stop_reason) << "\n";
  char line[256];
  const auto error_of = [&](std::size_t i) {
    return report.uncertainty ? report.uncertainty->standard_errors[static_cast<Eigen::Index>(i)]
                              : std::nan("");
  };
  {
    std::snprintf(line, sizeof line, "  %-10s %13s %13s %11s %13s %11s %9s\n", "parameter", "start",
                  "fit", "+- 1 s.e.", "in the file", "fit/file-1", "off/s.e.");
    out << line;
    for (std::size_t i = 0; i < settings.fitted.size(); ++i) {
      const NamedParameter& p = settings.fitted[i];
      const double truth = settings.observations.parameters[p.index];
      const double fitted = result.theta[p.index];
      const double error = error_of(i);
      std::snprintf(line, sizeof line, "  %-10s %13.8g %13.8g %11.3g %13.8g %11.3e %9.2f\n",
                    p.name.c_str(), settings.theta_start[p.index], fitted, error, truth,
                    truth != 0.0 ? fitted / truth - 1.0 : fitted - truth, (fitted - truth) / error);
      out << line;
    }
  }
  if (settings.fit_initial_state && result.initial_state.size())
    for (Eigen::Index i = 0; i < result.initial_state.size(); ++i) {
      const std::string name = "y0[" + std::to_string(i) + "]";
      std::snprintf(line, sizeof line, "  %-10s %13.8g %13.8g %11.3g\n", name.c_str(),
                    settings.observations.initial_state[i], result.initial_state[i],
                    error_of(settings.fitted.size() + static_cast<std::size_t>(i)));
      out << line;
    }
  if (report.uncertainty && report.uncertainty->positive_definite && settings.fitted.size() >= 2) {
    const Eigen::MatrixXd& c = report.uncertainty->covariance;
    // The fitted parameters, then y0's components when fitted too (the joint Hessian's order).
    const auto name_of = [&](Eigen::Index r) {
      const auto i = static_cast<std::size_t>(r);
      return i < settings.fitted.size() ? settings.fitted[i].name
                                        : "y0[" + std::to_string(i - settings.fitted.size()) + "]";
    };
    out << "  correlation of the estimates:";
    for (Eigen::Index r = 0; r < c.rows(); ++r)
      for (Eigen::Index k = r + 1; k < c.cols(); ++k)
        out << " " << name_of(r) << "/" << name_of(k) << " "
            << format("%.3f", c(r, k) / std::sqrt(c(r, r) * c(k, k)));
    out << "\n";
  }
  if (result.summary.health.degenerate())
    out << "  the last gradient run says: " << result.summary.health.describe() << "\n";
  if (report.uncertainty && !report.uncertainty->positive_definite)
    out << "  (the Hessian of J at the fit is not positive definite: no standard errors)\n";
  out << "  J = " << format("%.10g", result.loss) << " after " << result.iterations
      << " iterations, " << result.evaluations << " gradient evaluations, ";
  if (result.restarts > 0) out << result.restarts << " restarts, ";
  out << format("%.1f", report.seconds) << " s\n";
  const double peak = static_cast<double>(result.summary.storage.peak_bytes_on(LevelKind::memory));
  out << "  each gradient: " << report.checkpoint.plan.name << ", recompute ratio "
      << format("%.3g", report.checkpoint.plan.recompute_ratio()) << ", peak snapshot memory "
      << format_bytes(peak) << " (store-all: " << format_bytes(report.checkpoint.store_all_bytes);
  if (peak > 0) out << ", " << format("%.0f", report.checkpoint.store_all_bytes / peak) << "x";
  out << ")\n";
}

// Where a fit's progress lines go: standard output with the text report, standard error with
// --json — and nowhere when the command runs embedded (report_output.hpp), whose caller has
// every iteration in the report's history.
std::ostream& progress_log(bool json) {
  static std::ostream nowhere(nullptr);
  if (reports_received()) return nowhere;
  return json ? std::cerr : std::cout;
}

// One line per iteration: J, |grad J| over the fitted parameters, their values, seconds.
void print_iteration(std::ostream& log, const FitIteration& it,
                     const std::vector<NamedParameter>& fitted) {
  char line[96];
  std::snprintf(line, sizeof line, "  iteration %3d  eval %3d  J = %-14.8g |grad| = %-10.3e ",
                it.iteration, it.evaluations, it.loss, it.gradient_norm);
  log << line;
  for (const NamedParameter& p : fitted)
    log << p.name << " = " << format("%.8g", it.theta[p.index]) << "  ";
  log << format("%.1f s", it.seconds) << std::endl;
}

// `rewind fit --data FILE.csv`: a measured series through rwd::fit (data_fit_run.hpp).
void run_data_fit_command(const FitCommandOptions& options, const std::string& plot) {
  const DataFitSettings settings = resolve_data_fit_settings(options);
  const bool json = settings.run.json;
  std::ostream& log = progress_log(json);
  if (!json) {
    log << "rewind fit " << settings.problem->name;
    if (settings.problem->sized()) log << " (n = " << settings.n << ")";
    log << ": " << settings.fitted.size() << " parameters from '" << settings.data_file << "' ("
        << settings.training_points << " rows fitted";
    if (settings.training_points < static_cast<Index>(settings.data.times.size()))
      log << ", " << settings.data.times.size() - static_cast<std::size_t>(settings.training_points)
          << " held out";
    log << "; columns";
    for (std::size_t c = 0; c < settings.column_names.size(); ++c) {
      const std::string& state =
          settings.state_names[static_cast<std::size_t>(settings.data.column_indices[c])];
      log << " " << settings.column_names[c];
      if (state != settings.column_names[c]) log << " as " << state;
    }
    log << "), y0: " << settings.initial_state_source << " = " << settings.spec.t0;
    if (settings.spec.rtol > 0.0)
      log << ", adaptive steps (rtol " << settings.spec.rtol << ", atol " << settings.spec.atol
          << ") landing on every row\n";
    else
      log << ", steps <= " << settings.spec.max_step << "\n";
  }
  const auto on_iteration = [&](const FitIteration& it) {
    print_iteration(log, it, settings.fitted);
  };
  const auto on_stage = [&](int stage, int stages, Index steps, Index rows) {
    if (stages > 1)
      log << "  stage " << stage << " of " << stages << ": " << rows << " rows, " << steps
          << " steps" << std::endl;
  };
  const DataFitReport report = run_data_fit(settings, on_iteration, on_stage);
  if (json)
    emit_json_report(data_fit_json(report));
  else
    print_data_fit_text(std::cout, report);
  if (!plot.empty()) write_data_fit_plots(report, plot);
  if (report.result.failed)
    rwd::detail::fail<Error>("the fit stopped: ", report.result.status,
                             " (the best parameters so far are in the report)");
}

// The text after `rewind fit --help`'s options: the two kinds of data, and examples.
std::string fit_footer() {
  return "With --observations: J = 1/2 sum_k |H y_k - d_k|^2 / sigma^2 over the file's observed\n"
         "steps. The run repeats the file's problem, size, method (with its tolerances, linear\n"
         "solver and Newton tolerances), step, horizon and initial state; --method and its flags\n"
         "refit with another method or settings, --dt on other steps (every observed time a\n"
         "multiple of it). Parameters not fitted keep the file's values unless --parameters\n"
         "gives them.\n"
         "\n"
         "With --data FILE.csv (docs/fitting.md): a header naming time and the measured columns\n"
         "(states of the model: t,I for S, I, R), one row per time, empty cells missing. J = 1/2\n"
         "sum of squared differences over the measured values; sigma, when not given, is\n"
         "estimated from the residuals and the standard errors use it. Steps no longer than --dt\n"
         "land on every data time (a stiff model: --method esdirk43 or rodas4, with\n"
         "--linear-solver and the Newton tolerances). A model starts from its initial_state(theta) "
         "at --t0 (0); a\n"
         "built-in problem from the first row when it gives every state (else its default state\n"
         "at --t0). Parameters not fitted keep the defaults unless --parameters gives them.\n"
         "\n"
         "An iteration is an evaluation that lowered J; one line each (J, |grad J| over the\n"
         "fitted parameters, their values, seconds). Checkpointing flags as in `rewind run` bound\n"
         "the memory of every gradient; without them every state is kept.\n"
         "\n"
         "Examples:\n"
         "  rewind generate gray_scott --n 64 --steps 20000 --observe-every 1000 --observe v \\\n"
         "                  --noise 0.01 --out gs.h5\n"
         "  rewind fit gray_scott --observations gs.h5 --fit F,k --start F=0.045,k=0.055 \\\n"
         "             --bounds F=0.02:0.08,k=0.04:0.08 --snapshots 20 --plot gs_fit\n"
         "  rewind fit robertson --observations robertson.h5 --fit p1,p2,p3 \\\n"
         "             --log-scale p1,p2,p3 --start p1=0.1,p2=2e3,p3=1e8 --method rodas4 --dt "
         "0.002\n"
         "  rewind fit --model sir_model.so --data data/sir_infected.csv --fit beta,gamma \\\n"
         "             --start beta=0.4,gamma=0.15 --dt 0.05 --plot sir_fit\n"
         "  rewind fit lotka_volterra --data data/hare_lynx.csv --validation 0.2 --dt 0.01 \\\n"
         "             --fit alpha,beta,delta,gamma --fit-initial-state \\\n"
         "             --start alpha=0.55,beta=0.028,delta=0.024,gamma=0.8";
}

// The options that go with --data FILE.csv (a measured series, data_fit_run.hpp).
void add_data_options(CLI::App& fit, FitCommandOptions& options) {
  fit.add_option("--data", options.data,
                 "a measured series instead: t and some states, by name\n"
                 "(a built-in problem also takes every state in order);\n"
                 "or an HDF5 series as rewind train --data reads it")
      ->type_name("FILE.csv|.h5");
  fit.add_option("--validation", options.validation,
                 "with --data: hold out the last fraction of the rows,\n"
                 "predict them and report their RMSE per column")
      ->type_name("F");
  fit.add_option("--dt", options.dt,
                 "with --data: the longest step (default: a thousandth\n"
                 "of the time to the last fitted row); with --observations:\n"
                 "the step to refit on (every observed time a multiple of it)");
  fit.add_option("--t0", options.t0, "with --data: the time of the initial state (see below)");
  add_method_flags(fit, options.method_flags, MethodFlagUse::fit);
}

// The optimiser's flags: its evaluation limit, restarts, continuation stages and the standard
// errors after it.
void add_optimiser_options(CLI::App& fit, const std::shared_ptr<FitCommandOptions>& options) {
  add_integer_option(fit, "--max-evaluations", options->max_evaluations,
                     IntegerRange::between(1, (std::uint64_t{1} << 31) - 1),
                     "gradient evaluations at most (default 60)");
  add_integer_option(fit, "--restarts", options->restarts,
                     IntegerRange::between(0, (std::uint64_t{1} << 31) - 1),
                     "when NLopt's optimality test (absolute: early after J fell\n"
                     "by orders) stops the fit, start again from the best theta\n"
                     "with J scaled afresh, up to R times while J falls (default 0)")
      ->type_name("R");
  add_integer_option(fit, "--stages", options->stages,
                     IntegerRange::between(1, (std::uint64_t{1} << 31) - 1),
                     "continuation: fit the observations up to 1/S, 2/S, ...\n"
                     "of the horizon in turn, each stage from the last (default 1)")
      ->type_name("S");
  fit.add_flag_callback(
      "--no-uncertainty", [options] { options->uncertainty = false; },
      "skip the standard errors (2 gradients per fitted\n"
      "parameter, from the Hessian of J at the fit)");
}

// The line that opens a fit's text report: what is fitted to what.
void print_fit_header(std::ostream& log, const FitSettings& settings) {
  log << "rewind fit " << settings.run.problem->name;
  if (settings.run.problem->sized()) log << " (n = " << settings.run.n << ")";
  log << ": " << settings.fitted.size() << " parameters from "
      << settings.observations.observed_steps.size() << " observations of '"
      << settings.observations.field.name << "' over " << settings.observations.steps
      << " steps of " << settings.observations.method << ", sigma = " << settings.sigma;
  if (!settings.log_scale.empty()) {
    log << ", log scale:";
    for (const NamedParameter& p : settings.log_scale) log << " " << p.name;
  }
  log << "\n";
}

}  // namespace

CLI::App* add_fit_command(CLI::App& app) {
  auto options = std::make_shared<FitCommandOptions>();
  auto plot = std::make_shared<std::string>();
  CLI::App* fit = app.add_subcommand(
      "fit",
      "Estimate a problem's or a model's parameters from observations (rewind generate)\n"
      "or a measured series (a CSV file): L-BFGS with bounds (NLopt), every gradient by\n"
      "the checkpointed adjoint.");
  fit->footer(fit_footer());
  fit->add_option("PROBLEM", options->problem, "the problem the observations come from");
  fit->add_option("--model", options->model,
                  "instead of PROBLEM: a model plugin (a shared library built\n"
                  "with rewind_add_model; docs/models.md)")
      ->type_name("PATH");
  fit->add_option("--observations", options->observations, "observation file (rewind generate)")
      ->type_name("FILE.h5");
  add_data_options(*fit, *options);
  fit->add_flag("--fit-initial-state", options->fit_initial_state,
                "estimate the initial state too (from the file's, the\n"
                "first row of --data, or the model's)");
  fit->add_option("--fit", options->fit, "the parameters to estimate, e.g. F,k")
      ->required()
      ->type_name("NAME,...");
  fit->add_option("--start", options->start,
                  "start values of fitted parameters (default: the problem's)")
      ->type_name("NAME=VALUE,...");
  fit->add_option("--bounds", options->bounds,
                  "bounds of fitted parameters, LO or HI may be empty\n"
                  "(default: [0, inf) for rates and diffusions)")
      ->type_name("NAME=LO:HI,...");
  fit->add_option("--log-scale", options->log_scale,
                  "fitted parameters to move in log(theta) (rates known to\n"
                  "their order of magnitude): start > 0, lower bound >= 0")
      ->type_name("NAME,...");
  fit->add_option("--parameters", options->parameters,
                  "values of parameters not fitted (default: the file's)")
      ->type_name("NAME=VALUE,...");
  add_integer_option(*fit, "-n,--n", options->n, IntegerRange::count(),
                     "checked against the file's size");
  fit->add_option("--sigma", options->sigma,
                  "misfit weight (default: the file's noise; 1 without)");
  add_optimiser_options(*fit, options);
  add_checkpoint_flags(*fit, options->checkpoint, FlagUse::fit);
  fit->add_option("--plot", *plot,
                  "draw PREFIX_fields.png (observed, start, fit) and\n"
                  "PREFIX_history.png (J and parameters per iteration)")
      ->type_name("PREFIX");

  fit->callback([options, plot] {
    ProcessGroup::require_one_process("rewind fit");
    if (!plot->empty() && plot->find('\'') != std::string::npos)
      rwd::detail::fail<InvalidArgument>("--plot '", *plot, "': the name has a quote");
    options->progress = stderr_is_terminal();
    if (!options->data.empty()) {
      run_data_fit_command(*options, *plot);
      return;
    }
    const FitSettings settings = resolve_fit_settings(*options);
    const bool json = settings.run.json;
    std::ostream& log = progress_log(json);
    if (!json) print_fit_header(log, settings);
    const auto on_iteration = [&](const FitIteration& it) {
      print_iteration(log, it, settings.fitted);
    };
    const auto on_stage = [&](int stage, int stages, Index steps, Index observed) {
      if (stages > 1)
        log << "  stage " << stage << " of " << stages << ": " << observed
            << " observed steps, horizon " << steps << " steps" << std::endl;
    };
    const FitReport report = run_fit(settings, on_iteration, on_stage);
    if (json)
      emit_json_report(fit_json(report));
    else
      print_text(std::cout, report);
    if (!plot->empty()) write_plots(report, *plot);
    if (report.result.failed)
      rwd::detail::fail<Error>("the fit stopped: ", report.result.failure,
                               " (the best parameters so far are in the report)");
  });
  return fit;
}

}  // namespace rwd::cli
