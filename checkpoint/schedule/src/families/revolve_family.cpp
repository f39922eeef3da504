// checkpoint/schedule/src/families/revolve_family.cpp — binomial checkpointing (Griewank &
// Walther's revolve) as a schedule family: a budget of c snapshots, the fewest recomputations.
#include <algorithm>
#include <memory>
#include <string>

#include "../plan_request_rules.hpp"
#include "rewind/schedule/builtin_schedule_families.hpp"
#include "rewind/schedule/revolve_cost.hpp"
#include "rewind/schedule/revolve_schedule.hpp"
#include "rewind/schedule/schedule_family.hpp"

namespace rwd {
namespace {

class RevolveFamily final : public ScheduleFamily {
 public:
  std::string name() const override { return "revolve"; }
  std::vector<std::string> aliases() const override { return {"binomial"}; }
  std::string description() const override {
    return "binomial checkpointing: the fewest recomputed steps for c snapshots";
  }
  std::vector<PlanField> fields() const override { return {PlanField::budget}; }
  void validate(const PlanRequest& request) const override {
    if (!request.budget)
      detail::refuse(PlanField::budget, " is missing: revolve needs a snapshot budget");
  }

  // p(l, c) and r(l, c) in closed form (revolve_cost.hpp); the stores have none, and the peak is
  // at most min(c, l).
  void closed_forms(const PlanRequest& request, CheckpointPlan& plan) const override {
    const Index c = *request.budget;
    plan.snapshots = c;
    plan.name = "revolve(c = " + std::to_string(c) + ")";
    plan.repetitions = revolve_repetitions(plan.steps, c);
    plan.advances = revolve_advances(plan.steps, c);
    plan.peak_slots = std::min(c, plan.steps);
    plan.peak_exact = false;
  }
  std::unique_ptr<Schedule> schedule(const PlanRequest& /*request*/,
                                     const CheckpointPlan& plan) const override {
    return std::make_unique<RevolveSchedule>(plan.steps, static_cast<int>(plan.snapshots));
  }

  std::optional<Index> binomial_budget(const PlanRequest& request) const override {
    return request.budget;
  }

  std::string snapshots_note() const override { return "the initial state's snapshot included"; }
  std::vector<PlanFact> facts(const CheckpointPlan& plan) const override {
    return {{"repetitions", plan.repetitions}};
  }
  std::vector<PlanLine> plan_lines(const CheckpointPlan& plan) const override {
    return {{"repetitions r",
             std::to_string(plan.repetitions) + " (no step is advanced more than r times)"}};
  }
};

}  // namespace

const ScheduleFamily& revolve_family() {
  static const RevolveFamily family;
  return family;
}

}  // namespace rwd
