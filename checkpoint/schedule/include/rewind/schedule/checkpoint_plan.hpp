// rewind/schedule/checkpoint_plan.hpp — a checkpointing plan as a value: which schedule, what it
// costs, and how many slots each storage level must provide. Planned once per run.
//
//   rwd::CheckpointPlan plan = rwd::plan_checkpoints(rwd::PlanRequest::revolve(20), 100000);
//   plan.advances;                     // p = 534220 (simulated; = revolve_advances(l, c))
//   plan.forward_steps();              // l + p = 634220
//   plan.levels[0].slots_used;         // 20: what a snapshot store must hold in memory
//   auto schedule = plan.schedule();   // a fresh instance, at its first action (a copy: the
//                                      // plan is never computed twice)
//
// A plan comes from a request (a schedule family and its budget) or from any Schedule a user
// wrote (CheckpointPlan::of). The family (rewind/schedule/schedule_family.hpp) decides how a
// request is checked and planned; rewind's own are in builtin_schedule_families.hpp, and a
// program adds its own by writing one and registering it (schedule_registry.hpp). It is copyable
// and immutable; the adjoint driver, the snapshot store (rwd::make_snapshot_store) and the
// read-ahead scout all work from the same plan.
//
// Conventions (Griewank & Walther, ACM TOMS 26(1), 2000; rewind/schedule/revolve_cost.hpp): the
// initial state takes one of the c snapshots; p counts every step advanced by the schedule, the
// first sweep's l − 1 included; each reverse step re-runs its own forward step, which p does not
// count, so forward evaluations total l + p and the recompute ratio is (l + p) / l. The
// predicted time, in forward runs of l steps, is (p + l·(1 + F)) / l with F the adjoint part of
// a reverse step in forward steps (CostModel::adjoint_cost_factor), plus disk I/O at the costs'
// rates when there is a disk level.
//
// Counts are exact: rwd::simulate runs the schedule on integers (O(1) per action; measured in
// bench/results/code_comments.md) when
// l <= kSimulateMaxSteps and at most kSimulateMaxSlots slots are used; otherwise they come from
// the closed forms (revolve_advances; uniform's counts; store-all's l − 1 advances), where
// revolve's stores have no closed form (unknown) and its peak is bounded by min(c, l).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "rewind/carry.hpp"
#include "rewind/schedule/builtin_schedule_families.hpp"
#include "rewind/schedule/invalid_plan_request.hpp"
#include "rewind/schedule/online_rule.hpp"
#include "rewind/schedule/schedule.hpp"
#include "rewind/schedule/schedule_simulator.hpp"
#include "rewind/schedule/storage_level.hpp"
#include "rewind/types.hpp"

namespace rwd {

// Bytes of the metadata kept with every snapshot: the integrator's carry (t, h, controller
// memory, step index), which the adjoint drivers store next to each state.
inline constexpr Index kCarryBytes = static_cast<Index>(sizeof(Carry));

// Above these, plan_checkpoints uses the closed forms instead of rwd::simulate.
inline constexpr Index kSimulateMaxSteps = 100'000'000;
inline constexpr Index kSimulateMaxSlots = 10'000'000;

// What a run asks for: a schedule family and its budget. Which fields a family takes, and its
// rules for them, are the family's (ScheduleFamily::fields and validate).
struct PlanRequest {
  // Never null; revolve unless set (rwd::find_schedule_family finds one by name).
  const ScheduleFamily* family = &revolve_family();
  std::optional<Index> budget;    // c >= 1 snapshots (revolve, store-all; uniform: its limit)
  std::optional<Index> interval;  // uniform only: k >= 1 (else chosen from the budget)
  // two-level: memory_slots K >= 1 and disk_slots D >= 0, placed to minimise the predicted time
  // under `costs` (step_time 1: disk_write_time and disk_read_time are in forward steps).
  std::optional<Index> memory_slots;
  std::optional<Index> disk_slots;
  // three-level: memory_slots are the device level's K >= 0, host_slots H >= 0 (K + H >= 1),
  // disk_slots D >= 0; costs.write_time/read_time are device copies, host_write_time/
  // host_read_time host copies (rwd::ThreeLevelSchedule).
  std::optional<Index> host_slots;
  CostModel costs;
  bool all_on_disk = false;  // a single-level schedule with every snapshot in the disk level

  static PlanRequest revolve(Index snapshots);
  static PlanRequest uniform(Index interval);
  static PlanRequest store_all();
  static PlanRequest two_level(Index memory_snapshots, Index disk_snapshots,
                               const CostModel& costs);
  static PlanRequest three_level(Index device_snapshots, Index host_snapshots, Index disk_snapshots,
                                 const CostModel& costs);

