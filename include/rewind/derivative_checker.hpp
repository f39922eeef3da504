// rewind/derivative_checker.hpp — check a problem's vector-Jacobian products against finite
// differences of its right-hand side (in the spirit of Ceres' GradientChecker), and a
// hand-written vjp against a derived one.
//
// A wrong Jacobian is the most common mistake in a user model, and no adjoint method can detect
// it on its own: the gradient is then the exact derivative of a different model. Run this once
// on every new model, at a few representative states, before trusting any gradient.
//
//   MyModel model;
//   auto report = rwd::check_derivatives(model, /*t=*/0.0, y, theta);
//   if (!report.ok) std::cerr << report.report();     // names ∂f/∂y or ∂f/∂θ and the entry
//
// What is compared, for each of the two Jacobians ∂f/∂y (n × n) and ∂f/∂θ (n × p):
//   * full mode, when the Jacobian's rows and columns are both ≤ options.max_full_columns:
//     every column j by central differences of rhs, (f(x + h e_j) − f(x − h e_j)) / 2h, against
//     every row i from vjp with v = e_i — entry by entry, so a wrong entry is named (row i is the
//     component f_i, column j the variable y_j or parameter θ_j);
//   * random-direction mode otherwise: options.random_directions seeded random pairs (v, w),
//     comparing ⟨v, J w⟩ (central differences of rhs along w) with ⟨Jᵀv, w⟩ (vjp). This catches
//     any error in J that a random direction sees (all of them, with probability one) but cannot
//     say which entry; re-run on a smaller instance in full mode to locate it.
// The step is relative: h = relative_step · max(1, |x_j|) for a column, relative_step ·
// max(1, max_j |x_j|) for a direction with entries in [−1, 1]. An entry's error is
// |vjp − fd| / max(|vjp|, |fd|, absolute_floor); the check is ok when every error is ≤
// tolerance. Central differences are accurate to ≈ 1e-9 relative for well-scaled models, so the
// default tolerance 1e-6 separates round-off from real mistakes (which give errors near 1). A
// comparison that fails is retried at steps 10h, 100h and h/10 (options.retry_other_steps) and
// the smallest error counts, so entries far smaller than f are not flagged for round-off alone.
// Outputs are pre-filled with NaN before every rhs/vjp call, so a vjp that accumulates into its
// output instead of overwriting it, or leaves an entry unwritten, fails with a NaN entry.
//
// Against a derived vjp, too. Finite differences resolve an entry to ≈ 1e-6 at best; a model
// written once generic in the scalar type (rewind/model.hpp) has an exact derived vjp, so a
// hand-written vjp beside it is compared with that as well, entry by entry, to
// options.derived_tolerance (1e-12 relative to the largest entry of its row):
//   check_derivatives(rwd::auto_problem(MyModel{}), t, y, theta)  // MyModel has its own vjp
//   check_derivatives(hand_written_problem, rwd::auto_problem(MyTemplatedModel{}), t, y, theta)
// (both overloads are declared in rewind/model.hpp). The report then has against_derived set, and
// derived_state and derived_parameters name the worst entry, ∂f_i/∂y_j or ∂f_i/∂θ_j, with the
// hand-written and the derived value; ok requires both comparisons to pass. A templated model's
// own dense `jacobian` is compared with the derived Jacobian the same way
// (jacobian_against_derived, derived_jacobian).
//
// Works on any backend: vectors are moved through host buffers with copy_to_host/copy_from_host,
// so it is meant for checking, not for inner loops (full mode calls rhs 2(n + p) times and vjp n
// times).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/problem.hpp"
#include "rewind/types.hpp"

