// src/cli/data_fit_report.cpp — see data_fit_report.hpp.
#include "data_fit_report.hpp"

#include "fit_json.hpp"
#include "plot_script.hpp"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>

#include "rewind/error.hpp"
#include "rewind/format.hpp"
#include "rewind/parallel.hpp"

namespace rwd::cli {
namespace {

using Json = nlohmann::ordered_json;

Json number(double x) {
  return std::isfinite(x) ? Json(x) : Json(nullptr);
}

Json vector_json(const Eigen::VectorXd& v) {
  Json out = Json::array();
  for (Eigen::Index i = 0; i < v.size(); ++i) out.push_back(number(v[i]));
  return out;
}

std::string format(const char* spec, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, spec, value);
  return buffer;
}

Json fitted_values(const DataFitSettings& settings, const Eigen::VectorXd& theta) {
  return fitted_json(settings.fitted, theta);
}

// {name: θ[i]} over every parameter.
Json all_values(const DataFitSettings& settings, const Eigen::VectorXd& theta) {
  Json out = Json::object();
  for (std::size_t i = 0; i < settings.parameter_names.size(); ++i)
    out[settings.parameter_names[i]] = number(theta[static_cast<Eigen::Index>(i)]);
  return out;
}

// The file's columns over the rows (null where missing), and the model's value of each column's
// state at every row.
Json data_json(const DataFitReport& report) {
  const DataFitSettings& settings = report.settings;
  const TimeSeries& data = settings.data;
  Json observed = Json::array(), fit = Json::array(), states = Json::array();
  Index measured = 0;
  for (Index c = 0; c < data.values.cols(); ++c) {
    const Index state = data.column_indices[static_cast<std::size_t>(c)];
    states.push_back(settings.state_names[static_cast<std::size_t>(state)]);
    Json row = Json::array(), fit_row = Json::array();
    for (Index k = 0; k < data.values.rows(); ++k) {
      row.push_back(number(data.values(k, c)));
      if (k < settings.training_points && !std::isnan(data.values(k, c))) ++measured;
      if (report.prediction.size()) fit_row.push_back(number(report.prediction(k, state)));
    }
    observed.push_back(row);
    fit.push_back(fit_row);
  }
  const Index rows = static_cast<Index>(data.times.size());
  return {{"file", settings.data_file},
          {"columns", settings.column_names},
          {"states", states},
          {"by_position", settings.columns_by_position},
          {"t", data.times},
          {"training_points", settings.training_points},
          {"held_out_points", rows - settings.training_points},
          {"measured", measured},
          {"y", observed},
          {"fit", fit}};
}

Json report_json(const DataFitReport& report) {
  const DataFitSettings& settings = report.settings;
  const DataFitResult& result = report.result;
  const Index fitted = static_cast<Index>(settings.fitted.size());
  Json j;
  j["rewind_version"] = REWIND_VERSION;
  j["problem"] = settings.problem->name;
  j["model"] = settings.model.empty() ? Json(nullptr) : Json(settings.model);
  j["n"] = settings.problem->sized() ? Json(settings.n) : Json(nullptr);
  j["state_names"] = settings.state_names;
  j["state_size"] = settings.state_names.size();
  j["threads"] = rwd::thread_count();
  j["method"] = settings.spec.method;
  const bool adaptive = settings.spec.rtol > 0.0;
  j["adaptive"] = adaptive;
  j["max_step"] = adaptive ? Json(nullptr) : Json(settings.spec.max_step);
  j["rtol"] = adaptive ? Json(settings.spec.rtol) : Json(nullptr);
  j["atol"] = adaptive ? Json(settings.spec.atol) : Json(nullptr);
  j["step_rounds"] = result.step_rounds;
  j["steps_settled"] = result.steps_settled;
  j["t0"] = settings.spec.t0;
  j["steps"] = report.stages.empty() ? 0 : report.stages.back().steps;
  j["initial_state_source"] = settings.initial_state_source;
  j["data"] = data_json(report);
  Json names = Json::array();
  for (const NamedParameter& p : settings.fitted) names.push_back(p.name);
  j["fitted"] = names;
  j["parameters"] = all_values(settings, result.theta);
  j["start"] = fitted_values(settings, settings.theta_start);
  Json bounds = Json::object();
  for (std::size_t i = 0; i < settings.fitted.size(); ++i)
    bounds[settings.fitted[i].name] = {number(settings.bounds[i].lower),
                                       number(settings.bounds[i].upper)};
  j["bounds"] = bounds;
  Json log_scale = Json::array();
  for (const NamedParameter& p : settings.log_scale) log_scale.push_back(p.name);
  j["log_scale"] = log_scale;
  j["restarts"] = settings.spec.restarts;
  j["loss"] = number(result.residual_sum_of_squares / 2.0);
  j["rss"] = number(result.residual_sum_of_squares);
  j["sigma"] = number(result.sigma);
  j["sigma_estimated"] = result.sigma_estimated;
  j["gradient"] = result.gradient.size() ? fitted_values(settings, result.gradient) : Json(nullptr);
  Json errors = Json::object();
  for (Index i = 0; i < fitted; ++i)
    errors[settings.fitted[static_cast<std::size_t>(i)].name] =
        i < result.standard_errors.size() ? number(result.standard_errors[i]) : Json(nullptr);
  j["standard_errors"] = errors;
  Json covariance = nullptr;
  if (result.positive_definite) {
    covariance = Json::array();
    for (Eigen::Index r = 0; r < result.covariance.rows(); ++r)
      covariance.push_back(vector_json(result.covariance.row(r).transpose()));
  }
  j["covariance"] = covariance;
  j["initial_state"] = {{"fitted", settings.spec.fit_initial_state},
                        {"start", vector_json(report.initial_state_start)},
                        {"fit", vector_json(result.initial_state)},
                        {"standard_errors", settings.spec.fit_initial_state
                                                ? vector_json(result.initial_state_standard_errors)
                                                : Json(nullptr)}};
  j["held_out_rmse"] =
      report.held_out_rmse.size() ? vector_json(report.held_out_rmse) : Json(nullptr);
  j["iterations"] = result.iterations;
  j["evaluations"] = result.evaluations;
  j["stop_reason"] = result.status;
  j["converged"] = result.converged;
  j["failed"] = result.failed;
  j["failure"] = result.failed ? Json(result.status) : Json(nullptr);
  j["history"] = history_json(result.history, report.history_stage, settings.fitted);
  Json stages = Json::array();
  for (const DataFitStage& stage : report.stages)
    stages.push_back({{"rows", stage.rows},
                      {"steps", stage.steps},
                      {"iterations", stage.iterations},
                      {"evaluations", stage.evaluations},
                      {"loss", number(stage.loss)},
                      {"parameters", fitted_values(settings, stage.theta)},
                      {"stop_reason", stage.status}});
  j["stages"] = stages;
  const CheckpointPlan& plan = report.checkpoint.plan;
  const auto peak = result.summary.storage.peak_bytes_on(LevelKind::memory);
  j["schedule"] = {{"name", plan.name},
                   {"snapshots", plan.snapshots},
                   {"recomputed_steps", plan.advances},
                   {"recompute_ratio", plan.recompute_ratio()},
                   {"peak_memory_bytes", peak},
                   {"snapshot_bytes", report.checkpoint.snapshot_bytes},
                   {"store_all_bytes", report.checkpoint.store_all_bytes}};
  j["seconds"] = report.seconds;
  return j;
}

// The pictures' curves: the model's states at the start and the fit on an even grid of times.
Json curves_json(const DataFitReport& report) {
  const auto curve = [](const Eigen::MatrixXd& m) {
    Json out = Json::array();
    for (Eigen::Index s = 0; s < m.cols(); ++s) {
      Json row = Json::array();
      for (Eigen::Index k = 0; k < m.rows(); ++k) row.push_back(number(m(k, s)));
      out.push_back(row);
    }
    return out;
  };
  return {{"kind", "data"},
          {"t", report.curve_times},
          {"states", report.settings.state_names},
          {"start", curve(report.start_curve)},
          {"fit", curve(report.fit_curve)}};
}

}  // namespace

