// rewind/schedule/online_placement.hpp — where an online schedule keeps its c snapshots while
// the run goes on, not knowing when it will stop (the forward phase of rwd::OnlineSchedule).
//
//   rwd::OnlinePlacement placement(/*snapshots=*/10);
//   for (rwd::Index n = 0; !stopped; ++n) {
//     const rwd::OnlinePlacement::Decision d = placement.decide(n);  // y_n is the current state
//     if (d.store) { /* free the snapshot at position d.drop (unless −1), store y_n */ }
//     advance();
//   }
//   rwd::Index cost = placement.advances_if_ended_here();  // if the run stops at l = n + 1
//
// The model. At step n the current state is y_n and the run may stop after the next step (l = n+1),
// in which case y_n is current when reversal starts, so a snapshot of y_n is of no use to that
// run: the decision to store y_n is taken without knowing whether it will ever pay. Reversing from
// snapshots at 0 = t_0 < … < t_k ≤ l − 1 with y_{l−1} current costs
//     (l − 1) + Σ_{i<k} p(t_{i+1} − t_i, c − i) + p(l − 1 − t_k, c − k)
// advances (p = rwd::revolve_advances; p(m, ·) = 0 for m ≤ 1): reverse step l − 1 at once, then
// each segment from the last to the first by revolve with the snapshots then free, c − i for
// segment i (its own included). This is what rwd::OnlineSchedule's reverse phase does.
//
// The rule, in three phases.
//  1. While a slot is free, y_n is stored (steps 0 … c − 1); y_c is not (l = c + 1 needs nothing
//     more). Then nothing is recomputed for l ≤ c + 1.
//  2. Filling (l up to β(c, 2) = C(c + 2, 2)): at each step y_n is stored in place of the earliest
//     snapshot whose removal keeps segment i within c − i + 1 steps (i = 0, 1, …). The segments
//     fill up to c + 1, c, …, 3 steps, earliest first — the first sweep of revolve for β(c, 2)
//     steps, where every segment is reversed with one repetition. A run that stops at l then has
//     c − 1 useful snapshots besides the (useless) one of y_{l−1} — one advance above p(l, c).
//  3. Look-ahead, once no snapshot can go in phase 2: at each step, three choices are compared by
//     the worst ratio to p(l, c) of the runs that stop after the next two steps (l = n + 1 and
//     n + 2): keep the snapshots; store y_n in place of the interior snapshot whose removal costs
//     least (the earliest among equals); or in place of the latest. It changes only when that
//     strictly helps. Like the dispensable checkpoints of Wang, Moin & Iaccarino (SIAM J. Sci.
//     Comput. 31(4), 2009) it thins snapshots where they are densest, but it chooses by the
//     closed-form cost instead of levels.
// Phase 2 plays the role of Stumm & Walther's online_r2 (SIAM J. Sci. Comput. 32(2), 836–854,
// 2010) and phase 3 of their online_r3 and of Wang et al. beyond.
//
// What it achieves (checked for every l ≤ 10^5, c ≤ 40 by online_schedule_long_test, on the
// validated action stream for l ≤ 2000, c ≤ 20 by online_schedule_test; table for l ≤ 10^6 in
// bench/results/online_checkpointing.md):
//   l ≤ β(c, 2):           at most p(l, c) + 1 advances (ratio ≤ 1 + 1/(c + 2)), and exactly
//                          p(l, c) for l ≤ c + 1;
//   β(c, 2) < l ≤ β(c, 3): ratio ≤ 1.05 for c ≥ 8, ≤ 1.13 for c ≥ 3, ≤ 1.30 for c = 2;
//   l > β(c, 3):           ratio ≤ 1.11 for c ≥ 3, ≤ 1.25 for c = 2, the worst just past β(c, 3);
//                          ≤ 1.02 for 10^5 ≤ l ≤ 10^6 and c ≤ 20.
// Why p(l, c) + 1 and not p(l, c) up to β(c, 2), as Stumm & Walther: their schedule knows that
// y_{n+1} will be final before it decides about y_n; here the driver learns that only once
// y_{n+1} is computed and y_n is gone. Then no placement is optimal for every l ≤ β(c, 2) (c = 2:
// l = 3, 4, 5 cannot all be), and one advance more is the least worst case (exhaustive search
// over all placements, c ≤ 6).
//
// Cost: memory O(c). Phases 1 and 2: O(1) amortised integer comparisons per step. Phase 3: a
// constant number of closed-form evaluations per step, plus O(c) of them at each change of
// snapshots (a small fraction of the steps, fewer the longer the run).
#pragma once

#include <vector>

#include "rewind/types.hpp"

namespace rwd {

class OnlinePlacement {
 public:
  // c ≥ 1 snapshots (y_0's included). Throws InvalidArgument otherwise.
  explicit OnlinePlacement(int snapshots);

  struct Decision {
    bool store = false;       // store the current state y_n
    int drop = -1;            // before storing, free the snapshot at this index of positions() (the
                              // index before the call), or −1 when a slot is free
    Index dropped_step = -1;  // the step of that snapshot
  };

  // The decision for the current state y_n, where n is 0 on the first call and one more on each
  // later call (InvalidArgument otherwise). Updates positions().
  Decision decide(Index step);

  // The steps of the snapshots held, ascending; positions()[0] = 0 once decide(0) was called.
  const std::vector<Index>& positions() const { return positions_; }
  int snapshots() const { return snapshots_; }
  // The step of the last decision (−1 before the first).
  Index current_step() const { return current_; }

  // The advances (first sweep and recomputation) of a run that stops at l = current_step() + 1,
  // reversed from positions() as rwd::OnlineSchedule does.
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

  // The recomputation of reversing everything up to the last snapshot: Σ_{i<k} p(m_i, c − i).
  void refresh_costs();
  // While filling: the earliest snapshot whose removal keeps every segment i within c − i + 1
  // steps once y_n is stored, or −1 when there is none.
  int fill_drop(Index n) const;

  int snapshots_;
  Index current_ = -1;
  // Phase 1 (l ≤ β(c, 2)): segments filled to c + 1, c, …, 3 steps, earliest first; the snapshots
  // before fill_from_ can no longer go.
  bool filling_ = true;
  int fill_from_ = 1;
  std::vector<Index> positions_;
  // For i < k = positions_.size() − 1 and m_i = t_{i+1} − t_i: p(m_i, c − i) (segment i as it is)
  // and the sums of these over all i < k and over i < k − 1.
  std::vector<Index> segment_cost_;
  Index head_cost_ = 0;          // Σ_{i<k−1} p(m_i, c − i)
  Index all_segments_cost_ = 0;  // Σ_{i<k} p(m_i, c − i)
  // The cheapest interior snapshot to drop (index 1 … k − 1) and what the segments up to the
  // last snapshot then cost; −1 when there is none (k < 2).
  int best_interior_ = -1;
  Index best_interior_cost_ = 0;
  // p(n + 1, c), and with n the current step and k the index of the last snapshot once the slots
  // are full: p(n − t_k, c − k + 1) and p(n − t_{k−1}, c − k + 1).
  GrowingAdvances optimum_;
  GrowingAdvances after_last_;
  GrowingAdvances after_second_last_;
};

}  // namespace rwd
