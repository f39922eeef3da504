// src/fit/src/minimize_bounded.cpp — NLopt's LD_LBFGS behind rwd::minimize_bounded; the only file
// of rewind that includes NLopt (see rewind/fit/minimize_bounded.hpp).
#include "rewind/fit/minimize_bounded.hpp"

#include <nlopt.hpp>

#include <cmath>
#include <exception>
#include <limits>
#include <new>
#include <sstream>
#include <stdexcept>

#include "rewind/error.hpp"

namespace rwd {
namespace {

using detail::fail;

std::string describe_result(int code, const BoundedMinimizerOptions& options) {
  std::ostringstream out;
  out.precision(3);
  switch (code) {
    case NLOPT_SUCCESS:
      return "NLopt reports success (the optimality conditions hold)";
    case NLOPT_STOPVAL_REACHED:
      return "J reached the stop value";
    case NLOPT_FTOL_REACHED:
      out << "J changed by less than the relative tolerance (" << options.relative_tolerance
          << ") in one step";
      return out.str();
    case NLOPT_XTOL_REACHED:
      out << "the parameters changed by less than the relative tolerance (" << options.x_tolerance
          << ") in one step";
      return out.str();
    case NLOPT_MAXEVAL_REACHED:
      out << "the limit of " << options.max_evaluations << " evaluations was reached";
      return out.str();
    case NLOPT_MAXTIME_REACHED:
      return "the time limit was reached";
    case NLOPT_ROUNDOFF_LIMITED:
      return "roundoff errors limited progress: J cannot be lowered further in double precision";
    case NLOPT_FORCED_STOP:
      return "stopped on request";
    case NLOPT_OUT_OF_MEMORY:
      return "NLopt ran out of memory";
    case NLOPT_INVALID_ARGS:
      return "NLopt refused its arguments";
    default:
      out << "NLopt failed (code " << code << ")";
      return out.str();
  }
}

}  // namespace

void BoundedMinimizerOptions::validate() const {
  if (max_evaluations < 1)
    fail<InvalidArgument>("max_evaluations = ", max_evaluations, " must be >= 1");
  if (!(std::isfinite(relative_tolerance) && relative_tolerance >= 0.0))
    fail<InvalidArgument>("relative_tolerance = ", relative_tolerance, " must be finite and >= 0");
  if (!(std::isfinite(x_tolerance) && x_tolerance >= 0.0))
    fail<InvalidArgument>("x_tolerance = ", x_tolerance, " must be finite and >= 0");
}

BoundedMinimum minimize_bounded(const BoundedObjective& f, std::vector<double> x0,
                                const std::vector<double>& lower, const std::vector<double>& upper,
                                const BoundedMinimizerOptions& options) {
  options.validate();
  if (!f) fail<InvalidArgument>("minimize_bounded needs a function to minimise");
  const std::size_t n = x0.size();
  if (n == 0) fail<InvalidArgument>("minimize_bounded: no variables to optimise");
  if (lower.size() != n || upper.size() != n)
    fail<InvalidArgument>("minimize_bounded: ", n, " variables but ", lower.size(), " lower and ",
                          upper.size(), " upper bounds");
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(lower[i]) || std::isnan(upper[i]) || !(lower[i] < upper[i]))
      fail<InvalidArgument>("minimize_bounded: the bounds of variable ", i, ", [", lower[i], ", ",
                            upper[i], "], must satisfy lower < upper");
    if (!std::isfinite(x0[i]))
      fail<InvalidArgument>("minimize_bounded: x0[", i, "] = ", x0[i], " is not finite");
    if (x0[i] < lower[i] || x0[i] > upper[i])
      fail<InvalidArgument>("minimize_bounded: x0[", i, "] = ", x0[i], " lies outside its bounds [",
                            lower[i], ", ", upper[i], "]");
  }

  BoundedMinimum best;
  best.x = x0;
  best.value = std::numeric_limits<double>::quiet_NaN();
  std::exception_ptr thrown;  // what f threw, rethrown once NLopt has stopped
  bool limit_reached = false;
  std::vector<double> x(n), gradient(n);
  // NLopt calls this with a null gradient only for derivative-free algorithms; LD_LBFGS always
  // asks for it, but a null pointer is handled anyway rather than trusted.
  //
  // Lukšan's code looks at NLopt's stop flags between iterations only, so after a forced stop
  // or at maxeval its line search may still call f a few times: such calls are answered here
  // without calling f, which makes max_evaluations a strict limit and an exception of f final.
  auto call = [&](unsigned count, const double* at, double* grad) -> double {
    if (thrown || limit_reached) throw nlopt::forced_stop();
    if (best.evaluations >= options.max_evaluations) {
      limit_reached = true;
      throw nlopt::forced_stop();
    }
    try {
      x.assign(at, at + count);
      const double value = f(x, gradient);
      ++best.evaluations;
      if (gradient.size() != count)
        fail<InvalidArgument>("minimize_bounded: the function wrote ", gradient.size(),
                              " gradient components for ", count, " variables");
      if (grad) std::copy(gradient.begin(), gradient.end(), grad);
      if (best.evaluations == 1 || value < best.value) {  // the first, or lower
        best.value = value;
        best.x = x;
      }
      return value;
    } catch (...) {
      thrown = std::current_exception();
      throw nlopt::forced_stop();  // NLopt's C++ layer turns this into a clean stop
    }
  };
  using Call = decltype(call);
  const nlopt::func trampoline = [](unsigned count, const double* at, double* grad, void* data) {
    return (*static_cast<Call*>(data))(count, at, grad);
  };

  nlopt::opt opt(nlopt::LD_LBFGS, static_cast<unsigned>(n));
  opt.set_lower_bounds(lower);
  opt.set_upper_bounds(upper);
  opt.set_min_objective(trampoline, &call);
  opt.set_maxeval(options.max_evaluations);  // and enforced strictly in `call`
  opt.set_ftol_rel(options.relative_tolerance);
  opt.set_xtol_rel(options.x_tolerance);

  double value = 0.0;
  int code = NLOPT_FAILURE;
  std::string detail_text;
  try {
    code = opt.optimize(x0, value);
  } catch (const nlopt::roundoff_limited&) {
    code = NLOPT_ROUNDOFF_LIMITED;
  } catch (const nlopt::forced_stop&) {
    code = NLOPT_FORCED_STOP;
  } catch (const std::invalid_argument& e) {
    fail<InvalidArgument>("minimize_bounded: NLopt refused its arguments: ", e.what());
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::runtime_error& e) {  // NLOPT_FAILURE, with NLopt's message if it has one
    code = NLOPT_FAILURE;
    detail_text = e.what();
  }
  if (thrown) std::rethrow_exception(thrown);
  if (limit_reached) code = NLOPT_MAXEVAL_REACHED;
  best.code = code;
  best.stop_reason = describe_result(code, options);
  if (code == NLOPT_FAILURE) {
    best.optimizer_failed = true;
    best.stop_reason = "NLopt failed";
    if (!detail_text.empty() && detail_text != "nlopt failure")
      best.stop_reason += " (" + detail_text + ")";
    best.stop_reason +=
        ": often a line search that cannot lower J along the quasi-Newton direction, "
        "as when the gradient is inaccurate";
  }
  return best;
}

}  // namespace rwd
