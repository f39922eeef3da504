// OnlinePlacement (rewind/schedule/online_placement.hpp): the forward-phase snapshot placement of
// the online schedule, a one-step look-ahead on the closed-form reversal cost.
#include "rewind/schedule/online_placement.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

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

int refuse_fewer_than_one(int snapshots) {
  if (snapshots < 1)
    detail::fail<InvalidArgument>("online: snapshots c = ", snapshots,
                                  " must be >= 1 (the initial state takes one)");
  return snapshots;
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

OnlinePlacement::OnlinePlacement(int snapshots, OnlineRule rule)
    : snapshots_(refuse_fewer_than_one(snapshots)), rule_(rule), wmi_(snapshots) {
  positions_.reserve(static_cast<std::size_t>(snapshots));
  segment_cost_.reserve(static_cast<std::size_t>(snapshots));
  // T_0 = 0, T_{i+1} = T_i + β(c − i, 2): revolve's first sweep for β(c, 3) steps. Targets past
  // 64 bits are never reached; they are left out.
  targets_.reserve(static_cast<std::size_t>(snapshots));
  targets_.push_back(0);
  for (Index i = 0; i + 1 < snapshots; ++i) {
    const Index c_i = snapshots - i;  // β(c_i, 2) = (c_i + 1)(c_i + 2)/2
    Index block = 0, next = 0;
    if (!detail::try_mul(c_i + 1, c_i + 2, block)) break;
    if (!detail::try_add(targets_.back(), block / 2, next)) break;
    targets_.push_back(next);
  }
}

void OnlinePlacement::reset() {
  current_ = -1;
  phase_ = Phase::filling;
  fill_from_ = 1;
  wmi_.reset();
  optimum_ = after_last_ = after_second_last_ = GrowingAdvances{};
  positions_.clear();
  refresh_costs(0);
}

void OnlinePlacement::refresh_costs(Index n, int unchanged_segments) {
  const int k = static_cast<int>(positions_.size()) - 1;
  const Index c = snapshots_;
  const bool reuse = unchanged_segments > 0 && segment_cost_.size() == static_cast<std::size_t>(k);
  if (!reuse) segment_cost_.assign(static_cast<std::size_t>(k > 0 ? k : 0), 0);
  head_cost_ = 0;
  all_segments_cost_ = 0;
  for (int i = 0; i < k; ++i) {
    if (!reuse || i >= unchanged_segments)
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
  if (k < 2 || !(phase_ == Phase::targeting || phase_ == Phase::looking_ahead)) return;
  std::vector<Index> moved_suffix(static_cast<std::size_t>(k + 1), 0);  // Σ_{j<i<k} p(m_i, c−i+1)
  for (int i = k - 1; i >= 1; --i)
    moved_suffix[i] = detail::checked_add(
        moved_suffix[i + 1], segment_advances(positions_[i + 1] - positions_[i], c - i + 1),
        "online cost");
  Index prefix = 0;  // Σ_{i<j−1} p(m_i, c − i)
  for (int j = 1; j <= k - 1; ++j) {
    if (j >= 2) prefix = detail::checked_add(prefix, segment_cost_[j - 2], "online cost");
    if (is_protected(positions_[j], n)) continue;
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
  // Wang, Moin & Iaccarino's checkpoints for the same run: their entry for y_{n+1} is allocated
  // once the run is known to go on from it, as this decision is (their Move says what changed).
  if (phase_ != Phase::looking_ahead) wmi_move_ = wmi_.allocate_next();  // not needed then
  if (n == 0)
    optimum_.start(2, c);  // p(n + 2, c): the shortest run that asks about y_n ends at n + 2
  else
    optimum_.grow();
  if (phase_ == Phase::following) return decide_following(n);
  if (phase_ == Phase::looking_ahead) return decide_targeting(n);
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
  if (phase_ == Phase::filling) {
    if (n + 2 <= targets_[1]) {  // T_1 = β(c, 2) (c ≥ 2 here)
      if (const int j = fill_drop(n); j > 0) {
        const Index dropped = positions_[j];
        positions_.erase(positions_.begin() + j);
        positions_.push_back(n);
        fill_from_ = std::max(1, j - 1);
        return {true, j, dropped};
      }
      return {};
    }
    // The pattern of repetition 2 is complete (l = β(c, 2) + 1): steer towards the targets.
    phase_ = Phase::targeting;
    refresh_costs(n);
    after_last_.start(n - positions_[k], c - k + 1);
    after_second_last_.start(n - positions_[k - 1], c - k + 1);
  }
  return decide_targeting(n);
}

bool OnlinePlacement::is_protected(Index q, Index n) const {
  if (phase_ != Phase::targeting) return false;
  // The last target at or before q: q is one, or in the block after it.
  const auto at = std::upper_bound(targets_.begin(), targets_.end(), q) - 1;
  if (*at == q) return true;
  const auto i = static_cast<Index>(at - targets_.begin()) + 1;  // block i: (T_{i−1}, T_i)
  if (i >= static_cast<Index>(targets_.size()) || n >= targets_[i]) return false;
  // Block i's pattern, a run of its own with c' = c − i + 1 snapshots from T_{i−1}: offsets
  // o_j = Σ_{m<j} (c' + 1 − m) = j(c' + 1) − j(j − 1)/2 for j = 1 … c' − 1 (segments c' + 1, c',
  // …, 3; the last 3 steps before T_i + 1 are reversed from y_{T_i}).
  const Index c_block = snapshots_ - i + 1;
  const Index offset = q - *at;
  Index low = 1, high = c_block - 1;
  while (low <= high) {
    const Index j = low + (high - low) / 2;
    const Index o = j * (c_block + 1) - j * (j - 1) / 2;
    if (o == offset) return true;
    if (o < offset)
      low = j + 1;
    else
      high = j - 1;
  }
  return false;
}

OnlinePlacement::Decision OnlinePlacement::replace(int drop, Index n) {
  const int k = static_cast<int>(positions_.size()) - 1;
  const Index dropped = positions_[drop];
  positions_.erase(positions_.begin() + drop);
  positions_.push_back(n);
  // Segments before drop − 1 keep their place, length and snapshots.
  refresh_costs(n, phase_ == Phase::following ? drop - 1 : 0);
  if (phase_ != Phase::following) {
    after_last_.start(1, snapshots_ - k + 1);  // at the next step, y_n is one step behind
    after_second_last_.start(n + 1 - positions_[k - 1], snapshots_ - k + 1);
  }
  return {true, drop, dropped};
}

OnlinePlacement::Decision OnlinePlacement::decide_targeting(Index n) {
  const Index c = snapshots_;
  const int k = static_cast<int>(positions_.size()) - 1;
  const Index last = positions_[k];
  const bool must_store = is_protected(n, n);
  // Protection ends only at a target, where y_n must be stored: the candidates kept since the
  // last change are fresh otherwise.
  if (must_store) refresh_costs(n);

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

  bool have = !must_store;
  Ratio best{0, 1};
  int drop = -1;
  if (have)
    best = score(detail::checked_add(all_segments_cost_, segment_advances(n + 1 - last, c - k),
                                     "online cost"),
                 detail::checked_add(all_segments_cost_, segment_advances(n + 2 - last, c - k),
                                     "online cost"));
  // [t_k, n) becomes segment k − 1 with c − k + 1 snapshots once an interior snapshot goes.
  if (best_interior_ >= 1) {
    const Index again =
        detail::checked_add(best_interior_cost_, after_last_.advances, "online cost");
    const Ratio r = score(again, again + 1);
    if (!have || less(r, best)) {
      best = r;
      drop = best_interior_;
      have = true;
    }
  }
  if (!is_protected(last, n)) {  // the latest snapshot goes: [t_{k−1}, n) becomes segment k − 1
    const Index again = detail::checked_add(head_cost_, after_second_last_.advances, "online cost");
    const Ratio r = score(again, again + 1);
    if (!have || less(r, best)) {
      best = r;
      drop = k;
      have = true;
    }
  }
  if (must_store && drop < 0)  // c − 1 protected snapshots at most are held before y_n's turn
    throw std::logic_error("online placement: no snapshot may go for the protected y_" +
                           std::to_string(n));
  Decision decision;
  if (drop < 0) {  // the snapshots stay: one step further from the current state
    after_last_.grow();
    after_second_last_.grow();
  } else {
    decision = replace(drop, n);
  }
  // After the decision for y_{β(c,3)−2} the targets are held, which are Wang et al.'s checkpoints
  // (revolve's first sweep for β(c, 3) steps is unique, and both reach it). T_{c−1} = β(c, 3) − 4.
  if (phase_ == Phase::targeting && static_cast<Index>(targets_.size()) == c &&
      n == targets_.back() + 2) {
    if (positions_ != wmi_positions())
      throw std::logic_error("online placement: at l = β(" + std::to_string(c) +
                             ", 3) the snapshots differ from the dynamic checkpoints");
    phase_ = rule_ == OnlineRule::never_above_dynamic ? Phase::following : Phase::looking_ahead;
    refresh_costs(n);
  }
  return decision;
}

std::vector<Index> OnlinePlacement::wmi_positions() const {
  std::vector<Index> steps;
  for (const auto& entry : wmi_.entries())
    if (entry.step <= current_) steps.push_back(entry.step);  // not the placeholder y_{n+1}
  return steps;
}

OnlinePlacement::Decision OnlinePlacement::decide_following(Index n) {
  // Their move for y_n: y_n kept (stored) in place of the dropped dispensable checkpoint, or y_n's
  // entry moved up to y_{n+1} (nothing stored). With every slot held, nothing else happens.
  if (!wmi_move_.kept_t) return {};
  const Index dropped = wmi_move_.dropped_entry.step;
  const auto at = std::lower_bound(positions_.begin() + 1, positions_.end(), dropped);
  if (!wmi_move_.dropped || at == positions_.end() || *at != dropped)
    throw std::logic_error("online placement: the dynamic checkpoints stored y_" +
                           std::to_string(n) + " without dropping one of ours");
  return replace(static_cast<int>(at - positions_.begin()), n);
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
  if (phase_ == Phase::filling) {  // the costs are kept only from phase 3 on: sum them here
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
