// checkpoint/schedule/src/families/three_level_family.cpp — three storage levels as a schedule
// family: device, host and disk snapshots, placed to minimise the predicted time under each
// level's copy costs (rwd::ThreeLevelSchedule).
#include <algorithm>
#include <memory>
#include <string>

#include "../plan_request_rules.hpp"
#include "rewind/schedule/builtin_schedule_families.hpp"
#include "rewind/schedule/schedule_family.hpp"
#include "rewind/schedule/three_level_schedule.hpp"

namespace rwd {
namespace {

class ThreeLevelFamily final : public ScheduleFamily {
 public:
  std::string name() const override { return "three-level"; }
  std::string description() const override {
    return "device, host and disk snapshots, placed under each level's copy costs";
  }
  // memory_slots is the device level's count.
  std::vector<PlanField> fields() const override {
    return {PlanField::memory_slots, PlanField::disk_slots, PlanField::host_slots};
  }
  void validate(const PlanRequest& request) const override {
    const PlanField counts[3] = {PlanField::memory_slots, PlanField::host_slots,
                                 PlanField::disk_slots};
    const std::optional<Index>* given[3] = {&request.memory_slots, &request.host_slots,
                                            &request.disk_slots};
    for (int i = 0; i < 3; ++i)
      if (!*given[i])
        detail::refuse(counts[i],
                       " is missing: the three-level schedule needs device (memory_slots), host "
                       "and disk slot counts");
    detail::require_slots(PlanField::memory_slots, *request.memory_slots, 0,
                          detail::kMostMemorySlots, name());
    detail::require_slots(PlanField::host_slots, *request.host_slots, 0, detail::kMostMemorySlots,
                          name());
    detail::require_slots(PlanField::disk_slots, *request.disk_slots, 0, detail::kMostDiskSlots,
                          name());
    if (*request.memory_slots + *request.host_slots < 1)
      detail::refuse(PlanField::memory_slots, " = 0 with no host slots either (",
                     *request.disk_slots,
                     " on disk): the three-level schedule needs a device or host slot for the "
                     "state being replayed");
    if (request.all_on_disk)
      detail::refuse(PlanField::all_on_disk,
                     " does not apply to the three-level schedule: it places its own disk "
                     "snapshots");
    detail::require_valid_costs(request.costs);
  }

  // No closed form: the counts are simulated (needs_simulation), these are bounds.
  void closed_forms(const PlanRequest& request, CheckpointPlan& plan) const override {
    plan.snapshots = *request.memory_slots + *request.host_slots + *request.disk_slots;
    plan.costs = request.costs;
    plan.peak_slots = std::min(plan.snapshots, plan.steps);
    plan.peak_exact = false;
    plan.advances = plan.steps - 1;  // a lower bound until simulated
  }
  std::unique_ptr<Schedule> schedule(const PlanRequest& request,
                                     const CheckpointPlan& plan) const override {
    return std::make_unique<ThreeLevelSchedule>(plan.steps, static_cast<int>(*request.memory_slots),
                                                static_cast<int>(*request.host_slots),
                                                static_cast<int>(*request.disk_slots), plan.costs);
  }
  bool needs_simulation() const override { return true; }
  // Device, host, disk, whatever the split (empty levels kept).
  std::vector<StorageLevel> levels(const Schedule& schedule) const override {
    const Index memory = schedule.memory_slots();
    const Index host = schedule.host_slots();
    return {detail::make_level(LevelKind::memory, "device", 0, memory - host),
            detail::make_level(LevelKind::host, "host", memory - host, host),
            detail::make_level(LevelKind::disk, "disk", memory, schedule.slots() - memory)};
  }
  std::string fastest_level_name() const override { return "device"; }
  // Every level's copies, measured together; the disk's whenever there is a disk level (a cost
  // given for it then overrides the measured one, which the report keeps beside it).
  CostNeeds costs_to_measure(const PlanRequest& request,
                             const GivenCosts& /*given*/) const override {
    CostNeeds needs;
    needs.memory_copies = needs.host_copies = true;
    needs.disk = request.disk_slots.value_or(0) > 0;
    return needs;
  }

  std::vector<PlanFact> facts(const CheckpointPlan& plan) const override {
    return {{"device_snapshots", plan.slots_on(LevelKind::memory)},
            {"host_snapshots", plan.slots_on(LevelKind::host)},
            {"three_level_disk_snapshots", plan.slots_on(LevelKind::disk)}};
  }
};

}  // namespace

const ScheduleFamily& three_level_family() {
  static const ThreeLevelFamily family;
  return family;
}

}  // namespace rwd
