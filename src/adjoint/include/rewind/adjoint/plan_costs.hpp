// rewind/adjoint/plan_costs.hpp — a plan request with the costs its plan weighs: what the
// request's schedule family (and the stage chooser) needs measured, measured against the stepper
// that will run, and the costs the user gives over the measured ones. The rewind tool plans from
// the same functions, so a program gets the tool's plan from the same inputs.
//
//   rwd::GivenCosts given;                       // none given: everything measured
//   rwd::PlanCosts priced = rwd::measure_plan_costs(stepper, y0, theta,
//                                                   rwd::PlanRequest::two_level(4, 100, {}),
//                                                   given, "/scratch");
//   auto plan = rwd::plan_checkpoints(priced.request, l);   // the disk weighed as measured
//
// What is measured (rwd::costs_to_measure): the disk's write and read for a two-level request
// unless both are given; every level's copies (and the disk's when there is a disk level) for a
// three-level one; the memory level's copies for the stage chooser (stage_aware) unless a copy
// cost is given. In forward steps of this stepper (rwd::CostMeasurement::in_forward_steps).
#pragma once

#include <filesystem>
#include <optional>

#include "rewind/adjoint/measure_costs.hpp"
#include "rewind/integrators/stepper_concepts.hpp"
#include "rewind/schedule/checkpoint_plan.hpp"
#include "rewind/schedule/cost_needs.hpp"
#include "rewind/types.hpp"

namespace rwd {

// The probe that measures what `needs` names: the disk in `disk_directory` (when needs.disk),
// the levels' copies (when needs.level_copies()) going round as many slots as a run of `request`
// keeps in memory for the stage chooser (stage_aware: rwd::level_probe_slots of the budget, for
// states of `state_bytes` values bytes), one slot for a family's own levels.
inline CostProbe cost_probe_for(const CostNeeds& needs, const PlanRequest& request,
                                Index state_bytes, const std::filesystem::path& disk_directory,
                                bool stage_aware = false) {
  CostProbe probe;
  if (needs.disk) probe.disk_directory = disk_directory;
  probe.levels = needs.level_copies();
  if (probe.levels && stage_aware)
    probe.level_slots = level_probe_slots(state_bytes, request.budget.value_or(1));
  return probe;
}

// A request with the costs its plan weighs, and what was measured for it.
struct PlanCosts {
  PlanRequest request;                     // request.costs: measured, given ones over them
  CostNeeds measured;                      // which costs were measured (none: nothing ran)
  std::optional<CostMeasurement> seconds;  // the measurement, when one ran
};

// `request` with the costs its plan weighs measured against `stepper` (rwd::measure_costs: it
// takes steps with the stepper) and `given` over them (rwd::with_given_costs). The disk is
// measured in `disk_directory` (StorageError when it cannot take the scratch file). Across
// processes a collective, as measure_costs is.
template <TimeStepper Stepper>
PlanCosts measure_plan_costs(Stepper& stepper, const typename Stepper::Backend::Vector& y0,
                             const typename Stepper::Backend::Vector& theta, PlanRequest request,
                             const GivenCosts& given,
                             const std::filesystem::path& disk_directory = {},
                             bool stage_aware = false) {
  using B = typename Stepper::Backend;
  PlanCosts out;
  out.measured = costs_to_measure(request, given, stage_aware);
  CostModel measured;
  if (out.measured.any()) {
    const Index state_bytes = snapshot_values<B>(y0) * static_cast<Index>(sizeof(double));
    out.seconds = measure_costs(
        stepper, y0, theta,
        cost_probe_for(out.measured, request, state_bytes, disk_directory, stage_aware));
    measured = out.seconds->in_forward_steps();
  }
  request.costs = with_given_costs(request.costs, out.measured, measured, given);
  out.request = request;
  return out;
}

}  // namespace rwd
