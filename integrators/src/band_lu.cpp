// integrators/src/band_lu.cpp — see rewind/integrators/band_lu.hpp.
#include "rewind/integrators/band_lu.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>

#include "rewind/error.hpp"

extern "C" {
// LAPACK (Fortran): LU of a general band matrix, and the solve with it. The trailing size_t is
// the hidden length of the character argument that gfortran passes.
void dgbtrf_(const int* m, const int* n, const int* kl, const int* ku, double* ab, const int* ldab,
             int* ipiv, int* info);
void dgbtrs_(const char* trans, const int* n, const int* kl, const int* ku, const int* nrhs,
             const double* ab, const int* ldab, const int* ipiv, double* b, const int* ldb,
             int* info, std::size_t trans_length);
}

namespace rwd {

void BandLu::resize(Index n, Index lower, Index upper) {
  if (n < 1 || lower < 0 || upper < 0 || lower >= n || upper >= n)
    detail::fail<InvalidArgument>("BandLu: a ", n, " x ", n, " matrix with ", lower, " sub- and ",
                                  upper, " super-diagonals (each must be in [0, n - 1])");
  if (n > std::numeric_limits<int>::max() / (2 * lower + upper + 1))
    detail::fail<InvalidArgument>("BandLu: n = ", n, " is too large for LAPACK's int indices");
  n_ = n;
  lower_ = lower;
  upper_ = upper;
  leading_ = 2 * lower + upper + 1;
  storage_.assign(static_cast<std::size_t>(leading_ * n), 0.0);
  pivots_.assign(static_cast<std::size_t>(n), 0);
}

void BandLu::set_zero() {
  std::fill(storage_.begin(), storage_.end(), 0.0);
}

bool BandLu::factor() {
  const int n = static_cast<int>(n_), kl = static_cast<int>(lower_), ku = static_cast<int>(upper_);
  const int ldab = static_cast<int>(leading_);
  int info = 0;
  dgbtrf_(&n, &n, &kl, &ku, storage_.data(), &ldab, pivots_.data(), &info);
  if (info < 0) detail::fail<Error>("BandLu: dgbtrf rejected argument ", -info);
  return info == 0;
}

void BandLu::solve(double* x, bool transposed) const {
  const int n = static_cast<int>(n_), kl = static_cast<int>(lower_), ku = static_cast<int>(upper_);
  const int ldab = static_cast<int>(leading_), one = 1;
  int info = 0;
  dgbtrs_(transposed ? "T" : "N", &n, &kl, &ku, &one, storage_.data(), &ldab, pivots_.data(), x, &n,
          &info, 1);
  if (info != 0) detail::fail<Error>("BandLu: dgbtrs rejected argument ", -info);
}

}  // namespace rwd
