// checkpoint/schedule/src/families/custom_family.cpp — the family of a schedule a user wrote
// and handed to CheckpointPlan::of (and of rwd::choose_stage_plan's stage-aware schedules): it
// has no request of its own, so plan_checkpoints refuses one.
#include <memory>
#include <string>

#include "rewind/error.hpp"
#include "rewind/schedule/builtin_schedule_families.hpp"
#include "rewind/schedule/schedule_family.hpp"

namespace rwd {
namespace {

class CustomFamily final : public ScheduleFamily {
 public:
  std::string name() const override { return "custom"; }
  std::string description() const override {
    return "a schedule of your own, planned with CheckpointPlan::of";
  }
  std::vector<PlanField> fields() const override { return {}; }
  std::optional<std::string> not_planned_from_requests() const override {
    return "is planned with CheckpointPlan::of, not from a request";
  }
  void closed_forms(const PlanRequest& /*request*/, CheckpointPlan& /*plan*/) const override {
    unplannable();
  }
  std::unique_ptr<Schedule> schedule(const PlanRequest& /*request*/,
                                     const CheckpointPlan& /*plan*/) const override {
    unplannable();
  }

 private:
  [[noreturn]] static void unplannable() {
    detail::fail<InvalidArgument>("a custom schedule is planned with CheckpointPlan::of");
  }
};

}  // namespace

const ScheduleFamily& custom_family() {
  static const CustomFamily family;
  return family;
}

}  // namespace rwd
