// rewind/schedule/online_placement.hpp — where an online schedule keeps its c snapshots while
// the run goes on, not knowing when it will stop (the forward phase of rwd::OnlineSchedule).
//
//   rwd::OnlinePlacement placement(/*snapshots=*/10);
//   for (rwd::Index n = 0;; ++n) {                // y_n is the current state
//     y_next = step(y);                           // y_{n+1}, with y_n still intact
//     if (stop(y_next)) break;                    // l = n + 1: no decision about y_n is needed
//     const rwd::OnlinePlacement::Decision d = placement.decide(n);  // the run goes on: l ≥ n + 2
//     if (d.store) { /* free the snapshot at position d.drop (unless −1), store y_n */ }
//     y = y_next;
//   }
//   rwd::Index cost = placement.advances_if_ended_here();  // if the run stops at l = n + 2
//
// The model (Stumm & Walther's): the driver computes y_{n+1} before it lets go of y_n, so when it
// asks about y_n it already knows that y_{n+1} is not final (l ≥ n + 2); a run that stops at
// l = n + 1 never asks, and reverses with y_n current. Reversing from snapshots at
// 0 = t_0 < … < t_k ≤ l − 2 with y_{l−1} current costs
//     (l − 1) + Σ_{i<k} p(t_{i+1} − t_i, c − i) + p(l − 1 − t_k, c − k)
// advances (p = rwd::revolve_advances; p(m, ·) = 0 for m ≤ 1): reverse step l − 1 at once, then
// each segment from the last to the first by revolve with the snapshots then free, c − i for
// segment i (its own included). This is what rwd::OnlineSchedule's reverse phase does.
//
// The rule, in four phases (the fourth has two variants, OnlineRule).
//  1. While a slot is free, y_n is stored (steps 0 … c − 1); y_c is not. Then nothing is
//     recomputed for l ≤ c + 1.
//  2. Filling (l up to β(c, 2) = C(c + 2, 2)): at each step y_n is stored in place of the earliest
//     snapshot whose removal keeps segment i within c − i + 1 steps (i = 0, 1, …). The segments
//     fill up to c + 1, c, …, 3 steps, earliest first — the first sweep of revolve for β(c, 2)
//     steps, where every segment is reversed with one repetition.
//  3. Targeting (β(c, 2) < l ≤ β(c, 3)): the placement steers towards revolve's first sweep for
//     β(c, 3) steps, which is unique: snapshots at the targets T_0 = 0 and
//     T_{i+1} = T_i + β(c − i, 2) (segment i reversed with two repetitions). Between T_{i−1} and
//     T_i the run is, from T_{i−1} on, a run of its own with c' = c − i + 1 snapshots, and at
//     l = T_i + 1 it must hold that sub-run's phase-2 pattern (offsets c' + 1, c', …, 3 after
//     T_{i−1}) — where Wang, Moin & Iaccarino's schedule reaches revolve's optimum. So every
//     target is protected for good once stored, and every position of block i's pattern until
//     T_i; the placement stores them when the run reaches them and never drops them early. Among
//     the other snapshots it chooses as a look-ahead: keep, or store y_n in place of the
//     unprotected snapshot whose removal costs least (the earliest among equals), by the worst
//     ratio to p(l, c) of the runs stopping at l = n + 2 and n + 3; it changes only when that
//     strictly helps, or when y_n is protected and must be stored.
//  4. Past β(c, 3): once the placement holds the targets (after deciding about y_{β(c,3)−2}) it
//     holds exactly the checkpoints of Wang, Moin & Iaccarino's dynamic checkpointing (SIAM J.
//     Sci. Comput. 31(4), 2009; rwd::detail::DynamicCheckpoints, run alongside up to there; the
//     placement checks that the two agree). Then, by OnlineRule:
//     - least_worst_case (the default): the look-ahead of phase 3 goes on with nothing
//       protected. Its worst case stays low (below), but at some l it does more advances than
//       Wang et al.'s schedule (at 4903 of the 37 981 (l, c) with l ≤ 2000, c ≤ 20; at most
//       13.85 %, at c = 2).
//     - never_above_dynamic: it makes Wang et al.'s moves. Its forward sweep is theirs and its
//       reverse sweep (revolve per segment with every free slot) costs no more than theirs, so it
//       never does more advances than that published online algorithm at any l — but it inherits
//       their worst case just past each β(c, t), up to 1.34 × offline revolve.
//     An exhaustive search (bench/results/online_checkpointing.md) shows that a placement with
//     both properties exists for c ≤ 4 past β(c, 3); neither rule is it.
// Phases 1–2 play the role of Stumm & Walther's online_r2 (SIAM J. Sci. Comput. 32(2), 836–854,
// 2010) and phase 3 of their online_r3.
//
// What it achieves (checked for every l ≤ 10^5, c ≤ 40 by online_schedule_long_test, on the
// validated action stream for l ≤ 2000, c ≤ 20 by online_schedule_test, against Wang et al. for
// every l ≤ 2000, c ≤ 20 by online_vs_dynamic_checkpointing_test; table for l ≤ 10^6 in
// bench/results/online_checkpointing.md), as ratios to p(l, c):
//   l ≤ β(c, 2):           exactly p(l, c) advances, offline revolve's optimum;
//   β(c, 2) < l ≤ β(c, 3): at most 15/14 = 1.0714 (c = 2), 22/21 = 1.0476 (c = 3), 31/30 =
//                          1.0333 (c = 4) — for c = 2, 3, 4 exactly the least worst case any
//                          online placement can reach (exhaustive search,
//                          bench/online_placement_search.py), so 1.05 is out of reach at c = 2 —
//                          and at most 1.0244 for every 5 ≤ c ≤ 40; exactly p(l, c) at β(c, 3);
//                          never more than Wang et al.;
//   l > β(c, 3):           least_worst_case: at most 1.1385 (c = 2), 1.0825 (c = 3), 1.06
//                          (c ≥ 4) for l ≤ 10^5, within 2.4 % for 10^5 ≤ l ≤ 10^6 (c ≤ 20);
//                          never_above_dynamic: Wang et al.'s advances or fewer, at most 1.34.
//
// Cost: memory O(c). Phases 1 and 2: O(1) amortised integer comparisons per step, plus Wang et
// al.'s level bookkeeping (a scan back from the latest checkpoint to the first dispensable one,
// O(c) at worst), which runs up to β(c, 3) and, with never_above_dynamic, on. Phase 3 and
// least_worst_case: a constant number of closed-form evaluations per step, plus O(c) of them at
// each change of snapshots. never_above_dynamic past β(c, 3): O(log c) per move, plus the
// closed form of the segments from the dropped checkpoint on.
#pragma once

