// checkpoint/schedule/src/stage_plan_chooser.cpp — see rewind/schedule/stage_plan_chooser.hpp.
#include "rewind/schedule/stage_plan_chooser.hpp"

#include <algorithm>
#include <memory>
#include <utility>

#include "rewind/error.hpp"
#include "rewind/schedule/revolve_schedule.hpp"
#include "rewind/schedule/stage_aware_schedule.hpp"
#include "rewind/schedule/store_all_schedule.hpp"
#include "rewind/schedule/store_all_stages_schedule.hpp"
#include "rewind/warning.hpp"

namespace rwd {

CheckpointPlan choose_stage_plan(Index steps, Index budget, int stage_units,
                                 const CostModel& costs) {
  if (budget < 1)
    detail::fail<InvalidArgument>("choose_stage_plan: budget = ", budget, " must be >= 1");
  if (stage_units < 1)
    detail::fail<InvalidArgument>("choose_stage_plan: stage_units = ", stage_units,
                                  " must be >= 1 (the method's stages)");
  costs.validate();
  const double adjoint_cost = costs.adjoint_cost_factor;
  const int c = static_cast<int>(std::min<Index>(budget, 1 << 30));
  CheckpointPlan best =
      CheckpointPlan::of(std::make_unique<RevolveSchedule>(steps, c), revolve_family());
  best.budget = budget;
  best.costs = costs;
  // Later candidates win ties: store-all-stages (O(1) schedule memory) over a stage-aware plan
  // that reaches the same count.
  const auto consider = [&](std::unique_ptr<Schedule> schedule, const ScheduleFamily& family) {
    CheckpointPlan plan = CheckpointPlan::of(std::move(schedule), family);
    plan.budget = budget;
    plan.costs = costs;
    if (plan.predicted_time_ratio(adjoint_cost) <= best.predicted_time_ratio(adjoint_cost))
      best = std::move(plan);
  };
  if (stage_aware_plannable(steps, c, stage_units)) {
    consider(std::make_unique<StageAwareSchedule>(steps, c, stage_units), custom_family());
  } else {
    try {  // refused before any table is filled: its message says which limit
      StageAwareSchedule refused(steps, c, stage_units);
    } catch (const InvalidArgument& e) {
      warn("stage-aware plan", "no stage-aware plan (", e.what(),
           "): the least predicted time of the others");
    }
  }
  if (budget >= steps) consider(std::make_unique<StoreAllSchedule>(steps), store_all_family());
  if (budget / stage_units >= steps)
    consider(std::make_unique<StoreAllStagesSchedule>(steps, stage_units), custom_family());
  return best;
}

}  // namespace rwd
