// rewind/integrators/stage_matrix.hpp — the matrices M = I − c·J of an implicit method's stage
// equations (c = h·a_ii): the problem's Jacobian J = ∂f/∂y, M factored, and solves with M or Mᵀ.
// The linear algebra of rwd::DiagonallyImplicitRungeKutta and rwd::RosenbrockStepper, apart from
// their stages and iterations.
//
//   rwd::StageMatrix matrix(problem, rwd::ImplicitLinearSolver::automatic, "esdirk43");
//   matrix.evaluate_jacobian(t, y, theta);   // J at (t, y)
//   if (!matrix.factor(h * gamma)) { /* singular */ }
//   matrix.solve(x, /*transposed=*/false);   // x ← M⁻¹ x;  true: x ← M⁻ᵀ x
//
// Dense, band, sparse or GMRES (ImplicitLinearSolver), from how the problem declares its Jacobian
// (rewind/integrators/declared_jacobian.hpp):
// - Band, for a problem that states its band — `band_width()` (the built-in PDEs) or
//   `band_upper()`, `band_lower()` and `band_jacobian()` (LAPACK band storage; rwd::auto_problem
//   gives them to a model that declares its jacobian_band, and rwd::PluginModel to a plugin whose
//   model does, which it says at run time: detail::RuntimeBandProblem, declares_band()): J is the
//   problem's band_jacobian(), or is assembled from upper + lower + 1 vjps, each seeded on the
//   rows i ≡ g (mod upper + lower + 1), whose columns i − lower … i + upper never overlap — exact;
//   M is factored by LAPACK (rwd::BandLu), O(n·l·(l+u)). A band the problem does not state is
//   refused (naming, for a plugin, the model and the declaration it lacks).
// - Sparse, for a problem that declares its pattern and values — `sparsity()` and
//   `jacobian_values()` (rwd::StencilProblem): M's pattern is J's with the diagonal added, ordered
//   once; M is factored by KLU (rwd::SparseLu), in time and memory near the nonzeros' count. Only
//   when asked for (ImplicitLinearSolver::sparse) and built with KLU.
// - Dense: J is the problem's `jacobian(t, y, theta, Eigen::MatrixXd&)` (rwd::auto_problem,
//   Robertson) or row by row from n vjps (row i = (∂f/∂y)ᵀ e_i, exact); M is factored by Eigen's
//   LU with partial pivoting, O(n³), for at most kMaxDenseStates states.
// - GMRES, matrix-free, for a problem with a jvp: nothing is assembled or factored —
//   evaluate_jacobian() keeps the point (t, y, θ) and factor() the coefficient c — and each solve
//   is restarted GMRES (rwd::StageGmres, SUNDIALS' SPGMR, no preconditioner) on the products
//   M v = v − c·(∂f/∂y) v by the problem's jvp, or Mᵀ v = v − c·(∂f/∂y)ᵀ v by its vjp: to a
//   relative residual of kGmresTolerance for M (the Newton updates, which need not be exact: an
//   inexact Newton iteration, each update still cutting the error a thousandfold; the stage
//   values converge to the Newton tolerance all the same) and kGmresTransposedTolerance for Mᵀ (the
//   adjoint's solves, which must be), whose true residual is checked after the iteration. For
//   stiffness a preconditioner-free Krylov method can take (diffusion at moderate h·λ); solve()
//   says when it did not converge.
// - GMRES preconditioned by ILU(0) (gmres_ilu), for a problem with a jvp that also declares its
//   sparse Jacobian: the products are GMRES's above, but each solve is right-preconditioned by
//   P = ILU(0) of M (rwd::IncompleteLu) assembled from the problem's jacobian_values() at the same
//   point — solving M P⁻¹ u = b, x = P⁻¹ u (Mᵀ P⁻ᵀ u = b, x = P⁻ᵀ u for the adjoint), so that the
//   residual GMRES reduces is M x − b itself and the tolerances mean what they mean
//   unpreconditioned. evaluate_jacobian() assembles J's values (one pass over the stencil, about an
//   rhs's cost) and factor() the incomplete factors (O(nonzeros) for a stencil); the engines do
//   both once per step attempt and once per reversed step and only move the products' point
//   (move_point) in between. Fewer Krylov products, each dearer by two triangular solves whose
//   rows wait on each other: it pays where products are dear or h·λ large (measured in
//   bench/results/stiff_gradients.md). An incomplete factorisation with a
//   zero pivot leaves that solve unpreconditioned.
// Deterministic: the same operations in the same order every time, whatever was factored before.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <Eigen/LU>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/band_lu.hpp"
#include "rewind/integrators/declared_jacobian.hpp"
#include "rewind/integrators/incomplete_lu.hpp"
#include "rewind/integrators/sparse_lu.hpp"
#include "rewind/integrators/stage_gmres.hpp"
#include "rewind/problem.hpp"
#include "rewind/types.hpp"

