// src/fit/src/fit_parameters.cpp — the stepper-independent part of rwd::fit_parameters: option
// checks, scaling, the optimiser, iterations and failures (see rewind/fit/fit_parameters.hpp).
#include "rewind/fit/fit_parameters.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

#include "rewind/fit/minimize_bounded.hpp"

namespace rwd {
namespace {

using detail::fail;

// Thrown by an evaluation that ended the fit; minimize_bounded passes it through unchanged.
struct FitStopped {};

std::string describe_theta(const Eigen::VectorXd& theta) {
  std::ostringstream out;
  out.precision(10);
  out << '(';
  for (Index i = 0; i < theta.size(); ++i) out << (i ? ", " : "") << theta[i];
  out << ')';
  return out.str();
}

// The running state of one fit.
class Fit {
 public:
  Fit(const std::function<detail::FitGradient(const Eigen::VectorXd&)>& gradient,
      const Eigen::VectorXd& theta_start, const FitOptions& options)
      : gradient_(gradient),
        options_(options),
        theta_(theta_start),
        coordinates_(theta_start, options),
        start_(std::chrono::steady_clock::now()) {
    result_.theta = theta_start;
    result_.loss = std::numeric_limits<double>::quiet_NaN();
    result_.gradient =
        Eigen::VectorXd::Constant(theta_start.size(), std::numeric_limits<double>::quiet_NaN());
  }

  FitResult run() {
    BoundedMinimizerOptions minimizer;
    minimizer.relative_tolerance = options_.relative_tolerance;
    minimizer.x_tolerance = options_.x_tolerance;
    std::vector<double> x0 = coordinates_.start();
    try {
      for (int round = 0;; ++round) {
        minimizer.max_evaluations = options_.max_evaluations - result_.evaluations;
        const double loss_before = result_.loss;
        const BoundedMinimum minimum = minimize_bounded(
            [this](const std::vector<double>& x, std::vector<double>& g) { return evaluate(x, g); },
            x0, coordinates_.lower(), coordinates_.upper(), minimizer);
        result_.stop_reason = minimum.stop_reason;
        result_.optimizer_code = minimum.code;
        // A restart's round has the evaluations left; the limit the user set is the whole fit's.
        if (round > 0 && minimum.code == kEvaluationLimitReached)
          result_.stop_reason = "the limit of " + std::to_string(options_.max_evaluations) +
                                " evaluations was reached";
        if (minimum.optimizer_failed) {
          result_.failed = true;
          result_.failure = "the optimiser failed after " + std::to_string(result_.evaluations) +
                            " evaluations: " + minimum.stop_reason;
        }
        // Restart (FitOptions::restarts) only after NLopt's own optimality test, from the best θ,
        // with the objective scaled afresh, and only while a round still lowers J.
        const bool lowered =
            round == 0 || result_.loss < loss_before * (1.0 - minimizer.relative_tolerance);
        if (round >= options_.restarts || minimum.code != kOptimalityTestPassed || !lowered ||
            result_.evaluations >= options_.max_evaluations)
          break;
        ++result_.restarts;
        x0 = coordinates_.to_x(result_.theta);
        objective_scale_.reset();
      }
    } catch (const FitStopped&) {
      result_.failed = true;
      result_.stop_reason = "stopped: " + result_.failure;
    }
    result_.iterations = result_.history.empty() ? 0 : static_cast<int>(result_.history.size()) - 1;
    return std::move(result_);
  }

 private:
  // θ for the optimiser's x: fixed components from θ_start, fitted ones from x.
  void set_theta(const std::vector<double>& x) { coordinates_.to_theta(x, theta_); }

  [[noreturn]] void stop(const std::string& what) {
    std::ostringstream out;
    out.precision(10);
    out << "evaluation " << result_.evaluations << " (θ = " << describe_theta(theta_)
        << "): " << what;
    result_.failure = out.str();
    throw FitStopped{};
  }

