// rewind/integrators/stage_matrix.hpp — the matrices M = I − c·J of an implicit method's stage
// equations (c = h·a_ii): the problem's Jacobian J = ∂f/∂y, M factored, and solves with M or Mᵀ.
// The linear algebra of rwd::DiagonallyImplicitRungeKutta, apart from its stages and Newton
// iterations.
//
//   rwd::StageMatrix matrix(problem, rwd::ImplicitLinearSolver::automatic, "esdirk43");
//   matrix.evaluate_jacobian(t, y, theta);   // J at (t, y)
//   if (!matrix.factor(h * gamma)) { /* singular */ }
//   matrix.solve(x, /*transposed=*/false);   // x ← M⁻¹ x;  true: x ← M⁻ᵀ x
//
// Dense or band (ImplicitLinearSolver). Band, for a problem that states its band —
// `band_width()` (the built-in PDEs) or `band_upper()`, `band_lower()` and `band_jacobian()`
// (LAPACK band storage, bands(upper + i − j, j) = ∂f_i/∂y_j; rwd::auto_problem gives them to a
// model that declares its jacobian_band): J is the problem's band_jacobian(), or is assembled from
// upper + lower + 1 vjps, each seeded on the rows i ≡ g (mod upper + lower + 1), whose columns
// i − lower … i + upper never overlap — exact; M is factored by LAPACK (rwd::BandLu), O(n·l·(l+u)).
// Dense: J is the problem's `jacobian(t, y, theta, Eigen::MatrixXd&)` (rwd::auto_problem,
// Robertson) or row by row from n vjps (row i = (∂f/∂y)ᵀ e_i, exact); M is factored by Eigen's LU
// with partial pivoting, O(n³), for at most kMaxDenseStates states. Deterministic: the same
// operations in the same order every time.
#pragma once

#include <algorithm>
#include <concepts>
#include <string>

#include <Eigen/Core>
#include <Eigen/LU>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/band_lu.hpp"
#include "rewind/problem.hpp"
#include "rewind/types.hpp"

namespace rwd {

// The factorisation of the stage matrices (of the Newton iterations and of the adjoint's
// transposed solves).
enum class ImplicitLinearSolver {
  automatic,  // band when the problem states a band, dense otherwise
  dense,      // Eigen's LU with partial pivoting of the n × n matrix
  band,       // LAPACK's band LU (rwd::BandLu); the problem must state its band
};

// A problem an implicit engine can run: an rwd::Problem on the Eigen backend.
template <class P>
concept ImplicitEngineProblem = Problem<P> && std::same_as<typename P::Backend, EigenBackend>;

// One that gives its dense Jacobian ∂f/∂y itself (otherwise it is assembled from n vjps).
template <class P>
concept DenseJacobianProblem = ImplicitEngineProblem<P> &&
    requires(const P& p, double t, const Eigen::VectorXd& y, Eigen::MatrixXd& J) {
  p.jacobian(t, y, y, J);
};

namespace detail {

// A problem that states the half-bandwidths of ∂f/∂y: one for both sides (band_width()), or each
// with the band itself (band_upper(), band_lower(), band_jacobian()). The CVODES stepper reads
// the same members.
template <class P>
concept StatesBandWidth = requires(const P& p) {
  { p.band_width() } -> std::convertible_to<Index>;
};
template <class P>
concept StatesBandJacobian = requires(const P& p, double t, const Eigen::VectorXd& y,
                                      Eigen::MatrixXd& bands) {
  { p.band_upper() } -> std::convertible_to<Index>;
  { p.band_lower() } -> std::convertible_to<Index>;
  p.band_jacobian(t, y, y, bands);
};
template <class P>
concept StatesBand = StatesBandWidth<P> || StatesBandJacobian<P>;

}  // namespace detail

template <ImplicitEngineProblem P>
class StageMatrix {
 public:
  using Vector = Eigen::VectorXd;

  // The largest state dense linear algebra takes (an n × n matrix of 200 MB).
  static constexpr Index kMaxDenseStates = 5000;
  // Reciprocal condition number below which a dense matrix counts as singular.
  static constexpr double kSingular = 1e-14;

  // Band or dense from `wanted` and what the problem states; refuses (InvalidArgument, naming
  // `method`) the band solver for a problem without a band, and dense matrices above
  // kMaxDenseStates.
  StageMatrix(const P& problem, ImplicitLinearSolver wanted, const std::string& method)
      : problem_(problem), n_(problem.state_size()) {
    choose(wanted, method);
    if (band_) {
      jacobian_ = Eigen::MatrixXd::Zero(lower_ + upper_ + 1, n_);  // LAPACK band storage
      band_lu_.resize(n_, lower_, upper_);
    } else {
      jacobian_ = Eigen::MatrixXd::Zero(n_, n_);
    }
    seed_ = Vector::Zero(n_);
    row_ = Vector::Zero(n_);
    scratch_ = Vector::Zero(n_);
    theta_part_ = Vector::Zero(problem.parameter_size());
  }

