// The bounds stated in rewind/schedule/online_placement.hpp, as measured for every l ≤ 10^5 and
// c ≤ 40 (and sampled up to c = 100): the largest ratio advances / p(l, c) the online schedule
// may reach for a run that stops at l with c snapshots.
//   l ≤ β(c, 2):           1 (offline revolve's optimum), either rule;
//   β(c, 2) < l ≤ β(c, 3): 15/14 (c = 2), 22/21 (c = 3), 31/30 (c = 4) — the least worst case of
//                          any online placement (bench/online_placement_search.py) — and 1.0244
//                          at most for c ≥ 5 (c = 5, l = 23), either rule;
//   l > β(c, 3):           least_worst_case: 1.1385 (c = 2), 1.0825 (c = 3), 1.06 for c ≥ 4;
//                          never_above_dynamic: Wang, Moin & Iaccarino's worst case, just past
//                          β(c, t): 1.122 (c = 2), 1.183 (c = 3), up to 1.3368 (c = 40), below
//                          1.34 for every c measured.
#pragma once

#include "rewind/schedule/online_placement.hpp"
#include "rewind/schedule/revolve_cost.hpp"
#include "rewind/types.hpp"

namespace rwd::testing {

inline double online_ratio_bound(Index l, int c, OnlineRule rule = OnlineRule::least_worst_case) {
  if (l <= revolve_beta(c, 2)) return 1.0;
  // Just above the exact fractions, so that the double products do not round below.
  if (l <= revolve_beta(c, 3)) return c == 2 ? 1.0715 : c == 3 ? 1.0477 : c == 4 ? 1.0334 : 1.0245;
  if (rule == OnlineRule::never_above_dynamic) return 1.34;
  return c == 2 ? 1.1386 : c == 3 ? 1.0826 : 1.06;
}

// Test-name suffixes for suites run under both rules.
inline const char* online_rule_name(OnlineRule rule) {
  return rule == OnlineRule::least_worst_case ? "LeastWorstCase" : "NeverAboveDynamic";
}

}  // namespace rwd::testing
