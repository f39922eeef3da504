// src/fit/src/fit_data.cpp — see rewind/fit/fit_data.hpp.
#include "rewind/fit/fit_data.hpp"

#include <nlopt.hpp>

#include <algorithm>
#include <cmath>

namespace rwd::detail {

// b − t is exact when t and b are within a factor 2 (Sterbenz) and then t + h = b; otherwise the
// rounded difference may miss by an ulp, and the neighbouring doubles are tried.
double step_onto(double t, double target) {
  double h = target - t;
  for (int tries = 0; tries < 8 && t + h != target; ++tries)
    h = std::nextafter(h, t + h < target ? std::numeric_limits<double>::infinity() : 0.0);
  if (t + h != target || !(h > 0.0))
    fail<InvalidArgument>("rwd::fit: no step from t = ", t, " lands on the data time ", target,
                          " in double precision; the data times are too close together");
  return h;
}

void require_data_times(double t0, const std::vector<double>& times) {
  if (!std::isfinite(t0)) fail<InvalidArgument>("rwd::fit: t0 = ", t0, " must be finite");
  if (times.empty()) fail<InvalidArgument>("rwd::fit: the data have no time (no row)");
  for (std::size_t k = 0; k < times.size(); ++k) {
    if (!std::isfinite(times[k]))
      fail<InvalidArgument>("rwd::fit: data row ", k, ": time ", times[k], " is not finite");
    if (times[k] < t0)
      fail<InvalidArgument>("rwd::fit: data row ", k, ": time ", times[k],
                            " is before the start t0 = ", t0);
    if (k > 0 && !(times[k] > times[k - 1]))
      fail<InvalidArgument>("rwd::fit: data row ", k, ": time ", times[k],
                            " does not come after row ", k - 1, "'s time ", times[k - 1],
                            "; data times must be strictly increasing");
  }
  if (!(times.back() > t0))
    fail<InvalidArgument>("rwd::fit: every data time is t0 = ", t0,
                          "; a fit needs data after the start");
}

}  // namespace rwd::detail

namespace rwd {

using detail::fail;

DataStepGrid data_step_grid(double t0, const std::vector<double>& times, double max_step) {
  detail::require_data_times(t0, times);
  const double longest = max_step == 0.0 ? (times.back() - t0) / 1000.0 : max_step;
  if (!std::isfinite(longest) || !(longest > 0.0))
    fail<InvalidArgument>(
        "rwd::fit: max_step = ", max_step,
        " must be finite and > 0 (0: a thousandth of the time to the last datum)");

  DataStepGrid grid;
  grid.times = times;
  double t = t0;
  for (const double target : times) {
    if (target > t) {
      const double span = target - t;
      const double pieces = std::max(1.0, std::ceil(span / longest));
      if (pieces > 1e8)
        fail<InvalidArgument>("rwd::fit: max_step = ", longest, " would take ", pieces,
                              " steps to reach the data time ", target);
      const auto count = static_cast<Index>(pieces);
      const double h = span / pieces;
      for (Index i = 0; i + 1 < count; ++i) {
        grid.step_sizes.push_back(h);
        t += h;  // as the stepper adds it (t_{n+1} = t_n + h_n)
      }
      grid.step_sizes.push_back(detail::step_onto(t, target));
      t = target;
    }
    grid.data_steps.push_back(static_cast<Index>(grid.step_sizes.size()));
  }
  return grid;
}

}  // namespace rwd

