// rwd::SparseLu (KLU): solves with a sparse matrix and with its transpose agree with a dense LU
// of the same matrix; the same matrix factored again — after another one — gives the same bits;
// a singular matrix is reported, and a malformed pattern refused naming the row and the rule.
#include "rewind/integrators/sparse_lu.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
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

}  // namespace
}  // namespace rwd
