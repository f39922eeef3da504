// src/fit/src/parameter_uncertainty.cpp — see rewind/fit/parameter_uncertainty.hpp.
#include "rewind/fit/parameter_uncertainty.hpp"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "rewind/warning.hpp"

namespace rwd::detail {

ParameterUncertainty uncertainty_from_gradients(
    const std::function<Eigen::VectorXd(const Eigen::VectorXd& theta)>& gradient,
    const Eigen::VectorXd& theta, const std::vector<Index>& fitted) {
  const Index p = static_cast<Index>(fitted.size());
  if (p == 0) fail<InvalidArgument>("parameter_uncertainty: no fitted index");
  if (!theta.allFinite()) fail<InvalidArgument>("parameter_uncertainty: theta contains NaN or Inf");
  for (Index i = 0; i < p; ++i) {
    const Index index = fitted[static_cast<std::size_t>(i)];
    if (index < 0 || index >= theta.size())
      fail<InvalidArgument>("parameter_uncertainty: fitted index ", index, " is outside θ (",
                            theta.size(), " parameters)");
    for (Index j = 0; j < i; ++j)
      if (fitted[static_cast<std::size_t>(j)] == index)
        fail<InvalidArgument>("parameter_uncertainty: fitted index ", index, " is repeated");
  }

  ParameterUncertainty out;
  out.hessian.resize(p, p);
  for (Index j = 0; j < p; ++j) {
    const Index index = fitted[static_cast<std::size_t>(j)];
    const double h = 1e-4 * std::max(std::abs(theta[index]), 1e-12);
    Eigen::VectorXd plus = theta;
    Eigen::VectorXd minus = theta;
    plus[index] += h;
    minus[index] -= h;
    const Eigen::VectorXd g_plus = gradient(plus);
    const Eigen::VectorXd g_minus = gradient(minus);
    out.evaluations += 2;
    // The step actually taken (θ + h rounds), so the quotient is the secant of what was run.
    const double step = plus[index] - minus[index];
    for (Index i = 0; i < p; ++i) {
      const Index row = fitted[static_cast<std::size_t>(i)];
      out.hessian(i, j) = (g_plus[row] - g_minus[row]) / step;
    }
  }
  out.hessian = 0.5 * (out.hessian + out.hessian.transpose()).eval();

  const double nan = std::numeric_limits<double>::quiet_NaN();
  out.covariance = Eigen::MatrixXd::Constant(p, p, nan);
  out.standard_errors = Eigen::VectorXd::Constant(p, nan);
  const Eigen::LLT<Eigen::MatrixXd> cholesky(out.hessian);
  out.positive_definite = out.hessian.allFinite() && cholesky.info() == Eigen::Success;
  if (out.positive_definite) {
    out.covariance = cholesky.solve(Eigen::MatrixXd::Identity(p, p));
    out.standard_errors = out.covariance.diagonal().cwiseSqrt();
  }
  return out;
}

}  // namespace rwd::detail

namespace rwd {

void warn_if_poorly_determined(const std::vector<std::string>& names,
                               const Eigen::VectorXd& estimates,
                               const Eigen::VectorXd& standard_errors,
                               const Eigen::MatrixXd& covariance, bool positive_definite) {
  if (!positive_definite) {
    warn("fit",
         "the Hessian of J at the fit is not positive definite: no standard errors (a parameter "
         "the data do not determine, or not a minimum)");
    return;
  }
  const auto p = static_cast<Index>(names.size());
  for (Index i = 0; i < p; ++i) {
    Index partner = -1;
    double strongest = 0.0;
    for (Index k = 0; k < p; ++k) {
      if (k == i) continue;
      const double rho = covariance(i, k) / std::sqrt(covariance(i, i) * covariance(k, k));
      if (std::abs(rho) > std::abs(strongest)) {
        strongest = rho;
        partner = k;
      }
    }
    const double ratio = standard_errors[i] / std::abs(estimates[i]);
    const bool combined = std::abs(strongest) >= 0.99;
    // Poor: an error above the estimate, or above a tenth of it along a near-degenerate
    // direction (|ρ| ≥ 0.999: the fit slid along a valley the data barely bound).
    if (!(ratio > 1.0 || (ratio > 0.1 && std::abs(strongest) >= 0.999))) continue;
    std::ostringstream text;
    text.precision(3);
    text << "the data hardly determine " << names[static_cast<std::size_t>(i)]
         << ": its standard error is " << ratio << " times its estimate";
    if (combined)
      text << " (correlation " << strongest << " with " << names[static_cast<std::size_t>(partner)]
           << ": the data fix mainly a combination of the two)";
    warn("fit", text.str());
  }
}

}  // namespace rwd