namespace rwd {

// How check_derivatives compares; validate() refuses meaningless values.
struct DerivativeCheckOptions {
  // Finite-difference step relative to the perturbed value: h = relative_step · max(1, |x_j|).
  // Central differences balance truncation (∝ h²) against round-off (∝ ε/h) near 1e-5..1e-6.
  // Must be in (0, 0.1].
  double relative_step = 1e-6;
  // The check is ok when every relative error is ≤ tolerance. Must be in (0, 1).
  double tolerance = 1e-6;
  // Denominator floor of the relative error |a − fd| / max(|a|, |fd|, absolute_floor): entries
  // smaller than this are compared in absolute terms. Must be > 0.
  double absolute_floor = 1e-8;
  // A Jacobian whose rows and columns are both ≤ this is compared entry by entry; larger ones
  // by random directions. Must be ≥ 0 (0: always random directions).
  Index max_full_columns = 64;
  // Number of random (v, w) pairs in random-direction mode. Must be ≥ 1.
  int random_directions = 8;
  // Seed of the random directions; the same seed gives the same directions on every platform.
  std::uint64_t seed = 0x5EED;
  // An entry (or direction) whose error at step h exceeds the tolerance is compared again with
  // finite differences at 10h, 100h and h/10, and the smallest error counts. Round-off (∝ 1/h)
  // and truncation (∝ h²) pull in opposite directions, so this removes most false alarms on
  // entries much smaller than f (e.g. ∂f_i/∂y_j ≈ 1e-4 where |f_i| ≈ 100), while a real mistake
  // fails at every step. Costs extra rhs calls only for failing columns or directions. Entries
  // still smaller than ≈ 1e-8·|f_i|/tolerance are below what differences can resolve: raise
  // absolute_floor for them.
  bool retry_other_steps = true;
  // Comparing a hand-written vjp with a derived one (the overloads of check_derivatives in
  // rewind/model.hpp): an entry passes when |hand − derived| ≤ derived_tolerance ·
  // max(|hand|, |derived|, the largest entry of its row in either, absolute_floor). Both are
  // exact up to round-off, so a correct vjp differs by a few ulps; a mistake by about the
  // entry's size. Must be in (0, 1).
  double derived_tolerance = 1e-12;

  void validate() const {
    if (!(relative_step > 0.0 && relative_step <= 0.1))
      detail::fail<InvalidArgument>("DerivativeCheckOptions: relative_step = ", relative_step,
                                    " must be in (0, 0.1]");
    if (!(tolerance > 0.0 && tolerance < 1.0))
      detail::fail<InvalidArgument>("DerivativeCheckOptions: tolerance = ", tolerance,
                                    " must be in (0, 1)");
    if (!(absolute_floor > 0.0 && std::isfinite(absolute_floor)))
      detail::fail<InvalidArgument>("DerivativeCheckOptions: absolute_floor = ", absolute_floor,
                                    " must be finite and > 0");
    if (!(derived_tolerance > 0.0 && derived_tolerance < 1.0))
      detail::fail<InvalidArgument>(
          "DerivativeCheckOptions: derived_tolerance = ", derived_tolerance, " must be in (0, 1)");
    if (max_full_columns < 0)
      detail::fail<InvalidArgument>("DerivativeCheckOptions: max_full_columns = ", max_full_columns,
                                    " must be >= 0");
    if (random_directions < 1)
      detail::fail<InvalidArgument>(
          "DerivativeCheckOptions: random_directions = ", random_directions, " must be >= 1");
  }
};

// How one Jacobian was compared.
enum class JacobianCheckMode {
  kFull,              // entry by entry
  kRandomDirections,  // ⟨v, J w⟩ against ⟨Jᵀv, w⟩ for random pairs
  kEmpty,             // nothing to compare (the problem has no parameters)
  kRandomCotangents,  // against a derived vjp: vjps with random cotangents v, entry by entry
                      // (each entry names its column, not a row)
};

// One comparison above the tolerance.
struct JacobianMismatch {
  // Full mode: the entry's row i and column j; −1 in random mode.
  Index row = -1;
  Index column = -1;
  // Random mode: the (v, w) pair's (or the cotangent's) index; −1 in full mode.
  Index direction = -1;
  // The vjp's value, the reference value (finite differences, or the derived vjp: see
  // JacobianCheck::reference), and their relative error.
  double vjp = 0.0;
  double fd = 0.0;
  double error = 0.0;
};

// The outcome for one Jacobian, ∂f/∂y or ∂f/∂θ.
struct JacobianCheck {
  // How many mismatches `mismatches` keeps.
  static constexpr std::size_t kMaxListedMismatches = 10;

