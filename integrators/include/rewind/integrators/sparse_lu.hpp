// rewind/integrators/sparse_lu.hpp — the LU factorisation of a sparse matrix by KLU (SuiteSparse's
// sparse LU for circuit and stencil matrices), and solves with it or its transpose: the linear
// algebra of the implicit engines for problems that declare a sparse Jacobian (the stencil
// models' sparsity() and jacobian_values()).
//
//   rwd::SparseLu lu(n, row_starts, columns);   // the pattern, in compressed rows; analysed once
//   std::span<double> a = lu.values();          // the entries, in the pattern's order
//   if (!lu.factor()) { /* singular */ }
//   lu.solve(x.data(), /*transposed=*/false);   // x ← A⁻¹ x;  true: x ← A⁻ᵀ x
//
// The pattern is ordered by AMD once, when the object is made (KLU's symbolic analysis; stencil
// patterns are structurally symmetric, for which AMD beats COLAMD). Every factor() is a complete
// numeric factorisation with KLU's partial pivoting — never a refactorisation with an earlier
// matrix's pivots — so the same matrix gives the same factors, the same bits, whatever was
// factored before: what makes a replay from a snapshot compute what the first run computed.
//
// KLU is optional: without it (REWIND_HAVE_KLU undefined; libsuitesparse-dev missing or
// REWIND_WITH_KLU=OFF) kSparseLuAvailable is false and making a SparseLu throws InvalidArgument
// with the reason.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "rewind/types.hpp"

namespace rwd {

#ifdef REWIND_HAVE_KLU
inline constexpr bool kSparseLuAvailable = true;
#else
inline constexpr bool kSparseLuAvailable = false;
#endif

// Checks a pattern of an n × n matrix in compressed rows: n + 1 row starts from 0 to the number
// of columns, each row's columns in [0, n), ascending and distinct. InvalidArgument otherwise,
// starting with `what` (e.g. "the problem's sparsity()") and naming the row and the rule.
void check_compressed_rows(Index n, std::span<const Index> row_starts,
                           std::span<const Index> columns, std::string_view what);

class SparseLu {
 public:
  // An n × n matrix whose row r has its entries in columns[row_starts[r] … row_starts[r + 1])
  // (ascending and distinct; row_starts has n + 1 offsets from 0). InvalidArgument, naming the row
  // and the rule, for a malformed pattern; Error when KLU cannot analyse it.
  SparseLu(Index n, std::span<const Index> row_starts, std::span<const Index> columns);
  ~SparseLu();
  SparseLu(SparseLu&&) noexcept;
  SparseLu& operator=(SparseLu&&) noexcept;
  SparseLu(const SparseLu&) = delete;
  SparseLu& operator=(const SparseLu&) = delete;

  Index size() const;
  Index nonzeros() const;
  // The matrix's entries in the pattern's order, to be written before factor().
  std::span<double> values();

  // LU of the matrix with KLU's partial pivoting. False when it is singular (a zero pivot, or a
  // reciprocal pivot growth so small that the factors are meaningless: below `singular`).
  bool factor(double singular = 1e-14);
  // x ← A⁻¹ x (transposed: x ← A⁻ᵀ x), x of n values; after a successful factor().
  void solve(double* x, bool transposed);

 private:
  struct Klu;
  std::unique_ptr<Klu> klu_;
};

}  // namespace rwd
