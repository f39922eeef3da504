// rewind/integrators/incomplete_lu.hpp — the incomplete LU factorisation with no fill, ILU(0), of
// a sparse matrix, and solves with it or its transpose: the preconditioner of the implicit
// engines' preconditioned GMRES (rwd::ImplicitLinearSolver::gmres_ilu) for problems that declare
// a sparse Jacobian.
//
//   rwd::IncompleteLu ilu(n, row_starts, columns);  // the pattern, in compressed rows
//   std::span<double> a = ilu.values();             // the entries, in the pattern's order
//   if (!ilu.factor()) { /* a zero pivot */ }
//   ilu.apply(x.data(), /*transposed=*/false);     // x ← (LU)⁻¹ x;  true: x ← (LU)⁻ᵀ x
//
// L (unit lower) and U are kept in the matrix's own pattern: every product that would fill an
// entry outside it is dropped (Saad, "Iterative Methods for Sparse Linear Systems", 2nd ed.,
// algorithm 10.4, the IKJ form). No pivoting and no reordering; each factor() starts from the
// values written, so the same matrix gives the same factors, the same bits, whatever was
// factored before. O(Σ_rows (entries of the row)²) to factor, O(entries) to apply.
//
// Written here rather than taken from Eigen's IncompleteLUT, which drops by threshold with
// its own fill, reorders, allocates on every factorisation and solves only with LU itself: the
// adjoint's transposed solves need (LU)ᵀ from the same factors.
#pragma once

#include <span>
#include <vector>

#include "rewind/types.hpp"

namespace rwd {

class IncompleteLu {
 public:
  // An n × n matrix whose row r has its entries in columns[row_starts[r] … row_starts[r + 1])
  // (ascending and distinct, the diagonal among them; row_starts has n + 1 offsets from 0).
  // InvalidArgument, naming the row and the rule, for a malformed pattern or a missing diagonal.
  IncompleteLu(Index n, std::span<const Index> row_starts, std::span<const Index> columns);

  Index size() const { return n_; }
  Index nonzeros() const { return static_cast<Index>(columns_.size()); }
  // The matrix's entries in the pattern's order, to be written before factor(); factor()
  // overwrites them with L's (below the diagonal) and U's (on and above it).
  std::span<double> values() { return values_; }

  // ILU(0) of the matrix. False when a pivot is zero or not finite, or its size is below
  // `singular` times the largest entry of its row (the factors would be meaningless).
  bool factor(double singular = 1e-14);
  // x ← (LU)⁻¹ x (transposed: x ← (LU)⁻ᵀ = L⁻ᵀ U⁻ᵀ x), x of n values; after a successful factor().
  void apply(double* x, bool transposed) const;

 private:
  Index n_ = 0;
  std::vector<Index> starts_, columns_, diagonal_;  // compressed rows, each row's diagonal entry
  std::vector<double> values_;
  std::vector<double> inverse_pivots_;  // 1 / u_ii: apply() multiplies (a division per row is
                                        // the triangular solves' latency otherwise)
  std::vector<Index> position_;         // factor(): where column j sits in the current row, or −1
};

}  // namespace rwd
