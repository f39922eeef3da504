// checkpoint/schedule/src/families/uniform_family.cpp — uniform checkpointing as a schedule
// family: a snapshot every k steps, k given or chosen from a budget (rwd::UniformSchedule).
#include <algorithm>
#include <memory>
#include <string>

#include "../plan_request_rules.hpp"
#include "rewind/schedule/builtin_schedule_families.hpp"
#include "rewind/schedule/schedule_family.hpp"
#include "rewind/schedule/uniform_schedule.hpp"

namespace rwd {
namespace {

class UniformFamily final : public ScheduleFamily {
 public:
  std::string name() const override { return "uniform"; }
  std::string description() const override {
    return "a snapshot every k steps (--interval, or the best k within the budget)";
  }
  std::vector<PlanField> fields() const override {
    return {PlanField::budget, PlanField::interval};
  }
  void validate(const PlanRequest& request) const override {
    if (!request.budget && !request.interval)
      detail::refuse(
          PlanField::budget,
          " is missing: the uniform schedule needs an interval, or a budget to choose one from");
  }

  void closed_forms(const PlanRequest& request, CheckpointPlan& plan) const override {
    const Index steps = plan.steps;
    if (request.interval) {
      plan.interval = std::min(*request.interval, steps);
    } else {
      plan.interval = detail::choose_uniform_interval(steps, *request.budget);
      plan.interval_chosen = true;
    }
    plan.snapshots = detail::uniform_slots(steps, plan.interval);
    if (request.budget && plan.snapshots > *request.budget)
      detail::fail<InvalidArgument>("uniform checkpointing every ", plan.interval,
                                    " steps holds up to ", plan.snapshots, " snapshots of ", steps,
                                    " steps, more than the budget of ", *request.budget,
                                    "; leave the interval out to choose one that fits");
    plan.name = "uniform(k = " + std::to_string(plan.interval) + ")";
    plan.advances = detail::uniform_advances(steps, plan.interval);
    const Index m = (steps - 1) / plan.interval + 1;
    Index extra = 0;  // Σ over segments of max(L − 2, 0)
    extra += (m - 1) * std::max<Index>(plan.interval - 2, 0);
    extra += std::max<Index>(steps - (m - 1) * plan.interval - 2, 0);
    plan.stores = m + extra;
    plan.peak_slots = plan.snapshots;
  }
  std::unique_ptr<Schedule> schedule(const PlanRequest& /*request*/,
                                     const CheckpointPlan& plan) const override {
    return std::make_unique<UniformSchedule>(plan.steps, plan.interval);
  }

  std::string snapshots_note() const override { return "the most this schedule holds at once"; }
  std::vector<PlanFact> facts(const CheckpointPlan& plan) const override {
    return {{"interval", plan.interval}};
  }
  std::vector<PlanLine> plan_lines(const CheckpointPlan& plan) const override {
    std::string k = std::to_string(plan.interval);
    if (plan.interval_chosen)
      k += " (chosen: the fewest advances within " + std::to_string(plan.budget.value_or(0)) +
           " snapshots)";
    return {{"interval k", k}};
  }
};

}  // namespace

const ScheduleFamily& uniform_family() {
  static const UniformFamily family;
  return family;
}

}  // namespace rwd
