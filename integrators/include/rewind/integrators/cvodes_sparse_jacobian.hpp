// rewind/integrators/cvodes_sparse_jacobian.hpp — the sparse direct solver of CVODES's Newton
// iteration (rwd::CvodesLinearSolver::sparse): SUNDIALS' compressed sparse matrix, filled with the
// problem's own Jacobian values and factored by KLU (SuiteSparse's sparse LU, through SUNDIALS'
// SUNLinSol_KLU). Used by rwd::CvodesIntervalStepper
// (rewind/integrators/cvodes_interval_stepper.hpp); include that header, not this one.
//
// A problem declares its sparse Jacobian with two members (rwd::StencilProblem has them,
// rewind/stencil_model.hpp):
//   Pattern sparsity() const;        // ∂f/∂y's pattern in compressed rows: `size` (= the state
//                                    // size), `row_starts` (size + 1 offsets from 0) and `columns`
//                                    // (each row's ascending and distinct) — rwd::SparsityPattern
//   void jacobian_values(double t, const Vector& y, const Vector& theta,
//                        std::span<double> values) const;   // the entries, in the pattern's order
// The stepper reads the pattern once, when it is made (checked here: a malformed pattern is
// refused naming the rule), and asks for values whenever CVODES wants a new Jacobian.
//
// The forward problem's matrix is J: the pattern's arrays as compressed rows (CSR_MAT; SUNDIALS'
// KLU factors the arrays as they are and solves with the transpose, klu_tsolve). The backward
// (adjoint) problem's is −Jᵀ: the same arrays read as compressed columns (CSC_MAT) are Jᵀ, so it
// needs no transposed pattern, only the values negated. KLU analyses the pattern at its first
// factorisation and refactors numerically after that (the pattern never changes within a solve:
// CVODES adds γ-scaled identity in place, or inserts a missing diagonal the same way each time).
//
// KLU is optional: rewind builds without SuiteSparse (REWIND_WITH_KLU=OFF, or KLU not found),
// and the stepper then refuses the sparse solver before any work (kKluAvailable is false).
#pragma once

#include <sundials/sundials_context.h>
#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>
#include <sundials/sundials_nvector.h>

#ifdef REWIND_HAVE_KLU
#include <sunlinsol/sunlinsol_klu.h>
#include <sunmatrix/sunmatrix_sparse.h>
#endif

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/integrators/declared_jacobian.hpp"
#include "rewind/integrators/sparse_lu.hpp"
#include "rewind/types.hpp"

namespace rwd {
namespace sundials {

// Whether this build has KLU (the same answer as the implicit engines' rwd::kSparseLuAvailable).
inline constexpr bool kKluAvailable = kSparseLuAvailable;

// What the sparse solver needs that a problem or a build may lack, as the refusal says it;
// empty when the sparse solver can run.
inline std::string sparse_solver_refusal(bool klu_built, bool has_sparse_jacobian) {
  if (!klu_built)
    return "CVODES sparse solver: rewind was built without KLU (SuiteSparse's sparse LU, which "
           "SUNDIALS' SUNLinSol_KLU wraps): install libsuitesparse-dev "
           "(scripts/install_dependencies.sh) and configure again with REWIND_WITH_KLU=ON, or "
           "use the band or gmres solver";
  if (!has_sparse_jacobian)
    return "CVODES sparse solver: the problem declares no sparse Jacobian; it needs the members "
           "`sparsity()` (∂f/∂y's pattern in compressed rows: size, row_starts, columns) and "
           "`jacobian_values(double t, const Vector& y, const Vector& theta, std::span<double> "
           "values)` (the entries in the pattern's order), as rwd::StencilProblem has; or use "
           "the band or gmres solver";
  return {};
}

// ∂f/∂y's pattern as SUNDIALS' index arrays, checked once.
class SparseJacobianPattern {
 public:
  SparseJacobianPattern() = default;

