// rewind/schedule/stage_aware_schedule.hpp — the optimal offline schedule when a checkpoint may
// hold a step's stage values instead of a state (CAMS: H. Zhang and E. Constantinescu, "Optimal
// checkpointing for adjoint multistage time-stepping schemes", J. Comput. Sci. 2023; the
// scheduler behind PETSc's TSAdjoint "cams" trajectory type).
//
//   rwd::StageAwareSchedule schedule(/*steps=*/10000, /*units=*/20, /*stage_units=*/4);  // RK4
//   rwd::ScheduleCost cost = rwd::simulate(schedule);
//   cost.forward_evaluations() - 10000 == schedule.extra_evaluations();   // the optimum
//
// The budget counts state-sized units. A state snapshot takes one unit; a stage snapshot of step
// n takes u = stage_units units and holds what the adjoint of step n needs (for an explicit
// Runge–Kutta method, its s stage values: u = s), so reversing that step re-runs nothing. The
// action vocabulary is rewind/schedule/action.hpp (store_stages, reverse with a slot).
//
// Counting, as in the paper: every step is evaluated at least once — by the reverse step that
// re-runs it, or by the forward step that stored its stages — and the schedule minimises the
// evaluations beyond those l (forward_evaluations() − l; for states only this is revolve's
// p(l, c)). The paper's model, which this follows: a stage snapshot does not give back a state
// (so it is never restored), and the method is not stiffly accurate, so the stages of step n do
// not contain y_{n+1} — that state, if it must be kept, costs one more unit (the paper's
// "solution and stages" checkpoint of s + 1 units is a stage snapshot and a state snapshot of
// y_{n+1} here). Stiffly accurate methods (y_{n+1} = the last stage), whose stage snapshots would
// also serve as state snapshots of y_{n+1}, are not exploited.
//
// The dynamic program (the paper's P and Q, in this notation). S(c, j): reverse j steps from a
// held state y_a with c units (y_a's included); T(c, j): the same when the stages of the first
// step are held (u of the c units) and the current state is y_{a+1}, not held.
//   S(c, 1) = 0;   T(c, 1) = 0;   T(c, 2) = 0 (step a + 1 from the current state, step a from its
//   stages);
//   S(c, j) = min( (j − 1) + S(c, j − 1),                         advance to the last step
//                  min_{1≤k≤j−2} k + S(c, k) + S(c − 1, j − k),    store y_{a+k}     (c ≥ 2)
//                  min_{2≤k≤j−1} (k − 1) + S(c, k − 1) + T(c − 1, j − k + 1),
//                                                     stages of step a + k − 1 (c − 1 ≥ u)
//                  T(c, j) )                          y_a's last use: its stages instead (c ≥ u)
//   T(c, j) = min( S(c − u, j − 1) [c − u ≥ 1],  T(c − u, j − 1) [c − u ≥ u] )   for j ≥ 3,
// with S(c, 0) = 0; the run costs S(c, l) (when its choice is T, y_0 is never stored). Two
// departures from the paper's recurrence, both found by the exhaustive search below: a state's
// unit is given to the stages of its own step where the state is used for the last time (the
// paper keeps the segment's first solution to the end), and the split ranges are full (the
// published recurrence starts the stage split at k = 2 and skips some two-step cases). Counts can
// only fall: tests/checkpoint/schedule/stage_aware_schedule_test.cpp checks them equal to this
// recurrence and never above the published one (l ≤ 200, c ≤ 50, u = 2 and 4), and optimal
// against an exhaustive search over action sequences (l ≤ 6, c ≤ 9, u ≤ 3).
//
// Cost of planning: the tables S and T and the choices behind them, for every c' ≤ c and j ≤ l,
// 12 bytes an entry (25 MB for l = 10^5, c = 20). Each entry is a minimum over splits, O(c·l²)
// if every split were scanned; lower bounds from the rows' convex hulls rule out all but a few
// per cent of them without changing any choice (checkpoint/schedule/src/stage_aware_tables.cpp;
// planning times in bench/results/code_comments.md). So l is limited to kStageAwareMaxSteps, the
// table to kStageAwareMaxTableEntries, and c to the units that can matter ((l − 1)·u + 1; more are
// never used). Generating the actions afterwards is O(1) per action with a stack of O(c) segments.
// Clones share the tables.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rewind/schedule/schedule.hpp"

namespace rwd {

// The largest l a StageAwareSchedule plans, and the most entries (units that can matter + 1,
// times l + 1) its tables may have: 2^25 entries are 400 MB (the time to fill them:
// bench/results/code_comments.md).
inline constexpr Index kStageAwareMaxSteps = 100'000;
inline constexpr Index kStageAwareMaxTableEntries = Index{1} << 25;

// Whether StageAwareSchedule(steps, units, stage_units) is within both limits (its other
// arguments valid).
bool stage_aware_plannable(Index steps, int units, int stage_units);

class StageAwareSchedule final : public Schedule {
 public:
  // l ≥ 1 steps, c ≥ 1 units, u ≥ 1 units per stage snapshot, within the limits above. Throws
  // InvalidArgument otherwise, and when the plan would recompute 2^29 steps or more (a single
  // unit for more than 32 768 steps, say: the count does not fit the tables).
  StageAwareSchedule(Index steps, int units, int stage_units);

  Action next() override;
  Index steps() const override { return steps_; }
  int slots() const override { return units_; }
  int stage_units() const override { return stage_units_; }
  std::string name() const override;  // "stage-aware(c = 20, u = 4)"
  void reset() override;
  std::unique_ptr<Schedule> clone() const override;

  // The optimum of the dynamic program: forward evaluations beyond l.
  Index extra_evaluations() const { return extra_; }

 private:
  struct Tables;  // S, T and their choices, shared by clones
  enum class Task : std::uint8_t { emit, state_segment, stage_segment };
  struct Item {
    Task task;
    Action action;  // emit
    Index start;    // segments: first step a
    Index length;   // segments: j
    int units;      // segments: c
    int slot;       // segments: slot of y_a (state) or of the stages of step a
  };

  void expand(const Item& item);
  void expand_state(const Item& item);
  void expand_stage(const Item& item);
  // Store y_a (in the next free slot) and reverse [a, a + j) from it with c units — or store the
  // stages of step a at once when that segment would drop y_a first.
  void push_state_child(Index a, Index j, int c);
  void push_emit(Action action) { stack_.push_back({Task::emit, action, 0, 0, 0, -1}); }

  Index steps_;
  int units_;
  int stage_units_;
  int units_used_ = 0;  // units the plan may use: min(c, (l − 1)·u + 1)
  Index extra_ = 0;
  bool start_with_stages_ = false;
  std::shared_ptr<const Tables> tables_;

  std::vector<Item> stack_;  // pending work, the next on top
  int used_ = 0;             // units held now (slots are allocated last in, first out)
  bool finished_ = false;
};

}  // namespace rwd
