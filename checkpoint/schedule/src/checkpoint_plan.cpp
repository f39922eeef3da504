// checkpoint/schedule/src/checkpoint_plan.cpp — see rewind/schedule/checkpoint_plan.hpp.
#include "rewind/schedule/checkpoint_plan.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "rewind/error.hpp"
#include "rewind/format.hpp"
#include "rewind/schedule/disk_only_schedule.hpp"
#include "rewind/schedule/multilevel_schedule.hpp"
#include "rewind/schedule/revolve_cost.hpp"
#include "rewind/schedule/revolve_schedule.hpp"
#include "rewind/schedule/store_all_schedule.hpp"
#include "rewind/schedule/three_level_schedule.hpp"
#include "rewind/schedule/uniform_schedule.hpp"

namespace rwd {

const char* schedule_kind_name(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::revolve:
      return "revolve";
    case ScheduleKind::uniform:
      return "uniform";
    case ScheduleKind::store_all:
      return "store-all";
    case ScheduleKind::two_level:
      return "two-level";
    case ScheduleKind::custom:
      return "custom";
    case ScheduleKind::online:
      return "online";
    case ScheduleKind::three_level:
      return "three-level";
  }
  return "?";
}

PlanRequest PlanRequest::revolve(Index snapshots) {
  PlanRequest request;
  request.kind = ScheduleKind::revolve;
  request.budget = snapshots;
  return request;
}
PlanRequest PlanRequest::uniform(Index interval) {
  PlanRequest request;
  request.kind = ScheduleKind::uniform;
  request.interval = interval;
  return request;
}
PlanRequest PlanRequest::store_all() {
  PlanRequest request;
  request.kind = ScheduleKind::store_all;
  return request;
}
PlanRequest PlanRequest::two_level(Index memory_snapshots, Index disk_snapshots,
                                   const CostModel& costs) {
  PlanRequest request;
  request.kind = ScheduleKind::two_level;
  request.memory_slots = memory_snapshots;
  request.disk_slots = disk_snapshots;
  request.costs = costs;
  return request;
}
PlanRequest PlanRequest::three_level(Index device_snapshots, Index host_snapshots,
                                     Index disk_snapshots, const CostModel& costs) {
  PlanRequest request;
  request.kind = ScheduleKind::three_level;
  request.memory_slots = device_snapshots;
  request.host_slots = host_snapshots;
  request.disk_slots = disk_snapshots;
  request.costs = costs;
  return request;
}

