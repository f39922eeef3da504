// OnlinePlacement (rewind/schedule/online_placement.hpp): the forward-phase snapshot placement of
// the online schedule, a one-step look-ahead on the closed-form reversal cost.
#include "rewind/schedule/online_placement.hpp"

#include <algorithm>

#include "rewind/error.hpp"
#include "rewind/schedule/checked_arithmetic.hpp"
#include "rewind/schedule/revolve_cost.hpp"

namespace rwd {
namespace {

// GCC/Clang's 128-bit integer (__extension__ keeps -Wpedantic quiet): exact products of two
// 64-bit values, without the gcd cancellations of detail::mul_div_exact in the hot loops.
__extension__ using Wide = __int128;

// a·b/d when d divides a·b, checked to fit in 64 bits.
Index mul_div(Index a, Index b, Index d, const char* what) {
  const Wide value = static_cast<Wide>(a) * b / d;
  if (value > detail::kIndexMax) detail::fail<InvalidArgument>(what, " overflows 64-bit integers");
  return static_cast<Index>(value);
}

// r(m, c) ≥ 1 for m ≥ 2, and β(c, r) into `beta`. For c ≥ 3 by walking β(c, r) up from r = 0
// (β(c, r) = β(c, r − 1)·(c + r)/r) rather than revolve's binary search: the segments here are
// short or have several snapshots, so r stays small; c ≤ 2 (r ≈ m or √(2m)) searches.
Index online_repetitions(Index steps, Index snapshots, Index& beta) {
  if (snapshots <= 2) {
    const Index r = revolve_repetitions(steps, snapshots);
    beta = revolve_beta(snapshots, r);
    return r;
  }
  Index r = 0;
  beta = 1;
  while (beta < steps) {
    ++r;
    beta = mul_div(beta, snapshots + r, r, "online: beta(c, r)");
  }
  return r;
}

// p(m, c): revolve's advances for m steps with c snapshots (rwd::revolve_advances), 0 for m ≤ 1.
// This runs O(c) times at every change of snapshots.
Index segment_advances(Index steps, Index snapshots) {
  if (steps <= 1) return 0;
  if (snapshots >= steps - 1) return steps - 1;
  Index beta = 0;
  const Index r = online_repetitions(steps, snapshots, beta);
  // p = r·m − β(c + 1, r − 1), and β(c + 1, r − 1) = β(c, r)·r/(c + 1).
  const Index tail = mul_div(beta, r, snapshots + 1, "online: beta(c + 1, r - 1)");
  return detail::checked_mul(r, steps, "online: advances of a segment") - tail;
}

// a/b with b > 0; compared exactly (the products stay far inside 128 bits).
struct Ratio {
  Index num;
  Index den;
};
bool less(const Ratio& a, const Ratio& b) {
  return static_cast<Wide>(a.num) * b.den < static_cast<Wide>(b.num) * a.den;
}
const Ratio& larger(const Ratio& a, const Ratio& b) {
  return less(a, b) ? b : a;
}

}  // namespace

void OnlinePlacement::GrowingAdvances::start(Index at_steps, Index with_snapshots) {
  snapshots = with_snapshots;
  steps = at_steps;
  advances = segment_advances(at_steps, with_snapshots);
  repetitions = 0;
  beta = 1;
  if (at_steps > 1) repetitions = online_repetitions(at_steps, with_snapshots, beta);
}

void OnlinePlacement::GrowingAdvances::grow() {
  steps = detail::checked_add(steps, 1, "online: steps");
  if (steps > beta) beta = revolve_beta(snapshots, ++repetitions);
  advances = detail::checked_add(advances, repetitions, "online: advances");
}

OnlinePlacement::OnlinePlacement(int snapshots) : snapshots_(snapshots) {
  if (snapshots < 1)
    detail::fail<InvalidArgument>("online: snapshots c = ", snapshots,
                                  " must be >= 1 (the initial state takes one)");
  positions_.reserve(static_cast<std::size_t>(snapshots));
  segment_cost_.reserve(static_cast<std::size_t>(snapshots));
}

void OnlinePlacement::reset() {
  current_ = -1;
  filling_ = true;
  fill_from_ = 1;
  optimum_ = after_last_ = after_second_last_ = GrowingAdvances{};
  positions_.clear();
  refresh_costs();
}

void OnlinePlacement::refresh_costs() {
  const int k = static_cast<int>(positions_.size()) - 1;
  const Index c = snapshots_;
  segment_cost_.assign(static_cast<std::size_t>(k > 0 ? k : 0), 0);
  head_cost_ = 0;
  all_segments_cost_ = 0;
  for (int i = 0; i < k; ++i) {
    segment_cost_[i] = segment_advances(positions_[i + 1] - positions_[i], c - i);
    if (i < k - 1) head_cost_ = detail::checked_add(head_cost_, segment_cost_[i], "online cost");
  }
  all_segments_cost_ =
      k > 0 ? detail::checked_add(head_cost_, segment_cost_[k - 1], "online cost") : 0;

  // Dropping interior snapshot j (1 ≤ j ≤ k − 1) merges segments j − 1 and j into segment j − 1
  // with c − j + 1 snapshots, and segments j + 1 … k − 1 move one place down, each with one
  // snapshot more. Suffix sums of the moved costs make all k − 1 candidates O(c) together.
  best_interior_ = -1;
  best_interior_cost_ = 0;
  if (k < 2) return;
  std::vector<Index> moved_suffix(static_cast<std::size_t>(k + 1), 0);  // Σ_{j<i<k} p(m_i, c−i+1)
  for (int i = k - 1; i >= 1; --i)
    moved_suffix[i] = detail::checked_add(
        moved_suffix[i + 1], segment_advances(positions_[i + 1] - positions_[i], c - i + 1),
        "online cost");
  Index prefix = 0;  // Σ_{i<j−1} p(m_i, c − i)
  for (int j = 1; j <= k - 1; ++j) {
    if (j >= 2) prefix = detail::checked_add(prefix, segment_cost_[j - 2], "online cost");
    const Index merged = segment_advances(positions_[j + 1] - positions_[j - 1], c - j + 1);
    const Index total = detail::checked_add(detail::checked_add(prefix, merged, "online cost"),
                                            moved_suffix[j + 1], "online cost");
    if (best_interior_ < 0 || total < best_interior_cost_) {  // the earliest among equals
      best_interior_ = j;
      best_interior_cost_ = total;
    }
  }
}

OnlinePlacement::Decision OnlinePlacement::decide(Index step) {
  if (step != current_ + 1)
    detail::fail<InvalidArgument>("online placement: decide(", step, ") after step ", current_,
                                  "; steps come one at a time from 0");
  current_ = step;
  const Index n = step;
  const Index c = snapshots_;
  if (n == 0)
    optimum_.start(2, c);  // p(n + 2, c): the shortest run that asks about y_n ends at n + 2
  else
    optimum_.grow();
  if (static_cast<int>(positions_.size()) < snapshots_) {  // a free slot: keep everything
    positions_.push_back(n);
    return {true, -1};
  }
  const int k = static_cast<int>(positions_.size()) - 1;
  if (k == 0) return {};  // c = 1: y_0 only, nothing can move
  // y_c is not stored in place of one of y_0 … y_{c−1}: for l = c + 2 either costs p(l, c),
  // and keeping them leaves the filling below to reproduce revolve's first sweep (measured: every
  // l ≤ β(c, 2) then costs exactly p(l, c)).
  if (n == c) return {};
  if (filling_) {
    if (const int j = fill_drop(n); j > 0) {
      const Index dropped = positions_[j];
      positions_.erase(positions_.begin() + j);
      positions_.push_back(n);
      fill_from_ = std::max(1, j - 1);
      return {true, j, dropped};
    }
    filling_ = false;  // the binomial pattern of repetition 2 is complete: look ahead from now on
    refresh_costs();
    after_last_.start(n - positions_[k], c - k + 1);
    after_second_last_.start(n - positions_[k - 1], c - k + 1);
  }
  const Index last = positions_[k];

  // The worst ratio to p(l, c) over the runs stopping at l = n + 2 and n + 3 (the run goes on
  // past n + 1: that is why the placement is asked), given the recomputation `again1`, `again2`
  // of each. Storing y_n makes the last segment 1 and 2 steps long for them: p(1) = 0, p(2) = 1.
  const Ratio optimum[2] = {{0, optimum_.advances},
                            {0, detail::checked_add(optimum_.advances,
                                                    n + 3 > optimum_.beta ? optimum_.repetitions + 1
                                                                          : optimum_.repetitions,
                                                    "online: advances")}};
  const auto score = [&](Index again1, Index again2) {
    const Ratio a{detail::checked_add(n + 1, again1, "online cost"), optimum[0].den};
    const Ratio b{detail::checked_add(n + 2, again2, "online cost"), optimum[1].den};
    return larger(a, b);
  };

  Ratio best = score(
      detail::checked_add(all_segments_cost_, segment_advances(n + 1 - last, c - k), "online cost"),
      detail::checked_add(all_segments_cost_, segment_advances(n + 2 - last, c - k),
                          "online cost"));
  int drop = -1;
  // [t_k, n) becomes segment k − 1 with c − k + 1 snapshots once an interior snapshot goes.
  if (best_interior_ >= 1) {
    const Index again =
        detail::checked_add(best_interior_cost_, after_last_.advances, "online cost");
    const Ratio r = score(again, again + 1);
    if (less(r, best)) {
      best = r;
      drop = best_interior_;
    }
  }
  {  // the latest snapshot goes: [t_{k−1}, n) becomes segment k − 1
    const Index again = detail::checked_add(head_cost_, after_second_last_.advances, "online cost");
    const Ratio r = score(again, again + 1);
    if (less(r, best)) {
      best = r;
      drop = k;
    }
  }
  if (drop < 0) {  // the snapshots stay: one step further from the current state
    after_last_.grow();
    after_second_last_.grow();
    return {};
  }
  const Index dropped = positions_[drop];
  positions_.erase(positions_.begin() + drop);
  positions_.push_back(n);
  refresh_costs();
  after_last_.start(1, c - k + 1);  // at the next step, y_n is one step behind
  after_second_last_.start(n + 1 - positions_[k - 1], c - k + 1);
  return {true, drop, dropped};
}

int OnlinePlacement::fill_drop(Index n) const {
  // Snapshot j goes when segments j − 1 and j together fit the bound of segment j − 1,
  // c − (j − 1) + 1; for j = k the merged segment runs to y_n. Later segments move one place down
  // and so only gain room, and the new last segment [y_{n−1} or y_{c−1}, y_n) is at most 2 long.
  // A snapshot that does not fit now never will (segments only grow), so the search starts where
  // the last one ended: O(1) amortised.
  const int k = static_cast<int>(positions_.size()) - 1;
  const Index c = snapshots_;
  for (int j = fill_from_; j <= k; ++j) {
    const Index right = j < k ? positions_[j + 1] : n;
    if (right - positions_[j - 1] <= c - j + 2) return j;
  }
  return -1;
}

Index OnlinePlacement::advances_if_ended_here() const {
  if (current_ < 0)
    detail::fail<InvalidArgument>("online placement: no step decided yet, so no run to cost");
  const int k = static_cast<int>(positions_.size()) - 1;
  Index segments = all_segments_cost_;
  if (filling_) {  // the costs are kept only once the look-ahead needs them: sum them here
    segments = 0;
    for (int i = 0; i < k; ++i)
      segments = detail::checked_add(
          segments, segment_advances(positions_[i + 1] - positions_[i], Index{snapshots_} - i),
          "online cost");
  }
  // l − 1 = current_ + 1 first-sweep advances, then the segments, then [t_k, l − 1).
  const Index tail = segment_advances(current_ + 1 - positions_[k], Index{snapshots_} - k);
  return detail::checked_add(detail::checked_add(current_ + 1, segments, "online cost"), tail,
                             "online cost");
}

}  // namespace rwd