namespace rwd::detail {

std::vector<Index> data_components(const TimeSeries& data,
                                   const std::vector<std::string>& state_names, Index state_size) {
  if (data.columns.empty() == data.column_indices.empty())
    fail<InvalidArgument>("rwd::fit: give the data's columns either by state name (",
                          data.columns.size(), " given) or by index (", data.column_indices.size(),
                          " given), exactly one of the two");
  std::vector<Index> components;
  for (std::size_t c = 0; c < data.columns.size(); ++c) {
    const auto at = std::find(state_names.begin(), state_names.end(), data.columns[c]);
    if (at == state_names.end()) {
      std::string known;
      for (const auto& name : state_names) known += (known.empty() ? "" : ", ") + name;
      fail<InvalidArgument>("rwd::fit: data column ", c, " '", data.columns[c],
                            "' names no state of the model (its states: ",
                            known.empty() ? "unnamed; give column_indices" : known, ")");
    }
    components.push_back(static_cast<Index>(at - state_names.begin()));
  }
  for (std::size_t c = 0; c < data.column_indices.size(); ++c) {
    const Index i = data.column_indices[c];
    if (i < 0 || i >= state_size)
      fail<InvalidArgument>("rwd::fit: data column ", c, " has state index ", i,
                            ", outside the model's states 0 to ", state_size - 1);
    components.push_back(i);
  }
  for (std::size_t c = 0; c < components.size(); ++c)
    for (std::size_t earlier = 0; earlier < c; ++earlier)
      if (components[earlier] == components[c])
        fail<InvalidArgument>("rwd::fit: data columns ", earlier, " and ", c,
                              " hold the same state (component ", components[c], ")");
  return components;
}

ResolvedParameters resolve_parameters(const FitSpec& spec, const std::vector<std::string>& names,
                                      Eigen::VectorXd base) {
  const auto index_of = [&](const std::string& name, const char* role) {
    const auto at = std::find(names.begin(), names.end(), name);
    if (at == names.end()) {
      std::string known;
      for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
      fail<InvalidArgument>("rwd::fit: ", role, " parameter '", name,
                            "' is not a parameter of the model (its parameters: ",
                            known.empty() ? "none named" : known, ")");
    }
    return static_cast<Index>(at - names.begin());
  };
  if (spec.fit.empty()) fail<InvalidArgument>("rwd::fit: FitSpec::fit names no parameter to fit");
  if (spec.restarts < 0)
    fail<InvalidArgument>("rwd::fit: FitSpec::restarts = ", spec.restarts, " must be >= 0");
  if (base.size() != static_cast<Index>(names.size()))
    fail<InvalidArgument>("rwd::fit: the model has ", names.size(), " parameter names but ",
                          base.size(), " parameter values");
  ResolvedParameters out;
  std::vector<Index> taken;
  const auto take = [&](Index i, const std::string& name) {
    if (std::find(taken.begin(), taken.end(), i) != taken.end())
      fail<InvalidArgument>("rwd::fit: parameter '", name,
                            "' is named twice among the fitted and fixed parameters");
    taken.push_back(i);
  };
  for (const FixedParameter& fixed : spec.fixed) {
    const Index i = index_of(fixed.name, "fixed");
    take(i, fixed.name);
    if (!std::isfinite(fixed.value))
      fail<InvalidArgument>("rwd::fit: fixed parameter '", fixed.name, "' = ", fixed.value,
                            " is not finite");
    base[i] = fixed.value;
  }
  for (const FittedParameter& fitted : spec.fit) {
    const Index i = index_of(fitted.name, "fitted");
    take(i, fitted.name);
    if (std::isnan(fitted.lower) || std::isnan(fitted.upper) || !(fitted.lower < fitted.upper))
      fail<InvalidArgument>("rwd::fit: the bounds of '", fitted.name, "', [", fitted.lower, ", ",
                            fitted.upper, "], must satisfy lower < upper");
    if (!std::isfinite(fitted.start) || fitted.start < fitted.lower || fitted.start > fitted.upper)
      fail<InvalidArgument>("rwd::fit: the start of '", fitted.name, "' = ", fitted.start,
                            " lies outside its bounds [", fitted.lower, ", ", fitted.upper, "]");
    if (fitted.log_scale && !(fitted.start > 0.0 && fitted.lower >= 0.0))
      fail<InvalidArgument>("rwd::fit: '", fitted.name,
                            "' is fitted on the log scale, which needs "
                            "a start > 0 and a lower bound >= 0 (start ",
                            fitted.start, ", lower ", fitted.lower, ")");
    base[i] = fitted.start;
    if (fitted.log_scale) out.options.log_scale.push_back(i);
    out.options.fitted.push_back(i);
    out.options.bounds.push_back({fitted.lower, fitted.upper});
    out.names.push_back(fitted.name);
  }
  out.options.max_evaluations = spec.max_evaluations;
  out.options.restarts = spec.restarts;
  out.options.relative_tolerance = spec.relative_tolerance;
  out.options.x_tolerance = spec.x_tolerance;
  out.theta_start = std::move(base);
  out.options.validate(out.theta_start);
  return out;
}

Eigen::MatrixXd misfit_data(const TimeSeries& data, Index columns, Index* measured) {
  const auto rows = static_cast<Index>(data.times.size());
  if (data.values.rows() != rows || data.values.cols() != columns)
    fail<InvalidArgument>("rwd::fit: the data values are ", data.values.rows(), " × ",
                          data.values.cols(), " but there are ", rows, " times and ", columns,
                          " columns");
  Index count = 0;
  for (Index k = 0; k < rows; ++k)
    for (Index c = 0; c < columns; ++c) {
      const double v = data.values(k, c);
      if (std::isinf(v))
        fail<InvalidArgument>("rwd::fit: data row ", k, ", column ", c, ": value ", v,
                              " is infinite (NaN marks a missing value)");
      if (!std::isnan(v)) ++count;
    }
  if (count == 0) fail<InvalidArgument>("rwd::fit: every data value is missing (NaN)");
  *measured = count;
  return data.values.transpose();
}

DataFitResult data_fit_result(const ResolvedParameters& resolved, const FitResult& fit,
                              const ParameterUncertainty& unit_uncertainty, Index measured,
                              double given_sigma) {
  DataFitResult out;
  const auto p = static_cast<Index>(resolved.names.size());
  const auto y0_fitted = static_cast<Index>(resolved.options.fitted_initial_state.size());
  const Index estimated = p + y0_fitted;
  out.names = resolved.names;
  out.theta = fit.theta;
  out.estimates.resize(p);
  for (Index j = 0; j < p; ++j)
    out.estimates[j] = fit.theta[resolved.options.fitted[static_cast<std::size_t>(j)]];
  out.residual_sum_of_squares = 2.0 * fit.loss;  // J = ½ RSS at σ = 1
  out.data_count = measured;
  if (given_sigma > 0.0) {
    out.sigma = given_sigma;
  } else {
    if (measured <= estimated)
      fail<InvalidArgument>("rwd::fit: ", measured, " measured data for ", estimated,
                            " estimated quantities leave no degree of freedom to estimate σ; "
                            "give FitSpec::sigma");
    out.sigma = std::sqrt(out.residual_sum_of_squares / static_cast<double>(measured - estimated));
    out.sigma_estimated = true;
  }
  // J at σ = 1 has Hessian H₁; the misfit at σ is J/σ², so the covariance is σ² H₁⁻¹.
  const double variance = out.sigma * out.sigma;
  out.positive_definite = unit_uncertainty.positive_definite;
  out.covariance = variance * unit_uncertainty.covariance;
  out.standard_errors = out.sigma * unit_uncertainty.standard_errors.head(p);
  if (y0_fitted > 0)
    out.initial_state_standard_errors =
        out.sigma * unit_uncertainty.standard_errors.tail(y0_fitted);
  out.iterations = fit.iterations;
  out.evaluations = fit.evaluations;
  out.status = fit.failed ? fit.failure : fit.stop_reason;
  const int code = fit.optimizer_code;
  out.converged = !fit.failed && (code == NLOPT_SUCCESS || code == NLOPT_FTOL_REACHED ||
                                  code == NLOPT_XTOL_REACHED || code == NLOPT_ROUNDOFF_LIMITED);
  out.failed = fit.failed;
  out.optimizer_code = fit.optimizer_code;
  out.initial_state = fit.initial_state;
  out.gradient = fit.gradient;
  out.history = fit.history;
  out.summary = fit.summary;
  return out;
}

}  // namespace rwd::detail