const char* plan_field_name(PlanField field) {
  switch (field) {
    case PlanField::kind:
      return "kind";
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

// Throws InvalidPlanRequest(field, the streamed parts): the parts follow the field's name.
template <class... Parts>
[[noreturn]] void refuse(PlanField field, Parts&&... parts) {
  std::ostringstream rule;
  rule.precision(17);
  (rule << ... << std::forward<Parts>(parts));
  throw InvalidPlanRequest(field, rule.str());
}

// A slot count in [least, most] (the levels' limits: memory levels 2^20, the disk 2^24).
void require_slots(PlanField field, Index count, Index least, Index most, const char* schedule) {
  if (count < least || count > most)
    refuse(field, " = ", count, " must lie in [", least, ", ", most, "] for the ", schedule,
           " schedule");
}

void require_valid_costs(const CostModel& costs) {
  try {
    costs.validate();
  } catch (const InvalidArgument& e) {
    refuse(PlanField::costs, ": ", e.what());
  }
}

}  // namespace

void PlanRequest::validate() const {
  if (kind == ScheduleKind::custom)
    refuse(PlanField::kind, " = custom is planned with CheckpointPlan::of, not from a request");
  if (kind == ScheduleKind::online)
    refuse(PlanField::kind,
           " = online needs no plan: a run of unknown length runs it (plan_online describes one "
           "that ended)");
  if (budget && *budget < 1) refuse(PlanField::budget, " = ", *budget, " must be >= 1");
  if (budget && *budget > std::numeric_limits<int>::max())
    refuse(PlanField::budget, " = ", *budget, " must be <= ", std::numeric_limits<int>::max());
  if (interval && kind != ScheduleKind::uniform)
    refuse(PlanField::interval, " applies only to the uniform schedule, not ",
           schedule_kind_name(kind));
  if (interval && *interval < 1) refuse(PlanField::interval, " = ", *interval, " must be >= 1");
  constexpr Index kMostMemorySlots = Index{1} << 20;
  constexpr Index kMostDiskSlots = Index{1} << 24;
  if (kind == ScheduleKind::three_level) {
    const PlanField counts[3] = {PlanField::memory_slots, PlanField::host_slots,
                                 PlanField::disk_slots};
    const std::optional<Index>* given[3] = {&memory_slots, &host_slots, &disk_slots};
    for (int i = 0; i < 3; ++i)
      if (!*given[i])
        refuse(counts[i],
               " is missing: the three-level schedule needs device (memory_slots), host and disk "
               "slot counts");
    require_slots(PlanField::memory_slots, *memory_slots, 0, kMostMemorySlots, "three-level");
    require_slots(PlanField::host_slots, *host_slots, 0, kMostMemorySlots, "three-level");
    require_slots(PlanField::disk_slots, *disk_slots, 0, kMostDiskSlots, "three-level");
    if (*memory_slots + *host_slots < 1)
      refuse(PlanField::memory_slots, " = 0 with no host slots either (", *disk_slots,
             " on disk): the three-level schedule needs a device or host slot for the state being "
             "replayed");
    if (budget)
      refuse(PlanField::budget,
             " does not apply to the three-level schedule: it takes device, host and disk slot "
             "counts");
    if (all_on_disk)
      refuse(PlanField::all_on_disk,
             " does not apply to the three-level schedule: it places its own disk snapshots");
    require_valid_costs(costs);
    return;
  }
  if (host_slots)
    refuse(PlanField::host_slots, " selects the three-level schedule, not ",
           schedule_kind_name(kind));
  if (kind == ScheduleKind::two_level) {
    if (!memory_slots || !disk_slots)
      refuse(memory_slots ? PlanField::disk_slots : PlanField::memory_slots,
             " is missing: the two-level schedule needs memory and disk slot counts");
    require_slots(PlanField::memory_slots, *memory_slots, 1, kMostMemorySlots, "two-level");
    require_slots(PlanField::disk_slots, *disk_slots, 0, kMostDiskSlots, "two-level");
    if (budget)
      refuse(PlanField::budget,
             " does not apply to the two-level schedule: it takes memory and disk slot counts");
    require_valid_costs(costs);
    return;
  }
  if (memory_slots || disk_slots)
    refuse(memory_slots ? PlanField::memory_slots : PlanField::disk_slots,
           " selects the two-level schedule, not ", schedule_kind_name(kind));
  if (kind == ScheduleKind::revolve && !budget)
    refuse(PlanField::budget, " is missing: revolve needs a snapshot budget");
  if (kind == ScheduleKind::uniform && !budget && !interval)
    refuse(PlanField::budget,
           " is missing: the uniform schedule needs an interval, or a budget to choose one from");
  if (all_on_disk) require_valid_costs(costs);
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

StorageLevel make_level(LevelKind kind, const char* name, Index first_slot, Index slots) {
  StorageLevel level;
  level.kind = kind;
  level.name = name;
  level.first_slot = first_slot;
  level.slots = slots;
  return level;
}

// The levels of `schedule`'s slot range, fastest first: device, host and disk for a three-level
// plan (a host level, or the kind asked for), memory and disk for a two-level one, else the one
// level every slot is on. No counts yet.
std::vector<StorageLevel> levels_of(const Schedule& schedule, ScheduleKind kind) {
  const Index slots = schedule.slots();
  const Index memory = schedule.memory_slots();  // where the disk level begins
  const Index host = schedule.host_slots();
  if (kind == ScheduleKind::three_level || host > 0)
    return {make_level(LevelKind::memory, "device", 0, memory - host),
            make_level(LevelKind::host, "host", memory - host, host),
            make_level(LevelKind::disk, "disk", memory, slots - memory)};
  if (kind == ScheduleKind::two_level || (memory > 0 && memory < slots))
    return {make_level(LevelKind::memory, "memory", 0, memory),
            make_level(LevelKind::disk, "disk", memory, slots - memory)};
  if (memory == 0) return {make_level(LevelKind::disk, "disk", 0, slots)};
  return {make_level(LevelKind::memory, "memory", 0, slots)};
}

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

// Fills the counts of `plan` from one simulation of its schedule.
void take_simulation(CheckpointPlan& plan, const Schedule& prototype) {
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

// The schedule of `plan` (its kind, steps and slots) for the level counts of `request`.
std::unique_ptr<Schedule> make_base_schedule(const CheckpointPlan& plan,
                                             const PlanRequest& request) {
  switch (plan.kind) {
    case ScheduleKind::two_level:
      return std::make_unique<MultiLevelSchedule>(
          plan.steps, static_cast<int>(*request.memory_slots),
          static_cast<int>(*request.disk_slots), plan.costs);
    case ScheduleKind::three_level:
      return std::make_unique<ThreeLevelSchedule>(
          plan.steps, static_cast<int>(*request.memory_slots),
          static_cast<int>(*request.host_slots), static_cast<int>(*request.disk_slots), plan.costs);
    case ScheduleKind::revolve:
      return std::make_unique<RevolveSchedule>(plan.steps, static_cast<int>(plan.snapshots));
    case ScheduleKind::uniform:
      return std::make_unique<UniformSchedule>(plan.steps, plan.interval);
    case ScheduleKind::store_all:
      return std::make_unique<StoreAllSchedule>(plan.steps);
    case ScheduleKind::custom:
    case ScheduleKind::online:
      break;
  }
  detail::fail<InvalidArgument>("internal error: no schedule for this plan kind");
}

}  // namespace

CheckpointPlan CheckpointPlan::of(std::unique_ptr<Schedule> schedule, ScheduleKind kind) {
  if (!schedule) detail::fail<InvalidArgument>("CheckpointPlan::of needs a schedule");
  schedule->reset();
  CheckpointPlan plan;
  plan.kind = kind;
  plan.name = schedule->name();
  plan.steps = schedule->steps();
  plan.snapshots = schedule->slots();
  plan.reverses = plan.steps;
  plan.levels = levels_of(*schedule, kind);
  take_simulation(plan, *schedule);
  plan.prototype_ = std::move(schedule);
  return plan;
}

CheckpointPlan plan_checkpoints(const PlanRequest& request, Index steps) {
  request.validate();
  if (steps < 1) detail::fail<InvalidArgument>("steps = ", steps, " must be >= 1");
  CheckpointPlan plan;
  plan.kind = request.kind;
  plan.steps = steps;
  plan.budget = request.budget;
  plan.reverses = steps;
  plan.restores = steps - 1;
  switch (request.kind) {
    case ScheduleKind::revolve: {
      const Index c = *request.budget;
      plan.snapshots = c;
      plan.name = "revolve(c = " + std::to_string(c) + ")";
      plan.repetitions = revolve_repetitions(steps, c);
      plan.advances = revolve_advances(steps, c);
      plan.peak_slots = std::min(c, steps);
      plan.peak_exact = false;
      break;
    }
    case ScheduleKind::uniform: {
      if (request.interval) {
        plan.interval = std::min(*request.interval, steps);
      } else {
        plan.interval = detail::choose_uniform_interval(steps, *request.budget);
        plan.interval_chosen = true;
      }
      plan.snapshots = detail::uniform_slots(steps, plan.interval);
      if (request.budget && plan.snapshots > *request.budget)
        detail::fail<InvalidArgument>("uniform checkpointing every ", plan.interval,
                                      " steps holds up to ", plan.snapshots, " snapshots of ",
                                      steps, " steps, more than the budget of ", *request.budget,
                                      "; leave the interval out to choose one that fits");
      plan.name = "uniform(k = " + std::to_string(plan.interval) + ")";
      plan.advances = detail::uniform_advances(steps, plan.interval);
      const Index m = (steps - 1) / plan.interval + 1;
      Index extra = 0;  // Σ over segments of max(L − 2, 0)
      extra += (m - 1) * std::max<Index>(plan.interval - 2, 0);
      extra += std::max<Index>(steps - (m - 1) * plan.interval - 2, 0);
      plan.stores = m + extra;
      plan.peak_slots = plan.snapshots;
      break;
    }
    case ScheduleKind::two_level: {
      plan.snapshots = *request.memory_slots + *request.disk_slots;
      plan.costs = request.costs;
      plan.peak_slots = std::min(plan.snapshots, steps);
      plan.peak_exact = false;
      plan.advances = steps - 1;  // a lower bound until simulated
      break;
    }
    case ScheduleKind::three_level: {
      plan.snapshots = *request.memory_slots + *request.host_slots + *request.disk_slots;
      plan.costs = request.costs;
      plan.peak_slots = std::min(plan.snapshots, steps);
      plan.peak_exact = false;
      plan.advances = steps - 1;  // a lower bound until simulated
      break;
    }
    case ScheduleKind::store_all: {
      if (request.budget && *request.budget < steps)
        detail::fail<InvalidArgument>("store-all keeps all ", steps, " states y_0 ... y_",
                                      steps - 1, ", more than the budget of ", *request.budget,
                                      " snapshots; use revolve");
      plan.snapshots = steps;
      plan.name = "store-all";
      plan.advances = steps - 1;
      plan.stores = steps;
      plan.peak_slots = steps;
      break;
    }
    case ScheduleKind::custom:
    case ScheduleKind::online:
      break;
  }
  if (plan.advances > std::numeric_limits<Index>::max() - steps)
    detail::fail<InvalidArgument>("l + p does not fit in 64 bits for l = ", steps);
  if ((plan.kind == ScheduleKind::two_level || plan.kind == ScheduleKind::three_level) &&
      steps > kSimulateMaxSteps)
    detail::fail<InvalidArgument>("the ", schedule_kind_name(plan.kind),
                                  " schedule is simulated to cost it; ", steps,
                                  " steps is more than the ", kSimulateMaxSteps, " it simulates");

  if (request.all_on_disk) plan.costs = request.costs;
  std::unique_ptr<Schedule> schedule = make_base_schedule(plan, request);
  if (request.all_on_disk) schedule = std::make_unique<DiskOnlySchedule>(std::move(schedule));
  plan.name = schedule->name();
  plan.levels = levels_of(*schedule, plan.kind);

  const bool small =
      steps <= kSimulateMaxSteps && std::min(plan.snapshots, steps) <= kSimulateMaxSlots;
  if (small)
    take_simulation(plan, *schedule);
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
