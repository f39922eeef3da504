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
// The rule, in three phases.
//  1. While a slot is free, y_n is stored (steps 0 … c − 1); y_c is not. Then nothing is
//     recomputed for l ≤ c + 1.
//  2. Filling (l up to β(c, 2) = C(c + 2, 2)): at each step y_n is stored in place of the earliest
//     snapshot whose removal keeps segment i within c − i + 1 steps (i = 0, 1, …). The segments
//     fill up to c + 1, c, …, 3 steps, earliest first — the first sweep of revolve for β(c, 2)
//     steps, where every segment is reversed with one repetition.
//  3. Look-ahead, once no snapshot can go in phase 2: at each step, three choices are compared by
//     the worst ratio to p(l, c) of the runs that stop after the next two steps they decide
//     (l = n + 2 and n + 3): keep the snapshots; store y_n in place of the interior snapshot
//     whose removal costs least (the earliest among equals); or in place of the latest. It
//     changes only when that strictly helps. Like the dispensable checkpoints of Wang, Moin &
//     Iaccarino (SIAM J. Sci. Comput. 31(4), 2009) it thins snapshots where they are densest, but
//     it chooses by the closed-form cost instead of levels.
// Phase 2 plays the role of Stumm & Walther's online_r2 (SIAM J. Sci. Comput. 32(2), 836–854,
// 2010) and phase 3 of their online_r3 and of Wang et al. beyond.
//
// What it achieves (checked for every l ≤ 10^5, c ≤ 40 by online_schedule_long_test, on the
// validated action stream for l ≤ 2000, c ≤ 20 by online_schedule_test; table for l ≤ 10^6 in
// bench/results/online_checkpointing.md):
//   l ≤ β(c, 2):           exactly p(l, c) advances, offline revolve's optimum;
//   β(c, 2) < l ≤ β(c, 3): ratio to p(l, c) at most 15/14 = 1.0714 (c = 2), 22/21 = 1.0476
//                          (c = 3), 31/30 = 1.0333 (c = 4) — for c = 2, 3, 4 exactly the least
//                          worst case any online placement can reach (exhaustive search,
//                          bench/online_placement_search.py), so 1.05 is out of reach at c = 2 —
//                          and at most 1.0374 for every c ≤ 40 (≤ 1.021 for c ≥ 28);
//   l > β(c, 3):           at most 1.14 (c = 2), 1.09 (c = 3), 1.06 (c ≥ 4), the worst just past
//                          β(c, 3); at most 1.021 for 10^5 ≤ l ≤ 10^6 and c ≤ 20.
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

  // The decision for the current state y_n, once the run is known to go on past y_{n+1}
  // (l ≥ n + 2); n is 0 on the first call and one more on each later call (InvalidArgument
  // otherwise). Updates positions().
  Decision decide(Index step);

  // The steps of the snapshots held, ascending; positions()[0] = 0 once decide(0) was called.
  const std::vector<Index>& positions() const { return positions_; }
  int snapshots() const { return snapshots_; }
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
  // p(n + 2, c), and with n the current step and k the index of the last snapshot once the slots
  // are full: p(n − t_k, c − k + 1) and p(n − t_{k−1}, c − k + 1).
  GrowingAdvances optimum_;
  GrowingAdvances after_last_;
  GrowingAdvances after_second_last_;
};

}  // namespace rwd
