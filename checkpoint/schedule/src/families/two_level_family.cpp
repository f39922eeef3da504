// checkpoint/schedule/src/families/two_level_family.cpp — two storage levels as a schedule
// family: K snapshots in memory and D on disk, placed to minimise the predicted time under the
// disk's write and read costs (rwd::MultiLevelSchedule).
#include <algorithm>
#include <memory>
#include <string>

#include "../plan_request_rules.hpp"
#include "rewind/schedule/builtin_schedule_families.hpp"
#include "rewind/schedule/multilevel_schedule.hpp"
#include "rewind/schedule/schedule_family.hpp"

namespace rwd {
namespace {

std::string count_or_unknown(std::optional<Index> count) {
  return count ? std::to_string(*count) : std::string("?");
}

class TwoLevelFamily final : public ScheduleFamily {
 public:
  std::string name() const override { return "two-level"; }
  std::vector<std::string> aliases() const override { return {"multilevel", "multi-level"}; }
  std::string description() const override {
    return "K snapshots in memory and D on disk, placed under the disk's costs";
  }
  std::vector<PlanField> fields() const override {
    return {PlanField::memory_slots, PlanField::disk_slots};
  }
  void validate(const PlanRequest& request) const override {
    if (!request.memory_slots || !request.disk_slots)
      detail::refuse(request.memory_slots ? PlanField::disk_slots : PlanField::memory_slots,
                     " is missing: the two-level schedule needs memory and disk slot counts");
    detail::require_slots(PlanField::memory_slots, *request.memory_slots, 1,
                          detail::kMostMemorySlots, name());
    detail::require_slots(PlanField::disk_slots, *request.disk_slots, 0, detail::kMostDiskSlots,
                          name());
    detail::require_valid_costs(request.costs);
  }

  // No closed form: the counts are simulated (needs_simulation), these are bounds.
  void closed_forms(const PlanRequest& request, CheckpointPlan& plan) const override {
    plan.snapshots = *request.memory_slots + *request.disk_slots;
    plan.costs = request.costs;
    plan.peak_slots = std::min(plan.snapshots, plan.steps);
    plan.peak_exact = false;
    plan.advances = plan.steps - 1;  // a lower bound until simulated
  }
  std::unique_ptr<Schedule> schedule(const PlanRequest& request,
                                     const CheckpointPlan& plan) const override {
    return std::make_unique<MultiLevelSchedule>(plan.steps, static_cast<int>(*request.memory_slots),
                                                static_cast<int>(*request.disk_slots), plan.costs);
  }
  bool needs_simulation() const override { return true; }
  // Memory then disk, whatever the split (D = 0 keeps an empty disk level).
  std::vector<StorageLevel> levels(const Schedule& schedule) const override {
    const Index memory = schedule.memory_slots();
    return {detail::make_level(LevelKind::memory, "memory", 0, memory),
            detail::make_level(LevelKind::disk, "disk", memory, schedule.slots() - memory)};
  }
  // The disk's write and read, unless both are given.
  CostNeeds costs_to_measure(const PlanRequest& /*request*/,
                             const GivenCosts& given) const override {
    CostNeeds needs;
    needs.disk = !given.disk_write || !given.disk_read;
    return needs;
  }
  std::optional<PlanRequest> with_disk_slots(const CheckpointPlan& plan,
                                             Index disk_slots) const override {
    return PlanRequest::two_level(plan.slots_on(LevelKind::memory), disk_slots, plan.costs);
  }

  std::vector<PlanFact> facts(const CheckpointPlan& plan) const override {
    return {{"memory_snapshots", plan.slots_on(LevelKind::memory)},
            {"disk_snapshots", plan.slots_on(LevelKind::disk)}};
  }
  std::vector<PlanLine> disk_lines(const CheckpointPlan& plan) const override {
    return {{"memory / disk snapshots", std::to_string(plan.slots_on(LevelKind::memory)) + " / " +
                                            std::to_string(plan.slots_on(LevelKind::disk))}};
  }
  std::string run_note(const CheckpointPlan& plan) const override {
    return "two-level: " + std::to_string(plan.slots_on(LevelKind::memory)) + " in memory, " +
           std::to_string(plan.slots_on(LevelKind::disk)) + " on disk; a disk write costs " +
           detail::format_number("%.3g", plan.costs.disk_write_time) + " steps, a read " +
           detail::format_number("%.3g", plan.costs.disk_read_time) + " steps; " +
           count_or_unknown(plan.stores_on(LevelKind::disk)) + " disk writes, " +
           count_or_unknown(plan.restores_on(LevelKind::disk)) + " disk reads planned";
  }
};

}  // namespace

const ScheduleFamily& two_level_family() {
  static const TwoLevelFamily family;
  return family;
}

}  // namespace rwd
