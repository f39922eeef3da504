// rewind/schedule/action.hpp — the instructions a checkpointing schedule gives the adjoint
// driver.
//
// A schedule (rewind/schedule/schedule.hpp) is a stream of Actions; the driver executes them
// one by one. The driver holds one *current* state y_n with its step index n (initially y_0) and
// an adjoint λ at some step (initially at l, the number of steps). The meaning of each kind:
//
//   advance to k      run forward from the current step n to step k (n < k ≤ l).
//   store y_n in s    copy the current state into slot s, which must be free; `step` = n.
//   restore from s    the current state becomes the one in slot s (the slot keeps it);
//                     `step` = the step held in the slot.
//   reverse step n    needs current step == n and the adjoint at n + 1; runs the adjoint of step n
//                     (which re-runs the forward step n → n + 1 once internally — not an advance);
//                     afterwards the adjoint is at n and the current state is still y_n.
//   free slot s       slot s becomes empty; `step` = the step it held.
//   done              the stream is over (every later call to next() returns done again).
//
// Stage snapshots (rewind/schedule/stage_aware_schedule.hpp) add one kind and one variant:
//
//   store stages of n in s   take step n from the current state y_n (one step run forward, as
//                            an advance to n + 1) and keep the step's stage values in slots
//                            s, s + 1, …, s + u − 1 (u = Schedule::stage_units(), all free);
//                            afterwards the current state is y_{n+1}.
//   reverse step n with      (`slot` ≥ 0 on a reverse) runs the adjoint of step n from the stages
//   the stages in s          held in slot s, with no forward step re-run; the current state is
//                            untouched and need not be y_n.
//
// A stage snapshot is freed with one `free` of its first slot. Schedules without stages never
// emit either, so everything written for the six kinds above works unchanged.
//
// `slot` is −1 for advance, reverse (from the current state) and done. For store, restore and free,
// `step` repeats the step of the state concerned so that a driver can check its own bookkeeping
// against it.
//
//   using rwd::Action;
//   Action a = Action::store(/*slot=*/2, /*step=*/17);
//   std::cout << a.to_string();          // "store y_17 in slot 2"
//
// The vocabulary is that of Griewank & Walther, "Algorithm 799: revolve", ACM TOMS 26(1), 2000
// (advance, takeshot, restore, firsturn/youturn, terminate), with the first and later reverse
// steps merged into one `reverse` and an explicit `free` so that stores can release memory.
#pragma once

#include <string>
#include <string_view>

#include "rewind/types.hpp"

namespace rwd {

// store_stages comes last so that the values of the others never change.
enum class ActionKind { advance, store, restore, reverse, free, done, store_stages };

// "advance", "store", "restore", "reverse", "free", "done", "store-stages".
std::string_view to_string(ActionKind kind);

struct Action {
  ActionKind kind = ActionKind::done;
  Index step = -1;  // target of advance; step reversed; step of the state stored/restored/freed
  int slot = -1;    // slot of store, restore and free; −1 otherwise

  static constexpr Action advance(Index to_step) { return {ActionKind::advance, to_step, -1}; }
  static constexpr Action store(int slot, Index step) { return {ActionKind::store, step, slot}; }
  static constexpr Action restore(int slot, Index step) {
    return {ActionKind::restore, step, slot};
  }
  static constexpr Action reverse(Index step) { return {ActionKind::reverse, step, -1}; }
  static constexpr Action free(int slot, Index step) { return {ActionKind::free, step, slot}; }
  static constexpr Action done() { return {ActionKind::done, -1, -1}; }
  static constexpr Action store_stages(int slot, Index step) {
    return {ActionKind::store_stages, step, slot};
  }
  static constexpr Action reverse_from_stages(Index step, int slot) {
    return {ActionKind::reverse, step, slot};
  }
  // A reverse that uses a stage snapshot rather than the current state.
  constexpr bool uses_stages() const { return kind == ActionKind::reverse && slot >= 0; }

  // "advance to 17", "store y_17 in slot 2", "restore y_5 from slot 1", "reverse step 4",
  // "free slot 2 (y_17)", "done", "store stages of step 3 in slot 4",
  // "reverse step 3 with the stages in slot 4".
  std::string to_string() const;

  friend constexpr bool operator==(const Action&, const Action&) = default;
};

}  // namespace rwd
