// rewind/schedule/schedule_simulator.hpp — runs any Schedule on integers only: checks every
// action against the rules of rewind/schedule/action.hpp and counts what it would cost.
//
//   rwd::RevolveSchedule schedule(100000, 20);
//   rwd::ScheduleCost cost = rwd::simulate(schedule);   // throws rwd::ScheduleViolation if broken
//   cost.advances == rwd::revolve_advances(100000, 20);  // Griewank & Walther's minimum
//   double t = rwd::predicted_time_ratio(cost, {.adjoint_cost_factor = 2.0});
//
// Rules checked, action by action: slots in range and never stored into while occupied, never
// restored or freed while empty; at most slots() held; advance only forward and never past l;
// every step reversed exactly once, in the order l−1, l−2, …, 0, with the current step equal to
// the step reversed; `step` of store/restore/free equal to the state concerned; at `done` every
// step reversed and every slot freed; nothing after done. The first violation throws
// ScheduleViolation naming the action's index, the action and the rule.
//
// Stage snapshots (set_stage_units, or Schedule::stage_units() in simulate): store_stages needs
// the current state y_n with n < l and u free slots [s, s + u) inside the budget (on one level);
// a reverse of step n is legal from the current state y_n, or — `slot` ≥ 0 — from a slot that
// holds the stages of step n; a stage snapshot cannot be restored as a state, and is freed by
// its first slot.
//
// ScheduleValidator does the same one action at a time, for drivers and tests that produce their
// own streams. Counting follows Griewank & Walther (ACM TOMS 26(1), 2000): advances are steps run
// forward by `advance` actions; the forward step re-run inside each reverse step is not one.
//
// Two storage levels (Schedule::memory_slots()): slots [0, memory_slots) are memory, the rest disk.
// `stores` and `restores` count both levels; `disk_stores`, `disk_restores` and `peak_disk_slots`
// the disk level alone, so that the cost model can charge each level its own time. The rules do
// not depend on the level: a state may be held in two slots at once (e.g. a disk snapshot copied
// into memory after a restore, by storing the current state again).
//
// Three storage levels (Schedule::host_slots()): the last host_slots of the memory slots are the
// host level, counted apart in `host_stores`, `host_restores` and `peak_host_slots`; the memory
// counts (stores − disk_stores − host_stores) are then those of the fastest level, the device.
#pragma once

#include <string>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/schedule/action.hpp"
#include "rewind/schedule/schedule.hpp"
#include "rewind/types.hpp"

namespace rwd {

// What a schedule costs, in actions and steps.
struct ScheduleCost {
  Index steps = 0;                 // l
  int slots = 0;                   // the schedule's budget c
  Index advances = 0;              // steps advanced in total: first sweep + recomputation
  Index first_sweep_advances = 0;  // advances reaching a step for the first time (l − 1 if valid)
  Index recomputed_steps = 0;      // advances − first_sweep_advances
  Index stores = 0;
  Index restores = 0;
  Index reverses = 0;  // l if valid
  Index frees = 0;
  int peak_slots = 0;  // most snapshots held at once
  Index actions = 0;   // actions issued, the final done included
  // The disk level (slots ≥ the schedule's memory_slots()); zero for single-level schedules.
  int disk_slots = 0;       // slots on the disk level: slots − memory slots
  Index disk_stores = 0;    // of `stores`, those into disk slots
  Index disk_restores = 0;  // of `restores`, those from disk slots
  int peak_disk_slots = 0;  // most disk snapshots held at once
  // Slots a store must provide: the highest slot index used on each level, plus one (memory
  // slots count from 0, disk slots from the first disk slot). A store sized to these never sees
  // an index out of range, and allocates nothing the schedule leaves unused.
  int memory_slots_used = 0;
  int disk_slots_used = 0;
  // The host level (three-level schedules: slots [memory_slots − host_slots, memory_slots));
  // zero otherwise. memory_slots_used then counts the device slots below it only.
  int host_slots = 0;
  Index host_stores = 0;    // of `stores`, those into host slots
  Index host_restores = 0;  // of `restores`, those from host slots
  int peak_host_slots = 0;  // most host snapshots held at once
  int host_slots_used = 0;  // the highest host slot used, counted from the first host slot, + 1
  // Stage snapshots (Schedule::stage_units() > 0): each store_stages takes one step forward
  // (counted in `advances`) and fills stage_units slots; a reverse from stages re-runs nothing.
  int stage_units = 0;
  Index stage_stores = 0;
  Index stage_reverses = 0;  // of `reverses`, those from a stage snapshot

  // Forward steps evaluated in all: advances plus the step each reverse from the current state
  // re-runs (l + p in revolve's counting; l when every step is reversed from its stages).
  Index forward_evaluations() const { return advances + reverses - stage_reverses; }

  // One line; the host and disk counts are appended when there is such a level (or I/O on it was
  // counted).
  std::string to_string() const;
};

// The first broken rule of a schedule.
class ScheduleViolation : public InvalidArgument {
 public:
  ScheduleViolation(const std::string& message, Index action_index, Action action)
      : InvalidArgument(message), action_index_(action_index), action_(action) {}
  Index action_index() const { return action_index_; }  // 0-based position in the stream
  const Action& action() const { return action_; }

