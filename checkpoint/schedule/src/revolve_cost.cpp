// The Griewank–Walther closed form (rewind/schedule/revolve_cost.hpp), 64-bit and checked.
#include "rewind/schedule/revolve_cost.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>

#include "rewind/error.hpp"
#include "rewind/schedule/checked_arithmetic.hpp"

namespace rwd {
namespace {

// C(c + r, c) if it is ≤ cap, else nothing (also when it exceeds Index's range). Builds
// C(n − k + i, i) for i = 1 … k with k = min(c, r): every partial value is a binomial that grows
// with i, so the loop stops as soon as one passes the cap.
std::optional<Index> binomial_at_most(Index c, Index r, Index cap) {
  const Index k = std::min(c, r);
  const Index base = std::max(c, r);  // n − k
  Index value = 1;
  for (Index i = 1; i <= k; ++i) {
    Index top = 0;
    if (!detail::try_add(base, i, top)) return std::nullopt;
    // value · top / i is exact; cancel gcd(value, i) so that the product is the result's size.
    const Index g = std::gcd(value, i);
    if (!detail::try_mul(value / g, top / (i / g), value)) return std::nullopt;
    if (value > cap) return std::nullopt;
  }
  if (value > cap) return std::nullopt;
  return value;
}

void require_steps(Index steps) {
  if (steps < 1) detail::fail<InvalidArgument>("steps l = ", steps, " must be >= 1");
}

void require_snapshots(Index snapshots) {
  if (snapshots < 1)
    detail::fail<InvalidArgument>("snapshots c = ", snapshots,
                                  " must be >= 1 (the initial state takes one)");
}

}  // namespace

std::optional<Index> revolve_beta_at_most(Index snapshots, Index repetitions, Index cap) {
  if (repetitions < 0) return Index{0};
  return binomial_at_most(snapshots, repetitions, cap);
}

Index revolve_beta(Index snapshots, Index repetitions) {
  if (snapshots < 0) detail::fail<InvalidArgument>("beta: c = ", snapshots, " must be >= 0");
  if (repetitions < -1) detail::fail<InvalidArgument>("beta: r = ", repetitions, " must be >= -1");
  if (repetitions == -1) return 0;
  const std::optional<Index> value = binomial_at_most(snapshots, repetitions, detail::kIndexMax);
  if (!value)
    detail::fail<InvalidArgument>("beta(c = ", snapshots, ", r = ", repetitions,
                                  ") = C(c + r, c) overflows 64-bit integers");
  return *value;
}

Index revolve_repetitions(Index steps, Index snapshots) {
  require_steps(steps);
  require_snapshots(snapshots);
  if (steps == 1) return 0;
  // β(c, r) grows with r and β(c, l − 1) ≥ β(1, l − 1) = l: binary search on [1, l − 1].
  Index lo = 1, hi = steps - 1;
  while (lo < hi) {
    const Index mid = lo + (hi - lo) / 2;
    const std::optional<Index> beta = binomial_at_most(snapshots, mid, steps - 1);
    if (!beta)  // β(c, mid) ≥ l
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

Index revolve_advances(Index steps, Index snapshots) {
  const Index r = revolve_repetitions(steps, snapshots);
  if (r == 0) return 0;
  const Index c = snapshots;
  // p = r·l − β(c + 1, r − 1) with β(c + 1, r − 1) = β(c, r − 1)·(c + r)/(c + 1); writing
  // B = β(c, r − 1) < l,  p = r·(l − B) + B·c·(r − 1)/(c + 1), a sum of two terms ≤ p, each
  // computed without an intermediate larger than itself: overflow only when p does not fit.
  const Index beta = revolve_beta(c, r - 1);
  const Index first = detail::checked_mul(r, steps - beta, "revolve advances r*(l - beta)");
  // (c + 1) divides B·(r − 1) because c and c + 1 are coprime.
  const Index g = std::gcd(beta, c + 1);
  const Index second =
      detail::checked_mul(detail::checked_mul(beta / g, c, "revolve advances"),
                          (r - 1) / ((c + 1) / g), "revolve advances beta*c*(r - 1)/(c + 1)");
  return detail::checked_add(first, second, "revolve advances");
}

double revolve_recompute_ratio(Index steps, Index snapshots) {
  const Index r = revolve_repetitions(steps, snapshots);
  if (r == 0) return 1.0;
  const double beta = static_cast<double>(revolve_beta(snapshots, r - 1));  // < l: fits
  const double c = static_cast<double>(snapshots);
  const double l = static_cast<double>(steps);
  const double rr = static_cast<double>(r);
  // (l + p)/l = 1 + r − β(c + 1, r − 1)/l, with β(c + 1, r − 1) = β(c, r − 1)·(c + r)/(c + 1).
  return 1.0 + rr - beta * ((c + rr) / (c + 1.0)) / l;
}

int snapshots_for_budget(Index budget_bytes, Index bytes_per_snapshot) {
  if (bytes_per_snapshot < 1)
    detail::fail<InvalidArgument>("bytes per snapshot = ", bytes_per_snapshot, " must be >= 1");
  if (budget_bytes < bytes_per_snapshot)
    detail::fail<InvalidArgument>("a budget of ", budget_bytes, " bytes holds no snapshot of ",
                                  bytes_per_snapshot, " bytes (at least one is needed)");
  const Index count = budget_bytes / bytes_per_snapshot;
  return static_cast<int>(std::min<Index>(count, std::numeric_limits<int>::max()));
}

}  // namespace rwd
