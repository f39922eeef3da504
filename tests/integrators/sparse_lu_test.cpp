// rwd::SparseLu (KLU): solves with a sparse matrix and with its transpose agree with a dense LU
// of the same matrix; the same matrix factored again — after another one — gives the same bits;
// a singular matrix is reported, and a malformed pattern refused naming the row and the rule.
// rwd::IncompleteLu (ILU(0), the preconditioner of gmres_ilu): its factors reproduce the matrix on
// the matrix's pattern (the defining property of ILU(0)), are the exact LU where the LU has no
// fill (a tridiagonal matrix), and apply L U and its transpose as a dense LU of L U does; the same
// matrix gives the same bits whatever was factored before; a zero pivot is reported and a pattern
// without a diagonal entry refused.
#include "rewind/integrators/sparse_lu.hpp"

#include "rewind/integrators/incomplete_lu.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

#include <Eigen/Dense>

#include "rewind/error.hpp"
#include "support/error_message.hpp"

namespace rwd {
namespace {

using V = Eigen::VectorXd;

// A 6 × 6 matrix, unsymmetric in values and pattern, in compressed rows.
struct Example {
  std::vector<Index> starts{0, 2, 5, 7, 10, 12, 14};
  std::vector<Index> columns{0, 3, 0, 1, 5, 1, 2, 2, 3, 4, 0, 4, 1, 5};
  std::vector<double> values{4.0, -1.0, 0.5,  3.0,  1.0, -2.0, 5.0,
                             1.5, 6.0,  -0.5, 0.25, 2.0, 1.0,  7.0};
  Eigen::MatrixXd dense() const {
    Eigen::MatrixXd a = Eigen::MatrixXd::Zero(6, 6);
    for (Index r = 0; r < 6; ++r)
      for (Index k = starts[static_cast<std::size_t>(r)];
           k < starts[static_cast<std::size_t>(r + 1)]; ++k)
        a(r, columns[static_cast<std::size_t>(k)]) = values[static_cast<std::size_t>(k)];
    return a;
  }
};

void fill(SparseLu& lu, const std::vector<double>& values) {
  std::copy(values.begin(), values.end(), lu.values().begin());
}

TEST(SparseLu, SolvesAndTransposedSolvesAgreeWithDenseLu) {
  if (!kSparseLuAvailable) GTEST_SKIP() << "built without KLU";
  const Example e;
  SparseLu lu(6, e.starts, e.columns);
  EXPECT_EQ(lu.size(), 6);
  EXPECT_EQ(lu.nonzeros(), 14);
  fill(lu, e.values);
  ASSERT_TRUE(lu.factor());
  const V b{{1.0, -2.0, 0.5, 3.0, 0.0, 1.25}};
  V x = b, xt = b;
  lu.solve(x.data(), false);
  lu.solve(xt.data(), true);
  const Eigen::MatrixXd a = e.dense();
  EXPECT_LT((a * x - b).norm(), 1e-14);
  EXPECT_LT((a.transpose() * xt - b).norm(), 1e-14);
  EXPECT_LT((x - a.partialPivLu().solve(b)).norm(), 1e-14);
}

TEST(SparseLu, TheSameMatrixGivesTheSameBitsWhateverWasFactoredBefore) {
  if (!kSparseLuAvailable) GTEST_SKIP() << "built without KLU";
  const Example e;
  SparseLu fresh(6, e.starts, e.columns), used(6, e.starts, e.columns);
  // `used` first factors a matrix that pivots differently (its first diagonal tiny).
  std::vector<double> other = e.values;
  other[0] = 1e-9;
  fill(used, other);
  ASSERT_TRUE(used.factor());
  fill(used, e.values);
  fill(fresh, e.values);
  ASSERT_TRUE(used.factor());
  ASSERT_TRUE(fresh.factor());
  V a{{0.3, 1.0, -2.0, 4.0, 0.1, 5.0}}, b = a;
  used.solve(a.data(), true);
  fresh.solve(b.data(), true);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), 6 * sizeof(double)), 0);
}

