// checkpoint/schedule/src/families/unplanned_families.cpp — the two families no request plans:
// custom (a schedule of one's own, planned with rwd::CheckpointPlan::of) and online
// (rwd::OnlineSchedule, run without a plan; rwd::plan_online describes a run that ended).
// plan_checkpoints refuses a request of either, saying where its plan comes from.
#include <memory>
#include <string>
#include <utility>

#include "rewind/error.hpp"
#include "rewind/schedule/builtin_schedule_families.hpp"
#include "rewind/schedule/schedule_family.hpp"

namespace rwd {
namespace {

class UnplannedFamily final : public ScheduleFamily {
 public:
  // `why`: what a request of it is told (not_planned_from_requests); `refusal`: the error if
  // plan_checkpoints is asked anyway.
  UnplannedFamily(std::string name, std::string description, std::string why, std::string refusal)
      : name_(std::move(name)),
        description_(std::move(description)),
        why_(std::move(why)),
        refusal_(std::move(refusal)) {}

  std::string name() const override { return name_; }
  std::string description() const override { return description_; }
  std::vector<PlanField> fields() const override { return {}; }
  std::optional<std::string> not_planned_from_requests() const override { return why_; }
  void closed_forms(const PlanRequest& /*request*/, CheckpointPlan& /*plan*/) const override {
    unplannable();
  }
  std::unique_ptr<Schedule> schedule(const PlanRequest& /*request*/,
                                     const CheckpointPlan& /*plan*/) const override {
    unplannable();
  }

 private:
  [[noreturn]] void unplannable() const { detail::fail<InvalidArgument>(refusal_); }

  std::string name_, description_, why_, refusal_;
};

}  // namespace

const ScheduleFamily& custom_family() {
  static const UnplannedFamily family("custom",
                                      "a schedule of your own, planned with CheckpointPlan::of",
                                      "is planned with CheckpointPlan::of, not from a request",
                                      "a custom schedule is planned with CheckpointPlan::of");
  return family;
}

const ScheduleFamily& online_family() {
  static const UnplannedFamily family(
      "online", "for runs of unknown length: snapshots placed as the run goes (no plan)",
      "needs no plan: a run of unknown length runs it (plan_online describes one that ended)",
      "the online schedule is described with plan_online");
  return family;
}

}  // namespace rwd