  bool band() const { return band_; }
  Index lower() const { return lower_; }
  Index upper() const { return upper_; }

  // J = ∂f/∂y at (t, y, θ). Returns the vjps it took (0 when the problem gave J).
  Index evaluate_jacobian(double t, const Vector& y, const Vector& theta) {
    if (band_) return evaluate_band(t, y, theta);
    if constexpr (DenseJacobianProblem<P>) {
      problem_.jacobian(t, y, theta, jacobian_);
      return 0;
    } else {
      jacobian_.resize(n_, n_);
      for (Index i = 0; i < n_; ++i) {
        seed_.setZero();
        seed_[i] = 1.0;
        problem_.vjp(t, y, theta, seed_, row_, theta_part_);
        jacobian_.row(i) = row_.transpose();
      }
      return n_;
    }
  }

  // M = I − c·J factored, J from the last evaluate_jacobian. False when M is singular.
  bool factor(double c) {
    if (band_) {
      band_lu_.set_zero();
      for (Index j = 0; j < n_; ++j)
        for (Index i = std::max<Index>(0, j - upper_); i <= std::min(n_ - 1, j + lower_); ++i)
          band_lu_.at(i, j) = (i == j ? 1.0 : 0.0) - c * jacobian_(upper_ + i - j, j);
      return band_lu_.factor();
    }
    iteration_ = -c * jacobian_;
    iteration_.diagonal().array() += 1.0;
    lu_.compute(iteration_);
    return lu_.rcond() > kSingular;
  }

  // x ← M⁻¹ x (transposed: x ← M⁻ᵀ x), after a successful factor().
  void solve(Vector& x, bool transposed) {
    if (band_) {
      band_lu_.solve(x.data(), transposed);
      return;
    }
    if (transposed)
      scratch_ = lu_.transpose().solve(x);
    else
      scratch_ = lu_.solve(x);
    x = scratch_;
  }

 private:
  void choose(ImplicitLinearSolver wanted, const std::string& method) {
    if constexpr (detail::StatesBand<P>) {
      band_ = wanted != ImplicitLinearSolver::dense;
      if constexpr (detail::StatesBandJacobian<P>) {
        upper_ = problem_.band_upper();
        lower_ = problem_.band_lower();
      } else {
        upper_ = lower_ = problem_.band_width();
      }
      // A band as wide as the matrix is a dense matrix.
      if (upper_ >= n_ - 1 && lower_ >= n_ - 1) band_ = false;
      upper_ = std::min(upper_, n_ - 1);
      lower_ = std::min(lower_, n_ - 1);
    } else if (wanted == ImplicitLinearSolver::band) {
      detail::fail<InvalidArgument>(
          "method '", method,
          "': the band linear solver needs a problem that states its band (band_width(), or "
          "band_upper(), band_lower() and band_jacobian())");
    }
    if (!band_ && n_ > kMaxDenseStates)
      detail::fail<InvalidArgument>(
          "method '", method, "': dense n × n stage matrices for n = ", n_, " states (at most ",
          kMaxDenseStates,
          "); a problem that states its band gets the band solver; sparse and matrix-free "
          "solvers are not available yet");
  }

  Index evaluate_band(double t, const Vector& y, const Vector& theta) {
    if constexpr (detail::StatesBandJacobian<P>) {
      problem_.band_jacobian(t, y, theta, jacobian_);
      return 0;
    } else {
      const Index width = lower_ + upper_ + 1, groups = std::min(width, n_);
      for (Index g = 0; g < groups; ++g) {
        seed_.setZero();
        for (Index i = g; i < n_; i += width) seed_[i] = 1.0;
        problem_.vjp(t, y, theta, seed_, row_, theta_part_);
        for (Index i = g; i < n_; i += width)
          for (Index j = std::max<Index>(0, i - lower_); j <= std::min(n_ - 1, i + upper_); ++j)
            jacobian_(upper_ + i - j, j) = row_[j];
      }
      return groups;
    }
  }

  const P& problem_;
  Index n_ = 0;
  bool band_ = false;
  Index lower_ = 0, upper_ = 0;
  Eigen::MatrixXd jacobian_;   // dense n × n, or band storage (lower + upper + 1) × n
  Eigen::MatrixXd iteration_;  // dense: M
  Eigen::PartialPivLU<Eigen::MatrixXd> lu_;
  BandLu band_lu_;
  Vector seed_, row_, scratch_, theta_part_;  // vjp seeds and outputs, solve scratch
};

}  // namespace rwd