TEST(SparseLu, ReportsASingularMatrix) {
  if (!kSparseLuAvailable) GTEST_SKIP() << "built without KLU";
  const Example e;
  SparseLu lu(6, e.starts, e.columns);
  std::vector<double> values = e.values;
  values[12] = values[13] = 0.0;  // row 5 all zero
  fill(lu, values);
  EXPECT_FALSE(lu.factor());
}

TEST(SparseLu, RefusesAMalformedPatternNamingTheRowAndTheRule) {
  const std::vector<Index> starts{0, 2, 3, 4};
  const auto refusal = [](std::vector<Index> row_starts, std::vector<Index> columns) {
    return testing::error_message<InvalidArgument>([&] { SparseLu(3, row_starts, columns); });
  };
  testing::expect_message(refusal(starts, {1, 0, 1, 2}), "row 0's columns out of order");
  testing::expect_message(refusal(starts, {0, 1, 3, 2}), "column 3 in row 1");
  testing::expect_message(refusal({0, 2, 3}, {0, 1, 1}), "3 row starts; it needs n + 1 = 4");
}

// The unit lower L and upper U that `ilu` holds after factor(), as dense matrices.
std::pair<Eigen::MatrixXd, Eigen::MatrixXd> dense_factors(IncompleteLu& ilu,
                                                          const std::vector<Index>& starts,
                                                          const std::vector<Index>& columns) {
  const Index n = ilu.size();
  Eigen::MatrixXd l = Eigen::MatrixXd::Identity(n, n), u = Eigen::MatrixXd::Zero(n, n);
  const std::span<double> values = ilu.values();
  for (Index r = 0; r < n; ++r)
    for (Index k = starts[static_cast<std::size_t>(r)]; k < starts[static_cast<std::size_t>(r + 1)];
         ++k) {
      const Index c = columns[static_cast<std::size_t>(k)];
      (c < r ? l : u)(r, c) = values[static_cast<std::size_t>(k)];
    }
  return {l, u};
}

// A 5-point Laplacian-like matrix on a g × g grid (diagonal 4 + a shift, −1 to each neighbour,
// one off-diagonal of each row scaled to break the symmetry): ILU(0) fills, so it is not exact.
struct GridMatrix {
  Index g = 5, n = 25;
  std::vector<Index> starts{0}, columns;
  std::vector<double> values;
  GridMatrix() {
    for (Index r = 0; r < n; ++r) {
      const Index x = r % g, y = r / g;
      const auto add = [&](Index c, double v) {
        columns.push_back(c);
        values.push_back(v);
      };
      if (y > 0) add(r - g, -1.0);
      if (x > 0) add(r - 1, -1.3);
      add(r, 4.5 + 0.01 * static_cast<double>(r));
      if (x + 1 < g) add(r + 1, -0.7);
      if (y + 1 < g) add(r + g, -1.0);
      starts.push_back(static_cast<Index>(columns.size()));
    }
  }
};

TEST(IncompleteLu, FactorsReproduceTheMatrixOnItsPatternAndApplyTheirProduct) {
  const GridMatrix m;
  IncompleteLu ilu(m.n, m.starts, m.columns);
  EXPECT_EQ(ilu.nonzeros(), static_cast<Index>(m.columns.size()));
  std::copy(m.values.begin(), m.values.end(), ilu.values().begin());
  ASSERT_TRUE(ilu.factor());
  const auto [l, u] = dense_factors(ilu, m.starts, m.columns);
  const Eigen::MatrixXd product = l * u;
  double on_pattern = 0.0;
  for (Index r = 0; r < m.n; ++r)
    for (Index k = m.starts[static_cast<std::size_t>(r)];
         k < m.starts[static_cast<std::size_t>(r + 1)]; ++k)
      on_pattern =
          std::max(on_pattern, std::abs(product(r, m.columns[static_cast<std::size_t>(k)]) -
                                        m.values[static_cast<std::size_t>(k)]));
  EXPECT_LT(on_pattern, 1e-14);
  // The fill it dropped: L U is not the matrix off the pattern (ILU(0) is not the LU here).
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(m.n, m.n);
  for (Index r = 0; r < m.n; ++r)
    for (Index k = m.starts[static_cast<std::size_t>(r)];
         k < m.starts[static_cast<std::size_t>(r + 1)]; ++k)
      a(r, m.columns[static_cast<std::size_t>(k)]) = m.values[static_cast<std::size_t>(k)];
  EXPECT_GT((product - a).norm(), 1e-3);
  V b(m.n);
  for (Index i = 0; i < m.n; ++i) b[i] = std::sin(1.0 + static_cast<double>(i));
  V x = b, xt = b;
  ilu.apply(x.data(), false);
  ilu.apply(xt.data(), true);
  EXPECT_LT((product * x - b).norm(), 1e-13 * b.norm());
  EXPECT_LT((product.transpose() * xt - b).norm(), 1e-13 * b.norm());
  // And it is a good preconditioner of the matrix: (L U)⁻¹ A is close to the identity.
  EXPECT_LT((a * x - b).norm(), 0.2 * b.norm());
}