  // Copies and checks a compressed-row pattern for an n × n Jacobian (InvalidArgument naming
  // the row and the rule where it is malformed).
  template <class Pattern>
  SparseJacobianPattern(const Pattern& pattern, Index n) {
    const auto fail = [](auto... what) {
      detail::fail<InvalidArgument>("CVODES sparse solver: the problem's sparsity() ", what...);
    };
    if (static_cast<Index>(pattern.size) != n)
      fail("is for ", pattern.size, " unknowns; the state has ", n);
    if (static_cast<Index>(pattern.row_starts.size()) != n + 1)
      fail("has ", pattern.row_starts.size(), " row starts; it needs n + 1 = ", n + 1);
    const Index nonzeros = static_cast<Index>(pattern.columns.size());
    if (static_cast<Index>(pattern.row_starts[0]) != 0 ||
        static_cast<Index>(pattern.row_starts[static_cast<std::size_t>(n)]) != nonzeros)
      fail("must start its rows at 0 and end them at its ", nonzeros, " columns");
    starts_.resize(static_cast<std::size_t>(n + 1));
    indices_.resize(static_cast<std::size_t>(nonzeros));
    for (Index r = 0; r <= n; ++r)
      starts_[static_cast<std::size_t>(r)] =
          static_cast<sunindextype>(pattern.row_starts[static_cast<std::size_t>(r)]);
    for (Index r = 0; r < n; ++r) {
      const auto begin = starts_[static_cast<std::size_t>(r)];
      const auto end = starts_[static_cast<std::size_t>(r + 1)];
      if (end < begin) fail("has row ", r, " ending before it starts");
      for (auto i = begin; i < end; ++i) {
        const Index column = static_cast<Index>(pattern.columns[static_cast<std::size_t>(i)]);
        if (column < 0 || column >= n)
          fail("has column ", column, " in row ", r, "; columns are 0 … ", n - 1);
        if (i > begin && column <= indices_[static_cast<std::size_t>(i - 1)])
          fail("has row ", r, "'s columns out of order; they must be ascending and distinct");
        indices_[static_cast<std::size_t>(i)] = static_cast<sunindextype>(column);
      }
    }
  }

  Index size() const { return starts_.empty() ? 0 : static_cast<Index>(starts_.size()) - 1; }
  Index nonzeros() const { return static_cast<Index>(indices_.size()); }

  // A new matrix with this pattern: J in compressed rows, or (transposed) Jᵀ in compressed
  // columns from the same arrays; nullptr where SUNDIALS cannot make one.
  SUNMatrix make_matrix(bool transposed, SUNContext context) const {
#ifdef REWIND_HAVE_KLU
    const sunindextype n = static_cast<sunindextype>(size());
    SUNMatrix matrix =
        SUNSparseMatrix(n, n, static_cast<sunindextype>(std::max<Index>(1, nonzeros())),
                        transposed ? CSC_MAT : CSR_MAT, context);
    if (matrix) restore(matrix);
    return matrix;
#else
    (void)transposed, (void)context;
    detail::fail<InvalidArgument>(sparse_solver_refusal(false, true));
#endif
  }

  // Writes the pattern into a matrix made by make_matrix (CVODES zeroes the whole matrix, index
  // arrays too, before asking for a Jacobian) and returns its values, nonzeros() of them.
  std::span<double> restore([[maybe_unused]] SUNMatrix matrix) const {
#ifdef REWIND_HAVE_KLU
    std::copy(starts_.begin(), starts_.end(), SM_INDEXPTRS_S(matrix));
    std::copy(indices_.begin(), indices_.end(), SM_INDEXVALS_S(matrix));
    return {SM_DATA_S(matrix), static_cast<std::size_t>(nonzeros())};
#else
    detail::fail<InvalidArgument>(sparse_solver_refusal(false, true));
#endif
  }

 private:
  std::vector<sunindextype> starts_, indices_;
};

// KLU over a matrix from SparseJacobianPattern::make_matrix, ordered by AMD (KLU's ordering 0)
// rather than SUNDIALS' default COLAMD: stencil patterns are structurally symmetric, and AMD
// halved the BDF gradient's time on the Brusselator stencil model at 2·64² unknowns
// (bench/results/sparse_jacobian.md). nullptr where SUNDIALS refuses.
inline SUNLinearSolver make_klu_solver([[maybe_unused]] N_Vector like,
                                       [[maybe_unused]] SUNMatrix matrix,
                                       [[maybe_unused]] SUNContext context) {
#ifdef REWIND_HAVE_KLU
  SUNLinearSolver solver = SUNLinSol_KLU(like, matrix, context);
  if (solver && SUNLinSol_KLUSetOrdering(solver, 0) != 0) {
    SUNLinSolFree(solver);
    return nullptr;
  }
  return solver;
#else
  detail::fail<InvalidArgument>(sparse_solver_refusal(false, true));
#endif
}

// The problem's Jacobian at (t, y, θ) into a matrix of `pattern`: J, or (negated, for the
// backward problem's −Jᵀ in a transposed matrix) −J's values. False when a value is not finite.
template <class P, class Vector>
bool fill_sparse_jacobian(const P& problem, const SparseJacobianPattern& pattern, double t,
                          const Vector& y, const Vector& theta, SUNMatrix matrix, bool negated) {
  const std::span<double> values = pattern.restore(matrix);
  problem.jacobian_values(t, y, theta, values);
  bool finite = true;
  for (double& value : values) {
    if (negated) value = -value;
    finite = finite && std::isfinite(value);
  }
  return finite;
}

}  // namespace sundials
}  // namespace rwd
