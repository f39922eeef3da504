// checkpoint/schedule/src/families/online_family.cpp — the online schedule (rwd::OnlineSchedule,
// for runs of unknown length) as a family: a run runs it without a plan, and rwd::plan_online
// describes one that ended; plan_checkpoints refuses a request of it.
#include <memory>
#include <string>

#include "rewind/error.hpp"
#include "rewind/schedule/builtin_schedule_families.hpp"
#include "rewind/schedule/schedule_family.hpp"

namespace rwd {
namespace {

class OnlineFamily final : public ScheduleFamily {
 public:
  std::string name() const override { return "online"; }
  std::string description() const override {
    return "for runs of unknown length: snapshots placed as the run goes (no plan)";
  }
  std::vector<PlanField> fields() const override { return {}; }
  std::optional<std::string> not_planned_from_requests() const override {
    return "needs no plan: a run of unknown length runs it (plan_online describes one that "
           "ended)";
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
    detail::fail<InvalidArgument>("the online schedule is described with plan_online");
  }
};

}  // namespace

const ScheduleFamily& online_family() {
  static const OnlineFamily family;
  return family;
}

}  // namespace rwd