TEST(IncompleteLu, IsTheExactLuOfATridiagonalMatrix) {
  const Index n = 7;
  std::vector<Index> starts{0}, columns;
  std::vector<double> values;
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, n);
  for (Index r = 0; r < n; ++r) {
    for (Index c = std::max<Index>(0, r - 1); c <= std::min(n - 1, r + 1); ++c) {
      const double v = c == r ? 3.0 + 0.1 * static_cast<double>(r) : (c < r ? -1.1 : 0.6);
      columns.push_back(c);
      values.push_back(v);
      a(r, c) = v;
    }
    starts.push_back(static_cast<Index>(columns.size()));
  }
  IncompleteLu ilu(n, starts, columns);
  std::copy(values.begin(), values.end(), ilu.values().begin());
  ASSERT_TRUE(ilu.factor());
  const V b = V::LinSpaced(n, -1.0, 2.0);
  V x = b, xt = b;
  ilu.apply(x.data(), false);
  ilu.apply(xt.data(), true);
  EXPECT_LT((a * x - b).norm(), 1e-14);
  EXPECT_LT((a.transpose() * xt - b).norm(), 1e-14);
}

TEST(IncompleteLu, TheSameMatrixGivesTheSameBitsAndAZeroPivotIsReported) {
  const Example e;
  IncompleteLu fresh(6, e.starts, e.columns), used(6, e.starts, e.columns);
  std::vector<double> other = e.values;
  other[0] = 1e-9;
  std::copy(other.begin(), other.end(), used.values().begin());
  ASSERT_TRUE(used.factor());
  std::copy(e.values.begin(), e.values.end(), used.values().begin());
  std::copy(e.values.begin(), e.values.end(), fresh.values().begin());
  ASSERT_TRUE(used.factor());
  ASSERT_TRUE(fresh.factor());
  V a{{0.3, 1.0, -2.0, 4.0, 0.1, 5.0}}, b = a;
  used.apply(a.data(), true);
  fresh.apply(b.data(), true);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), 6 * sizeof(double)), 0);
  std::vector<double> zero_pivot = e.values;
  zero_pivot[0] = 0.0;  // a_00 = 0: no first pivot without pivoting
  std::copy(zero_pivot.begin(), zero_pivot.end(), fresh.values().begin());
  EXPECT_FALSE(fresh.factor());
}

TEST(IncompleteLu, RefusesAPatternWithoutADiagonalEntry) {
  testing::expect_message(
      testing::error_message<InvalidArgument>([] {
        IncompleteLu(3, std::vector<Index>{0, 2, 3, 5}, std::vector<Index>{0, 1, 2, 0, 2});
      }),
      "lacks the diagonal entry of row 1");
  testing::expect_message(testing::error_message<InvalidArgument>([] {
                            IncompleteLu(2, std::vector<Index>{0, 1, 2}, std::vector<Index>{1, 0});
                          }),
                          "lacks the diagonal entry of row 0");
}

}  // namespace
}  // namespace rwd