namespace rwd {

// The factorisation of the stage matrices (of the Newton iterations and of the adjoint's
// transposed solves).
enum class ImplicitLinearSolver {
  automatic,  // band when the problem states a band, else sparse when it declares its sparse
              // Jacobian (and KLU is built), dense otherwise
  dense,      // Eigen's LU with partial pivoting of the n × n matrix
  band,       // LAPACK's band LU (rwd::BandLu); the problem must state its band
  sparse,     // KLU's sparse LU (rwd::SparseLu); the problem must declare its sparse Jacobian
  gmres,      // matrix-free GMRES (rwd::StageGmres) with the problem's jvp and vjp
  gmres_ilu,  // GMRES as gmres, right-preconditioned by ILU(0) of M from the declared sparse
              // Jacobian (rwd::IncompleteLu); the problem must declare it and have a jvp
};

namespace detail {
// GMRES stage solves: relative residuals of the solves with M (Newton updates) and with Mᵀ (the
// adjoint's), and the true relative residual an adjoint solve that stalled short of its tolerance
// may keep (StageMatrix's gmres solvers and rwd::MatrixFreeStageMatrix).
inline constexpr double kStageGmresTolerance = 1e-3;
inline constexpr double kStageGmresTransposedTolerance = 1e-14;
inline constexpr double kStageGmresTransposedFloor = 1e-12;
}  // namespace detail

// A problem an implicit engine can run: an rwd::Problem on the Eigen backend.
template <class P>
concept ImplicitEngineProblem = Problem<P> && std::same_as<typename P::Backend, EigenBackend>;

// One that gives its dense Jacobian ∂f/∂y itself (otherwise it is assembled from n vjps).
template <class P>
concept DenseJacobianProblem = ImplicitEngineProblem<P> && detail::HasJacobian<P>;

template <ImplicitEngineProblem P>
class StageMatrix {
 public:
  using Vector = Eigen::VectorXd;

  // The largest state dense linear algebra takes (an n × n matrix of 200 MB).
  static constexpr Index kMaxDenseStates = 5000;
  // Reciprocal condition number (dense; for band and sparse a zero pivot, and for sparse KLU's
  // pivot ratio) below which a matrix counts as singular.
  static constexpr double kSingular = 1e-14;
  // GMRES: relative residuals of the solves with M (Newton updates) and with Mᵀ (the adjoint's),
  // and the true relative residual an adjoint solve that stalled short of its tolerance may keep.
  static constexpr double kGmresTolerance = detail::kStageGmresTolerance;
  static constexpr double kGmresTransposedTolerance = detail::kStageGmresTransposedTolerance;
  static constexpr double kGmresTransposedFloor = detail::kStageGmresTransposedFloor;

