// src/cli/fit_json.hpp — the JSON pieces both fits' reports share (fit_command.cpp for
// --observations, data_fit_report.cpp for --data): numbers (null when not finite), the fitted
// parameters by name, the iteration history.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "problem_parameters.hpp"
#include "rewind/fit/fit_parameters.hpp"

namespace rwd::cli {

using FitJson = nlohmann::ordered_json;

inline FitJson json_number(double x) {
  return std::isfinite(x) ? FitJson(x) : FitJson(nullptr);
}

// {name: θ[index]} over the fitted parameters.
inline FitJson fitted_json(const std::vector<NamedParameter>& fitted,
                           const Eigen::VectorXd& theta) {
  FitJson out = FitJson::object();
  for (const NamedParameter& p : fitted) out[p.name] = json_number(theta[p.index]);
  return out;
}

// One entry per iteration: its stage (1-based; 1 where `stage` has none), counts, J, |grad J|,
// the fitted parameters and the seconds since the fit began.
inline FitJson history_json(const std::vector<FitIteration>& history, const std::vector<int>& stage,
                            const std::vector<NamedParameter>& fitted) {
  FitJson out = FitJson::array();
  for (std::size_t h = 0; h < history.size(); ++h) {
    const FitIteration& it = history[h];
    out.push_back({{"stage", h < stage.size() ? stage[h] : 1},
                   {"iteration", it.iteration},
                   {"evaluations", it.evaluations},
                   {"loss", json_number(it.loss)},
                   {"gradient_norm", json_number(it.gradient_norm)},
                   {"parameters", fitted_json(fitted, it.theta)},
                   {"seconds", it.seconds}});
  }
  return out;
}

}  // namespace rwd::cli
