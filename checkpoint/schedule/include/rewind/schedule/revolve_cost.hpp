// rewind/schedule/revolve_cost.hpp — the Griewank–Walther closed form for binomial
// checkpointing: how many forward steps reversing l steps with c snapshots costs at least.
//
//   rwd::Index r = rwd::revolve_repetitions(100000, 20);      // 6
//   rwd::Index p = rwd::revolve_advances(100000, 20);         // 534220 = 6·100000 − C(26, 5)
//   double ratio = rwd::revolve_recompute_ratio(100000, 20);  // 6.3422 forward runs
//   int c = rwd::snapshots_for_budget(/*bytes=*/1 << 30, /*per snapshot=*/8 << 20);  // 128
//
// From A. Griewank and A. Walther, "Algorithm 799: revolve: an implementation of checkpointing
// for the reverse or adjoint mode of computational differentiation", ACM TOMS 26(1), 19–45, 2000:
//   β(c, r) = C(c + r, c) is the most steps c snapshots can reverse when no step is advanced
//   more than r times (Griewank 1992); r(l, c) is the smallest r with β(c, r) ≥ l; and the
//   minimal number of advances is p(l, c) = r·l − β(c + 1, r − 1).
// Counting is revolve's: the initial state occupies one of the c snapshots, and each reverse step
// re-runs its own forward step, which p does not include — forward evaluations total l + p.
//
// Everything is 64-bit and checked: a value that does not fit throws rwd::InvalidArgument saying
// so, never wraps. Invalid arguments (l < 1, c < 1, ...) are refused naming the value and rule.
#pragma once

#include <optional>

#include "rewind/types.hpp"

namespace rwd {

// β(c, r) = C(c + r, c) for c, r ≥ 0 (and 0 for r = −1, so that β(c + 1, r − 1) works at r = 0).
Index revolve_beta(Index snapshots, Index repetitions);

// β(c, r) when it is at most `cap`, else nothing (also when it would not fit in 64 bits);
// 0 for r < 0. Never throws: for searches that only care about values up to a bound.
std::optional<Index> revolve_beta_at_most(Index snapshots, Index repetitions, Index cap);

// r(l, c): the smallest r ≥ 0 with β(c, r) ≥ l, for l ≥ 1, c ≥ 1. O(min(c, r) · log l).
Index revolve_repetitions(Index steps, Index snapshots);

// p(l, c) = r·l − β(c + 1, r − 1): the minimal number of steps advanced (first sweep plus
// recomputation) to reverse l steps with c snapshots. l − 1 when c ≥ l − 1; l(l − 1)/2 when c = 1.
// Throws InvalidArgument when p does not fit in 64 bits (e.g. l near 2^62 with c = 2).
Index revolve_advances(Index steps, Index snapshots);

// (l + p(l, c)) / l: forward evaluations per step of the forward run, including the forward step
// re-run inside each reverse step. Computed in floating point; never overflows.
double revolve_recompute_ratio(Index steps, Index snapshots);

// The number of snapshots that fit in a byte budget: ⌊budget / bytes per snapshot⌋, capped at the
// largest int. Refuses a budget that holds no snapshot, and non-positive sizes.
int snapshots_for_budget(Index budget_bytes, Index bytes_per_snapshot);

}  // namespace rwd