  // The rules that do not depend on l. Otherwise throws rwd::InvalidPlanRequest
  // (rewind/schedule/invalid_plan_request.hpp), an InvalidArgument that names the field
  // (PlanField, and first in the message), the value and the rule. In order: a family that is
  // planned from requests; budget in [1, INT_MAX] and interval >= 1; only the fields the family
  // takes (ScheduleFamily::fields); the family's own rules (ScheduleFamily::validate — revolve
  // needs a budget, uniform a budget or an interval; two-level: memory_slots in [1, 2^20] and
  // disk_slots in [0, 2^24]; three-level: memory_slots (device) and host_slots in [0, 2^20],
  // disk_slots in [0, 2^24], device + host >= 1, not all_on_disk; both: costs valid); costs valid
  // (CostModel::validate) when every snapshot goes to disk.
  void validate() const;
};

class CheckpointPlan {
 public:
  // The plan of any schedule (simulated: O(actions) integer work). `family` names what it is
  // and gives its levels (ScheduleFamily::levels).
  static CheckpointPlan of(std::unique_ptr<Schedule> schedule,
                           const ScheduleFamily& family = custom_family());

  const ScheduleFamily* family = &revolve_family();  // never null
  std::string name;              // "revolve(c = 20)", "uniform(k = 32)", "store-all", …
  Index steps = 0;               // l
  Index snapshots = 0;           // the schedule's slot budget c (uniform: its exact peak)
  std::optional<Index> budget;   // the budget asked for, if any
  Index interval = 0;            // uniform: k (0 otherwise)
  bool interval_chosen = false;  // uniform: k was chosen from the budget
  Index repetitions = 0;         // revolve: r(l, c), the most times a step is advanced

  bool simulated = false;         // counts from rwd::simulate; false: closed forms
  Index actions = 0;              // actions simulated (0 for closed forms)
  double simulate_seconds = 0.0;  // time the simulation took

  Index advances = 0;           // p: steps advanced by the schedule (first sweep included)
  std::optional<Index> stores;  // unknown for revolve's closed form
  Index restores = 0;
  Index reverses = 0;    // l
  Index peak_slots = 0;  // most snapshots held at once (an upper bound when !peak_exact)
  bool peak_exact = true;

  // The storage levels of the schedule's slot range, fastest first, tiling [0, snapshots)
  // (rewind/schedule/storage_level.hpp): one level (memory; disk when every snapshot goes to
  // disk), two (memory, disk) or three (device, host, disk). Each says how many slots a snapshot
  // store must provide there (rwd::make_snapshot_store sizes itself so) and, when simulated, the
  // stores, restores and peak on it.
  std::vector<StorageLevel> levels;
  CostModel costs;  // per-snapshot costs of each level, in forward steps (step_time = 1)

  // The first level of that kind, or nullptr when the plan has none.
  const StorageLevel* level(LevelKind kind) const;
  // Slots of the schedule on the level of that kind (its budget there); 0 without one.
  Index slots_on(LevelKind kind) const;
  // Slots a store must provide on the level of that kind; 0 without one.
  Index slots_used_on(LevelKind kind) const;
  // Stores into / restores from the level of that kind: 0 without one when the counts were
  // simulated, std::nullopt when they are unknown (closed forms).
  std::optional<Index> stores_on(LevelKind kind) const;
  std::optional<Index> restores_on(LevelKind kind) const;
  // Most snapshots held at once on the level of that kind; 0 when unknown or without one.
  Index peak_slots_on(LevelKind kind) const;
  // One snapshot into / out of `level`, in forward steps (from `costs`).
  double write_cost(const StorageLevel& level) const;
  double read_cost(const StorageLevel& level) const;

  bool uses_host() const { return slots_on(LevelKind::host) > 0; }
  bool uses_disk() const { return slots_on(LevelKind::disk) > 0; }
  // Every snapshot in the disk level (a single-level schedule made resumable, or online on disk).
  bool all_on_disk() const { return levels.size() == 1 && levels.front().kind == LevelKind::disk; }

  // Stage snapshots (rewind/schedule/stage_aware_schedule.hpp): slots per snapshot, how many were
  // stored, and the reverses that used one (and re-ran no step). Zero for state-only schedules.
  int stage_units = 0;
  Index stage_stores = 0;
  Index stage_reverses = 0;

