// rewind/integrators/band_lu.hpp — the LU factorisation of a band matrix by LAPACK (dgbtrf), and
// solves with it or its transpose (dgbtrs): the linear algebra of the implicit Runge–Kutta engine
// for problems whose Jacobian is banded (semi-discretised PDEs).
//
//   rwd::BandLu lu;
//   lu.resize(n, /*lower=*/kl, /*upper=*/ku);
//   lu.set_zero();
//   lu.at(i, j) = a_ij;            // |i − j| inside the band: j − ku ≤ i ≤ j + kl
//   if (!lu.factor()) { /* singular */ }
//   lu.solve(x.data(), /*transposed=*/false);   // x ← A⁻¹ x;  true: x ← A⁻ᵀ x
//
// Storage is LAPACK's: column j holds rows j − ku − kl … j + kl, the first kl of them for the
// fill-in of partial pivoting (leading dimension 2kl + ku + 1). Allocates in resize() only.
// Needs LAPACK (linked by the integrators part in builds with SUNDIALS).
#pragma once

#include <vector>

#include "rewind/types.hpp"

namespace rwd {

class BandLu {
 public:
  // An n × n matrix with `lower` sub-diagonals and `upper` super-diagonals (0 ≤ each < n).
  void resize(Index n, Index lower, Index upper);
  void set_zero();
  // Entry (i, j) of the matrix before factor(); j − upper ≤ i ≤ j + lower.
  double& at(Index i, Index j) { return storage_[index(i, j)]; }

  // LU with partial pivoting, in place. False when a pivot is exactly zero (singular).
  bool factor();
  // x ← A⁻¹ x (transposed: x ← A⁻ᵀ x), x of n values; after a successful factor().
  void solve(double* x, bool transposed) const;

  Index size() const { return n_; }
  Index lower() const { return lower_; }
  Index upper() const { return upper_; }

 private:
  std::size_t index(Index i, Index j) const {
    return static_cast<std::size_t>(lower_ + upper_ + i - j + j * leading_);
  }

  Index n_ = 0, lower_ = 0, upper_ = 0, leading_ = 1;
  std::vector<double> storage_;
  std::vector<int> pivots_;
};

}  // namespace rwd
