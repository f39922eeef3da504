// checkpoint/schedule/src/families/store_all_family.cpp — store-all as a schedule family: every
// state y_0 … y_{l−1} kept, no step recomputed (rwd::StoreAllSchedule).
#include <memory>
#include <string>

#include "rewind/error.hpp"
#include "rewind/schedule/builtin_schedule_families.hpp"
#include "rewind/schedule/schedule_family.hpp"
#include "rewind/schedule/store_all_schedule.hpp"

namespace rwd {
namespace {

class StoreAllFamily final : public ScheduleFamily {
 public:
  std::string name() const override { return "store-all"; }
  std::vector<std::string> aliases() const override { return {"storeall"}; }
  std::string description() const override {
    return "every state kept: no recomputation, l snapshots";
  }
  std::vector<PlanField> fields() const override { return {PlanField::budget}; }

  void closed_forms(const PlanRequest& request, CheckpointPlan& plan) const override {
    const Index steps = plan.steps;
    if (request.budget && *request.budget < steps)
      detail::fail<InvalidArgument>("store-all keeps all ", steps, " states y_0 ... y_", steps - 1,
                                    ", more than the budget of ", *request.budget,
                                    " snapshots; use revolve");
    plan.snapshots = steps;
    plan.name = "store-all";
    plan.advances = steps - 1;
    plan.stores = steps;
    plan.peak_slots = steps;
  }
  std::unique_ptr<Schedule> schedule(const PlanRequest& /*request*/,
                                     const CheckpointPlan& plan) const override {
    return std::make_unique<StoreAllSchedule>(plan.steps);
  }

  std::string snapshots_note() const override { return "one per step: y_0 ... y_{l-1}"; }
  bool keeps_every_state() const override { return true; }
};

}  // namespace

const ScheduleFamily& store_all_family() {
  static const StoreAllFamily family;
  return family;
}

}  // namespace rwd