  // "∂f/∂y" or "∂f/∂θ".
  std::string name;
  // Short name of the columns' variable: "y" or "θ" (used in messages: ∂f_i/∂y_j).
  std::string variable;
  // What the vjp is compared with, as messages name it: "finite differences", or "derived vjp"
  // ("derived Jacobian") for the derived derivatives of a templated model (the `fd` values below
  // are then the derived ones).
  std::string reference = "finite differences";
  // Entry by entry, by random directions, or nothing to compare.
  JacobianCheckMode mode = JacobianCheckMode::kEmpty;
  // Shape of the Jacobian: rows = state size n; columns = n (∂f/∂y) or p (∂f/∂θ).
  Index rows = 0;
  Index columns = 0;
  // Entries (full mode) or directions (random mode) compared.
  Index comparisons = 0;
  // How many of them have an error above the tolerance.
  Index failures = 0;
  // Full mode: the worst entry's row i (the component f_i); −1 in random mode.
  Index worst_row = -1;
  // Full and random-cotangent modes: the worst entry's column j (the variable y_j or θ_j); −1 in
  // random-direction mode.
  Index worst_column = -1;
  // Random mode: index of the worst (v, w) pair, 0-based; −1 in full mode.
  Index worst_direction = -1;
  // The vjp's value there: the entry (vjp with v = e_i, component j), or ⟨Jᵀv, w⟩.
  double worst_vjp = 0.0;
  // The reference value there: the entry, or ⟨v, J w⟩, by finite differences (or the derived
  // vjp's entry, when `reference` is "derived").
  double worst_fd = 0.0;
  // Its error |vjp − fd| / max(|vjp|, |fd|, absolute_floor); +∞ if either is NaN or Inf. With
  // retries, the smallest error over the steps tried (and worst_fd the value at that step).
  double worst_error = 0.0;
  // Every error ≤ tolerance.
  bool ok = true;
  // The first kMaxListedMismatches comparisons above the tolerance, in the order compared
  // (column by column in full mode); `failures` counts all of them.
  std::vector<JacobianMismatch> mismatches;

  // One line: shape, mode, verdict and the worst entry or direction.
  std::string report() const {
    std::ostringstream out;
    out << name << " (" << rows << " x " << columns << ", ";
    switch (mode) {
      case JacobianCheckMode::kEmpty:
        out << "empty): nothing to compare";
        return out.str();
      case JacobianCheckMode::kFull:
        out << "full Jacobian, " << comparisons << " entries): ";
        break;
      case JacobianCheckMode::kRandomDirections:
        out << comparisons << " random directions): ";
        break;
      case JacobianCheckMode::kRandomCotangents:
        out << comparisons << " entries of vjps with random cotangents): ";
        break;
    }
    if (reference != "finite differences") out << "against the " << reference << ": ";
    const bool entries = mode != JacobianCheckMode::kRandomDirections;
    if (ok) {
      out << "ok";
    } else {
      out << "WRONG, " << failures << (entries ? " entr" : " direction")
          << (entries ? (failures == 1 ? "y" : "ies") : (failures == 1 ? "" : "s"))
          << " above tolerance";
    }
    out << std::setprecision(10);
    if (mode == JacobianCheckMode::kFull) {
      out << "; worst entry row " << worst_row << ", column " << worst_column << " (∂f_"
          << worst_row << "/∂" << variable << "_" << worst_column << "): vjp = " << worst_vjp
          << ", " << reference << " = " << worst_fd;
    } else if (mode == JacobianCheckMode::kRandomCotangents) {
      out << "; worst entry: column " << worst_column << " (∂f/∂" << variable << "_" << worst_column
          << ") of cotangent " << worst_direction << ": vjp = " << worst_vjp << ", " << reference
          << " = " << worst_fd;
    } else {
      out << "; worst direction " << worst_direction << ": <" << name << "^T v, w> = " << worst_vjp
          << " by vjp, <v, " << name << " w> = " << worst_fd << " by finite differences";
    }
    out << std::setprecision(3) << ", error = " << worst_error;
    if (std::isnan(worst_vjp) || std::isnan(worst_fd))
      out << " (NaN: outputs are pre-filled with NaN, so rhs or vjp left this entry unwritten, "
             "accumulated into its output instead of overwriting it, or produced a NaN)";
    if (!ok && mode == JacobianCheckMode::kRandomDirections)
      out << " (random directions cannot name the entry: check a smaller instance, or raise "
             "max_full_columns, to locate it)";
    if (entries && failures > 1) {
      out << "\n    entries above tolerance"
          << (failures > Index(mismatches.size()) ? " (first " : " (") << mismatches.size()
          << " of " << failures << "):";
      for (const JacobianMismatch& m : mismatches) {
        out << std::setprecision(10) << "\n      ∂f_";
        if (m.row >= 0)
          out << m.row;
        else
          out << "·";  // a random cotangent's combination of rows
        out << "/∂" << variable << "_" << m.column;
        if (m.direction >= 0) out << " (cotangent " << m.direction << ")";
        out << ": vjp = " << m.vjp << ", " << reference << " = " << m.fd << std::setprecision(3)
            << ", error = " << m.error;
      }
    }
    return out.str();
  }
};

// What check_derivatives found.
struct DerivativeCheckReport {
  // Both Jacobians passed: every compared error ≤ options.tolerance.
  bool ok = true;
  // The options the check ran with.
  DerivativeCheckOptions options;
  // ∂f/∂y, n × n.
  JacobianCheck state;
  // ∂f/∂θ, n × p.
  JacobianCheck parameters;
  // True when the vjp was also compared with a derived one (check_derivatives of a templated
  // model, rewind/model.hpp): derived_state and derived_parameters hold those comparisons, at
  // options.derived_tolerance, and `ok` includes them.
  bool against_derived = false;
  JacobianCheck derived_state;
  JacobianCheck derived_parameters;
  // True when the problem's own dense Jacobian was compared with the derived one as well (a
  // templated model with a hand-written `jacobian`): derived_jacobian holds that comparison, entry
  // by entry at options.derived_tolerance (its `vjp` values are the hand-written Jacobian's), and
  // `ok` includes it.
  bool jacobian_against_derived = false;
  JacobianCheck derived_jacobian;

