// rewind/schedule/stage_plan_chooser.hpp — the plan of least predicted time for a budget that
// may hold a step's stage values as well as states: revolve, the stage-aware schedule, or a
// store-all.
//
//   rwd::CostModel costs;                          // in forward steps (step_time 1)
//   costs.adjoint_cost_factor = 1.5;
//   costs.write_time = costs.read_time = 0.05;     // one snapshot copy: rwd::measure_costs
//   rwd::CheckpointPlan plan = rwd::choose_stage_plan(/*steps=*/2000, /*budget=*/10,
//                                                     /*stage_units=*/4, costs);  // RK4
//   plan.name;   // "stage-aware(c = 10, u = 4)", or revolve's when copies are dear
//
// Candidates, for l steps, a budget of c state-sized slots and u = the method's stages (a stage
// snapshot takes u slots, rewind/schedule/stage_aware_schedule.hpp): revolve(c); stage-aware(c, u)
// when its tables are within their limits (rwd::stage_aware_plannable; otherwise a warning,
// source "stage-aware plan", says which limit, and the others compete); store-all when c >= l;
// store-all-stages when c >= l·u. The winner has the least CheckpointPlan::predicted_time_ratio
// under `costs`: steps, and every snapshot copy into and out of memory at write_time and
// read_time (a stage snapshot priced as one copy unless costs.stage_values_copied). Ties go to
// the later candidate (store-all-stages, with O(1) schedule memory, over a stage-aware plan of
// the same count). With free copies the plan with the fewest evaluations wins.
//
// Pure integers and the cost model: the costs come from the caller (measured against a stepper
// by rwd::measure_costs, rewind/adjoint/measure_costs.hpp, or given).
#pragma once

#include "rewind/schedule/checkpoint_plan.hpp"
#include "rewind/schedule/schedule_simulator.hpp"
#include "rewind/types.hpp"

namespace rwd {

// The plan of least predicted time among the candidates above (each simulated). Throws
// InvalidArgument for budget < 1, stage_units < 1, steps < 1 or costs that fail
// CostModel::validate. The plan's budget is `budget` and its costs are `costs`.
CheckpointPlan choose_stage_plan(Index steps, Index budget, int stage_units,
                                 const CostModel& costs);

}  // namespace rwd
