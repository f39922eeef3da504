// rewind/schedule/multilevel_schedule.hpp — two-level checkpointing: a few memory snapshots in
// front of many disk snapshots, placed to minimise the predicted time of the adjoint.
//
//   rwd::CostModel costs{.adjoint_cost_factor = 2.0,
//                        .disk_write_time = 2.0, .disk_read_time = 2.0};  // in forward steps
//   rwd::MultiLevelSchedule schedule(/*steps=*/100000, /*memory=*/4, /*disk=*/100, costs);
//   schedule.memory_slots();    // 4: slots 0–3 in memory, slots 4–103 on disk
//   schedule.predicted_time();  // == rwd::predicted_time(rwd::simulate(schedule), costs)
//   for (rwd::Action a = schedule.next(); a.kind != rwd::ActionKind::done; a = schedule.next())
//     driver.execute(a);        // e.g. with rwd::memory_and_disk_store(4, 100, …)
//
// Why: with RAM for a handful of states, revolve recomputes each step dozens of times; a disk holds
// thousands of states but each write and read costs time. Where disk snapshots pay, and where a
// memory snapshot or a recomputation is cheaper, depends on the costs — this schedule decides it
// by minimising
//   T = step·(advances + l·(1 + adjoint factor)) + Σ_level (write_level·stores_level
//       + read_level·restores_level),
// exactly rwd::predicted_time of its simulated cost (rewind/schedule/schedule_simulator.hpp).
// The model and the recursive structure follow Stumm & Walther, "MultiStage approaches for
// optimal offline checkpointing", SIAM J. Sci. Comput. 31(3), 2009; Aupy, Herrmann, Hovland &
// Robert, "Optimal multistage algorithm for adjoint computation", SIAM J. Sci. Comput. 38(3),
// 2016 (Disk-Revolve: memory revolve between disk checkpoints, a disk checkpoint copied into
// memory when re-read); Herrmann & Pallez, "H-Revolve: a framework for adjoint computation on
// synchronous hierarchical platforms", ACM TOMS 46(2), 2020 (the dynamic program over levels).
// The code here is our own.
//
// Slots: [0, memory) are memory (level 0), [memory, memory + disk) disk (level 1); y_0's snapshot
// counts against the level that holds it, as in revolve. A state may be held twice for a moment:
// moving a snapshot to the other level is a store of the current state there and a free of the
// old slot.
//
// The recursive family. To reverse [s, e) from y_s (current, held on level L) with a free memory
// and b free disk slots: if e − s = 1 reverse step s; else advance j steps, store y_{s+j} on a
// level with a free slot (no store when e − s − j = 1: reverse it at once), reverse [s + j, e) with
// that slot taken, free it, restore y_s (a read on level L) and reverse [s, s + j) the same way.
// At the start of a range y_s may first move to the other level (memory → disk frees a memory
// slot for the sub-ranges; disk → memory makes the re-reads cheap and frees a disk slot).
//
// Planning — what is exact and what is approximate:
//  * Exact (detail::TwoLevelTable with unit 1, when its work Σ_n 2n·min(m, n)·min(d, n) is within
//    6·10^7 and its table within 2^20 entries: l up to ~250 for m = 4 and any d, ~1000 for m = 4,
//    d = 8, ~3400 for d = 0): a dynamic program over the whole recursive family — every split,
//    every level, every move — for every sub-range length and pair of free-slot counts. The plan
//    is the optimum of the family under the cost model; tests check it against an independent DP
//    for every l ≤ 200 (≤ 300 in the long test) and, for l ≤ 8, against a search over all action
//    sequences, recursive or not, which found nothing better. O(l²·m·d) time (measured in
//    bench/results/code_comments.md),
//    O(l·m·d) memory (≤ 2^20 entries, 4 MiB kept), then O(1) per action.
//  * Longer horizons (approximate), the better of two plans by exact predicted time:
//    - Grid (TwoLevelTable with unit k > 1, the finest k the same budget affords, tried when k is
//      at most 4 times the best super-step below): the same dynamic program with split points on
//      multiples of k, plus "in place" ranges — memory revolve from the range's snapshot with the
//      free memory slots, costed in closed form (revolve_advances, revolve_stores, and
//      revolve_repetitions reads of the range's own snapshot). Optimal among plans whose split
//      snapshots sit on the grid; inside a grid cell only memory is used.
//    - Super-steps: the run cut into L = ⌈l/k⌉ super-steps of k steps (the last l − (L − 1)·k).
//      Disk level: revolve with d disk snapshots over the super-steps (revolve never advances
//      through the last one, so that is k·p(L, d) steps). Each super-step: its start state stored
//      into memory (copied there when it was restored from disk), then memory revolve with m
//      snapshots. L = 1 is memory revolve; L − 1 ≤ d stores every super-step in the first sweep:
//      uniform disk snapshots. Each k is costed exactly in closed form and the best of ~700
//      candidates kept (every k ≤ 256, 2 % steps above, ⌈l/L⌉ for L ≤ 2048 and L = d, d + 1, a
//      scan around the best) — so never worse than memory revolve(m), nor than uniform disk
//      snapshots every ⌈l/L⌉ steps. Not the family's optimum: equal super-steps, a disk level
//      that minimises advances rather than weighing I/O, no memory snapshots above the disk level.
//    Planning takes memory independent of l (measured times:
//    bench/results/code_comments.md). Measured against the exact DP for l ≤ 1000 (long
//    test), the plans past the exact table stay within a few per cent of the optimum (0–1 % mostly,
//    ~5 % with very cheap disk and m = 8).
//  * Memory writes and reads (CostModel::write_time/read_time) are costed in every plan and the
//    tables optimise against them, except inside in-place ranges and super-steps, whose memory
//    revolve minimises advances (optimal when memory I/O is free, the default).
//
// predicted_time() is computed from the plan's counts (the DP's decision tree walked, or the
// closed form), not by running the schedule; tests check that simulation counts the same.
//
// d = 0 degenerates to memory revolve with m snapshots: the same advances as RevolveSchedule(l, m)
// (the schedule may differ where memory I/O costs break ties). l = 1 is one reverse, nothing
// stored. Generating an action is O(1) amortised; memory O(depth) for the slot bookkeeping plus
// the table when one is used.
#pragma once