nlohmann::ordered_json data_fit_json(const DataFitReport& report) {
  return report_json(report);
}

void print_data_fit_text(std::ostream& out, const DataFitReport& report) {
  const DataFitSettings& settings = report.settings;
  const DataFitResult& result = report.result;
  out << "\n" << (result.failed ? "fit stopped: " : "fit: ") << result.status << "\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-10s %13s %13s %11s\n", "parameter", "start", "fit",
                "+- 1 s.e.");
  out << line;
  for (std::size_t i = 0; i < settings.fitted.size(); ++i) {
    const NamedParameter& p = settings.fitted[i];
    std::snprintf(line, sizeof line, "  %-10s %13.8g %13.8g %11.3g\n", p.name.c_str(),
                  settings.theta_start[p.index], result.theta[p.index],
                  result.standard_errors[static_cast<Eigen::Index>(i)]);
    out << line;
  }
  if (settings.spec.fit_initial_state)
    for (Eigen::Index i = 0; i < result.initial_state.size(); ++i) {
      const std::string name = settings.state_names[static_cast<std::size_t>(i)] + "(t0)";
      std::snprintf(line, sizeof line, "  %-10s %13.8g %13.8g %11.3g\n", name.c_str(),
                    report.initial_state_start[i], result.initial_state[i],
                    result.initial_state_standard_errors[i]);
      out << line;
    }
  if (result.positive_definite && result.covariance.rows() >= 2) {
    const auto name_of = [&](Eigen::Index r) {
      const auto i = static_cast<std::size_t>(r);
      return i < settings.fitted.size() ? settings.fitted[i].name
                                        : settings.state_names[i - settings.fitted.size()] + "(t0)";
    };
    const Eigen::MatrixXd& c = result.covariance;
    out << "  correlation of the estimates:";
    for (Eigen::Index r = 0; r < c.rows(); ++r)
      for (Eigen::Index k = r + 1; k < c.cols(); ++k)
        out << " " << name_of(r) << "/" << name_of(k) << " "
            << format("%.3f", c(r, k) / std::sqrt(c(r, r) * c(k, k)));
    out << "\n";
  } else if (settings.spec.uncertainty && !result.failed) {
    out << "  (the Hessian of J at the fit is not positive definite: no standard errors)\n";
  }
  out << "  sigma = " << format("%.4g", result.sigma)
      << (result.sigma_estimated ? " (estimated from the residuals: sqrt(RSS / (n - p)), n = "
                                 : " (given; n = ")
      << result.data_count << " measured values, p = "
      << settings.fitted.size() +
             (settings.spec.fit_initial_state ? settings.state_names.size() : std::size_t{0})
      << ")\n";
  if (report.held_out_rmse.size()) {
    const Index rows = static_cast<Index>(settings.data.times.size());
    out << "  held-out RMSE over the last " << rows - settings.training_points << " points (t = "
        << settings.data.times[static_cast<std::size_t>(settings.training_points)] << " to "
        << settings.data.times.back() << "):";
    for (Eigen::Index c = 0; c < report.held_out_rmse.size(); ++c)
      out << " " << settings.column_names[static_cast<std::size_t>(c)] << " "
          << format("%.4g", report.held_out_rmse[c]);
    out << "\n";
  }
  out << "  RSS = " << format("%.10g", result.residual_sum_of_squares) << " after "
      << result.iterations << " iterations, " << result.evaluations << " gradient evaluations, "
      << format("%.1f", report.seconds) << " s\n";
  const double peak = static_cast<double>(result.summary.storage.peak_bytes_on(LevelKind::memory));
  out << "  each gradient: " << (report.stages.empty() ? 0 : report.stages.back().steps)
      << (settings.spec.rtol > 0.0 ? " adaptive" : "") << " steps, " << report.checkpoint.plan.name
      << ", recompute ratio " << format("%.3g", report.checkpoint.plan.recompute_ratio())
      << ", peak snapshot memory " << format_bytes(peak) << "\n";
  if (settings.spec.rtol > 0.0)
    out << "  adaptive steps: chosen " << result.step_rounds
        << (result.step_rounds == 1 ? " time" : " times") << ", held while the optimiser moved; "
        << (result.steps_settled
                ? "the estimate chooses the same steps"
                : "the estimate still chooses other steps (it moved in the last of the "
                  "rounds allowed)")
        << "\n";
}

void draw_fit_plots(const std::string& plot_data, const std::string& prefix) {
  run_plot_script("plot_fit.py", plot_data, prefix + ".fit.json", prefix);
}

void write_data_fit_plots(const DataFitReport& report, const std::string& prefix) {
  Json j = report_json(report);
  j["fields"] = curves_json(report);
  draw_fit_plots(j.dump(1), prefix);
}

}  // namespace rwd::cli
