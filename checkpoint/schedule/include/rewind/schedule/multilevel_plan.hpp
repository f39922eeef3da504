// rewind/schedule/multilevel_plan.hpp — the planner behind MultiLevelSchedule
// (rewind/schedule/multilevel_schedule.hpp): where to split, and on which storage level
// (memory or disk) to keep each snapshot, so that the predicted time of the adjoint is least.
//
//   rwd::CostModel costs{.adjoint_cost_factor = 2.0, .disk_write_time = 2, .disk_read_time = 2};
//   rwd::detail::TwoLevelPlan plan = rwd::detail::plan_two_level(100000, 4, 100, costs);
//   plan.method;           // super_steps: too long for the exact table
//   plan.counts.advances;  // what the schedule's simulation will count, exactly
//   rwd::Index w = rwd::revolve_stores(1000, 10);   // stores RevolveSchedule(1000, 10) issues
//
// Most users want MultiLevelSchedule, which runs a plan; the header is public for tests, tools
// that compare plans, and revolve_stores (the store count of the revolve schedule, which the
// planner needs to cost disk writes exactly). The algorithms, what is exact and what is not, are
// described in multilevel_schedule.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "rewind/schedule/schedule_simulator.hpp"
#include "rewind/types.hpp"

namespace rwd {

// The number of stores RevolveSchedule(l, c) issues, y_0's included (and as many frees). In the
// revolve split tree every split point gets a snapshot except where the right part is a single
// step (reversed at once), so stores = l − u(l, c) with u the number of such one-step right parts.
// u follows from the split rule in O(r) stages (r = revolve_repetitions(l, c)): a range of the
// full binomial length β(c, r) has exactly β(c, r − 1) of them, so only one partial range per
// stage needs following; runs of stages that lose one snapshot each are summed in closed form
// (hockey-stick identity), O(log c) binomials per run. Throws InvalidArgument for l < 1, c < 1.
Index revolve_stores(Index steps, Index snapshots);

// Which of the two levels a two-level schedule puts a snapshot on (its tables hold one a byte).
enum class TwoLevelPlace : std::uint8_t { memory = 0, disk = 1 };

namespace detail {

// The dynamic program over the recursive family of two-level schedules (see
// multilevel_schedule.hpp), tabulated for every range length, level of the range's first
// snapshot, and number of free memory and disk slots. With unit k = 1 it is exact. With unit
// k > 1 split points lie on multiples of k (super-steps; the last one l − (N − 1)·k long), and a
// range may also be reversed "in place": memory revolve from its first snapshot with the free
// memory slots (re-reading that snapshot from its level), costed in closed form — so the plan is
// optimal among schedules whose disk and split snapshots sit on the grid. Built only when
// affordable(): at most kMaxEntries entries and kMaxWork inner-loop iterations (O(N²·m·d)).
class TwoLevelTable {
 public:
  static constexpr double kMaxWork = 6.0e7;
  static constexpr double kMaxEntries = 1 << 20;

  static bool affordable(Index steps, int memory, int disk, Index unit = 1);

  // Throws InvalidArgument when not affordable().
  TwoLevelTable(Index steps, int memory, int disk, const CostModel& costs, Index unit = 1);

  struct Decision {
    bool move = false;      // first move y_s to the other level (store there, free here)
    bool in_place = false;  // reverse the range by memory revolve from y_s (unit > 1 only)
    Index split = 0;        // else advance this many steps to the split point
    TwoLevelPlace right = TwoLevelPlace::memory;  // level of the snapshot at the split point
  };
  // The decision for reversing [start, end) from y_start held on `level`, with free_memory and
  // free_disk slots not counting y_start's. `move` applies at the start of the range; the other
  // fields are those of the state after any move: read them from decision(new level, …, new
  // free counts).
  Decision decision(TwoLevelPlace level, Index start, Index end, Index free_memory,
                    Index free_disk) const;
  // The snapshots of the memory revolve of an in-place range (y_start's included).
  Index in_place_snapshots(Index start, Index end, Index free_memory) const;

  Index unit() const { return unit_; }
  // The optimal makespan of the whole run (y_0 not yet stored), and the level y_0 goes to (l ≥ 2).
  double optimum() const { return optimum_; }
  TwoLevelPlace first_level() const { return first_level_; }

  // Operation counts of the tabulated plan, by walking its decision tree (memoised): these are
  // what simulating the schedule must count.
  ScheduleCost counts() const;

 private:
  struct Range {  // a range in table coordinates
    int layer;    // 1: it ends at l (its last super-step may be shorter), 0: k·n steps
    Index n;      // super-steps
  };
  Range range(Index start, Index end) const;
  Index length(Range r) const;  // steps
  Index memory_cap(Index n) const;
  Index disk_cap(Index n) const;
  std::size_t index(int layer, TwoLevelPlace level, Index n, Index free_memory,
                    Index free_disk) const;

  Index steps_;
  int memory_;
  int disk_;
  Index unit_;        // k
  Index units_;       // N = ⌈l/k⌉
  Index last_;        // length of the last super-step
  int layers_;        // 2 when the last super-step is shorter than k
  Index max_memory_;  // table bounds: min(memory, l), min(disk, N)
  Index max_disk_;
  // Per entry: split (in super-steps) << 3 | in place << 2 | right level << 1 | move.
  std::vector<std::uint32_t> choice_;
  double optimum_ = 0.0;
  TwoLevelPlace first_level_ = TwoLevelPlace::memory;
};

// A two-level plan: a table (exact, or on a grid of super-steps) or the super-step plan.
struct TwoLevelPlan {
  enum class Method {
    exact,        // TwoLevelTable with unit 1: optimal within the recursive family
    grid,         // TwoLevelTable with unit super_step > 1: optimal on that grid
    super_steps,  // revolve over super-steps of `super_step` steps on disk, memory revolve inside
  };
  Method method = Method::exact;
  Index steps = 0;
  int memory = 0;
  int disk = 0;
  std::shared_ptr<const TwoLevelTable> table;  // exact and grid
  Index super_step = 1;                        // k (1 for exact)
  Index super_steps = 0;  // L = ⌈l/k⌉ (super_steps: 1 = memory revolve only)
  // The counts the schedule produces (advances, stores, restores, their disk parts, reverses,
  // frees, first-sweep advances); peaks and the action count are not predicted (left 0).
  ScheduleCost counts;
  double optimum = 0.0;  // the planner's own figure: the DP sum (exact) or counts × costs
};

// Validates the arguments (l ≥ 1, 1 ≤ memory, 0 ≤ disk, both ≤ kMaxLevelSnapshots, costs) and
// plans: exact when TwoLevelTable::affordable(l, m, d), else the better of the best super-step
// plan and the grid table on the finest affordable grid (tried when that grid is at most 4 times
// coarser than the best super-step).
TwoLevelPlan plan_two_level(Index steps, int memory, int disk, const CostModel& costs);

// Per level; more is refused as a mistake (2^26 snapshots of even one kilobyte is 64 GiB).
inline constexpr int kMaxLevelSnapshots = 1 << 26;

// The counts of the super-step plan with super-steps of k steps (see multilevel_schedule.hpp).
ScheduleCost super_step_counts(Index steps, int memory, int disk, Index super_step);

}  // namespace detail
}  // namespace rwd
