// checkpoint/schedule/src/plan_request_rules.hpp — the pieces PlanRequest::validate and the
// families' own rules share: a refusal naming the field, a slot count's range, a valid cost model.
// Private to the schedule part.
#pragma once

#include <sstream>
#include <string>
#include <utility>

#include "rewind/error.hpp"
#include "rewind/schedule/invalid_plan_request.hpp"
#include "rewind/schedule/schedule_simulator.hpp"
#include "rewind/types.hpp"

namespace rwd::detail {

// The most slots of a memory level (device, host, memory) and of the disk level.
inline constexpr Index kMostMemorySlots = Index{1} << 20;
inline constexpr Index kMostDiskSlots = Index{1} << 24;

// Throws InvalidPlanRequest(field, the streamed parts): the parts follow the field's name.
template <class... Parts>
[[noreturn]] void refuse(PlanField field, Parts&&... parts) {
  std::ostringstream rule;
  rule.precision(17);
  (rule << ... << std::forward<Parts>(parts));
  throw InvalidPlanRequest(field, rule.str());
}

// A slot count in [least, most], for the schedule named `schedule`.
inline void require_slots(PlanField field, Index count, Index least, Index most,
                          const std::string& schedule) {
  if (count < least || count > most)
    refuse(field, " = ", count, " must lie in [", least, ", ", most, "] for the ", schedule,
           " schedule");
}

// The cost model's own check (CostModel::validate), as a refusal of the costs field.
inline void require_valid_costs(const CostModel& costs) {
  try {
    costs.validate();
  } catch (const InvalidArgument& e) {
    refuse(PlanField::costs, ": ", e.what());
  }
}

}  // namespace rwd::detail
