// checkpoint/schedule/src/online_plan.cpp — see rewind/schedule/online_plan.hpp.
#include "rewind/schedule/online_plan.hpp"

#include "rewind/error.hpp"
#include "rewind/schedule/disk_only_schedule.hpp"
#include "rewind/schedule/revolve_cost.hpp"

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
  CheckpointPlan plan = CheckpointPlan::of(std::move(schedule), online_family());
  plan.budget = snapshots;  // the levels follow the schedule: one disk level when on_disk
  return plan;
}

const char* online_region_name(OnlineRegion region) {
  switch (region) {
    case OnlineRegion::up_to_beta2:
      return "r <= 2";
    case OnlineRegion::up_to_beta3:
      return "r = 3";
    case OnlineRegion::beyond_beta3:
      return "r > 3";
  }
  return "?";
}

double OnlineComparison::recompute_ratio() const {
  return static_cast<double>(cost.steps + cost.advances) / static_cast<double>(cost.steps);
}

double OnlineComparison::ratio_to_offline() const {
  return offline_advances > 0
             ? static_cast<double>(cost.advances) / static_cast<double>(offline_advances)
             : 1.0;
}

double OnlineComparison::predicted_time_ratio(double adjoint_cost) const {
  const Index l = cost.steps;
  return (static_cast<double>(cost.advances) + static_cast<double>(l) * (1.0 + adjoint_cost)) /
         static_cast<double>(l);
}

OnlineComparison compare_online_with_offline(int snapshots, Index steps, OnlineRule rule) {
  if (snapshots < 1)
    detail::fail<InvalidArgument>("compare_online_with_offline: snapshots = ", snapshots,
                                  " must be >= 1");
  if (steps < 1)
    detail::fail<InvalidArgument>("compare_online_with_offline: steps = ", steps, " must be >= 1");
  OnlineComparison c;
  c.name = OnlineSchedule(snapshots, rule).name();
  c.cost = simulate_online(snapshots, steps, {}, rule);
  c.offline_advances = revolve_advances(steps, snapshots);
  c.offline_repetitions = revolve_repetitions(steps, snapshots);
  c.beta2 = revolve_beta(snapshots, 2);
  c.beta3 = revolve_beta(snapshots, 3);
  c.region = steps <= c.beta2   ? OnlineRegion::up_to_beta2
             : steps <= c.beta3 ? OnlineRegion::up_to_beta3
                                : OnlineRegion::beyond_beta3;
  return c;
}

}  // namespace rwd
