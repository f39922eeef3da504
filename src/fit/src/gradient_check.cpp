// src/fit/src/gradient_check.cpp — see rewind/fit/gradient_check.hpp.
#include "rewind/fit/gradient_check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace rwd {
namespace detail {

GradientCheck check_gradient_with(const LossAndGradient& evaluate, const Eigen::VectorXd& theta,
                                  std::vector<std::string> names,
                                  const GradientCheckOptions& options) {
  if (!(options.tolerance > 0.0 && options.tolerance < 1.0))
    fail<InvalidArgument>("check_gradient: tolerance = ", options.tolerance, " must lie in (0, 1)");
  if (!(options.relative_step >= 0.0) || !std::isfinite(options.relative_step))
    fail<InvalidArgument>("check_gradient: relative_step = ", options.relative_step,
                          " must be finite and > 0 (or 0: the cube root of the machine epsilon)");
  const Index p = theta.size();
  if (p == 0) fail<InvalidArgument>("check_gradient: θ is empty; there is nothing to check");
  if (!theta.allFinite()) fail<InvalidArgument>("check_gradient: θ contains NaN or Inf");
  if (!names.empty() && static_cast<Index>(names.size()) != p)
    fail<InvalidArgument>("check_gradient: θ has ", p, " components but the model names ",
                          names.size(), " parameters");
  if (names.empty())
    for (Index j = 0; j < p; ++j) names.push_back("θ[" + std::to_string(j) + "]");

  const double relative_step = options.relative_step > 0.0
                                   ? options.relative_step
                                   : std::cbrt(std::numeric_limits<double>::epsilon());
  GradientCheck out;
  out.names = std::move(names);
  out.tolerance = options.tolerance;
  auto [loss, gradient] = evaluate(theta);
  if (gradient.size() != p)
    fail<InvalidArgument>("check_gradient: the gradient has ", gradient.size(),
                          " components but θ has ", p);
  out.loss = loss;
  out.adjoint = std::move(gradient);
  out.finite_difference.resize(p);
  out.step.resize(p);
  for (Index j = 0; j < p; ++j) {
    const double h = relative_step * std::max(std::abs(theta[j]), 1.0);
    Eigen::VectorXd plus = theta, minus = theta;
    plus[j] += h;
    minus[j] -= h;
    const double taken = plus[j] - minus[j];  // the step as rounded, so the quotient is exact
    out.step[j] = 0.5 * taken;
    out.finite_difference[j] = (evaluate(plus).first - evaluate(minus).first) / taken;
  }
  const double floor =
      std::max(1e-8 * out.adjoint.cwiseAbs().maxCoeff(), std::numeric_limits<double>::min());
  out.relative_error.resize(p);
  for (Index j = 0; j < p; ++j) {
    const double a = out.adjoint[j], d = out.finite_difference[j];
    const double scale = std::max({std::abs(a), std::abs(d), floor});
    out.relative_error[j] = std::abs(a - d) / scale;
  }
  // A NaN error (a non-finite J) fails the check: maxCoeff would skip it.
  out.passed =
      out.relative_error.allFinite() && out.relative_error.maxCoeff(&out.worst) <= out.tolerance;
  if (!out.relative_error.allFinite())
    for (Index j = 0; j < p; ++j)
      if (!std::isfinite(out.relative_error[j])) out.worst = j;
  return out;
}

}  // namespace detail

std::string GradientCheck::report() const {
  std::ostringstream out;
  out.precision(6);
  for (std::size_t j = 0; j < names.size(); ++j) {
    const auto i = static_cast<Index>(j);
    out << names[j] << ": adjoint " << adjoint[i] << ", finite difference " << finite_difference[i]
        << ", relative error " << relative_error[i] << "\n";
  }
  out << (passed ? "passed" : "FAILED") << ": largest relative error "
      << (relative_error.size() > 0 ? relative_error[worst] : 0.0) << " ("
      << (names.empty() ? std::string("none") : names[static_cast<std::size_t>(worst)])
      << ") against the tolerance " << tolerance << "\n";
  return out.str();
}

}  // namespace rwd
