// src/cli/schedule_plan.hpp — the command line's words for checkpointing plans: schedule names
// as typed (--schedule), the flag of each field of a plan request, and the default adjoint cost
// of predictions. Planning and its rules are the schedule part's (rwd::plan_checkpoints and
// PlanRequest::validate, rewind/schedule/checkpoint_plan.hpp; rwd::choose_stage_plan,
// rewind/schedule/stage_plan_chooser.hpp).
//
// Header-only and free of CLI11/JSON, so tests/cli/cli_test.cpp can use it with rewind alone.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "rewind/error.hpp"
#include "rewind/schedule/checkpoint_plan.hpp"
#include "rewind/schedule/invalid_plan_request.hpp"
#include "rewind/schedule/schedule_registry.hpp"
#include "rewind/schedule/stage_plan_chooser.hpp"

namespace rwd::cli {

using rwd::CheckpointPlan;
using rwd::choose_stage_plan;
using rwd::InvalidPlanRequest;
using rwd::kCarryBytes;
using rwd::PlanField;
using rwd::PlanRequest;
using rwd::ScheduleFamily;

// --adjoint-cost when not given: the adjoint part of a reverse step, in forward steps.
inline constexpr double kDefaultAdjointCost = 1.5;

// A count of a plan, or "?" when the plan does not know it (closed forms).
inline std::string count_or_unknown(std::optional<Index> count) {
  return count ? std::to_string(*count) : std::string("?");
}

// The registered schedule family named `text` (rwd::find_schedule_family: any case, '_' as
// '-', aliases such as "binomial"); otherwise InvalidArgument "--schedule = 'x' is not a
// schedule; did you mean …? (registered: …)" (the nearest name only when one is near).
inline const ScheduleFamily& parse_schedule_family(std::string_view text) {
  try {
    return rwd::find_schedule_family(text);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(std::string("--schedule = ") + e.what());
  }
}

// The flag that sets `field` of `request` (rwd::PlanField), with its value's name when the field
// is missing ("--ram-snapshots K"); "" for a field no one flag sets (the costs).
// budget_from_memory: the budget will come from --memory.
inline std::string flag_of(PlanField field, const PlanRequest& request, bool budget_from_memory) {
  switch (field) {
    case PlanField::family:
      return "--schedule";
    case PlanField::budget:
      if (budget_from_memory) return "--memory";
      return request.budget ? "--snapshots" : "--snapshots C (or --memory BYTES)";
    case PlanField::interval:
      return "--interval";
    case PlanField::memory_slots:
      // The fastest level's slots, under the flag named after that level.
      if (request.family->fastest_level_name() == "device") return "--device-snapshots";
      return request.memory_slots ? "--ram-snapshots" : "--ram-snapshots K";
    case PlanField::disk_slots:
      return request.disk_slots ? "--disk-snapshots" : "--disk-snapshots D";
    case PlanField::host_slots:
      return "--host-snapshots";
    case PlanField::all_on_disk:
      return "--disk";
    case PlanField::costs:
      break;
  }
  return "";
}

// The rules of the checkpointing flags that do not depend on l: the library's
// (PlanRequest::validate), with the flag named where the library names a field — "--snapshots =
// 0 must be >= 1" for "budget = 0 must be >= 1". budget_from_memory: the budget will come from
// --memory once the state size is known; until then it counts as one snapshot (the least
// rwd::snapshots_in_memory gives), and the run checks the request again with the count.
inline void validate_plan_request_flags(const PlanRequest& request, bool budget_from_memory) {
  PlanRequest checked = request;
  if (budget_from_memory && !checked.budget) checked.budget = 1;
  try {
    checked.validate();
  } catch (const InvalidPlanRequest& e) {
    const std::string flag = flag_of(e.field(), request, budget_from_memory);
    if (flag.empty()) throw;
    throw InvalidArgument(flag + e.rule());
  }
}

}  // namespace rwd::cli