#include <memory>

#include <optional>
#include <string>
#include <vector>

#include "rewind/schedule/multilevel_plan.hpp"
#include "rewind/schedule/revolve_schedule.hpp"
#include "rewind/schedule/schedule.hpp"
#include "rewind/schedule/schedule_simulator.hpp"

namespace rwd {

class MultiLevelSchedule final : public Schedule {
 public:
  // l ≥ 1 steps; memory_snapshots ≥ 1 (it may hold y_0); disk_snapshots ≥ 0; both at most
  // detail::kMaxLevelSnapshots; costs valid (CostModel::validate). Throws InvalidArgument naming
  // the value otherwise. Plans in the constructor.
  MultiLevelSchedule(Index steps, int memory_snapshots, int disk_snapshots, const CostModel& costs);

  Action next() override;
  Index steps() const override { return steps_; }
  int slots() const override { return memory_ + disk_; }
  int memory_slots() const override { return memory_; }
  std::string name() const override;  // "two-level(memory = 4, disk = 100)"
  void reset() override;
  std::unique_ptr<Schedule> clone() const override {
    auto copy = std::make_unique<MultiLevelSchedule>(*this);
    copy->reset();
    return copy;
  }

  // The plan's makespan under the costs it was planned for: rwd::predicted_time(predicted_cost(),
  // costs()), equal to rwd::predicted_time(rwd::simulate(*this), costs()).
  double predicted_time() const;
  // The counts the schedule makes: advances, stores, restores (and their disk parts), reverses,
  // frees, first-sweep advances. Peaks and the number of actions are not predicted (0).
  const ScheduleCost& predicted_cost() const { return plan_.counts; }
  const CostModel& costs() const { return costs_; }
  // Whether the exact dynamic program planned it (else the grid table or the super-step plan).
  bool exact() const { return plan_.method == detail::TwoLevelPlan::Method::exact; }
  // The spacing of split points: 1 for an exact plan, the grid or super-step length k otherwise
  // (l for the super-step plan that is memory revolve only).
  Index super_step() const { return plan_.super_step; }
  const detail::TwoLevelPlan& plan() const { return plan_; }

 private:
  // Free slots of one level, handed out lowest-new-index first, reused last-freed first.
  class SlotPool {
   public:
    SlotPool(int first, int count) : first_(first), count_(count), next_(first) {}
    int take();
    void give(int slot) { free_.push_back(slot); }
    void reset() {
      free_.clear();
      next_ = first_;
    }

   private:
    int first_, count_, next_;
    std::vector<int> free_;
  };

  struct Held {  // a snapshot on the table plan's stack: the range it heads starts at `step`
    Index step;
    int slot;
    TwoLevelPlace level;
    bool settled;  // the move-to-the-other-level decision of its range start is made
  };

  Action next_table();
  Action next_super_steps();
  Action leaf_action(const Action& inner);
  SlotPool& pool(TwoLevelPlace level) {
    return level == TwoLevelPlace::memory ? memory_pool_ : disk_pool_;
  }
  int& used(TwoLevelPlace level) {
    return level == TwoLevelPlace::memory ? memory_used_ : disk_used_;
  }

  Index steps_;
  int memory_;
  int disk_;
  CostModel costs_;
  detail::TwoLevelPlan plan_;

  // Table plans (exact and grid).
  std::vector<Held> stack_;
  SlotPool memory_pool_;
  SlotPool disk_pool_;
  int memory_used_ = 0;
  int disk_used_ = 0;
  Index current_ = 0;
  Index fine_ = 0;  // the adjoint is at this step
  TwoLevelPlace pending_level_ = TwoLevelPlace::memory;
  Action queued_ = Action::done();  // the free that completes a move
  bool started_ = false;
  bool finished_ = false;
  // A range reversed in place: memory revolve over [in_place_start_, fine_) whose slot 0 is the
  // range's own snapshot and whose other slots map to memory slots taken as it stores.
  std::optional<RevolveSchedule> in_place_;
  Index in_place_start_ = 0;
  std::vector<int> in_place_slots_;

  // Super-step plan: revolve over super-steps on disk, memory revolve inside each one. Without an
  // outer schedule (L = 1), leaf_ is memory revolve over the whole run.
  std::optional<RevolveSchedule> outer_;
  std::optional<RevolveSchedule> leaf_;       // k steps
  std::optional<RevolveSchedule> last_leaf_;  // the last super-step, when shorter than k
  RevolveSchedule* active_leaf();             // the one running, or nullptr
  int active_ = 0;                            // 0: none, 1: leaf_, 2: last_leaf_
  Index leaf_start_ = 0;
};

}  // namespace rwd
