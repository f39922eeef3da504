// rewind/schedule/schedule_family.hpp — a family of checkpointing schedules (revolve, uniform,
// store-all, two-level, …) as one class: its name, which fields of a rwd::PlanRequest it takes
// and their rules, its storage levels, how it plans l steps, which costs it weighs, and what a
// report says of its plans. rwd::plan_checkpoints and the rewind tool ask the family; neither
// knows the families by name, so a new family is one class and one registration
// (rwd::register_schedule_family, rewind/schedule/schedule_registry.hpp).
//
//   // A snapshot every k steps, each segment replayed from its snapshot (k = the request's
//   // interval): uniform checkpointing without uniform's second-level snapshots.
//   class EveryKthStep final : public rwd::ScheduleFamily {
//    public:
//     std::string name() const override { return "every-kth"; }
//     std::string description() const override { return "a snapshot every k-th step"; }
//     std::vector<rwd::PlanField> fields() const override { return {rwd::PlanField::interval}; }
//     void validate(const rwd::PlanRequest& r) const override {
//       if (!r.interval) throw rwd::InvalidPlanRequest(rwd::PlanField::interval, " is missing");
//     }
//     void closed_forms(const rwd::PlanRequest& r, rwd::CheckpointPlan& plan) const override {
//       plan.snapshots = (plan.steps - 1) / *r.interval + 1;
//       plan.advances = plan.steps - 1;
//       plan.stores = plan.snapshots;
//       plan.peak_slots = plan.snapshots;
//     }
//     std::unique_ptr<rwd::Schedule> schedule(const rwd::PlanRequest& r,
//                                             const rwd::CheckpointPlan& plan) const override {
//       return std::make_unique<MyEveryKthSchedule>(plan.steps, *r.interval);
//     }
//   };
//   rwd::register_schedule_family(std::make_shared<EveryKthStep>());
//   rwd::PlanRequest request;
//   request.family = &rwd::find_schedule_family("every-kth");
//   request.interval = 10;
//   rwd::CheckpointPlan plan = rwd::plan_checkpoints(request, 1000);   // simulated: exact counts
//
// How plan_checkpoints asks a family, in order: PlanRequest::validate (the common rules, then
// the family's validate); plan.family, steps (l >= 1), budget, reverses (l) and restores (l − 1)
// set; closed_forms() sets snapshots (the schedule's slot count) and the counts that hold when l
// is too large to simulate (kSimulateMaxSteps): advances, stores (nullopt when unknown),
// peak_slots and peak_exact, and family-specific values (interval, repetitions, costs);
// schedule() makes the schedule of l steps, which plan_checkpoints simulates (every count then
// replaced by the simulated one) when it is small enough. A family without closed forms says
// needs_simulation(), and larger requests are refused.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rewind/schedule/checkpoint_plan.hpp"
#include "rewind/schedule/cost_needs.hpp"
#include "rewind/schedule/invalid_plan_request.hpp"
#include "rewind/schedule/schedule.hpp"
#include "rewind/schedule/storage_level.hpp"
#include "rewind/types.hpp"

namespace rwd {

// A value a report lists under a key, as a JSON report does ("interval": 32).
struct PlanFact {
  std::string key;
  Index value = 0;
};

// A labelled line of a text report ("interval k", "32 (chosen: …)").
struct PlanLine {
  std::string label;
  std::string value;
};

class ScheduleFamily {
 public:
  virtual ~ScheduleFamily() = default;

  // --- who it is -----------------------------------------------------------------------------
  // The name it is registered, found and reported under: lower case, words joined by '-'
  // ("two-level"). Also CheckpointPlan's JSON "kind".
  virtual std::string name() const = 0;
  // Other names it is found under ("binomial" for revolve), in the same form.
  virtual std::vector<std::string> aliases() const { return {}; }
  // One line for a help text: what it does.
  virtual std::string description() const = 0;