  // Dense, band, sparse or GMRES from `wanted` and what the problem declares; refuses
  // (InvalidArgument, naming `method`) the band solver for a problem without a band, the sparse
  // one for a problem without a sparse Jacobian or a build without KLU, GMRES for a problem
  // without a jvp, and dense matrices above kMaxDenseStates.
  StageMatrix(const P& problem, ImplicitLinearSolver wanted, const std::string& method)
      : problem_(problem), n_(problem.state_size()) {
    solver_ = choose(wanted, method);
    if (solver_ == ImplicitLinearSolver::band) {
      jacobian_ = Eigen::MatrixXd::Zero(lower_ + upper_ + 1, n_);  // LAPACK band storage
      band_lu_.resize(n_, lower_, upper_);
    } else if (solver_ == ImplicitLinearSolver::dense) {
      jacobian_ = Eigen::MatrixXd::Zero(n_, n_);
    } else if (solver_ == ImplicitLinearSolver::gmres) {
      gmres_.emplace(n_);
      point_ = Vector::Zero(n_);
    } else if (solver_ == ImplicitLinearSolver::gmres_ilu) {
      gmres_.emplace(n_);
      point_ = Vector::Zero(n_);
      const auto [starts, columns] = set_up_sparse_pattern(method);
      incomplete_lu_.emplace(n_, starts, columns);
      preconditioned_ = Vector::Zero(n_);
    } else {
      const auto [starts, columns] = set_up_sparse_pattern(method);
      sparse_lu_.emplace(n_, starts, columns);
    }
    seed_ = Vector::Zero(n_);
    row_ = Vector::Zero(n_);
    scratch_ = Vector::Zero(n_);
    theta_part_ = Vector::Zero(problem.parameter_size());
  }

  // The solver in use: dense, band, sparse, gmres or gmres_ilu (never automatic).
  ImplicitLinearSolver solver() const { return solver_; }
  // Whether solves are iterative (gmres, gmres_ilu): a Jacobian "evaluation" then costs nothing
  // or about an rhs (the preconditioner's values), and nothing is factored exactly, so an engine
  // moves its point every Newton iteration.
  bool matrix_free() const {
    return solver_ == ImplicitLinearSolver::gmres || solver_ == ImplicitLinearSolver::gmres_ilu;
  }
  // GMRES products (jvps and vjps) since construction.
  Index gmres_products() const { return gmres_products_; }
  bool band() const { return solver_ == ImplicitLinearSolver::band; }
  // "dense LU", "band LU (lower l, upper u)" or "sparse LU (KLU)", for a method's description.
  std::string describe() const {
    switch (solver_) {
      case ImplicitLinearSolver::band:
        return "band LU (lower " + std::to_string(lower_) + ", upper " + std::to_string(upper_) +
               ")";
      case ImplicitLinearSolver::sparse:
        return "sparse LU (KLU)";
      case ImplicitLinearSolver::gmres:
        return "matrix-free GMRES";
      case ImplicitLinearSolver::gmres_ilu:
        return "GMRES preconditioned by ILU(0) of the sparse Jacobian";
      default:
        return "dense LU";
    }
  }
  Index lower() const { return lower_; }
  Index upper() const { return upper_; }

  // J = ∂f/∂y at (t, y, θ). Returns the vjps it took (0 when the problem gave J).
  Index evaluate_jacobian(double t, const Vector& y, const Vector& theta) {
    switch (solver_) {
      case ImplicitLinearSolver::band:
        return evaluate_band(t, y, theta);
      case ImplicitLinearSolver::sparse:
        if constexpr (detail::HasSparseJacobian<P>)
          problem_.jacobian_values(t, y, theta, std::span<double>(sparse_jacobian_));
        return 0;
      case ImplicitLinearSolver::gmres:
        point_t_ = t;
        point_ = y;
        point_theta_ = theta;
        return 0;
      case ImplicitLinearSolver::gmres_ilu:
        point_t_ = t;
        point_ = y;
        point_theta_ = theta;
        if constexpr (detail::HasSparseJacobian<P>)
          problem_.jacobian_values(t, y, theta, std::span<double>(sparse_jacobian_));
        return 0;
      default:
        return evaluate_dense(t, y, theta);
    }
  }

  // Matrix-free solvers: the products' point moves to (t, y, θ), keeping the coefficient c and,
  // for gmres_ilu, the preconditioner (built at an earlier point of the same step: a lagged
  // preconditioner changes GMRES's iterations, not the equations it solves). The same as
  // evaluate_jacobian() for gmres.
  void move_point(double t, const Vector& y, const Vector& theta) {
    point_t_ = t;
    point_ = y;
    point_theta_ = theta;
  }

