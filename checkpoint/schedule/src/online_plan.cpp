// checkpoint/schedule/src/online_plan.cpp — see rewind/schedule/online_plan.hpp.
#include "rewind/schedule/online_plan.hpp"

#include "rewind/error.hpp"

namespace rwd {

OnlineScheduleEndingAt::OnlineScheduleEndingAt(int snapshots, Index steps)
    : online_(snapshots), steps_(steps) {
  if (steps < 1) detail::fail<InvalidArgument>("an online run of ", steps, " steps (need >= 1)");
}

Action OnlineScheduleEndingAt::next() {
  Action action = online_.next();
  if (!online_.ended() && action.kind == ActionKind::advance && action.step == steps_) {
    online_.end_at(steps_);  // the driver takes y_l aside: not an advance
    action = online_.next();
  }
  return action;
}

CheckpointPlan plan_online(int snapshots, Index steps) {
  CheckpointPlan plan = CheckpointPlan::of(
      std::make_unique<OnlineScheduleEndingAt>(snapshots, steps), ScheduleKind::online);
  plan.budget = snapshots;
  return plan;
}

}  // namespace rwd
