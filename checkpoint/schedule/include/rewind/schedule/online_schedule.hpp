// rewind/schedule/online_schedule.hpp — binomial checkpointing for runs whose length is not
// known in advance (adaptive steps, runs that stop on a condition): the schedule is told "one
// more step" until the run stops, and then reverses whatever length it ended at with c snapshots.
//
//   rwd::OnlineSchedule schedule(/*snapshots=*/20);
//   for (;;) {                                    // forward phase; y = y_n is current
//     y_next = step(y);                           // y_{n+1} first, y_n still intact
//     if (stop(y_next)) { schedule.end_at(n + 1); break; }   // y stays current: y_{l−1}
//     rwd::Action a = schedule.next();            // the run goes on: store / free of y_n …
//     for (; a.kind != rwd::ActionKind::advance; a = schedule.next()) driver.execute(a);
//     y = y_next;                                 // … then `advance to n + 1`
//   }
//   for (rwd::Action a = schedule.next(); a.kind != rwd::ActionKind::done; a = schedule.next())
//     driver.execute(a);                          // reverse phase: an ordinary action stream
//
// Forward phase. The driver computes y_{n+1} before it asks about y_n (into the buffer that will
// hold the final state, so it costs no memory). If y_{n+1} is final (l = n + 1), it keeps it
// aside and calls end_at(l) before any action for y_n: y_{l−1} stays current, as in revolve, whose
// first reverse is of step l − 1 from y_{l−1}, and no snapshot is spent on it. Otherwise next()
// gives at most a free and a store for y_n — chosen by rwd::OnlinePlacement
// (rewind/schedule/online_placement.hpp) knowing that l ≥ n + 2 — then `advance to n + 1`, which
// the driver executes by making y_{n+1} current. This is the model of Stumm & Walther's optimal
// online checkpointing (SIAM J. Sci. Comput. 32(2), 2010): the end is known before the decision.

// Reverse phase. Step l − 1 is reversed at once; then the segments between the snapshots held,
// from the last to the first, each by revolve (rwd::RevolveSchedule, composed: its actions shifted
// to the segment and its slots mapped onto the free ones) with the snapshots free at that point —
// c − i for the i-th segment, its own snapshot included. The stream follows the rules of
// rewind/schedule/action.hpp for l steps; simulate_online() checks it.
//
// Cost against offline revolve's p(l, c) (rwd::revolve_advances), measured for every l ≤ 2000
// and c ≤ 20 and sampled to l = 10^6 (bench/results/online_checkpointing.md): see
// online_placement.hpp for the bounds. At most c slots are held, slot indices are < c, memory is
// O(c), and an action costs O(1) closed-form evaluations amortised (O(c) when the snapshots move,
// O(min(c, r)·log l) once per reversed segment). Arithmetic is 64-bit and checked.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rewind/schedule/online_placement.hpp"
#include "rewind/schedule/revolve_schedule.hpp"
#include "rewind/schedule/schedule.hpp"
#include "rewind/schedule/schedule_simulator.hpp"

namespace rwd {

class OnlineSchedule final : public Schedule {
 public:
  // c ≥ 1 snapshots (y_0's included, as in revolve). Throws InvalidArgument otherwise. `rule`:
  // what the placement does past β(c, 3) (rewind/schedule/online_placement.hpp).
  explicit OnlineSchedule(int snapshots, OnlineRule rule = OnlineRule::least_worst_case);

  // The run stopped: y_l (l = steps) is final and y_{l−1} is current. Precondition: in the
  // forward phase, l = forward_step() + 1 and no action for y_{l−1} was given yet (end_at comes
  // right after `advance to l − 1`, or first of all for l = 1); InvalidArgument naming the
  // violation otherwise.
  void end_at(Index steps);
  bool ended() const { return ended_; }
  // The step n of the current state y_n in the forward phase (0 at the start).
  Index forward_step() const;

  Action next() override;
  Index steps() const override { return ended_ ? steps_ : -1; }  // l once ended; −1 before
  int slots() const override { return snapshots_; }
  // "online(c = 20)", or "online(c = 20, never above dynamic)" with that rule.
  std::string name() const override;
  void reset() override;  // back to the start of the forward phase
  std::unique_ptr<Schedule> clone() const override;
  // A copy in the present state, which gives the same actions from here on. Once the schedule
  // has ended they no longer depend on anything the driver reports, so a copy can run ahead of
  // it (the disk reads a rwd::RestoreLookahead starts early).
  std::unique_ptr<OnlineSchedule> copy_in_state() const {
    return std::make_unique<OnlineSchedule>(*this);
  }

 private:
  Action next_forward();
  Action next_reverse();
  // Starts reversing segment `segment_` [positions[segment_], end): revolve over its length.
  void start_segment(Index end);
  Action translate(const Action& action);  // a segment's revolve action in global terms

  int snapshots_;
  OnlinePlacement placement_;
  std::vector<int> slot_of_;  // slot of each snapshot of placement_.positions()
  std::vector<int> free_slots_;
  // Forward phase: the actions pending for the current step, and what was given last.
  std::vector<Action> pending_;  // given back to front
  bool decided_ = false;         // the placement has decided about the current step
  Action last_given_ = Action::done();
  bool started_ = false;
  // Reverse phase.
  bool ended_ = false;
  bool finished_ = false;
  Index steps_ = -1;
  bool first_reversed_ = false;  // step l − 1 was reversed
  int segment_ = -1;             // segment being reversed (its snapshot's index)
  Index segment_start_ = 0;
  std::optional<RevolveSchedule> segment_schedule_;
  std::vector<int> segment_slots_;  // revolve slot d → slot; d = 0 is the segment's snapshot
};

// The online schedule's cost for a run that happens to end at l: the forward phase run to y_{l−1},
// end_at(l), and every action validated by rwd::ScheduleValidator (y_l is the driver's probe, not
// an action, see above). Counted as rwd::simulate counts, so cost.advances compares directly with
// rwd::revolve_advances(l, c). Throws ScheduleViolation at the first broken rule.
ScheduleCost simulate_online(int snapshots, Index steps, const SimulatorOptions& options = {},
                             OnlineRule rule = OnlineRule::least_worst_case);

}  // namespace rwd
