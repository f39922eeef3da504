// integrators/src/incomplete_lu.cpp — see rewind/integrators/incomplete_lu.hpp.
#include "rewind/integrators/incomplete_lu.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "rewind/error.hpp"
#include "rewind/integrators/sparse_lu.hpp"

namespace rwd {
namespace {

std::size_t at(Index i) {
  return static_cast<std::size_t>(i);
}

}  // namespace

IncompleteLu::IncompleteLu(Index n, std::span<const Index> row_starts,
                           std::span<const Index> columns)
    : n_(n),
      starts_(row_starts.begin(), row_starts.end()),
      columns_(columns.begin(), columns.end()),
      diagonal_(at(n), 0),
      values_(columns.size(), 0.0),
      inverse_pivots_(at(n), 0.0),
      position_(at(n), -1) {
  if (n < 1) detail::fail<InvalidArgument>("IncompleteLu: ", n, " unknowns (need n >= 1)");
  check_compressed_rows(n, row_starts, columns, "IncompleteLu's pattern");
  for (Index r = 0; r < n; ++r) {
    Index k = starts_[at(r)];
    while (k < starts_[at(r + 1)] && columns_[at(k)] < r) ++k;
    if (k == starts_[at(r + 1)] || columns_[at(k)] != r)
      detail::fail<InvalidArgument>("IncompleteLu's pattern lacks the diagonal entry of row ", r,
                                    " (ILU(0) keeps the matrix's pattern, so every pivot must "
                                    "be in it)");
    diagonal_[at(r)] = k;
  }
}

bool IncompleteLu::factor(double singular) {
  for (Index i = 0; i < n_; ++i) {
    const Index begin = starts_[at(i)], end = starts_[at(i + 1)], d = diagonal_[at(i)];
    double row_size = 0.0;
    for (Index k = begin; k < end; ++k) {
      position_[at(columns_[at(k)])] = k;
      row_size = std::max(row_size, std::abs(values_[at(k)]));
    }
    // Row i of L and U: for each k < i in the row, in order, l_ik = a_ik / u_kk and
    // a_ij −= l_ik u_kj over the j > k of row k that row i has.
    for (Index p = begin; p < d; ++p) {
      const Index k = columns_[at(p)];
      const double l = values_[at(p)] * inverse_pivots_[at(k)];
      values_[at(p)] = l;
      for (Index q = diagonal_[at(k)] + 1; q < starts_[at(k + 1)]; ++q) {
        const Index slot = position_[at(columns_[at(q)])];
        if (slot >= 0) values_[at(slot)] -= l * values_[at(q)];
      }
    }
    for (Index k = begin; k < end; ++k) position_[at(columns_[at(k)])] = -1;
    const double pivot = values_[at(d)];
    if (!std::isfinite(pivot) || !(std::abs(pivot) > singular * row_size)) return false;
    inverse_pivots_[at(i)] = 1.0 / pivot;
  }
  return true;
}

void IncompleteLu::apply(double* x, bool transposed) const {
  if (!transposed) {
    // L y = x (unit lower, rows ascending), then U x = y (rows descending).
    for (Index i = 0; i < n_; ++i) {
      double sum = x[i];
      for (Index k = starts_[at(i)]; k < diagonal_[at(i)]; ++k)
        sum -= values_[at(k)] * x[columns_[at(k)]];
      x[i] = sum;
    }
    for (Index i = n_ - 1; i >= 0; --i) {
      double sum = x[i];
      for (Index k = diagonal_[at(i)] + 1; k < starts_[at(i + 1)]; ++k)
        sum -= values_[at(k)] * x[columns_[at(k)]];
      x[i] = sum * inverse_pivots_[at(i)];
    }
    return;
  }
  // Uᵀ y = x (lower; column i of Uᵀ is row i of U: rows ascending, each solved value scattered),
  // then Lᵀ x = y (unit upper; rows descending, scattered likewise).
  for (Index i = 0; i < n_; ++i) {
    const Index d = diagonal_[at(i)];
    const double solved = x[i] * inverse_pivots_[at(i)];
    x[i] = solved;
    for (Index k = d + 1; k < starts_[at(i + 1)]; ++k)
      x[columns_[at(k)]] -= values_[at(k)] * solved;
  }
  for (Index i = n_ - 1; i >= 0; --i) {
    const double solved = x[i];
    for (Index k = starts_[at(i)]; k < diagonal_[at(i)]; ++k)
      x[columns_[at(k)]] -= values_[at(k)] * solved;
  }
}

}  // namespace rwd