#include <vector>

#include "rewind/schedule/dynamic_checkpointing_schedule.hpp"
#include "rewind/schedule/online_rule.hpp"
#include "rewind/types.hpp"

namespace rwd {

class OnlinePlacement {
 public:
  // c ≥ 1 snapshots (y_0's included). Throws InvalidArgument otherwise.
  explicit OnlinePlacement(int snapshots, OnlineRule rule = OnlineRule::least_worst_case);

  struct Decision {
    bool store = false;       // store the current state y_n
    int drop = -1;            // before storing, free the snapshot at this index of positions() (the
                              // index before the call), or −1 when a slot is free
    Index dropped_step = -1;  // the step of that snapshot
  };

  // The decision for the current state y_n, once the run is known to go on past y_{n+1}
  // (l ≥ n + 2); n is 0 on the first call and one more on each later call (InvalidArgument
  // otherwise). Updates positions().
  Decision decide(Index step);

  // The steps of the snapshots held, ascending; positions()[0] = 0 once decide(0) was called.
  const std::vector<Index>& positions() const { return positions_; }
  int snapshots() const { return snapshots_; }
  OnlineRule rule() const { return rule_; }
  // The step of the last decision (−1 before the first).
  Index current_step() const { return current_; }

  // The advances (first sweep and recomputation) of a run that stops at l = current_step() + 2,
  // the shortest run that asked about the current step, reversed from positions() as
  // rwd::OnlineSchedule does.
  Index advances_if_ended_here() const;