  double evaluate(const std::vector<double>& x, std::vector<double>& g) {
    set_theta(x);
    ++result_.evaluations;
    detail::FitGradient run;
    try {
      run = gradient_(theta_);
    } catch (const NumericalError& e) {
      stop(e.what());
    } catch (const SolverError& e) {
      stop(e.what());
    }
    // Drivers check for NaN/Inf themselves unless told not to; a sum of finite terms may still
    // overflow, and an unchecked run may return a non-finite gradient.
    if (!std::isfinite(run.loss)) {
      std::ostringstream out;
      out.precision(17);
      out << "J = " << run.loss << " is not finite";
      stop(out.str());
    }
    if (run.grad_theta.size() != theta_.size())
      fail<InvalidArgument>("fit: the gradient has ", run.grad_theta.size(),
                            " components but θ has ", theta_.size());
    if (!run.grad_theta.allFinite()) stop("the parameter gradient dJ/dθ is not finite");

    double norm2 = 0.0;
    for (std::size_t j = 0; j < x.size(); ++j) {
      const double component = run.grad_theta[options_.fitted[j]];
      norm2 += component * component;
    }
    coordinates_.to_gradient(theta_, run.grad_theta, g);
    // NLopt's L-BFGS takes its first trial step along −g with |g|'s own length: with the huge
    // gradients of long horizons that step lands on a bound, often in a regime where the model's
    // pattern has died (a flat, wrong minimum). The optimiser therefore sees J scaled so that the
    // start's scaled gradient has length kFirstStep: a first trial step of about that fraction of
    // each parameter. The scaling is fixed after the first evaluation, so the problem the
    // optimiser solves is one smooth function; J reported everywhere else is unscaled.
    if (!objective_scale_) {
      double g_norm = 0.0;
      for (double gj : g) g_norm += gj * gj;
      g_norm = std::sqrt(g_norm);
      objective_scale_ = g_norm > 0.0 && std::isfinite(g_norm) ? kFirstStep / g_norm : 1.0;
    }
    for (double& gj : g) gj *= *objective_scale_;
    result_.summary = std::move(run.summary);
    if (result_.history.empty() || run.loss < result_.loss) {
      result_.theta = theta_;
      result_.loss = run.loss;
      result_.gradient = run.grad_theta;
      FitIteration iteration;
      iteration.iteration = static_cast<int>(result_.history.size());
      iteration.evaluations = result_.evaluations;
      iteration.loss = run.loss;
      iteration.gradient_norm = std::sqrt(norm2);
      iteration.theta = theta_;
      iteration.seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
      result_.history.push_back(iteration);
      if (options_.on_iteration) options_.on_iteration(result_.history.back());
    }
    return run.loss * *objective_scale_;
  }

  static constexpr double kFirstStep = 0.1;
  static constexpr int kOptimalityTestPassed = 1;    // NLOPT_SUCCESS
  static constexpr int kEvaluationLimitReached = 5;  // NLOPT_MAXEVAL_REACHED
  std::optional<double> objective_scale_;

