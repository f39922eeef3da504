// checkpoint/schedule/src/online_plan.cpp — see rewind/schedule/online_plan.hpp.
#include "rewind/schedule/online_plan.hpp"

#include "rewind/error.hpp"
#include "rewind/schedule/disk_only_schedule.hpp"

namespace rwd {

OnlineScheduleEndingAt::OnlineScheduleEndingAt(int snapshots, Index steps, OnlineRule rule)
    : online_(snapshots, rule), steps_(steps) {
  if (steps < 1) detail::fail<InvalidArgument>("an online run of ", steps, " steps (need >= 1)");
}

Action OnlineScheduleEndingAt::next() {
  // The driver's probe: with y_{l−1} current it finds y_l final before any action for y_{l−1}.
  if (!online_.ended() && online_.forward_step() + 1 == steps_) online_.end_at(steps_);
  return online_.next();
}

CheckpointPlan plan_online(int snapshots, Index steps, OnlineRule rule, bool on_disk) {
  std::unique_ptr<Schedule> schedule =
      std::make_unique<OnlineScheduleEndingAt>(snapshots, steps, rule);
  if (on_disk) schedule = std::make_unique<DiskOnlySchedule>(std::move(schedule));
  CheckpointPlan plan = CheckpointPlan::of(std::move(schedule), ScheduleKind::online);
  plan.budget = snapshots;  // the levels follow the schedule: one disk level when on_disk
  return plan;
}

}  // namespace rwd