  // Back to no decision taken.
  void reset();

 private:
  // p(m, c') for m = 0, 1, 2, … in O(1) per step: p(m + 1) = p(m) + r(m + 1, c'), and r grows by
  // one each time m passes β(c', r). For the quantities that grow by one step per decision.
  struct GrowingAdvances {
    Index snapshots = 1;
    Index steps = 0;
    Index advances = 0;     // p(steps, snapshots)
    Index repetitions = 0;  // r(steps, snapshots), 0 for steps ≤ 1
    Index beta = 1;         // β(snapshots, repetitions)
    void start(Index at_steps, Index with_snapshots);
    void grow();  // steps + 1
  };

  enum class Phase { filling, targeting, looking_ahead, following };

  // The recomputation of reversing everything up to the last snapshot: Σ_{i<k} p(m_i, c − i), and
  // the cheapest interior snapshot to drop among those not protected at step n.
  // Segments before `unchanged_segments` keep their cached cost (their place, length and snapshots
  // did not change).
  void refresh_costs(Index n, int unchanged_segments = 0);
  // Phase 3: whether the snapshot of step q is protected when deciding about y_n (a target, or a
  // position of its block's pattern before the block's end).
  bool is_protected(Index q, Index n) const;
  Decision decide_targeting(Index n);
  Decision decide_following(Index n);
  // The steps of Wang et al.'s checkpoints held after the current decision.
  std::vector<Index> wmi_positions() const;
  // Replaces positions_[drop] (drop ≥ 1) by n, keeps the costs up to date.
  Decision replace(int drop, Index n);
  // While filling: the earliest snapshot whose removal keeps every segment i within c − i + 1
  // steps once y_n is stored, or −1 when there is none.
  int fill_drop(Index n) const;

  int snapshots_;
  OnlineRule rule_;
  Index current_ = -1;
  Phase phase_ = Phase::filling;
  // Phase 2 (l ≤ β(c, 2)): segments filled to c + 1, c, …, 3 steps, earliest first; the snapshots
  // before fill_from_ can no longer go.
  int fill_from_ = 1;
  // Phase 3: the targets T_0 … T_{c−1} (those that fit in 64 bits).
  std::vector<Index> targets_;
  // Wang, Moin & Iaccarino's checkpoints and levels for the same steps (phase 4 makes their
  // moves).
  detail::DynamicCheckpoints wmi_;
  detail::DynamicCheckpoints::Move wmi_move_;  // their move for the current step
  std::vector<Index> positions_;
  // For i < k = positions_.size() − 1 and m_i = t_{i+1} − t_i: p(m_i, c − i) (segment i as it is)
  // and the sums of these over all i < k and over i < k − 1.
  std::vector<Index> segment_cost_;
  Index head_cost_ = 0;          // Σ_{i<k−1} p(m_i, c − i)
  Index all_segments_cost_ = 0;  // Σ_{i<k} p(m_i, c − i)
  // The cheapest unprotected interior snapshot to drop (index 1 … k − 1) and what the segments
  // up to the last snapshot then cost; −1 when there is none.
  int best_interior_ = -1;
  Index best_interior_cost_ = 0;
  // p(n + 2, c), and with n the current step and k the index of the last snapshot once the slots
  // are full: p(n − t_k, c − k + 1) and p(n − t_{k−1}, c − k + 1).
  GrowingAdvances optimum_;
  GrowingAdvances after_last_;
  GrowingAdvances after_second_last_;
};

}  // namespace rwd
