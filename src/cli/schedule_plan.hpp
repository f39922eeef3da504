// src/cli/schedule_plan.hpp — the command line's words for checkpointing plans: schedule names
// as typed (--schedule) and the default adjoint cost of predictions. Planning itself is the
// schedule part's (rwd::plan_checkpoints, rewind/schedule/checkpoint_plan.hpp).
//
// Header-only and free of CLI11/JSON, so tests/cli/cli_test.cpp can use it with rewind alone.
#pragma once

#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "rewind/error.hpp"
#include "rewind/schedule/checkpoint_plan.hpp"
#include "rewind/schedule/revolve_schedule.hpp"
#include "rewind/schedule/stage_aware_schedule.hpp"
#include "rewind/schedule/store_all_schedule.hpp"
#include "rewind/schedule/store_all_stages_schedule.hpp"
#include "rewind/warning.hpp"

namespace rwd::cli {

using rwd::CheckpointPlan;
using rwd::kCarryBytes;
using rwd::PlanRequest;
using rwd::schedule_kind_name;
using rwd::ScheduleKind;

// --adjoint-cost when not given: the adjoint part of a reverse step, in forward steps.
inline constexpr double kDefaultAdjointCost = 1.5;

// A count of a plan, or "?" when the plan does not know it (closed forms).
inline std::string count_or_unknown(std::optional<Index> count) {
  return count ? std::to_string(*count) : std::string("?");
}

// "revolve", "uniform", "store-all" (also "store_all", "storeall"); InvalidArgument otherwise.
inline ScheduleKind parse_schedule_kind(std::string_view text) {
  std::string key(text);
  for (char& c : key)
    c = (c == '_') ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (key == "revolve" || key == "binomial") return ScheduleKind::revolve;
  if (key == "uniform") return ScheduleKind::uniform;
  if (key == "store-all" || key == "storeall") return ScheduleKind::store_all;
  if (key == "two-level" || key == "multilevel" || key == "multi-level")
    return ScheduleKind::two_level;
  rwd::detail::fail<InvalidArgument>(
      "--schedule = '", text,
      "' is not a schedule; choose revolve, uniform, store-all or two-level");
}

// The rules of the checkpointing flags that do not depend on l, with the flags named: the
// command line checks them before the library's own PlanRequest::validate can see the request.
// budget_from_memory: the budget will come from --memory once the state size is known.
inline void validate_schedule_flags(const PlanRequest& request, bool budget_from_memory) {
  const bool has_budget = request.budget.has_value() || budget_from_memory;
  if (request.budget && *request.budget < 1)
    rwd::detail::fail<InvalidArgument>("--snapshots = ", *request.budget, " must be >= 1");
  if (request.interval && request.kind != ScheduleKind::uniform)
    rwd::detail::fail<InvalidArgument>("--interval applies only with --schedule uniform");
  if (request.interval && *request.interval < 1)
    rwd::detail::fail<InvalidArgument>("--interval = ", *request.interval, " must be >= 1");
  if (request.kind == ScheduleKind::two_level) {
    if (!request.memory_slots || !request.disk_slots)
      rwd::detail::fail<InvalidArgument>(
          "the two-level schedule needs --ram-snapshots K and --disk-snapshots D");
    if (*request.memory_slots < 1 || *request.memory_slots > (1 << 20))
      rwd::detail::fail<InvalidArgument>("--ram-snapshots = ", *request.memory_slots,
                                         " must lie in [1, 1048576]");
    if (*request.disk_slots < 0 || *request.disk_slots > (1 << 24))
      rwd::detail::fail<InvalidArgument>("--disk-snapshots = ", *request.disk_slots,
                                         " must lie in [0, 16777216]");
    if (request.budget)
      rwd::detail::fail<InvalidArgument>(
          "--snapshots and --ram-snapshots/--disk-snapshots exclude each other");
    return;
  }
  if (request.kind == ScheduleKind::three_level) {
    // Counts from --device-snapshots, --host-snapshots and --disk-snapshots.
    const Index limits[3] = {1 << 20, 1 << 20, 1 << 24};
    const char* flags[3] = {"--device-snapshots", "--host-snapshots", "--disk-snapshots"};
    const Index counts[3] = {request.memory_slots.value_or(0), request.host_slots.value_or(0),
                             request.disk_slots.value_or(0)};
    for (int i = 0; i < 3; ++i)
      if (counts[i] < 0 || counts[i] > limits[i])
        rwd::detail::fail<InvalidArgument>(flags[i], " = ", counts[i], " must lie in [0, ",
                                           limits[i], "]");
    return;
  }
  if (request.memory_slots || request.disk_slots)
    rwd::detail::fail<InvalidArgument>(
        "--ram-snapshots/--disk-snapshots select the two-level schedule, not ",
        schedule_kind_name(request.kind));
  if (request.kind == ScheduleKind::revolve && !has_budget)
    rwd::detail::fail<InvalidArgument>(
        "--schedule revolve needs a snapshot budget: --snapshots C or --memory BYTES");
  if (request.kind == ScheduleKind::uniform && !has_budget && !request.interval)
    rwd::detail::fail<InvalidArgument>(
        "--schedule uniform needs --interval K, or a budget (--snapshots C or --memory BYTES) "
        "to choose K from");
}

// --stage-aware: for l steps and a budget of `units` state-sized slots (from --snapshots, or
// --memory over the bytes of one state and its carry: a stage vector takes the same slot), the
// plan of least predicted time among revolve(c), stage-aware(c, u) (when its tables are within
// their limits: rwd::stage_aware_plannable), store-all (c >= l) and store-all-stages (c >= l·u), u
// = the method's stages. The predicted time (CheckpointPlan::predicted_time_ratio) counts steps
// and, at costs.write_time / read_time steps each, every snapshot copy into and out of memory — a
// stage snapshot is one (its state; CostModel::stage_values_copied). rewind run measures those
// costs for its problem before planning; with none given (0) copies are free and the plan with the
// fewest evaluations wins.
inline CheckpointPlan choose_stage_plan(Index steps, Index units, int stage_units,
                                        const rwd::CostModel& costs) {
  if (units < 1) rwd::detail::fail<InvalidArgument>("a budget of ", units, " snapshots");
  if (stage_units < 1)
    rwd::detail::fail<InvalidArgument>("--stage-aware: the method has ", stage_units, " stages");
  costs.validate();
  const double adjoint_cost = costs.adjoint_cost_factor;
  const int c = static_cast<int>(std::min<Index>(units, 1 << 30));
  CheckpointPlan best =
      CheckpointPlan::of(std::make_unique<rwd::RevolveSchedule>(steps, c), ScheduleKind::revolve);
  best.budget = units;
  best.costs = costs;
  // Later candidates win ties: store-all-stages (O(1) schedule memory) over a stage-aware plan
  // that reaches the same count.
  const auto consider = [&](std::unique_ptr<rwd::Schedule> schedule, ScheduleKind kind) {
    CheckpointPlan plan = CheckpointPlan::of(std::move(schedule), kind);
    plan.budget = units;
    plan.costs = costs;
    if (plan.predicted_time_ratio(adjoint_cost) <= best.predicted_time_ratio(adjoint_cost))
      best = std::move(plan);
  };
  if (rwd::stage_aware_plannable(steps, c, stage_units)) {
    consider(std::make_unique<rwd::StageAwareSchedule>(steps, c, stage_units),
             ScheduleKind::custom);
  } else {
    try {  // refused before any table is filled: its message says which limit
      rwd::StageAwareSchedule refused(steps, c, stage_units);
    } catch (const InvalidArgument& e) {
      rwd::warn("--stage-aware", "no stage-aware plan (", e.what(),
                "): the least predicted time of the others");
    }
  }
  if (units >= steps)
    consider(std::make_unique<rwd::StoreAllSchedule>(steps), ScheduleKind::store_all);
  if (units / stage_units >= steps)
    consider(std::make_unique<rwd::StoreAllStagesSchedule>(steps, stage_units),
             ScheduleKind::custom);
  return best;
}

}  // namespace rwd::cli