 private:
  Index action_index_;
  Action action_;
};

// Checks a stream of actions one at a time against a horizon l and a budget c.
class ScheduleValidator {
 public:
  // `name` prefixes messages. Slots [0, memory_slots) are memory and [memory_slots, slots) disk;
  // −1 (the default) means all memory. The last host_slots of the memory slots are the host level.
  // Throws InvalidArgument for l < 1, c < 1, memory_slots outside [−1, c], or host_slots outside
  // [0, memory slots].
  ScheduleValidator(Index steps, int slots, std::string name = "schedule", int memory_slots = -1,
                    int host_slots = 0);

  // Throws ScheduleViolation at the first broken rule; the validator is then unusable.
  void apply(const Action& action);

  bool finished() const { return finished_; }  // done was applied
  Index current_step() const { return current_; }
  Index adjoint_step() const { return adjoint_; }
  int slots_in_use() const { return in_use_; }
  int disk_slots_in_use() const { return disk_in_use_; }
  int memory_slots() const { return memory_slots_; }
  int host_slots_in_use() const { return host_in_use_; }
  const ScheduleCost& cost() const { return cost_; }
  // Accepts stage snapshots of `units` slots each (0: none, the default). Call before the first
  // action; throws InvalidArgument for units < 0.
  void set_stage_units(int units);

 private:
  [[noreturn]] void violation(const Action& action, const std::string& what) const;
  void check_slot(const Action& action) const;
  Index held(int slot) const;      // step held in the slot, −1 when empty
  Index stage_of(int slot) const;  // first slot of the stage snapshot in the slot, −1 if none
  void store_stages(const Action& action);
  void reverse_from_stages(const Action& action);
  void free_stages(const Action& action);

  std::string name_;
  Index steps_;
  int slots_;
  int memory_slots_;  // slots below this index are memory, the others disk
  int first_host_;    // memory slots from this index on are the host level
  Index current_ = 0;
  Index adjoint_;
  Index reached_ = 0;  // furthest step reached so far
  int in_use_ = 0;
  int disk_in_use_ = 0;
  int host_in_use_ = 0;
  bool finished_ = false;
  std::vector<Index> slot_step_;   // grows to the largest slot used; −1 = empty
  std::vector<Index> stage_head_;  // per slot: first slot of the stage snapshot held there, or −1
  ScheduleCost cost_;
};

struct SimulatorOptions {
  // Give up (ScheduleViolation) if no done came after this many actions; 0 = 16·l + 4·c + 64,
  // far above what the shipped schedules need (< 8 actions per step).
  Index max_actions = 0;
};

// Resets the schedule, runs it to done through a ScheduleValidator (with the schedule's
// memory_slots() and host_slots()) and returns the cost.
ScheduleCost simulate(Schedule& schedule, const SimulatorOptions& options = {});

// Time per operation, to predict run time from a ScheduleCost. Any time unit; only ratios matter
// to predicted_time_ratio.
struct CostModel {
  double step_time = 1.0;            // one forward step
  double adjoint_cost_factor = 1.0;  // adjoint of a step, in forward steps, on top of the forward
                                     // step it re-runs internally (≈ 1–3 for Runge–Kutta)
  double write_time = 0.0;           // one store into a memory slot (snapshot write)
  double read_time = 0.0;            // one restore from a memory slot (snapshot read)
  double disk_write_time = 0.0;      // one store into a disk slot (two-level schedules)
  double disk_read_time = 0.0;       // one restore from a disk slot
  double host_write_time = 0.0;      // one store into a host slot (three-level schedules, where
  double host_read_time = 0.0;       // write_time/read_time are the device level's)
  // What a stage snapshot (stage_units memory slots) costs. false: one write_time to store it and
  // nothing to read it back, as in a driver whose step puts its stage values straight into their
  // slots and which reverses the step from the slots where they lie (rwd::CheckpointedAdjoint
  // with its own memory store). An approximation there: for states up to 2^17 values its
  // Runge–Kutta stepper streams the stage values out of the step (stage_units copies with
  // non-temporal stores, which skip the read a cached copy makes of its target), above that it
  // builds them in their slots and copies the state alone. true: every stage vector is copied in
  // and out, stage_units writes and stage_units reads.
  bool stage_values_copied = false;

  // Throws InvalidArgument naming the field: all finite and ≥ 0, step_time > 0.
  void validate() const;
};

// step_time·(advances + reverses·(1 + adjoint_cost_factor) − stage_reverses)
// + write_time·(stores − disk_stores − host_stores + w·stage_stores)
// + read_time·(restores − disk_restores − host_restores + r·stage_reverses)
// + host_write_time·host_stores + host_read_time·host_restores
// + disk_write_time·disk_stores + disk_read_time·disk_restores,
// with w = r = stage_units when stage_values_copied, else w = 1 and r = 0.
double predicted_time(const ScheduleCost& cost, const CostModel& model = {});

// predicted_time / (l · step_time): the gradient's cost in forward runs. With free snapshot I/O,
// (advances + reverses·(1 + adjoint_cost_factor)) / l.
double predicted_time_ratio(const ScheduleCost& cost, const CostModel& model = {});

}  // namespace rwd
