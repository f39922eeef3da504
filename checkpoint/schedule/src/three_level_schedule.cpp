// ThreeLevelSchedule (rewind/schedule/three_level_schedule.hpp): runs a three-level plan
// (rewind/schedule/three_level_plan.hpp) one action at a time — the two-level schedule with its
// slots moved onto the three-level numbering, and device revolve inside each super-step.
#include "rewind/schedule/three_level_schedule.hpp"

namespace rwd {

ThreeLevelSchedule::ThreeLevelSchedule(Index steps, int device_snapshots, int host_snapshots,
                                       int disk_snapshots, const CostModel& costs)
    : ThreeLevelSchedule(std::make_shared<const detail::ThreeLevelPlan>(detail::plan_three_level(
                             steps, device_snapshots, host_snapshots, disk_snapshots, costs)),
                         costs) {}

ThreeLevelSchedule::ThreeLevelSchedule(std::shared_ptr<const detail::ThreeLevelPlan> plan,
                                       const CostModel& costs)
    : plan_(std::move(plan)), costs_(costs), outer_(plan_->outer->clone()) {
  if (plan_->method == detail::ThreeLevelPlan::Method::nested) {
    const Index k = plan_->super_step;
    const Index last = plan_->steps - (plan_->super_steps - 1) * k;
    if (k >= 2) leaf_.emplace(k, plan_->device);
    if (last >= 2 && last != k) last_leaf_.emplace(last, plan_->device);
  }
  reset();
}

std::string ThreeLevelSchedule::name() const {
  return "three-level(device = " + std::to_string(plan_->device) +
         ", host = " + std::to_string(plan_->host) + ", disk = " + std::to_string(plan_->disk) +
         ")";
}

void ThreeLevelSchedule::reset() {
  outer_->reset();
  if (leaf_) leaf_->reset();
  if (last_leaf_) last_leaf_->reset();
  active_ = 0;
  leaf_start_ = 0;
}

Action ThreeLevelSchedule::next() {
  if (plan_->method == detail::ThreeLevelPlan::Method::nested) return next_nested();
  // device + disk: the two-level schedule's memory slots are the device slots as they are; its
  // disk slots, numbered from `device`, move up past the host level.
  Action a = outer_->next();
  if (a.slot >= plan_->device) a.slot += plan_->host;
  return a;
}

RevolveSchedule* ThreeLevelSchedule::active_leaf() {
  if (active_ == 1) return &*leaf_;
  if (active_ == 2) return &*last_leaf_;
  return nullptr;
}

Action ThreeLevelSchedule::next_nested() {
  if (RevolveSchedule* leaf = active_leaf()) {
    Action a = leaf->next();
    if (a.kind != ActionKind::done) {  // device slots as they are, steps shifted
      a.step += leaf_start_;
      return a;
    }
    active_ = 0;  // the super-step is reversed; on with the super-step level
  }
  const Index k = plan_->super_step;
  Action a = outer_->next();
  switch (a.kind) {
    case ActionKind::advance:
      return Action::advance(a.step * k);
    case ActionKind::store:
    case ActionKind::restore:
    case ActionKind::free:  // host slots follow the device ones, disk slots the host ones
      return Action{a.kind, a.step * k, a.slot + plan_->device};
    case ActionKind::reverse: {  // reverse super-step a.step by device revolve
      const Index start = a.step * k;
      const Index length = a.step == plan_->super_steps - 1 ? plan_->steps - start : k;
      if (length == 1) return Action::reverse(start);
      active_ = length == k ? 1 : 2;
      leaf_start_ = start;
      RevolveSchedule* leaf = active_leaf();
      leaf->reset();
      Action first = leaf->next();  // store y_start into device slot 0
      first.step += leaf_start_;
      return first;
    }
    default:
      return a;  // done
  }
}

}  // namespace rwd
