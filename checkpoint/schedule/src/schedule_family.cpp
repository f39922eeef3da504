// checkpoint/schedule/src/schedule_family.cpp — see rewind/schedule/schedule_family.hpp: what a
// family does when it does not say otherwise.
#include "rewind/schedule/schedule_family.hpp"

#include <cstdio>

namespace rwd {

void ScheduleFamily::validate(const PlanRequest& /*request*/) const {}

std::vector<StorageLevel> ScheduleFamily::levels(const Schedule& schedule) const {
  const Index slots = schedule.slots();
  const Index memory = schedule.memory_slots();  // where the disk level begins
  const Index host = schedule.host_slots();
  if (host > 0)
    return {detail::make_level(LevelKind::memory, "device", 0, memory - host),
            detail::make_level(LevelKind::host, "host", memory - host, host),
            detail::make_level(LevelKind::disk, "disk", memory, slots - memory)};
  if (memory > 0 && memory < slots)
    return {detail::make_level(LevelKind::memory, fastest_level_name(), 0, memory),
            detail::make_level(LevelKind::disk, "disk", memory, slots - memory)};
  if (memory == 0) return {detail::make_level(LevelKind::disk, "disk", 0, slots)};
  return {detail::make_level(LevelKind::memory, fastest_level_name(), 0, slots)};
}

CostNeeds ScheduleFamily::costs_to_measure(const PlanRequest& /*request*/,
                                           const GivenCosts& /*given*/) const {
  return {};
}

std::optional<Index> ScheduleFamily::binomial_budget(const PlanRequest& /*request*/) const {
  return std::nullopt;
}

std::optional<PlanRequest> ScheduleFamily::with_disk_slots(const CheckpointPlan& /*plan*/,
                                                           Index /*disk_slots*/) const {
  return std::nullopt;
}

std::vector<PlanFact> ScheduleFamily::facts(const CheckpointPlan& /*plan*/) const {
  return {};
}

std::vector<PlanLine> ScheduleFamily::plan_lines(const CheckpointPlan& /*plan*/) const {
  return {};
}

std::vector<PlanLine> ScheduleFamily::disk_lines(const CheckpointPlan& /*plan*/) const {
  return {};
}

std::string ScheduleFamily::run_note(const CheckpointPlan& /*plan*/) const {
  return "";
}

std::optional<Index> plan_fact(const CheckpointPlan& plan, const std::string& key) {
  for (const PlanFact& fact : plan.family->facts(plan))
    if (fact.key == key) return fact.value;
  return std::nullopt;
}

namespace detail {

StorageLevel make_level(LevelKind kind, const std::string& name, Index first_slot, Index slots) {
  StorageLevel level;
  level.kind = kind;
  level.name = name;
  level.first_slot = first_slot;
  level.slots = slots;
  return level;
}

std::string format_number(const char* spec, double value) {
  char text[64];
  std::snprintf(text, sizeof text, spec, value);
  return text;
}

}  // namespace detail
}  // namespace rwd
