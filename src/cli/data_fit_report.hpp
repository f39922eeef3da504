// src/cli/data_fit_report.hpp — the reports of `rewind fit --data` (data_fit_run.hpp): text,
// JSON (--json) and the data of its pictures (--plot PREFIX; scripts/plot_fit.py, kind "data").
//
// JSON keys: problem, model (the plugin's path or null), n, state_names, state_size, threads,
// method, max_step, t0, steps, initial_state_source; data {file, columns, states (the state of
// each column), by_position, t, training_points, held_out_points, measured (non-missing values
// fitted), y (columns × rows, null where missing), fit (columns × rows, the model at the fit)};
// fitted, parameters, start, bounds, log_scale (the names fitted in log θ), restarts (allowed),
// loss (J = RSS/2 at σ = 1), rss, sigma, sigma_estimated,
// gradient, standard_errors, covariance (over the fitted parameters, then y0 when fitted),
// initial_state {fitted, start, fit, standard_errors}, held_out_rmse (per column, null without
// held-out rows), iterations, evaluations, stop_reason, converged, failed, failure, history,
// stages, schedule, seconds.
#pragma once

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "data_fit_run.hpp"

namespace rwd::cli {

void print_data_fit_text(std::ostream& out, const DataFitReport& report);
nlohmann::ordered_json data_fit_json(const DataFitReport& report);
// Writes PREFIX.fit.json and draws PREFIX_fields.png and PREFIX_history.png.
void write_data_fit_plots(const DataFitReport& report, const std::string& prefix);

// Writes `plot_data` (a fit's JSON report with its "fields") to PREFIX.fit.json and runs
// scripts/plot_fit.py on it (REWIND_SCRIPTS_DIR overrides the folder); Error when it fails.
void draw_fit_plots(const std::string& plot_data, const std::string& prefix);

}  // namespace rwd::cli
