// rewind/schedule/dynamic_checkpointing_schedule.hpp — the dynamic checkpointing algorithm of
// Wang, Moin & Iaccarino, "Minimal repetition dynamic checkpointing algorithm for unsteady adjoint
// calculation", SIAM J. Sci. Comput. 31(4), 2549–2567, 2009: a published online schedule, kept as
// a reference to measure rwd::OnlineSchedule against (bench/online_dynamic_table.cpp,
// bench/results/online_checkpointing.md). Pure integers, like every schedule.
//
//   rwd::DynamicCheckpointingSchedule wmi(/*steps=*/1000, /*snapshots=*/10);
//   rwd::ScheduleCost cost = rwd::simulate(wmi);      // validated; compare cost.advances with
//   rwd::simulate_online(10, 1000).advances;          // rewind's online schedule
//
// The algorithm. Every checkpoint carries a level; y_0's is ∞. The current state always has an
// entry (WMI's "placeholder": the state is in working memory, not in a slot). When the run moves
// on from y_t to y_{t+1}, an entry for t + 1 is allocated:
//   - at level 0 while there are at most c entries (c snapshots plus the placeholder);
//   - otherwise, if some checkpoint is dispensable — a later checkpoint has a strictly higher
//     level — the dispensable one with the largest step is removed and t + 1 gets level 0;
//   - otherwise the entry of t (level L) is removed and t + 1 gets level L + 1.
// If the entry of t is still there, y_t is stored in a free slot before the step. In the reverse
// sweep, step i is reversed from its entry (the current state, or restored from its slot); when
// there is none, the last checkpoint k < i is restored and the run recomputes k → i allocating
// entries by the same rule, with the same levels and the slots freed so far. The entry of a
// reversed step is removed. With the budget c the snapshots never exceed c slots.
//
// The rules above (level ∞ for y_0, level 0 for new entries, "dispensable" with a strictly higher
// level later, removal of the dispensable with the largest step, promotion of the latest entry,
// recomputation by the same rule) are the paper's Algorithms 1–2, as the public implementations
// read them alike (LLNL gretl's WangCheckpointStrategy, MFEM-based DynamicCheckpointing).
//
// Information model. rewind's online schedule decides about y_n once the driver's probe has shown
// that y_{n+1} is not final (l ≥ n + 2; rewind/schedule/online_schedule.hpp). With `probe` true
// (the default) this schedule is run in that same model: the entry for t + 1 is allocated when the
// run is known to reach y_{t+1} and go on from it, so the final state's entry is the placeholder
// y_{l−1} and nothing is spent on it — revolve's setting with c snapshots, in which WMI's proof
// of optimality for up to (c + 1)(c + 2)/2 time steps applies: exactly p(l, c) =
// rwd::revolve_advances(l, c) for every l ≤ β(c, 2) + 1 (dynamic_checkpointing_schedule_test).
// With `probe` false it is run as published for a driver without the probe: the decision for y_t
// comes when only y_t is known not final, so one more entry is allocated at the end (for y_l,
// never used) and y_{l−1} may have been dropped by it.
//
// Counting is rwd::simulate's: advances (first sweep plus recomputation), to compare with
// rwd::revolve_advances and rwd::simulate_online. Memory O(c); an action costs O(c).
#pragma once

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "rewind/schedule/schedule.hpp"
#include "rewind/types.hpp"

namespace rwd {

namespace detail {

// The checkpoints of the algorithm and their levels, without slots or actions: shared by
// DynamicCheckpointingSchedule and dynamic_checkpointing_advances.
class DynamicCheckpoints {
 public:
  static constexpr Index kInfiniteLevel = std::numeric_limits<Index>::max();
  struct Entry {
    Index step;
    Index level;
    int slot;  // −1: not in a slot (the current state's placeholder)
  };
  // What a move from y_t to t + 1 changed.
  struct Move {
    bool dropped = false;   // a checkpoint was removed …
    Entry dropped_entry{};  // … this one (its slot, if any, is now free)
    bool kept_t = true;     // the entry of t is still there (false: it went up to t + 1)
  };

  explicit DynamicCheckpoints(int snapshots) : snapshots_(snapshots) { reset(); }
  void reset();  // y_0 alone, level ∞
  // Allocates the entry of t + 1 (t: the last entry's step) by the rules above.
  Move allocate_next();
  std::vector<Entry>& entries() { return entries_; }
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  int snapshots_;
  std::vector<Entry> entries_;  // ascending steps; at most c + 1
};

}  // namespace detail

class DynamicCheckpointingSchedule final : public Schedule {
 public:
  // l ≥ 1 steps, c ≥ 1 snapshots (y_0's included). Throws InvalidArgument otherwise. `probe`: see
  // above. The steps are used only to know when the run stops; no decision looks further ahead.
  DynamicCheckpointingSchedule(Index steps, int snapshots, bool probe = true);

  Action next() override;
  Index steps() const override { return steps_; }
  int slots() const override { return snapshots_; }
  // "dynamic-wmi(c = 20)", or "dynamic-wmi(c = 20, no probe)".
  std::string name() const override;
  void reset() override;
  std::unique_ptr<Schedule> clone() const override;

  bool probe() const { return probe_; }

 private:
  // One move from the current state y_t to t + 1: allocates the entry of t + 1 and queues the
  // free of a dropped snapshot and the store of y_t.
  void allocate_next(Index t);
  void push(const Action& action) { pending_.push_back(action); }
  // Queues the actions for the next reverse step, from the entries held.
  void plan_reverse();

  Index steps_;
  int snapshots_;
  bool probe_;
  detail::DynamicCheckpoints checkpoints_;
  std::vector<int> free_slots_;
  std::vector<Action> pending_;  // queued actions, given front to back
  std::size_t next_pending_ = 0;
  Index current_ = 0;  // step of the current state
  Index target_ = -1;  // next step to reverse; −1 in the forward phase
  bool forward_done_ = false;
  bool finished_ = false;
};

// The advances (first sweep and recomputation) of DynamicCheckpointingSchedule(steps, snapshots,
// probe), counted by the same rules without producing actions — several times faster than
// rwd::simulate, for tables over many l (dynamic_checkpointing_schedule_test checks the two equal).
// Throws InvalidArgument as the constructor does.
Index dynamic_checkpointing_advances(Index steps, int snapshots, bool probe = true);

}  // namespace rwd
