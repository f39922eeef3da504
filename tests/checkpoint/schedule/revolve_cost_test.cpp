// The Griewank–Walther closed form: binomials, r(l, c), p(l, c) against values worked out by hand
// and against an independent brute-force dynamic program; byte budgets; overflow refused.
#include "rewind/schedule/revolve_cost.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/schedule/checked_arithmetic.hpp"
#include "support/error_message.hpp"

namespace rwd {
namespace {

constexpr Index kMax = std::numeric_limits<Index>::max();

// The message of the InvalidArgument that `f` throws (a test failure if it throws nothing or
// something else).
template <class F>
std::string refusal(F&& f) {
  return testing::error_message<InvalidArgument>(std::forward<F>(f));
}

// Minimal advances to reverse l steps from a stored y_0 with c snapshots (y_0's included), by
// the classic recursion over the first split point j: advance j steps, store y_j, reverse [j, l)
// with c − 1 snapshots, then [0, j) with c; or (any c) advance to l − 1 without storing, reverse
// it, and reverse [0, l − 1) with c. Independent of the closed form.
std::vector<std::vector<Index>> brute_force_advances(Index max_steps, Index max_snapshots) {
  std::vector<std::vector<Index>> f(
      static_cast<std::size_t>(max_steps + 1),
      std::vector<Index>(static_cast<std::size_t>(max_snapshots + 1)));
  for (Index c = 1; c <= max_snapshots; ++c) {
    f[1][c] = 0;
    for (Index l = 2; l <= max_steps; ++l) {
      Index best = (l - 1) + f[l - 1][c];
      if (c >= 2)
        for (Index j = 1; j < l; ++j) best = std::min(best, j + f[l - j][c - 1] + f[j][c]);
      f[l][c] = best;
    }
  }
  return f;
}

TEST(RevolveCost, Beta) {
  EXPECT_EQ(revolve_beta(3, 2), 10);     // C(5, 3)
  EXPECT_EQ(revolve_beta(10, 4), 1001);  // C(14, 10)
  EXPECT_EQ(revolve_beta(5, 0), 1);
  EXPECT_EQ(revolve_beta(0, 7), 1);
  EXPECT_EQ(revolve_beta(4, -1), 0);
  EXPECT_EQ(revolve_beta(1, 99), 100);
  EXPECT_EQ(revolve_beta(30, 30), 118264581564861424);   // C(60, 30)
  EXPECT_EQ(revolve_beta(33, 33), 7219428434016265740);  // C(66, 33), just below 2^63
  // β(c, r) = β(c, r − 1) + β(c − 1, r) (Pascal), over a range of arguments.
  for (Index c = 1; c <= 40; ++c)
    for (Index r = 1; r <= 25; ++r)
      EXPECT_EQ(revolve_beta(c, r), revolve_beta(c, r - 1) + revolve_beta(c - 1, r))
          << c << " " << r;
}

TEST(RevolveCost, BetaOverflowIsRefusedNotWrapped) {
  EXPECT_NE(refusal([] { revolve_beta(34, 34); }).find("overflow"),
            std::string::npos);  // C(68, 34)
  EXPECT_NE(refusal([] { revolve_beta(100, 100); }).find("overflow"), std::string::npos);
  EXPECT_NE(refusal([] { revolve_beta(2, kMax - 1); }).find("overflow"), std::string::npos);
  EXPECT_NE(refusal([] { revolve_beta(-1, 3); }).find("c = -1"), std::string::npos);
  EXPECT_NE(refusal([] { revolve_beta(3, -2); }).find("r = -2"), std::string::npos);
}

TEST(RevolveCost, KnownValuesByHand) {
  // (l, c) = (10, 3): β(3, 1) = C(4, 1) = 4 < 10 ≤ β(3, 2) = C(5, 2) = 10, so r = 2;
  // p = 2·10 − β(4, 1) = 20 − C(5, 1) = 15.
  EXPECT_EQ(revolve_repetitions(10, 3), 2);
  EXPECT_EQ(revolve_advances(10, 3), 2 * 10 - 5);
  // (100, 5): β(5, 3) = C(8, 3) = 56 < 100 ≤ β(5, 4) = C(9, 4) = 126, so r = 4;
  // p = 4·100 − β(6, 3) = 400 − C(9, 3) = 400 − 84 = 316.
  EXPECT_EQ(revolve_repetitions(100, 5), 4);
  EXPECT_EQ(revolve_advances(100, 5), 4 * 100 - 84);
  // (1000, 10): β(10, 3) = C(13, 3) = 286 < 1000 ≤ β(10, 4) = C(14, 4) = 1001, so r = 4;
  // p = 4·1000 − β(11, 3) = 4000 − C(14, 3) = 4000 − 364 = 3636.
  EXPECT_EQ(revolve_repetitions(1000, 10), 4);
  EXPECT_EQ(revolve_advances(1000, 10), 4 * 1000 - 364);
  // (100000, 20): β(20, 5) = C(25, 5) = 53130 < 100000 ≤ β(20, 6) = C(26, 6) = 230230, so r = 6;
  // p = 6·100000 − β(21, 5) = 600000 − C(26, 5) = 600000 − 65780 = 534220.
  EXPECT_EQ(revolve_repetitions(100000, 20), 6);
  EXPECT_EQ(revolve_advances(100000, 20), 534220);
  EXPECT_DOUBLE_EQ(revolve_recompute_ratio(100000, 20), (100000.0 + 534220.0) / 100000.0);
  // l = β(c, r) exactly: r does not jump.
  EXPECT_EQ(revolve_repetitions(1001, 10), 4);
  EXPECT_EQ(revolve_repetitions(1002, 10), 5);
}

TEST(RevolveCost, Limits) {
  for (Index l = 1; l <= 300; ++l) {
    EXPECT_EQ(revolve_advances(l, 1), l * (l - 1) / 2) << l;  // recompute from y_0 every time
    EXPECT_EQ(revolve_advances(l, std::max<Index>(l - 1, 1)), l - 1) << l;  // nothing recomputed
    EXPECT_EQ(revolve_advances(l, l + 1000), l - 1) << l;
  }
  EXPECT_EQ(revolve_repetitions(1, 5), 0);
  EXPECT_EQ(revolve_advances(1, 5), 0);
  EXPECT_DOUBLE_EQ(revolve_recompute_ratio(1, 5), 1.0);
  EXPECT_DOUBLE_EQ(revolve_recompute_ratio(1000, 999), (1000.0 + 999.0) / 1000.0);
  EXPECT_EQ(revolve_advances(1000000, std::numeric_limits<int>::max()), 999999);
}

TEST(RevolveCost, ClosedFormEqualsBruteForceTiny) {
  const auto f = brute_force_advances(12, 4);
  for (Index l = 1; l <= 12; ++l)
    for (Index c = 1; c <= 4; ++c) EXPECT_EQ(revolve_advances(l, c), f[l][c]) << l << " " << c;
}

TEST(RevolveCost, ClosedFormEqualsBruteForceSmall) {
  const auto f = brute_force_advances(120, 7);
  for (Index l = 1; l <= 120; ++l)
    for (Index c = 1; c <= 7; ++c) EXPECT_EQ(revolve_advances(l, c), f[l][c]) << l << " " << c;
}

TEST(RevolveCost, RepetitionsIsTheSmallestSufficient) {
  for (Index c = 1; c <= 12; ++c)
    for (Index l = 2; l <= 3000; l += 7) {
      const Index r = revolve_repetitions(l, c);
      EXPECT_GE(revolve_beta(c, r), l);
      EXPECT_LT(revolve_beta(c, r - 1), l);
    }
}

TEST(RevolveCost, HugeHorizons) {
  const Index l = Index{1} << 62;
  // c = 1: β(1, r) = r + 1, found by bisection rather than 2^62 increments.
  EXPECT_EQ(revolve_repetitions(l, 1), l - 1);
  // c = 2: β(2, r) = (r + 1)(r + 2)/2 ≥ 2^62 at r ≈ 2^31.5.
  const Index r2 = revolve_repetitions(l, 2);
  EXPECT_GT(r2, Index{3000000000});
  EXPECT_LT(r2, Index{3100000000});
  EXPECT_GE(revolve_beta(2, r2), l);
  EXPECT_LT(revolve_beta(2, r2 - 1), l);
  // p(2^62, 2) ≈ r·l does not fit in 64 bits: a clear error, not a wrapped number.
  EXPECT_NE(refusal([&] { revolve_advances(l, 2); }).find("overflows 64-bit"), std::string::npos);
  EXPECT_NE(refusal([&] { revolve_advances(l, 1); }).find("overflows 64-bit"), std::string::npos);
  EXPECT_NE(refusal([] { revolve_advances(kMax, 3); }).find("overflows 64-bit"), std::string::npos);
  // Where r·l fits, p is exactly the definition r·l − β(c + 1, r − 1).
  const Index big = Index{1} << 40;
  const Index r = revolve_repetitions(big, 60);
  EXPECT_EQ(revolve_advances(big, 60), r * big - revolve_beta(61, r - 1));
  // p(3·10^9, 1) = l(l − 1)/2 ≈ 4.5·10^18 fits, although r·l = (l − 1)·l does not.
  const Index l1 = 3000000000;
  EXPECT_EQ(revolve_advances(l1, 1), l1 / 2 * (l1 - 1));
  // The ratio is floating point and always defined.
  const double ratio = revolve_recompute_ratio(l, 2);
  EXPECT_TRUE(std::isfinite(ratio));
  EXPECT_GT(ratio, 1e9);
}

TEST(RevolveCost, RefusesBadArguments) {
  EXPECT_NE(refusal([] { revolve_repetitions(0, 3); }).find("steps l = 0 must be >= 1"),
            std::string::npos);
  EXPECT_NE(refusal([] { revolve_advances(-5, 3); }).find("steps l = -5"), std::string::npos);
  EXPECT_NE(refusal([] { revolve_advances(10, 0); }).find("snapshots c = 0 must be >= 1"),
            std::string::npos);
  EXPECT_NE(refusal([] { revolve_recompute_ratio(10, -1); }).find("snapshots c = -1"),
            std::string::npos);
}

TEST(RevolveCost, SnapshotsForBudget) {
  EXPECT_EQ(snapshots_for_budget(Index{1} << 30, Index{8} << 20), 128);
  EXPECT_EQ(snapshots_for_budget(1000, 300), 3);
  EXPECT_EQ(snapshots_for_budget(300, 300), 1);
  EXPECT_EQ(snapshots_for_budget(kMax, 1), std::numeric_limits<int>::max());
  EXPECT_NE(refusal([] { snapshots_for_budget(299, 300); }).find("holds no snapshot"),
            std::string::npos);
  EXPECT_NE(refusal([] { snapshots_for_budget(1000, 0); }).find("bytes per snapshot = 0"),
            std::string::npos);
  EXPECT_NE(refusal([] { snapshots_for_budget(-1, 8); }).find("holds no snapshot"),
            std::string::npos);
}

TEST(CheckedArithmetic, RefusesToWrap) {
  using detail::checked_add;
  using detail::checked_mul;
  using detail::mul_div_exact;
  EXPECT_EQ(checked_add(kMax - 1, 1, "x"), kMax);
  EXPECT_THROW(checked_add(kMax, 1, "x"), InvalidArgument);
  EXPECT_EQ(checked_mul(Index{1} << 31, Index{1} << 31, "x"), Index{1} << 62);
  EXPECT_THROW(checked_mul(Index{1} << 32, Index{1} << 31, "x"), InvalidArgument);
  // a·b/d where a·b overflows but the result fits.
  EXPECT_EQ(mul_div_exact(Index{1} << 62, 6, 12, "x"), Index{1} << 61);
  EXPECT_EQ(mul_div_exact(7219428434016265740, 33, 66, "x"), 3609714217008132870);
  EXPECT_THROW(mul_div_exact(Index{1} << 62, 12, 6, "x"), InvalidArgument);
}

}  // namespace
}  // namespace rwd