  // M = I − c·J factored, J from the last evaluate_jacobian. False when M is singular.
  bool factor(double c) {
    switch (solver_) {
      case ImplicitLinearSolver::band:
        return factor_band(c);
      case ImplicitLinearSolver::sparse:
        return factor_sparse(c);
      case ImplicitLinearSolver::gmres:
        coefficient_ = c;
        return true;
      case ImplicitLinearSolver::gmres_ilu:
        coefficient_ = c;
        write_matrix_values(incomplete_lu_->values(), c);
        preconditioner_ready_ = incomplete_lu_->factor(kSingular);
        return true;
      default:
        iteration_ = -c * jacobian_;
        iteration_.diagonal().array() += 1.0;
        lu_.compute(iteration_);
        return lu_.rcond() > kSingular;
    }
  }

  // x ← M⁻¹ x (transposed: x ← M⁻ᵀ x), after a successful factor(). False only for GMRES, when
  // the iteration did not reach its tolerance (x is then its last iterate).
  bool solve(Vector& x, bool transposed) {
    switch (solver_) {
      case ImplicitLinearSolver::band:
        band_lu_.solve(x.data(), transposed);
        return true;
      case ImplicitLinearSolver::sparse:
        sparse_lu_->solve(x.data(), transposed);
        return true;
      case ImplicitLinearSolver::gmres:
      case ImplicitLinearSolver::gmres_ilu:
        return solve_gmres(x, transposed);
      default:
        if (transposed)
          scratch_ = lu_.transpose().solve(x);
        else
          scratch_ = lu_.solve(x);
        x = scratch_;
        return true;
    }
  }

 private:
  ImplicitLinearSolver choose(ImplicitLinearSolver wanted, const std::string& method) {
    if (wanted == ImplicitLinearSolver::gmres_ilu) {
      if constexpr (!detail::HasJvp<P> || !detail::HasSparseJacobian<P>)
        detail::fail<InvalidArgument>(
            "method '", method,
            "': the gmres-ilu linear solver needs the problem's Jacobian-vector product "
            "jvp(t, y, theta, v, out) and its declared sparse Jacobian (sparsity() and "
            "jacobian_values(), as rwd::StencilProblem has) for the preconditioner; gmres needs "
            "the jvp only");
      return ImplicitLinearSolver::gmres_ilu;
    }
    if (wanted == ImplicitLinearSolver::gmres) {
      if constexpr (!detail::HasJvp<P>)
        detail::fail<InvalidArgument>(
            "method '", method,
            "': the gmres linear solver needs the problem's Jacobian-vector product "
            "jvp(t, y, theta, v, out) (rwd::auto_problem and the stencil models have one)");
      return ImplicitLinearSolver::gmres;
    }
    if (wanted == ImplicitLinearSolver::sparse) {
      if constexpr (!detail::HasSparseJacobian<P>)
        detail::fail<InvalidArgument>(
            "method '", method,
            "': the sparse linear solver needs a problem that declares its sparse Jacobian "
            "(sparsity() and jacobian_values(), as rwd::StencilProblem has)");
      if (!kSparseLuAvailable)
        detail::fail<InvalidArgument>(
            "method '", method,
            "': the sparse linear solver needs KLU, and rewind was built without it (install "
            "libsuitesparse-dev with scripts/install_dependencies.sh and configure with "
            "REWIND_WITH_KLU=ON), or use the band or dense solver");
      return ImplicitLinearSolver::sparse;
    }
    bool band = false;
    if (detail::states_band(problem_)) {
      band = wanted != ImplicitLinearSolver::dense;
      read_band_widths();
      // A band as wide as the matrix is a dense matrix.
      if (upper_ >= n_ - 1 && lower_ >= n_ - 1) band = false;
      upper_ = std::min(upper_, n_ - 1);
      lower_ = std::min(lower_, n_ - 1);
    } else if (wanted == ImplicitLinearSolver::automatic && kSparseLuAvailable &&
               detail::HasSparseJacobian<P>) {
      return ImplicitLinearSolver::sparse;  // a declared sparse Jacobian and no band
    } else if (wanted == ImplicitLinearSolver::band) {
      detail::fail<InvalidArgument>(
          "method '", method,
          "': the band linear solver needs a problem that states its band (band_width(), or "
          "band_upper(), band_lower() and band_jacobian())",
          detail::band_refusal(problem_));
    }
    if (!band && n_ > kMaxDenseStates)
      detail::fail<InvalidArgument>(
          "method '", method, "': dense n × n stage matrices for n = ", n_, " states (at most ",
          kMaxDenseStates,
          "); a problem that states its band gets the band solver, one that declares its sparse "
          "Jacobian the sparse solver (linear solver 'sparse')");
    return band ? ImplicitLinearSolver::band : ImplicitLinearSolver::dense;
  }

