// rewind/integrators/sparse_jacobian_check.hpp — checks a problem's declared sparse Jacobian
// (sparsity() and jacobian_values(), what the sparse stage solves and CVODES's KLU solver factor)
// against central finite differences of its right-hand side, entry by entry, so that a pattern
// declared wrongly — a neighbour left out, a coupling forgotten — or a wrong value is named
// before a stiff run factors a different matrix than the model's.
//
//   const auto check = rwd::check_sparse_jacobian(problem, /*t=*/0.0, y, theta);
//   if (!check.ok) std::cerr << check.report();   // "∂f_12/∂y_77 = 0.25 by finite differences,
//                                                 //  but (12, 77) is outside the sparsity()"
//
// Column j of ∂f/∂y by (f(y + h e_j) − f(y − h e_j)) / 2h, h = relative_step · max(1, |y_j|):
// 2n right-hand sides, so it is for checking, on an instance small enough (n in the thousands at
// most), not for inner loops. Every entry of the dense n × n comparison counts: a declared one
// against its value from jacobian_values(), an undeclared one against zero. An entry's error is
// |declared − difference| / max(largest |entry| of its row, by either, absolute_floor); the check
// is ok when every error is at most `tolerance` (central differences are good to about 1e-9
// relative on well-scaled models, a wrong entry gives errors near 1). The worst entry is reported,
// with whether it lies outside the pattern. The pattern itself must be well formed (rows in
// order, columns ascending: rwd::check_compressed_rows); a malformed one is refused
// (InvalidArgument) before any rhs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "rewind/error.hpp"
#include "rewind/integrators/declared_jacobian.hpp"
#include "rewind/integrators/sparse_lu.hpp"
#include "rewind/types.hpp"

namespace rwd {

struct SparseJacobianCheckOptions {
  double tolerance = 1e-6;        // largest accepted error (relative to the row's scale)
  double relative_step = 1e-6;    // h = relative_step · max(1, |y_j|)
  double absolute_floor = 1e-12;  // the smallest row scale (rows of zeros)
};

struct SparseJacobianCheck {
  bool ok = true;
  // The worst entry: ∂f_row/∂y_column, its declared value (0 outside the pattern) and the finite
  // difference, their error, and whether the pattern leaves it out.
  Index row = -1, column = -1;
  double declared = 0.0, finite_difference = 0.0, error = 0.0;
  bool outside_pattern = false;
  Index entries_checked = 0;  // n², every one

  std::string report() const {
    std::ostringstream out;
    if (row < 0) return "sparse Jacobian: nothing checked";
    out << "sparse Jacobian " << (ok ? "agrees" : "DISAGREES")
        << " with finite differences: worst entry d f_" << row << " / d y_" << column << " = "
        << finite_difference << " by finite differences, ";
    if (outside_pattern)
      out << "but (" << row << ", " << column << ") is outside the declared sparsity()";
    else
      out << declared << " from jacobian_values()";
    out << " (error " << error << " relative to the row's largest entry, " << entries_checked
        << " entries checked)";
    return out.str();
  }
};

// The check above, for a problem that declares a sparse Jacobian (detail::HasSparseJacobian) on
// Eigen vectors, at (t, y, θ).
template <class P>
requires detail::HasSparseJacobian<P> SparseJacobianCheck check_sparse_jacobian(
    const P& problem, double t, const Eigen::VectorXd& y, const Eigen::VectorXd& theta,
    const SparseJacobianCheckOptions& options = {}) {
  const auto pattern = problem.sparsity();
  const Index n = pattern.size;
  if (y.size() != n)
    detail::fail<InvalidArgument>("check_sparse_jacobian: the state has ", y.size(),
                                  " components; the sparsity() is ", n, " x ", n);
  const std::vector<Index> starts(pattern.row_starts.begin(), pattern.row_starts.end());
  const std::vector<Index> columns(pattern.columns.begin(), pattern.columns.end());
  check_compressed_rows(n, starts, columns, "check_sparse_jacobian: the problem's sparsity()");
  if (!(options.tolerance > 0.0) || !(options.relative_step > 0.0) ||
      !(options.absolute_floor > 0.0))
    detail::fail<InvalidArgument>(
        "check_sparse_jacobian: tolerance, relative_step and "
        "absolute_floor must be > 0");

  // The declared matrix, dense.
  std::vector<double> values(columns.size());
  problem.jacobian_values(t, y, theta, values);
  Eigen::MatrixXd declared = Eigen::MatrixXd::Zero(n, n);
  Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic> in_pattern =
      Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic>::Constant(n, n, false);
  for (Index r = 0; r < n; ++r)
    for (Index k = starts[static_cast<std::size_t>(r)]; k < starts[static_cast<std::size_t>(r) + 1];
         ++k) {
      const Index c = columns[static_cast<std::size_t>(k)];
      declared(r, c) = values[static_cast<std::size_t>(k)];
      in_pattern(r, c) = true;
    }

  // Central differences, column by column.
  Eigen::MatrixXd differences(n, n);
  Eigen::VectorXd shifted = y, plus(n), minus(n);
  for (Index j = 0; j < n; ++j) {
    const double h = options.relative_step * std::max(1.0, std::abs(y[j]));
    shifted[j] = y[j] + h;
    problem.rhs(t, shifted, theta, plus);
    shifted[j] = y[j] - h;
    problem.rhs(t, shifted, theta, minus);
    shifted[j] = y[j];
    differences.col(j) = (plus - minus) / (2.0 * h);
  }

  SparseJacobianCheck check;
  check.entries_checked = n * n;
  for (Index r = 0; r < n; ++r) {
    const double scale =
        std::max({declared.row(r).cwiseAbs().maxCoeff(), differences.row(r).cwiseAbs().maxCoeff(),
                  options.absolute_floor});
    for (Index c = 0; c < n; ++c) {
      const double error = std::abs(declared(r, c) - differences(r, c)) / scale;
      if (check.row < 0 || error > check.error || !std::isfinite(error)) {
        check.row = r;
        check.column = c;
        check.declared = declared(r, c);
        check.finite_difference = differences(r, c);
        check.error = error;
        check.outside_pattern = !in_pattern(r, c);
      }
    }
  }
  check.ok = std::isfinite(check.error) && check.error <= options.tolerance;
  return check;
}

}  // namespace rwd