  // A few lines a user can print: the verdict, then one line per Jacobian and comparison naming
  // the worst entry.
  std::string report() const {
    std::ostringstream out;
    out << "derivative check " << (ok ? "passed" : "FAILED") << " (tolerance " << options.tolerance
        << ", relative step " << options.relative_step;
    if (against_derived || jacobian_against_derived)
      out << "; against the derived derivatives: tolerance " << options.derived_tolerance;
    out << ")\n";
    out << "  " << state.report() << "\n";
    out << "  " << parameters.report() << "\n";
    if (against_derived) {
      out << "  " << derived_state.report() << "\n";
      out << "  " << derived_parameters.report() << "\n";
    }
    if (jacobian_against_derived) out << "  " << derived_jacobian.report() << "\n";
    return out.str();
  }
};

namespace detail {

// Counter-based uniform numbers in [−1, 1): platform-independent, unlike <random>'s
// distributions.
inline double derivative_check_uniform(std::uint64_t seed, std::uint64_t counter) {
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ULL + counter + 0x632BE59BD9B4E019ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) * 0x1.0p-52 - 1.0;
}

// |a − fd| / max(|a|, |fd|, absolute_floor); +∞ when either value is NaN or Inf.
inline double comparison_error(double a, double fd, double absolute_floor) {
  if (!std::isfinite(a) || !std::isfinite(fd)) return std::numeric_limits<double>::infinity();
  return std::abs(a - fd) / std::max({std::abs(a), std::abs(fd), absolute_floor});
}

inline void record_comparison(JacobianCheck& check, double tolerance, Index row, Index column,
                              Index direction, double a, double fd, double error) {
  ++check.comparisons;
  if (!(error <= tolerance)) {
    ++check.failures;
    check.ok = false;
    if (check.mismatches.size() < JacobianCheck::kMaxListedMismatches)
      check.mismatches.push_back({row, column, direction, a, fd, error});
  }
  if (check.comparisons == 1 || error > check.worst_error) {
    check.worst_row = row;
    check.worst_column = column;
    check.worst_direction = direction;
    check.worst_vjp = a;
    check.worst_fd = fd;
    check.worst_error = error;
  }
}

inline double host_dot(std::span<const double> a, std::span<const double> b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

}  // namespace detail

// Compares problem.vjp with central finite differences of problem.rhs at (t, y, theta); see the
// header comment. Throws InvalidArgument for bad options, wrong sizes or non-finite inputs. This
// is what check_derivatives does for every problem; for a templated model it does more (below).
template <Problem P>
DerivativeCheckReport check_derivatives_by_finite_differences(
    const P& problem, double t, const typename P::Backend::Vector& y,
    const typename P::Backend::Vector& theta, DerivativeCheckOptions options = {}) {
  using B = typename P::Backend;
  using Vector = typename B::Vector;
  options.validate();

  const Index n = static_cast<Index>(problem.state_size());
  const Index p = static_cast<Index>(problem.parameter_size());
  if (n < 1) detail::fail<InvalidArgument>("check_derivatives: state size ", n, " must be >= 1");
  if (p < 0)
    detail::fail<InvalidArgument>("check_derivatives: parameter size ", p, " must be >= 0");
  if (B::size(y) != n)
    detail::fail<InvalidArgument>("check_derivatives: y has ", B::size(y),
                                  " elements but the problem's state size is ", n);
  if (B::size(theta) != p)
    detail::fail<InvalidArgument>("check_derivatives: theta has ", B::size(theta),
                                  " elements but the problem's parameter size is ", p);
  if (!std::isfinite(t))
    detail::fail<InvalidArgument>("check_derivatives: t = ", t, " is not finite");

  const auto nz = static_cast<std::size_t>(n);
  const auto pz = static_cast<std::size_t>(p);
  std::vector<double> y0(nz), theta0(pz);
  B::copy_to_host(y, y0);
  B::copy_to_host(theta, theta0);
  for (std::size_t i = 0; i < nz; ++i)
    if (!std::isfinite(y0[i]))
      detail::fail<InvalidArgument>("check_derivatives: y[", i, "] = ", y0[i], " is not finite");
  for (std::size_t i = 0; i < pz; ++i)
    if (!std::isfinite(theta0[i]))
      detail::fail<InvalidArgument>("check_derivatives: theta[", i, "] = ", theta0[i],
                                    " is not finite");

  DerivativeCheckReport report;
  report.options = options;
  report.state.name = "∂f/∂y";
  report.state.variable = "y";
  report.state.rows = n;
  report.state.columns = n;
  report.parameters.name = "∂f/∂θ";
  report.parameters.variable = "θ";
  report.parameters.rows = n;
  report.parameters.columns = p;

  const bool full_state = n <= options.max_full_columns;
  const bool full_parameters = n <= options.max_full_columns && p <= options.max_full_columns;
  report.state.mode = full_state ? JacobianCheckMode::kFull : JacobianCheckMode::kRandomDirections;
  report.parameters.mode = p == 0            ? JacobianCheckMode::kEmpty
                           : full_parameters ? JacobianCheckMode::kFull
                                             : JacobianCheckMode::kRandomDirections;

  // Work vectors on the backend and their host mirrors.
  Vector y_work = B::zeros(n), theta_work = B::zeros(p), f_work = B::zeros(n);
  Vector v_work = B::zeros(n), out_y = B::zeros(n), out_theta = B::zeros(p);
  std::vector<double> f_plus(nz), f_minus(nz), v_host(nz), out_y_host(nz), out_theta_host(pz);

  // Outputs are pre-filled with NaN, so an rhs or vjp that leaves an entry unwritten, or
  // accumulates into its output instead of overwriting it, shows up as a NaN entry.
  constexpr double kUnwritten = std::numeric_limits<double>::quiet_NaN();
  // f(y_h, theta_h) into f_h.
  auto rhs_at = [&](const std::vector<double>& y_h, const std::vector<double>& theta_h,
                    std::vector<double>& f_h) {
    B::copy_from_host(y_h, y_work);
    B::copy_from_host(theta_h, theta_work);
    B::fill(f_work, kUnwritten);
    problem.rhs(t, y_work, theta_work, f_work);
    B::copy_to_host(f_work, f_h);
  };
  // vjp at (y, theta) with cotangent v_host into out_y_host, out_theta_host.
  auto vjp_at = [&]() {
    B::copy_from_host(v_host, v_work);
    B::fill(out_y, kUnwritten);
    B::fill(out_theta, kUnwritten);
    problem.vjp(t, y, theta, v_work, out_y, out_theta);
    B::copy_to_host(out_y, out_y_host);
    B::copy_to_host(out_theta, out_theta_host);
  };
  const double step = options.relative_step;
  const double tol = options.tolerance;
  const double absolute_floor = options.absolute_floor;
  // Step multipliers: the first, then the retries for comparisons that fail at the first.
  const double multipliers[] = {1.0, 10.0, 100.0, 0.1};
  const int tries = options.retry_other_steps ? 4 : 1;

  // --- full mode: rows by vjp with unit vectors, columns by central differences ---------------
  if (full_state || (full_parameters && p > 0)) {
    std::vector<double> rows_y(full_state ? nz * nz : 0);
    std::vector<double> rows_theta(full_parameters ? nz * pz : 0);
    for (std::size_t i = 0; i < nz; ++i) {
      std::fill(v_host.begin(), v_host.end(), 0.0);
      v_host[i] = 1.0;
      vjp_at();
      if (full_state) std::copy(out_y_host.begin(), out_y_host.end(), rows_y.begin() + i * nz);
      if (full_parameters)
        std::copy(out_theta_host.begin(), out_theta_host.end(), rows_theta.begin() + i * pz);
    }
    std::vector<double> fd(nz), best_fd(nz), best_error(nz);
    // Column j of ∂f/∂x by central differences with step multiplier m, into fd.
    auto difference_column = [&](std::vector<double>& x, bool is_state, std::size_t j, double m) {
      const double xj = x[j];
      const double h = m * step * std::max(1.0, std::abs(xj));
      const double x_plus = xj + h, x_minus = xj - h;
      x[j] = x_plus;
      if (is_state)
        rhs_at(x, theta0, f_plus);
      else
        rhs_at(y0, x, f_plus);
      x[j] = x_minus;
      if (is_state)
        rhs_at(x, theta0, f_minus);
      else
        rhs_at(y0, x, f_minus);
      x[j] = xj;
      const double denominator = x_plus - x_minus;  // the step actually taken
      for (std::size_t i = 0; i < nz; ++i) fd[i] = (f_plus[i] - f_minus[i]) / denominator;
    };
    auto compare_columns = [&](std::vector<double> x, bool is_state, JacobianCheck& check,
                               const std::vector<double>& rows, std::size_t columns) {
      for (std::size_t j = 0; j < columns; ++j) {
        std::fill(best_error.begin(), best_error.end(), std::numeric_limits<double>::infinity());
        for (int k = 0; k < tries; ++k) {
          difference_column(x, is_state, j, multipliers[k]);
          bool all_pass = true;
          for (std::size_t i = 0; i < nz; ++i) {
            const double e = detail::comparison_error(rows[i * columns + j], fd[i], absolute_floor);
            if (k == 0 || e < best_error[i]) {
              best_error[i] = e;
              best_fd[i] = fd[i];
            }
            all_pass = all_pass && best_error[i] <= tol;
          }
          if (all_pass) break;
        }
        for (std::size_t i = 0; i < nz; ++i)
          detail::record_comparison(check, tol, static_cast<Index>(i), static_cast<Index>(j), -1,
                                    rows[i * columns + j], best_fd[i], best_error[i]);
      }
    };
    if (full_state) compare_columns(y0, true, report.state, rows_y, nz);
    if (full_parameters && p > 0) compare_columns(theta0, false, report.parameters, rows_theta, pz);
  }

  // --- random-direction mode: ⟨v, J w⟩ by central differences against ⟨Jᵀv, w⟩ ----------------
  const bool random_state = !full_state;
  const bool random_parameters = !full_parameters && p > 0;
  if (random_state || random_parameters) {
    std::uint64_t counter = 0;
    auto fill_random = [&](std::vector<double>& w) {
      for (double& wi : w) wi = detail::derivative_check_uniform(options.seed, counter++);
    };
    auto max_abs = [](const std::vector<double>& x) {
      double m = 0.0;
      for (double xi : x) m = std::max(m, std::abs(xi));
      return m;
    };
    std::vector<double> w_y(nz), w_theta(pz), x_plus, x_minus;
    // ⟨v, J w⟩ by central differences of rhs along w, step h.
    auto directional = [&](const std::vector<double>& x, const std::vector<double>& w, double h,
                           bool is_state) {
      x_plus = x;
      x_minus = x;
      for (std::size_t j = 0; j < x.size(); ++j) {
        x_plus[j] += h * w[j];
        x_minus[j] -= h * w[j];
      }
      if (is_state) {
        rhs_at(x_plus, theta0, f_plus);
        rhs_at(x_minus, theta0, f_minus);
      } else {
        rhs_at(y0, x_plus, f_plus);
        rhs_at(y0, x_minus, f_minus);
      }
      double s = 0.0;
      for (std::size_t i = 0; i < nz; ++i) s += v_host[i] * (f_plus[i] - f_minus[i]);
      return s / (2.0 * h);
    };
    auto compare_direction = [&](const std::vector<double>& x, const std::vector<double>& w,
                                 bool is_state, double a, JacobianCheck& check, int d) {
      const double h = step * std::max(1.0, max_abs(x));
      double best_fd = 0.0, best_error = std::numeric_limits<double>::infinity();
      for (int k = 0; k < tries; ++k) {
        const double fd = directional(x, w, multipliers[k] * h, is_state);
        const double e = detail::comparison_error(a, fd, absolute_floor);
        if (k == 0 || e < best_error) {
          best_error = e;
          best_fd = fd;
        }
        if (best_error <= tol) break;
      }
      detail::record_comparison(check, tol, -1, -1, d, a, best_fd, best_error);
    };
    for (int d = 0; d < options.random_directions; ++d) {
      fill_random(v_host);
      fill_random(w_y);
      fill_random(w_theta);
      vjp_at();
      if (random_state)
        compare_direction(y0, w_y, true, detail::host_dot(out_y_host, w_y), report.state, d);
      if (random_parameters)
        compare_direction(theta0, w_theta, false, detail::host_dot(out_theta_host, w_theta),
                          report.parameters, d);
    }
  }

  report.ok = report.state.ok && report.parameters.ok;
  return report;
}

// Checks problem.vjp at (t, y, theta) against central finite differences of problem.rhs (see the
// header comment). rewind/model.hpp adds overloads for templated models, which compare a
// hand-written vjp with the derived one as well.
template <Problem P>
DerivativeCheckReport check_derivatives(const P& problem, double t,
                                        const typename P::Backend::Vector& y,
                                        const typename P::Backend::Vector& theta,
                                        DerivativeCheckOptions options = {}) {
  return check_derivatives_by_finite_differences(problem, t, y, theta, std::move(options));
}

namespace detail {

// Compares problem.vjp with a reference vjp at the same point, entry by entry, into
// report.derived_state and report.derived_parameters (and sets report.against_derived and ok):
// `reference(v, out_y, out_theta)` writes the reference (∂f/∂y)ᵀv and (∂f/∂θ)ᵀv for a host
// cotangent v. Full mode (v = e_i for every row i) when n ≤ options.max_full_columns, else
// options.random_directions seeded random cotangents, each entry of the two vjps compared (the
// column is named, the row is not). The error of an entry is |a − b| / max(|a|, |b|, the largest
// |entry| of that vjp's output in either, absolute_floor), tolerance options.derived_tolerance.
template <Problem P, class ReferenceVjp>
void compare_with_reference_vjp(const P& problem, const ReferenceVjp& reference, double t,
                                const typename P::Backend::Vector& y,
                                const typename P::Backend::Vector& theta,
                                DerivativeCheckReport& report) {
  using B = typename P::Backend;
  const DerivativeCheckOptions& options = report.options;
  const Index n = static_cast<Index>(problem.state_size());
  const Index p = static_cast<Index>(problem.parameter_size());
  const auto nz = static_cast<std::size_t>(n), pz = static_cast<std::size_t>(p);
  const bool full = n <= options.max_full_columns;
  const JacobianCheckMode mode =
      full ? JacobianCheckMode::kFull : JacobianCheckMode::kRandomCotangents;
  auto prepare = [&](JacobianCheck& check, const JacobianCheck& like, Index columns) {
    check.name = like.name;
    check.variable = like.variable;
    check.reference = "derived vjp";
    check.rows = n;
    check.columns = columns;
    check.mode = columns == 0 ? JacobianCheckMode::kEmpty : mode;
  };
  prepare(report.derived_state, report.state, n);
  prepare(report.derived_parameters, report.parameters, p);

  constexpr double kUnwritten = std::numeric_limits<double>::quiet_NaN();
  typename B::Vector v_work = B::zeros(n), out_y = B::zeros(n), out_theta = B::zeros(p);
  std::vector<double> v(nz), hand_y(nz), hand_theta(pz), derived_y(nz), derived_theta(pz);
  // One vjp of each at cotangent v, their outputs compared entry by entry.
  auto compare = [&](Index row, Index cotangent) {
    B::copy_from_host(v, v_work);
    B::fill(out_y, kUnwritten);
    B::fill(out_theta, kUnwritten);
    problem.vjp(t, y, theta, v_work, out_y, out_theta);
    B::copy_to_host(out_y, hand_y);
    B::copy_to_host(out_theta, hand_theta);
    std::fill(derived_y.begin(), derived_y.end(), kUnwritten);
    std::fill(derived_theta.begin(), derived_theta.end(), kUnwritten);
    reference(v, derived_y, derived_theta);
    auto entries = [&](const std::vector<double>& a, const std::vector<double>& b,
                       JacobianCheck& check) {
      double scale = options.absolute_floor;
      for (std::size_t j = 0; j < a.size(); ++j)
        scale = std::max({scale, std::abs(a[j]), std::abs(b[j])});  // NaN leaves scale as it is
      for (std::size_t j = 0; j < a.size(); ++j)
        record_comparison(check, options.derived_tolerance, row, static_cast<Index>(j), cotangent,
                          a[j], b[j], comparison_error(a[j], b[j], scale));
    };
    entries(hand_y, derived_y, report.derived_state);
    if (p > 0) entries(hand_theta, derived_theta, report.derived_parameters);
  };
  if (full) {
    for (std::size_t i = 0; i < nz; ++i) {
      std::fill(v.begin(), v.end(), 0.0);
      v[i] = 1.0;
      compare(static_cast<Index>(i), -1);
    }
  } else {
    std::uint64_t counter = 0;
    for (int d = 0; d < options.random_directions; ++d) {
      for (double& vi : v) vi = derivative_check_uniform(options.seed ^ 0xD0E5, counter++);
      compare(-1, d);
    }
  }
  report.against_derived = true;
  report.ok = report.ok && report.derived_state.ok && report.derived_parameters.ok;
}

// Compares a hand-written dense Jacobian with the derived one entry by entry into
// report.derived_jacobian (and sets report.jacobian_against_derived and ok): the error of entry
// (i, j) is |a − b| / max(|a|, |b|, the largest |entry| of row i in either, absolute_floor),
// tolerance options.derived_tolerance. Both are n × n, column-major.
inline void compare_with_derived_jacobian(const std::vector<double>& hand,
                                          const std::vector<double>& derived, Index n,
                                          DerivativeCheckReport& report) {
  const DerivativeCheckOptions& options = report.options;
  JacobianCheck& check = report.derived_jacobian;
  check.name = "∂f/∂y (jacobian)";
  check.variable = "y";
  check.reference = "derived Jacobian";
  check.rows = n;
  check.columns = n;
  check.mode = JacobianCheckMode::kFull;
  const auto nz = static_cast<std::size_t>(n);
  for (std::size_t i = 0; i < nz; ++i) {
    double scale = options.absolute_floor;
    for (std::size_t j = 0; j < nz; ++j)
      scale = std::max({scale, std::abs(hand[i + nz * j]), std::abs(derived[i + nz * j])});
    for (std::size_t j = 0; j < nz; ++j) {
      const double a = hand[i + nz * j], b = derived[i + nz * j];
      record_comparison(check, options.derived_tolerance, static_cast<Index>(i),
                        static_cast<Index>(j), -1, a, b, comparison_error(a, b, scale));
    }
  }
  report.jacobian_against_derived = true;
  report.ok = report.ok && check.ok;
}

}  // namespace detail
}  // namespace rwd
