// checkpoint/schedule/src/checkpoint_plan.cpp — see rewind/schedule/checkpoint_plan.hpp.
#include "rewind/schedule/checkpoint_plan.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plan_request_rules.hpp"
#include "rewind/error.hpp"
#include "rewind/format.hpp"
#include "rewind/schedule/disk_only_schedule.hpp"
#include "rewind/schedule/revolve_cost.hpp"
#include "rewind/schedule/schedule_family.hpp"
#include "rewind/schedule/schedule_registry.hpp"

namespace rwd {

PlanRequest PlanRequest::revolve(Index snapshots) {
  PlanRequest request;
  request.family = &revolve_family();
  request.budget = snapshots;
  return request;
}
PlanRequest PlanRequest::uniform(Index interval) {
  PlanRequest request;
  request.family = &uniform_family();
  request.interval = interval;
  return request;
}
PlanRequest PlanRequest::store_all() {
  PlanRequest request;
  request.family = &store_all_family();
  return request;
}
PlanRequest PlanRequest::two_level(Index memory_snapshots, Index disk_snapshots,
                                   const CostModel& costs) {
  PlanRequest request;
  request.family = &two_level_family();
  request.memory_slots = memory_snapshots;
  request.disk_slots = disk_snapshots;
  request.costs = costs;
  return request;
}
PlanRequest PlanRequest::three_level(Index device_snapshots, Index host_snapshots,
                                     Index disk_snapshots, const CostModel& costs) {
  PlanRequest request;
  request.family = &three_level_family();
  request.memory_slots = device_snapshots;
  request.host_slots = host_snapshots;
  request.disk_slots = disk_snapshots;
  request.costs = costs;
  return request;
}

const char* plan_field_name(PlanField field) {
  switch (field) {
    case PlanField::family:
      return "family";
    case PlanField::budget:
      return "budget";
    case PlanField::interval:
      return "interval";
    case PlanField::memory_slots:
      return "memory_slots";
    case PlanField::disk_slots:
      return "disk_slots";
    case PlanField::host_slots:
      return "host_slots";
    case PlanField::costs:
      return "costs";
    case PlanField::all_on_disk:
      return "all_on_disk";
  }
  return "?";
}

namespace {

// The registered families that take `field`, as "a, b or c" ("uniform"); "no schedule" if none.
std::string families_taking(PlanField field) {
  std::vector<std::string> names;
  for (const ScheduleFamily* family : schedule_families()) {
    const std::vector<PlanField> fields = family->fields();
    if (std::find(fields.begin(), fields.end(), field) != fields.end())
      names.push_back(family->name());
  }
  if (names.empty()) return "no schedule";
  std::string text = names.front();
  for (std::size_t i = 1; i < names.size(); ++i)
    text += (i + 1 == names.size() ? " or " : ", ") + names[i];
  return text;
}

// A field given that `family` does not take.
void refuse_foreign_fields(const PlanRequest& request, const ScheduleFamily& family) {
  const std::vector<PlanField> takes = family.fields();
  const std::pair<PlanField, bool> given[] = {
      {PlanField::budget, request.budget.has_value()},
      {PlanField::interval, request.interval.has_value()},
      {PlanField::memory_slots, request.memory_slots.has_value()},
      {PlanField::disk_slots, request.disk_slots.has_value()},
      {PlanField::host_slots, request.host_slots.has_value()}};
  for (const auto& [field, present] : given)
    if (present && std::find(takes.begin(), takes.end(), field) == takes.end())
      detail::refuse(field, " does not apply to the ", family.name(), " schedule (it applies to ",
                     families_taking(field), ")");
}

}  // namespace

void PlanRequest::validate() const {
  if (!family) detail::refuse(PlanField::family, " is missing: a request needs a schedule family");
  if (const std::optional<std::string> why = family->not_planned_from_requests())
    detail::refuse(PlanField::family, " = ", family->name(), " ", *why);
  if (budget && *budget < 1) detail::refuse(PlanField::budget, " = ", *budget, " must be >= 1");
  if (budget && *budget > std::numeric_limits<int>::max())
    detail::refuse(PlanField::budget, " = ", *budget,
                   " must be <= ", std::numeric_limits<int>::max());
  if (interval && *interval < 1)
    detail::refuse(PlanField::interval, " = ", *interval, " must be >= 1");
  refuse_foreign_fields(*this, *family);
  family->validate(*this);
  if (all_on_disk) detail::require_valid_costs(costs);
}

double CheckpointPlan::recompute_ratio() const {
  return static_cast<double>(forward_steps()) / static_cast<double>(steps);
}

const StorageLevel* CheckpointPlan::level(LevelKind kind) const {
  for (const StorageLevel& level : levels)
    if (level.kind == kind) return &level;
  return nullptr;
}

Index CheckpointPlan::slots_on(LevelKind kind) const {
  const StorageLevel* found = level(kind);
  return found ? found->slots : 0;
}

Index CheckpointPlan::slots_used_on(LevelKind kind) const {
  const StorageLevel* found = level(kind);
  return found ? found->slots_used : 0;
}

std::optional<Index> CheckpointPlan::stores_on(LevelKind kind) const {
  const StorageLevel* found = level(kind);
  if (found) return found->stores;
  return simulated ? std::optional<Index>(0) : std::nullopt;
}

std::optional<Index> CheckpointPlan::restores_on(LevelKind kind) const {
  const StorageLevel* found = level(kind);
  if (found) return found->restores;
  return simulated ? std::optional<Index>(0) : std::nullopt;
}

Index CheckpointPlan::peak_slots_on(LevelKind kind) const {
  const StorageLevel* found = level(kind);
  return found ? found->peak_slots.value_or(0) : 0;
}

double CheckpointPlan::write_cost(const StorageLevel& level) const {
  switch (level.kind) {
    case LevelKind::memory:
      return costs.write_time;
    case LevelKind::host:
      return costs.host_write_time;
    case LevelKind::disk:
      return costs.disk_write_time;
  }
  return 0.0;
}

double CheckpointPlan::read_cost(const StorageLevel& level) const {
  switch (level.kind) {
    case LevelKind::memory:
      return costs.read_time;
    case LevelKind::host:
      return costs.host_read_time;
    case LevelKind::disk:
      return costs.disk_read_time;
  }
  return 0.0;
}

double CheckpointPlan::predicted_time_ratio(double adjoint_cost) const {
  ScheduleCost cost;
  cost.steps = steps;
  cost.advances = advances;
  cost.reverses = reverses;
  cost.stores = stores.value_or(0);
  cost.restores = restores;
  cost.disk_stores = stores_on(LevelKind::disk).value_or(0);
  cost.disk_restores = restores_on(LevelKind::disk).value_or(0);
  cost.host_stores = stores_on(LevelKind::host).value_or(0);
  cost.host_restores = restores_on(LevelKind::host).value_or(0);
  cost.stage_units = stage_units;
  cost.stage_stores = stage_stores;
  cost.stage_reverses = stage_reverses;
  CostModel model = costs;
  model.step_time = 1.0;
  model.adjoint_cost_factor = adjoint_cost;
  return rwd::predicted_time_ratio(cost, model);
}

std::unique_ptr<Schedule> CheckpointPlan::schedule() const {
  if (!prototype_) detail::fail<InvalidArgument>("an empty CheckpointPlan has no schedule");
  return prototype_->clone();
}

namespace {

// Each level's counts from the simulation `cost`: the simulator counts the host and disk levels
// apart; the fastest level has the rest.
void take_level_counts(std::vector<StorageLevel>& levels, const ScheduleCost& cost) {
  for (StorageLevel& level : levels) {
    switch (level.kind) {
      case LevelKind::disk:
        level.slots_used = cost.disk_slots_used;
        level.stores = cost.disk_stores;
        level.restores = cost.disk_restores;
        level.peak_slots = cost.peak_disk_slots;
        break;
      case LevelKind::host:
        level.slots_used = cost.host_slots_used;
        level.stores = cost.host_stores;
        level.restores = cost.host_restores;
        level.peak_slots = cost.peak_host_slots;
        break;
      case LevelKind::memory:
        level.slots_used = cost.memory_slots_used;
        level.stores = cost.stores - cost.disk_stores - cost.host_stores;
        level.restores = cost.restores - cost.disk_restores - cost.host_restores;
        if (levels.size() == 1) level.peak_slots = cost.peak_slots;
        break;
    }
  }
}

}  // namespace

void detail::take_simulation(CheckpointPlan& plan, const Schedule& prototype) {
  std::unique_ptr<Schedule> run = prototype.clone();
  const auto start = std::chrono::steady_clock::now();
  const ScheduleCost cost = simulate(*run);
  plan.simulate_seconds = seconds_since(start);
  plan.simulated = true;
  plan.actions = cost.actions;
  plan.advances = cost.advances;
  plan.stores = cost.stores;
  plan.restores = cost.restores;
  plan.reverses = cost.reverses;
  plan.peak_slots = cost.peak_slots;
  plan.stage_units = cost.stage_units;
  plan.stage_stores = cost.stage_stores;
  plan.stage_reverses = cost.stage_reverses;
  plan.peak_exact = true;
  take_level_counts(plan.levels, cost);
}

namespace {

// The counts of a plan too large to simulate: every slot of a level's budget may be used; a
// single level has every store and restore, a level among several unknown counts.
void take_closed_forms(CheckpointPlan& plan) {
  for (StorageLevel& level : plan.levels) {
    level.slots_used = std::min(level.slots, plan.steps);
    if (plan.levels.size() == 1) {
      level.stores = plan.stores;
      level.restores = plan.restores;
    }
  }
}

}  // namespace

CheckpointPlan CheckpointPlan::of(std::unique_ptr<Schedule> schedule,
                                  const ScheduleFamily& family) {
  if (!schedule) detail::fail<InvalidArgument>("CheckpointPlan::of needs a schedule");
  schedule->reset();
  CheckpointPlan plan;
  plan.family = &family;
  plan.name = schedule->name();
  plan.steps = schedule->steps();
  plan.snapshots = schedule->slots();
  plan.reverses = plan.steps;
  plan.levels = family.levels(*schedule);
  detail::take_simulation(plan, *schedule);
  plan.prototype_ = std::move(schedule);
  return plan;
}

CheckpointPlan plan_checkpoints(const PlanRequest& request, Index steps) {
  request.validate();
  if (steps < 1) detail::fail<InvalidArgument>("steps = ", steps, " must be >= 1");
  const ScheduleFamily& family = *request.family;
  CheckpointPlan plan;
  plan.family = &family;
  plan.steps = steps;
  plan.budget = request.budget;
  plan.reverses = steps;
  plan.restores = steps - 1;
  family.closed_forms(request, plan);
  if (plan.advances > std::numeric_limits<Index>::max() - steps)
    detail::fail<InvalidArgument>("l + p does not fit in 64 bits for l = ", steps);
  if (family.needs_simulation() && steps > kSimulateMaxSteps)
    detail::fail<InvalidArgument>("the ", family.name(), " schedule is simulated to cost it; ",
                                  steps, " steps is more than the ", kSimulateMaxSteps,
                                  " it simulates");
  std::unique_ptr<Schedule> schedule = family.schedule(request, plan);
  if (!schedule)
    detail::fail<InvalidArgument>("the ", family.name(), " family made no schedule of ", steps,
                                  " steps");

  if (request.all_on_disk) {
    plan.costs = request.costs;
    schedule = std::make_unique<DiskOnlySchedule>(std::move(schedule));
  }
  plan.name = schedule->name();
  plan.levels = family.levels(*schedule);

  const bool small =
      steps <= kSimulateMaxSteps && std::min(plan.snapshots, steps) <= kSimulateMaxSlots;
  if (small)
    detail::take_simulation(plan, *schedule);
  else
    take_closed_forms(plan);
  plan.prototype_ = std::move(schedule);
  return plan;
}

Index snapshots_in_memory(std::int64_t budget_bytes, Index snapshot_bytes, const char* what) {
  if (budget_bytes < snapshot_bytes)
    detail::fail<InvalidArgument>(what, " = ", budget_bytes, " bytes holds no snapshot: one takes ",
                                  snapshot_bytes, " bytes (state ", snapshot_bytes - kCarryBytes,
                                  " + carry ", kCarryBytes, ")");
  return snapshots_for_budget(budget_bytes, snapshot_bytes);
}

namespace detail {

Index uniform_slots(Index l, Index k) {
  const Index m = (l - 1) / k + 1;
  const Index last = l - (m - 1) * k;
  Index slots = m + std::max<Index>(last - 2, 0);
  if (m >= 2) slots = std::max(slots, m - 1 + std::max<Index>(k - 2, 0));
  return slots;
}

Index uniform_advances(Index l, Index k) {
  const Index m = (l - 1) / k + 1;
  return (m - 1) * std::min(k, l) + (l - m);
}

Index choose_uniform_interval(Index l, Index budget) {
  if (budget >= std::max<Index>(l - 1, 1)) return l;  // one segment: l − 1 advances, the least
  // slots >= m >= l / k and slots >= k − 2 (m >= 2): only k in [⌈l / c⌉, c + 2] can fit.
  const Index lo = std::max<Index>(1, (l + budget - 1) / budget);
  const Index hi = std::min<Index>(l, budget + 2);
  constexpr Index kMaxCandidates = 2'000'000;
  const Index stride = hi >= lo ? std::max<Index>(1, (hi - lo) / kMaxCandidates) : 1;
  Index best = -1, best_advances = 0, best_slots = 0;
  auto consider = [&](Index k) {
    const Index slots = uniform_slots(l, k);
    if (slots > budget) return;
    const Index advances = uniform_advances(l, k);
    if (best < 0 || advances < best_advances || (advances == best_advances && slots < best_slots)) {
      best = k;
      best_advances = advances;
      best_slots = slots;
    }
  };
  for (Index k = lo; k <= hi; k += stride) consider(k);
  if (hi >= lo) consider(hi);
  if (best > 0) return best;
  // The fewest slots any interval needs is near k = sqrt(l): say how many.
  Index least = l, least_k = l;
  const auto root = static_cast<Index>(std::sqrt(static_cast<double>(l)));
  for (Index k = std::max<Index>(1, root - 3); k <= std::min(l, root + 3); ++k)
    if (uniform_slots(l, k) < least) {
      least = uniform_slots(l, k);
      least_k = k;
    }
  fail<InvalidArgument>("uniform checkpointing of ", l, " steps needs at least ", least,
                        " snapshots (--interval ", least_k, "); the budget is ", budget,
                        " (revolve needs only 1)");
}

}  // namespace detail
}  // namespace rwd
