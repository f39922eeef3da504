// rewind/schedule/cost_needs.hpp — which per-snapshot costs a plan weighs that must be measured
// before planning, and the rule that a cost the user gives overrides a measured one. Pure
// integers and doubles: the schedule part speaks of levels and copies, never of what is copied.
//
//   rwd::GivenCosts given;
//   given.disk_write = 2.0;                                         // forward steps per snapshot
//   const rwd::CostNeeds needs = rwd::costs_to_measure(request, given);
//   if (needs.any()) {
//     // measure what `needs` names (rwd::CostProbe in rewind/adjoint/measure_costs.hpp does)
//     request.costs = rwd::with_given_costs(request.costs, needs, measured_in_steps, given);
//   }
//   auto plan = rwd::plan_checkpoints(request, l);   // the same plan the rewind tool makes
//
// A family says what its plans weigh (rwd::ScheduleFamily::costs_to_measure); the stage chooser
// (rwd::choose_stage_plan) weighs the memory level's copies. Every figure is in forward steps
// (CostModel::step_time = 1), as the schedules plan.
#pragma once

#include <optional>

#include "rewind/schedule/schedule_simulator.hpp"

namespace rwd {

struct PlanRequest;

// Per-snapshot costs a plan weighs that are to be measured.
struct CostNeeds {
  bool disk = false;           // a snapshot's write to and read from the disk level
  bool memory_copies = false;  // a snapshot's copy into and out of the fastest (memory) level
  bool host_copies = false;    // a snapshot's copy into and out of the host level

  bool any() const { return disk || memory_copies || host_copies; }
  // Whether a level's copies are to be measured (the memory and host levels are timed together).
  bool level_copies() const { return memory_copies || host_copies; }
};

// Costs the user gives, in forward steps per snapshot; each one overrides what is measured.
struct GivenCosts {
  std::optional<double> disk_write;  // CostModel::disk_write_time
  std::optional<double> disk_read;   // CostModel::disk_read_time
  std::optional<double> copy;        // CostModel::write_time and read_time (one memory copy)
};

// What a plan of `request` needs measured that `given` does not hold: its family's answer
// (ScheduleFamily::costs_to_measure), or with stage_aware the stage chooser's (the memory level's
// copies, unless given.copy is).
CostNeeds costs_to_measure(const PlanRequest& request, const GivenCosts& given,
                           bool stage_aware = false);

// `base` with the measured costs that `measured_fields` names taken from `measured` (the memory
// copies into write_time/read_time, the host copies into host_write_time/host_read_time, the
// disk into disk_write_time/disk_read_time; step_time 1 when any was measured), then every cost
// in `given` over them. The other fields stay as in `base`.
CostModel with_given_costs(CostModel base, const CostNeeds& measured_fields,
                           const CostModel& measured, const GivenCosts& given);

}  // namespace rwd