  // l + p: forward evaluations, the reverse steps' own re-runs included (none for a reverse from
  // stages).
  Index forward_steps() const { return steps + advances - stage_reverses; }
  // (l + p) / l.
  double recompute_ratio() const;
  // Time of the gradient in forward runs of l steps (adjoint part F = adjoint_cost; disk I/O at
  // `costs`, taken as synchronous: background I/O can only do better).
  double predicted_time_ratio(double adjoint_cost) const;
  // Whether every state fits in the budget (store-all needs l slots: y_0 … y_{l−1}).
  bool store_all_fits() const { return budget && *budget >= steps; }

  // A fresh instance of the planned schedule, at its first action. Never plans again.
  std::unique_ptr<Schedule> schedule() const;

 private:
  friend CheckpointPlan plan_checkpoints(const PlanRequest& request, Index steps);
  std::shared_ptr<const Schedule> prototype_;
};

// The plan of `request` for l steps, with its costs. Throws InvalidArgument for a request that
// cannot be met (a budget below what the schedule needs, l < 1, counts beyond 64 bits).
CheckpointPlan plan_checkpoints(const PlanRequest& request, Index steps);

// Plans for a number of steps known only when the run starts. The adjoint driver calls it
// exactly once per run whose length it knows (fixed steps, or after a counting sweep).
//
// A run whose length is not known in advance (adaptive steps, a stop condition) cannot be
// planned offline. A planner that names an online budget (revolve_schedule(c) does: c) lets the
// driver run rwd::OnlineSchedule with that many snapshots instead, with no counting sweep; any
// other planner is called after a counting sweep, as before. The online schedule's snapshots
// are in memory, or in the disk level when the planner says so (rwd::on_disk): a run of unknown
// length that can then be resumed after a kill.
//
//   rwd::Planner p = [](rwd::Index l) { return rwd::plan_checkpoints(request, l); };
//   rwd::Planner q(fn, /*online_snapshots=*/20);   // online(c = 20) when l is unknown
class Planner {
 public:
  Planner() = default;
  // Any callable Index → CheckpointPlan (a lambda, a std::function).
  template <class F>
  requires std::is_invocable_r_v<CheckpointPlan, const F&, Index> &&
      (!std::is_same_v<std::remove_cvref_t<F>, Planner>)Planner(F plan)
      : plan_(std::move(plan)) {}  // NOLINT(google-explicit-constructor)
  template <class F>
  requires std::is_invocable_r_v<CheckpointPlan, const F&, Index> Planner(
      F plan, std::optional<int> online_snapshots,
      OnlineRule online_rule = OnlineRule::least_worst_case, bool online_on_disk = false)
      : plan_(std::move(plan)),
        online_snapshots_(online_snapshots),
        online_rule_(online_rule),
        online_on_disk_(online_on_disk) {}

  CheckpointPlan operator()(Index steps) const { return plan_(steps); }
  explicit operator bool() const { return static_cast<bool>(plan_); }
  // Snapshots of the online schedule used when the run's length is unknown; nullopt: count.
  std::optional<int> online_snapshots() const { return online_snapshots_; }
  // Its rule past β(c, 3) (rewind/schedule/online_rule.hpp).
  OnlineRule online_rule() const { return online_rule_; }
  // Whether the online schedule's snapshots go to the disk level (CheckpointOptions::disk).
  bool online_on_disk() const { return online_on_disk_; }

 private:
  std::function<CheckpointPlan(Index steps)> plan_;
  std::optional<int> online_snapshots_;
  OnlineRule online_rule_ = OnlineRule::least_worst_case;
  bool online_on_disk_ = false;
};

// Snapshots of `snapshot_bytes` (state + carry) that fit in `budget_bytes`. Refuses a budget
// below one snapshot, naming `what` (e.g. "--memory").
Index snapshots_in_memory(std::int64_t budget_bytes, Index snapshot_bytes,
                          const char* what = "memory budget");

namespace detail {
// The counts of `plan` from one simulation of `prototype` (CheckpointPlan::levels too).
void take_simulation(CheckpointPlan& plan, const Schedule& prototype);
// UniformSchedule's slot count and advances for interval k, without constructing one.
Index uniform_slots(Index l, Index k);
Index uniform_advances(Index l, Index k);
// The interval k whose schedule fits in `budget` slots with the fewest advances (ties: fewer
// slots). Refuses a budget below uniform's minimum, naming the least that works.
Index choose_uniform_interval(Index l, Index budget);
}  // namespace detail

}  // namespace rwd

// The family interface, so that plan.family->name() works wherever plans do.
#include "rewind/schedule/schedule_family.hpp"  // IWYU pragma: export