  // --- what a request of it holds --------------------------------------------------------------
  // The fields of rwd::PlanRequest it takes among budget, interval, memory_slots, disk_slots and
  // host_slots (costs and all_on_disk are every family's). PlanRequest::validate refuses a field
  // given that is not listed here, naming the families that take it.
  virtual std::vector<PlanField> fields() const = 0;
  // Why plan_checkpoints cannot plan a request of it (custom schedules come from
  // CheckpointPlan::of, the online schedule runs without a plan), or nullopt when it can.
  virtual std::optional<std::string> not_planned_from_requests() const { return std::nullopt; }
  // Its own rules, after the common ones (budget in [1, INT_MAX], interval >= 1, only its
  // fields). Throws rwd::InvalidPlanRequest naming the field.
  virtual void validate(const PlanRequest& request) const;

  // --- how it plans ----------------------------------------------------------------------------
  // The slot count and closed-form counts of a plan of plan.steps steps, into `plan`; refuses
  // (InvalidArgument) a request that l makes impossible, such as a budget below what it needs.
  virtual void closed_forms(const PlanRequest& request, CheckpointPlan& plan) const = 0;
  // The schedule of plan.steps steps, at its first action (`plan` as closed_forms left it).
  virtual std::unique_ptr<Schedule> schedule(const PlanRequest& request,
                                             const CheckpointPlan& plan) const = 0;
  // Whether its counts come from the simulation only (no closed form): plan_checkpoints then
  // refuses l > kSimulateMaxSteps.
  virtual bool needs_simulation() const { return false; }
  // The storage levels of `schedule` (one of its plans, or one a user handed to
  // CheckpointPlan::of), fastest first, tiling [0, slots()); no counts yet. The default: device,
  // host and disk when the schedule has host slots, memory and disk when part of its slots are
  // on disk, disk alone when all are, else memory alone.
  virtual std::vector<StorageLevel> levels(const Schedule& schedule) const;
  // The name of its fastest level ("memory"; "device" in front of a host level).
  virtual std::string fastest_level_name() const { return "memory"; }
  // Per-snapshot costs its plans weigh that are to be measured when `given` lacks them
  // (rwd::costs_to_measure); none by default.
  virtual CostNeeds costs_to_measure(const PlanRequest& request, const GivenCosts& given) const;
  // For a binomial family (revolve), the request's snapshot budget c: a run of unknown length can
  // run rwd::OnlineSchedule(c) in its place, and the stage chooser (rwd::choose_stage_plan)
  // weighs stage snapshots within it. nullopt otherwise.
  virtual std::optional<Index> binomial_budget(const PlanRequest& request) const;
  // The request of the same plan with `disk_slots` disk snapshots and its faster levels as they
  // are, for a trade-off curve; nullopt when the family has no such knob.
  virtual std::optional<PlanRequest> with_disk_slots(const CheckpointPlan& plan,
                                                     Index disk_slots) const;

  // --- what a report says of its plans ---------------------------------------------------------
  // After the snapshot count c, in parentheses ("the initial state's snapshot included"); "".
  virtual std::string snapshots_note() const { return ""; }
  // Values under their keys ("interval", "repetitions", "memory_snapshots", …).
  virtual std::vector<PlanFact> facts(const CheckpointPlan& plan) const;
  // Lines of a plan's description after the snapshot count ("interval k", "repetitions r").
  virtual std::vector<PlanLine> plan_lines(const CheckpointPlan& plan) const;
  // Lines in front of the disk level's lines ("memory / disk snapshots").
  virtual std::vector<PlanLine> disk_lines(const CheckpointPlan& plan) const;
  // One sentence a run's report prints before the plan's name ("two-level: 4 in memory, …"); "".
  virtual std::string run_note(const CheckpointPlan& plan) const;
  // Whether its plans keep every state (store-all), so no other schedule is worth suggesting.
  virtual bool keeps_every_state() const { return false; }
};

// The fact under `key` in `family.facts(plan)`, or nullopt.
std::optional<Index> plan_fact(const CheckpointPlan& plan, const std::string& key);

namespace detail {
// A level of `slots` slots from `first_slot`, no counts.
StorageLevel make_level(LevelKind kind, const std::string& name, Index first_slot, Index slots);
// printf of one double ("%.3g"), for report text.
std::string format_number(const char* spec, double value);
}  // namespace detail

}  // namespace rwd
