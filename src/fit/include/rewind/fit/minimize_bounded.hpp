// rewind/fit/minimize_bounded.hpp — a bound-constrained quasi-Newton minimiser (NLopt's L-BFGS)
// behind a plain function interface, so that NLopt stays out of every public header.
//
//   rwd::BoundedMinimizerOptions options;               // 100 evaluations, ftol_rel 1e-8, …
//   auto f = [](const std::vector<double>& x, std::vector<double>& g) {
//     g = {2 * (x[0] - 3), 2 * (x[1] + 1)};             // ∇f, always filled
//     return (x[0] - 3) * (x[0] - 3) + (x[1] + 1) * (x[1] + 1);
//   };
//   auto m = rwd::minimize_bounded(f, {0, 0}, {-10, 0}, {10, 10}, options);
//   m.x;             // ≈ (3, 0): the bound x1 >= 0 is active
//   m.stop_reason;   // "J changed by less than the relative tolerance …"
//
// The algorithm is NLopt's LD_LBFGS (Johnson, The NLopt nonlinear-optimization package,
// https://github.com/stevengj/nlopt): Ladislav Lukšan's implementation of the limited-memory
// BFGS method (Nocedal, "Updating quasi-Newton matrices with limited storage", Math. Comp. 35,
// 1980; Liu & Nocedal, "On the limited memory BFGS method for large scale optimization", Math.
// Prog. 45, 1989) with simple bounds handled by Lukšan's active-set projection. It is not the
// L-BFGS-B code of Byrd, Lu, Nocedal & Zhu ("A limited memory algorithm for bound constrained
// optimization", SIAM J. Sci. Comput. 16, 1995), which treats bounds by a generalised Cauchy
// point; both keep every iterate inside the box. The limited memory is NLopt's default.
//
// Deterministic: the same function values and gradients give the same iterates bit for bit.
// An exception thrown by f stops NLopt and leaves minimize_bounded unchanged (the caller decides
// what a failed evaluation means).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace rwd {

struct BoundedMinimizerOptions {
  // Most evaluations of f (each with its gradient), >= 1. NLopt's maxeval.
  int max_evaluations = 100;
  // Stop when one step changes f by less than this fraction of |f|, >= 0 (0: off). ftol_rel.
  double relative_tolerance = 1e-8;
  // Stop when one step changes every x_i by less than this fraction of |x_i|, >= 0 (0: off).
  // xtol_rel.
  double x_tolerance = 1e-10;

  // InvalidArgument naming the field: counts < 1, tolerances negative or not finite.
  void validate() const;
};

struct BoundedMinimum {
  std::vector<double> x;    // the point of the lowest f evaluated
  double value = 0.0;       // f(x)
  int evaluations = 0;      // calls of f
  int code = 0;             // NLopt's nlopt_result (> 0 success, < 0 failure or stop)
  std::string stop_reason;  // why NLopt stopped, in words
  // NLopt reported a failure it could not explain further (NLOPT_FAILURE, e.g. a line search
  // that could not lower f along a direction that should lower it: an inaccurate gradient).
  // Running out of evaluations or progress limited by roundoff are not failures.
  bool optimizer_failed = false;
};

// f(x, gradient) returns f(x) and writes ∇f(x) into `gradient` (sized like x on entry).
using BoundedObjective =
    std::function<double(const std::vector<double>& x, std::vector<double>& gradient)>;

// Minimises f over lower <= x <= upper (componentwise; ±infinity for none) from x0.
// InvalidArgument before any work: sizes that differ, no variables, x0 outside the bounds or not
// finite, lower >= upper, bad options.
BoundedMinimum minimize_bounded(const BoundedObjective& f, std::vector<double> x0,
                                const std::vector<double>& lower, const std::vector<double>& upper,
                                const BoundedMinimizerOptions& options);

}  // namespace rwd