  const std::function<detail::FitGradient(const Eigen::VectorXd&)>& gradient_;
  const FitOptions& options_;
  Eigen::VectorXd theta_;
  detail::FitCoordinates coordinates_;
  std::chrono::steady_clock::time_point start_;
  FitResult result_;
};

// One rule for the fitted components of θ and of y0 (`name`): each index inside [0, n), none
// listed twice, a finite start inside bounds with lower < upper.
void validate_fitted(const char* name, const std::vector<Index>& fitted,
                     const std::vector<ParameterBounds>& bounds, const Eigen::VectorXd& start) {
  const Index n = start.size();
  for (std::size_t j = 0; j < fitted.size(); ++j) {
    const Index i = fitted[j];
    if (i < 0 || i >= n)
      fail<InvalidArgument>("fit: fitted index ", i, " is outside ", name, "'s indices 0 to ",
                            n - 1);
    for (std::size_t earlier = 0; earlier < j; ++earlier)
      if (fitted[earlier] == i)
        fail<InvalidArgument>("fit: ", name, "[", i, "] is listed twice among the fitted indices");
    if (!std::isfinite(start[i]))
      fail<InvalidArgument>("fit: the start ", name, "[", i, "] = ", start[i], " is not finite");
    const ParameterBounds& b = bounds[j];
    if (std::isnan(b.lower) || std::isnan(b.upper) || !(b.lower < b.upper))
      fail<InvalidArgument>("fit: the bounds of ", name, "[", i, "], [", b.lower, ", ", b.upper,
                            "], must satisfy lower < upper");
    if (start[i] < b.lower || start[i] > b.upper)
      fail<InvalidArgument>("fit: the start ", name, "[", i, "] = ", start[i],
                            " lies outside its bounds [", b.lower, ", ", b.upper, "]");
  }
}

// The log-scale rules: each index one of the fitted ones, listed once, with a start > 0 and a
// lower bound >= 0 (log θ needs θ > 0 throughout).
void validate_log_scale(const FitOptions& options, const Eigen::VectorXd& theta_start) {
  for (std::size_t k = 0; k < options.log_scale.size(); ++k) {
    const Index i = options.log_scale[k];
    const auto fitted = std::find(options.fitted.begin(), options.fitted.end(), i);
    if (fitted == options.fitted.end())
      fail<InvalidArgument>("fit: θ[", i, "] is on the log scale but not fitted");
    for (std::size_t earlier = 0; earlier < k; ++earlier)
      if (options.log_scale[earlier] == i)
        fail<InvalidArgument>("fit: θ[", i, "] is listed twice on the log scale");
    const ParameterBounds& b =
        options.bounds[static_cast<std::size_t>(fitted - options.fitted.begin())];
    if (!(theta_start[i] > 0.0))
      fail<InvalidArgument>("fit: θ[", i,
                            "] is fitted on the log scale, so its start must be > 0, ", "not ",
                            theta_start[i]);
    if (b.lower < 0.0)
      fail<InvalidArgument>("fit: θ[", i, "] is fitted on the log scale, so its lower bound must ",
                            "be >= 0, not ", b.lower);
  }
}

}  // namespace

namespace detail {

FitCoordinates::FitCoordinates(const Eigen::VectorXd& theta_start, const FitOptions& options)
    : fitted_(options.fitted), bounds_(options.bounds) {
  const std::size_t m = fitted_.size();
  log_.assign(m, 0);
  scale_.resize(m);
  x0_.resize(m);
  lower_.resize(m);
  upper_.resize(m);
  for (std::size_t j = 0; j < m; ++j) {
    const double value = theta_start[fitted_[j]];
    const ParameterBounds& b = bounds_[j];
    log_[j] = std::find(options.log_scale.begin(), options.log_scale.end(), fitted_[j]) !=
              options.log_scale.end();
    if (log_[j]) {
      // x = 1 + ln(θ / θ_start): 1 at the start; θ's bound 0 is x's −∞, an infinite one stays.
      const double inf = std::numeric_limits<double>::infinity();
      scale_[j] = value;
      x0_[j] = 1.0;
      lower_[j] = b.lower > 0.0 ? 1.0 + std::log(b.lower / value) : -inf;
      upper_[j] = std::isfinite(b.upper) ? 1.0 + std::log(b.upper / value) : inf;
    } else {
      // s = |θ_start| makes every starting x_j = ±1; dividing by s > 0 keeps the bounds' order
      // and their infinities.
      scale_[j] = value != 0.0 ? std::abs(value) : 1.0;
      x0_[j] = value / scale_[j];
      lower_[j] = b.lower / scale_[j];
      upper_[j] = b.upper / scale_[j];
    }
    // The mapped bounds are rounded; the start must stay inside them.
    x0_[j] = std::clamp(x0_[j], lower_[j], upper_[j]);
  }
}

void FitCoordinates::to_theta(const std::vector<double>& x, Eigen::VectorXd& theta) const {
  for (std::size_t j = 0; j < x.size(); ++j) {
    const double value = log_[j] ? scale_[j] * std::exp(x[j] - 1.0) : x[j] * scale_[j];
    theta[fitted_[j]] = std::clamp(value, bounds_[j].lower, bounds_[j].upper);
  }
}

std::vector<double> FitCoordinates::to_x(const Eigen::VectorXd& theta) const {
  std::vector<double> x(fitted_.size());
  for (std::size_t j = 0; j < fitted_.size(); ++j) {
    const double value = theta[fitted_[j]];
    x[j] = log_[j] ? 1.0 + std::log(value / scale_[j]) : value / scale_[j];
    x[j] = std::clamp(x[j], lower_[j], upper_[j]);
  }
  return x;
}

void FitCoordinates::to_gradient(const Eigen::VectorXd& theta, const Eigen::VectorXd& grad_theta,
                                 std::vector<double>& g) const {
  for (std::size_t j = 0; j < fitted_.size(); ++j) {
    const Index i = fitted_[j];
    // dJ/dx_j = dJ/dθ_j · dθ_j/dx_j: s_j on the linear scale, θ_j itself on the log scale.
    g[j] = grad_theta[i] * (log_[j] ? theta[i] : scale_[j]);
  }
}

}  // namespace detail

void FitOptions::validate(const Eigen::VectorXd& theta_start) const {
  const Index p = theta_start.size();
  if (fitted.empty() && fitted_initial_state.empty())
    fail<InvalidArgument>(
        "fit: no parameter is to be fitted (FitOptions::fitted and fitted_initial_state are "
        "empty)");
  if (bounds.size() != fitted.size())
    fail<InvalidArgument>("fit: ", bounds.size(), " bounds for ", fitted.size(),
                          " fitted parameters; give one (lower, upper) per fitted index");
  for (Index i = 0; i < p; ++i)
    if (!std::isfinite(theta_start[i]))
      fail<InvalidArgument>("fit: the start θ[", i, "] = ", theta_start[i], " is not finite");
  validate_fitted("θ", fitted, bounds, theta_start);
  if (max_evaluations < 1)
    fail<InvalidArgument>("fit: max_evaluations = ", max_evaluations, " must be >= 1");
  if (!(std::isfinite(relative_tolerance) && relative_tolerance >= 0.0))
    fail<InvalidArgument>("fit: relative_tolerance = ", relative_tolerance,
                          " must be finite and >= 0");
  if (!(std::isfinite(x_tolerance) && x_tolerance >= 0.0))
    fail<InvalidArgument>("fit: x_tolerance = ", x_tolerance, " must be finite and >= 0");
  if (restarts < 0) fail<InvalidArgument>("fit: restarts = ", restarts, " must be >= 0");
  validate_log_scale(*this, theta_start);
}

void FitOptions::validate_initial_state(const Eigen::VectorXd& y0_start) const {
  if (initial_state_bounds.size() != fitted_initial_state.size())
    fail<InvalidArgument>("fit: ", initial_state_bounds.size(), " initial-state bounds for ",
                          fitted_initial_state.size(),
                          " fitted components of y0; give one (lower, upper) per fitted index");
  validate_fitted("y0", fitted_initial_state, initial_state_bounds, y0_start);
}

namespace detail {

FitResult fit_with_initial_state(
    const std::function<FitGradient(const Eigen::VectorXd& theta, const Eigen::VectorXd& y0)>&
        gradient,
    const Eigen::VectorXd& theta_start, const Eigen::VectorXd& y0_start,
    const FitOptions& options) {
  options.validate(theta_start);
  options.validate_initial_state(y0_start);
  if (!gradient) fail<InvalidArgument>("fit: no gradient function");
  const Index p = theta_start.size(), n = y0_start.size();
  if (options.fitted_initial_state.empty()) {
    FitOptions plain = options;
    if (options.on_iteration)
      plain.on_iteration = [&](const FitIteration& it) {
        FitIteration with_y0 = it;
        with_y0.initial_state = y0_start;
        options.on_iteration(with_y0);
      };
    FitResult result = Fit([&](const Eigen::VectorXd& theta) { return gradient(theta, y0_start); },
                           theta_start, plain)
                           .run();
    result.initial_state = y0_start;
    for (FitIteration& it : result.history) it.initial_state = y0_start;
    return result;
  }

  // One vector z = (θ, y0) for the optimiser; y0's fitted components are z's indices p + i.
  Eigen::VectorXd z_start(p + n);
  z_start << theta_start, y0_start;
  FitOptions joint = options;
  joint.fitted_initial_state.clear();
  joint.initial_state_bounds.clear();
  for (std::size_t j = 0; j < options.fitted_initial_state.size(); ++j) {
    joint.fitted.push_back(p + options.fitted_initial_state[j]);
    joint.bounds.push_back(options.initial_state_bounds[j]);
  }
  const auto split = [&](FitIteration& it) {
    const Eigen::VectorXd z = it.theta;
    it.theta = z.head(p);
    it.initial_state = z.tail(n);
  };
  if (options.on_iteration)
    joint.on_iteration = [&](const FitIteration& it) {
      FitIteration parts = it;
      split(parts);
      options.on_iteration(parts);
    };
  const std::function<FitGradient(const Eigen::VectorXd&)> joint_gradient =
      [&](const Eigen::VectorXd& z) {
        FitGradient run = gradient(z.head(p), z.tail(n));
        if (run.grad_theta.size() != p || run.grad_y0.size() != n)
          fail<InvalidArgument>("fit: the gradient has ", run.grad_theta.size(), " + ",
                                run.grad_y0.size(), " components but (θ, y0) has ", p, " + ", n);
        Eigen::VectorXd both(p + n);
        both << run.grad_theta, run.grad_y0;
        run.grad_theta = std::move(both);
        return run;
      };
  FitResult result = Fit(joint_gradient, z_start, joint).run();
  const Eigen::VectorXd z = result.theta, g = result.gradient;
  result.theta = z.head(p);
  result.initial_state = z.tail(n);
  result.gradient = g.head(p);
  result.initial_state_gradient = g.tail(n);
  for (FitIteration& it : result.history) split(it);
  return result;
}

FitResult fit_with_gradient(
    const std::function<FitGradient(const Eigen::VectorXd& theta)>& gradient,
    const Eigen::VectorXd& theta_start, const FitOptions& options) {
  options.validate(theta_start);
  if (!gradient) fail<InvalidArgument>("fit: no gradient function");
  return Fit(gradient, theta_start, options).run();
}

}  // namespace detail
}  // namespace rwd