  // The half-bandwidths of a problem that states its band (detail::states_band).
  void read_band_widths() {
    if constexpr (detail::HasBandJacobian<P>) {
      upper_ = problem_.band_upper();
      lower_ = problem_.band_lower();
    } else if constexpr (detail::HasBandWidth<P>) {
      upper_ = lower_ = problem_.band_width();
    }
  }

  Index evaluate_dense(double t, const Vector& y, const Vector& theta) {
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

  Index evaluate_band(double t, const Vector& y, const Vector& theta) {
    if constexpr (detail::HasBandJacobian<P>) {
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

  bool factor_band(double c) {
    band_lu_.set_zero();
    for (Index j = 0; j < n_; ++j)
      for (Index i = std::max<Index>(0, j - upper_); i <= std::min(n_ - 1, j + lower_); ++i)
        band_lu_.at(i, j) = (i == j ? 1.0 : 0.0) - c * jacobian_(upper_ + i - j, j);
    return band_lu_.factor();
  }

  // M's pattern: J's (checked) with each row's diagonal added where J lacks it, in compressed
  // rows (starts, columns); records where each of J's entries and each diagonal lands among M's
  // values, and sizes J's values.
  struct MatrixPattern {
    std::vector<Index> starts, columns;
  };
  MatrixPattern set_up_sparse_pattern(const std::string& method) {
    MatrixPattern matrix{{0}, {}};
    if constexpr (detail::HasSparseJacobian<P>) {
      const auto pattern = problem_.sparsity();
      const std::vector<Index> starts(pattern.row_starts.begin(), pattern.row_starts.end());
      const std::vector<Index> columns(pattern.columns.begin(), pattern.columns.end());
      if (static_cast<Index>(pattern.size) != n_)
        detail::fail<InvalidArgument>("method '", method, "': the problem's sparsity() is for ",
                                      pattern.size, " unknowns; the state has ", n_);
      check_compressed_rows(n_, starts, columns,
                            "method '" + method + "': the problem's sparsity()");
      jacobian_to_matrix_.clear();
      diagonal_.assign(static_cast<std::size_t>(n_), 0);
      for (Index r = 0; r < n_; ++r) {
        bool diagonal_placed = false;
        const auto place_diagonal = [&] {
          diagonal_[static_cast<std::size_t>(r)] = static_cast<Index>(matrix.columns.size());
          matrix.columns.push_back(r);
          diagonal_placed = true;
        };
        for (Index k = starts[static_cast<std::size_t>(r)];
             k < starts[static_cast<std::size_t>(r + 1)]; ++k) {
          const Index column = columns[static_cast<std::size_t>(k)];
          if (!diagonal_placed && column >= r) {
            if (column == r) {
              diagonal_[static_cast<std::size_t>(r)] = static_cast<Index>(matrix.columns.size());
              diagonal_placed = true;
            } else {
              place_diagonal();
            }
          }
          jacobian_to_matrix_.push_back(static_cast<Index>(matrix.columns.size()));
          matrix.columns.push_back(column);
        }
        if (!diagonal_placed) place_diagonal();
        matrix.starts.push_back(static_cast<Index>(matrix.columns.size()));
      }
      sparse_jacobian_.assign(columns.size(), 0.0);
    } else {
      (void)method;
    }
    return matrix;
  }

  // M = I − c·J's values in M's pattern, from J's values of the last evaluate_jacobian.
  void write_matrix_values(std::span<double> values, double c) const {
    std::fill(values.begin(), values.end(), 0.0);
    for (Index r = 0; r < n_; ++r)
      values[static_cast<std::size_t>(diagonal_[static_cast<std::size_t>(r)])] = 1.0;
    for (std::size_t k = 0; k < sparse_jacobian_.size(); ++k)
      values[static_cast<std::size_t>(jacobian_to_matrix_[k])] -= c * sparse_jacobian_[k];
  }

  bool factor_sparse(double c) {
    write_matrix_values(sparse_lu_->values(), c);
    return sparse_lu_->factor(kSingular);
  }

  // M x = b (or Mᵀ x = b) by GMRES with M v = v − c·J v (Mᵀ v = v − c·Jᵀ v) at the kept point,
  // right-preconditioned when an incomplete factorisation is ready (gmres_ilu): GMRES solves
  // M P⁻¹ u = b and x = P⁻¹ u (transposed: P⁻ᵀ). A transposed solve that stalls short of its
  // tolerance keeps its iterate when the true residual is below kGmresTransposedFloor
  // (round-off: a tighter one is not to be had).
  bool solve_gmres(Vector& x, bool transposed) {
    if constexpr (detail::HasJvp<P>) {
      const auto product = [&](const Vector& v, Vector& out) {
        if (transposed)
          problem_.vjp(point_t_, point_, point_theta_, v, out, theta_part_);
        else
          problem_.jvp(point_t_, point_, point_theta_, v, out);
        out = v - coefficient_ * out;
        ++gmres_products_;
      };
      const bool preconditioned =
          solver_ == ImplicitLinearSolver::gmres_ilu && preconditioner_ready_;
      const auto preconditioned_product = [&](const Vector& v, Vector& out) {
        preconditioned_ = v;
        incomplete_lu_->apply(preconditioned_.data(), transposed);
        product(preconditioned_, out);
      };
      const StageGmres::Product iteration = preconditioned
                                                ? StageGmres::Product(preconditioned_product)
                                                : StageGmres::Product(product);
      const auto unprecondition = [&] {
        if (preconditioned) incomplete_lu_->apply(x.data(), transposed);
      };
      if (!transposed) {
        const bool converged = gmres_->solve(x, kGmresTolerance, iteration).converged;
        unprecondition();
        return converged;
      }
      right_side_ = x;
      const auto outcome = gmres_->solve(x, kGmresTransposedTolerance, iteration);
      unprecondition();
      if (outcome.converged) return true;
      product(x, scratch_);
      return (right_side_ - scratch_).norm() <= kGmresTransposedFloor * outcome.right_side;
    } else {
      (void)x, (void)transposed;
      return false;
    }
  }

  const P& problem_;
  Index n_ = 0;
  ImplicitLinearSolver solver_ = ImplicitLinearSolver::dense;
  Index lower_ = 0, upper_ = 0;
  Eigen::MatrixXd jacobian_;   // dense n × n, or band storage (lower + upper + 1) × n
  Eigen::MatrixXd iteration_;  // dense: M
  Eigen::PartialPivLU<Eigen::MatrixXd> lu_;
  BandLu band_lu_;
  // Sparse: J's values in the problem's pattern order, where each lands in M's values, where
  // each row's diagonal is, and M's factorisation.
  std::vector<double> sparse_jacobian_;
  std::vector<Index> jacobian_to_matrix_, diagonal_;
  std::optional<SparseLu> sparse_lu_;
  // gmres_ilu: M's incomplete factors (in M's sparse pattern), whether the last factor() made
  // them (no zero pivot), and the preconditioned vector of a product.
  std::optional<IncompleteLu> incomplete_lu_;
  bool preconditioner_ready_ = false;
  Vector preconditioned_;
  // GMRES: the point J is taken at, the coefficient c, the iteration, its products so far.
  std::optional<StageGmres> gmres_;
  double point_t_ = 0.0, coefficient_ = 0.0;
  Vector point_, point_theta_, right_side_;
  Index gmres_products_ = 0;
  Vector seed_, row_, scratch_, theta_part_;  // vjp seeds and outputs, solve scratch
};

}  // namespace rwd
