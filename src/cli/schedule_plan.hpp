// src/cli/schedule_plan.hpp — which checkpointing schedule a run asked for, and what it costs:
// shared by `rewind plan` (which only predicts) and `rewind run --snapshots/--memory` (which
// predicts, then runs it).
//
//   rwd::cli::ScheduleRequest request{rwd::cli::ScheduleKind::revolve, /*budget=*/20};
//   rwd::cli::SchedulePlan plan = rwd::cli::plan_schedule(request, /*steps=*/100000);
//   plan.advances;               // p = 534220: rwd::simulate's count, = revolve_advances(l, c)
//   plan.forward_steps();        // l + p = 634220
//   plan.predicted_time_ratio(1.5);
//   std::unique_ptr<rwd::Schedule> s = rwd::cli::make_schedule(plan);
//
// Conventions (Griewank & Walther, ACM TOMS 26(1), 2000; rewind/schedule/revolve_cost.hpp):
// the initial state takes one of the c snapshots; p counts every step advanced by the schedule,
// the first sweep's l − 1 included; each reverse step re-runs its own forward step, which p does
// not count, so forward evaluations total l + p and the recompute ratio is (l + p) / l. The
// predicted time, in forward runs of l steps, is (p + l·(1 + F)) / l with F the adjoint part of a
// reverse step in forward steps (rwd::CostModel::adjoint_cost_factor; snapshot I/O taken as free).
//
// Counts are exact: rwd::simulate runs the schedule on integers (about 10 ns per action) when
// l <= kSimulateMaxSteps and at most kSimulateMaxSlots slots are used; otherwise they come from
// the closed forms (revolve_advances; UniformSchedule::predicted_*; store-all's l − 1 advances),
// where revolve's stores have no closed form (unknown) and its peak is bounded by min(c, l).
//
// Header-only and free of CLI11/JSON, so tests/cli/cli_test.cpp can use it with rewind alone.
#pragma once

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "rewind/carry.hpp"
#include "rewind/schedule/disk_only_schedule.hpp"
#include "rewind/schedule/multilevel_schedule.hpp"
#include "rewind/schedule/revolve_cost.hpp"
#include "rewind/schedule/revolve_schedule.hpp"
#include "rewind/schedule/schedule.hpp"
#include "rewind/schedule/schedule_simulator.hpp"
#include "rewind/schedule/store_all_schedule.hpp"
#include "rewind/schedule/uniform_schedule.hpp"
#include "rewind/error.hpp"
#include "rewind/types.hpp"

namespace rwd::cli {

enum class ScheduleKind { revolve, uniform, store_all, two_level };

inline const char* schedule_kind_name(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::revolve:
      return "revolve";
    case ScheduleKind::uniform:
      return "uniform";
    case ScheduleKind::store_all:
      return "store-all";
    case ScheduleKind::two_level:
      return "two-level";
  }
  return "?";
}

// "revolve", "uniform", "store-all" (also "store_all", "storeall"); InvalidArgument otherwise.
inline ScheduleKind parse_schedule_kind(std::string_view text) {
  std::string key(text);
  for (char& c : key) c = (c == '_') ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (key == "revolve" || key == "binomial") return ScheduleKind::revolve;
  if (key == "uniform") return ScheduleKind::uniform;
  if (key == "store-all" || key == "storeall") return ScheduleKind::store_all;
  if (key == "two-level" || key == "multilevel" || key == "multi-level") return ScheduleKind::two_level;
  rwd::detail::fail<InvalidArgument>(
      "--schedule = '", text, "' is not a schedule; choose revolve, uniform, store-all or two-level");
}

// Bytes of the metadata kept with every snapshot: the integrator's carry (t, h, controller
// memory, step index), which the adjoint drivers store next to each state.
inline constexpr Index kCarryBytes = static_cast<Index>(sizeof(Carry));

// --adjoint-cost when not given: the adjoint part of a reverse step, in forward steps.
inline constexpr double kDefaultAdjointCost = 1.5;

// Above these, plan_schedule uses the closed forms instead of rwd::simulate.
inline constexpr Index kSimulateMaxSteps = 100'000'000;
inline constexpr Index kSimulateMaxSlots = 10'000'000;

// What was asked for: a kind, a snapshot budget c (--snapshots, or derived from --memory) and,
// for uniform, an interval k.
struct ScheduleRequest {
  ScheduleKind kind = ScheduleKind::revolve;
  std::optional<Index> budget;    // c >= 1
  std::optional<Index> interval;  // uniform only: k >= 1
  // two-level: --ram-snapshots K (>= 1) and --disk-snapshots D (>= 0), scheduled for `costs`
  // (step_time 1: disk_write_time and disk_read_time are in forward steps).
  std::optional<Index> memory_slots;
  std::optional<Index> disk_slots;
  CostModel costs;
  bool all_on_disk = false;  // --disk with a single-level schedule: every snapshot in the file

  // The rules that do not depend on l. Throws InvalidArgument naming the flags.
  // budget_from_memory: the budget will come from --memory once the state size is known.
  void validate(bool budget_from_memory = false) const {
    const bool has_budget = budget.has_value() || budget_from_memory;
    if (budget && *budget < 1)
      rwd::detail::fail<InvalidArgument>("--snapshots = ", *budget, " must be >= 1");
    if (budget && *budget > std::numeric_limits<int>::max())
      rwd::detail::fail<InvalidArgument>("--snapshots = ", *budget, " must be <= ",
                                         std::numeric_limits<int>::max());
    if (interval && kind != ScheduleKind::uniform)
      rwd::detail::fail<InvalidArgument>("--interval applies only with --schedule uniform");
    if (interval && *interval < 1)
      rwd::detail::fail<InvalidArgument>("--interval = ", *interval, " must be >= 1");
    if (kind == ScheduleKind::two_level) {
      if (!memory_slots || !disk_slots)
        rwd::detail::fail<InvalidArgument>(
            "the two-level schedule needs --ram-snapshots K and --disk-snapshots D");
      if (*memory_slots < 1 || *memory_slots > (1 << 20))
        rwd::detail::fail<InvalidArgument>("--ram-snapshots = ", *memory_slots,
                                           " must lie in [1, 1048576]");
      if (*disk_slots < 0 || *disk_slots > (1 << 24))
        rwd::detail::fail<InvalidArgument>("--disk-snapshots = ", *disk_slots,
                                           " must lie in [0, 16777216]");
      if (budget)
        rwd::detail::fail<InvalidArgument>(
            "--snapshots and --ram-snapshots/--disk-snapshots exclude each other");
      costs.validate();
      return;
    }
    if (memory_slots || disk_slots)
      rwd::detail::fail<InvalidArgument>(
          "--ram-snapshots/--disk-snapshots select the two-level schedule, not ",
          schedule_kind_name(kind));
    if (kind == ScheduleKind::revolve && !has_budget)
      rwd::detail::fail<InvalidArgument>(
          "--schedule revolve needs a snapshot budget: --snapshots C or --memory BYTES");
    if (kind == ScheduleKind::uniform && !has_budget && !interval)
      rwd::detail::fail<InvalidArgument>(
          "--schedule uniform needs --interval K, or a budget (--snapshots C or --memory BYTES) "
          "to choose K from");
  }
};

// The schedule chosen for l steps and its costs (see the top of this file for the conventions).
struct SchedulePlan {
  ScheduleKind kind = ScheduleKind::revolve;
  std::string name;              // "revolve(c = 20)", "uniform(k = 32)", "store-all"
  Index steps = 0;               // l
  Index snapshots = 0;           // the schedule's slot budget c (uniform: its exact peak)
  std::optional<Index> budget;   // the budget asked for, if any
  Index interval = 0;            // uniform: k (0 otherwise)
  bool interval_chosen = false;  // uniform: k was chosen from the budget
  Index repetitions = 0;         // revolve: r(l, c), the most times a step is advanced

  bool simulated = false;         // counts from rwd::simulate; false: closed forms
  Index actions = 0;              // actions simulated (0 for closed forms)
  double simulate_seconds = 0.0;  // time the simulation took

  Index advances = 0;           // p: steps advanced by the schedule (first sweep included)
  std::optional<Index> stores;  // unknown for revolve's closed form
  Index restores = 0;
  Index reverses = 0;     // l
  Index peak_slots = 0;   // most snapshots held at once (an upper bound when !peak_exact)
  bool peak_exact = true;

  // Disk level: two-level schedules, or any schedule with --disk (all_on_disk).
  Index memory_snapshots = 0;           // two-level: K
  Index disk_snapshots = 0;             // two-level: D
  bool all_on_disk = false;
  std::optional<Index> disk_stores;     // of `stores`, those to disk (unknown without simulation)
  std::optional<Index> disk_restores;
  Index peak_disk_slots = 0;
  CostModel costs;                      // disk costs in forward steps (step_time = 1)
  bool uses_disk() const { return all_on_disk || disk_snapshots > 0; }

  // l + p: forward evaluations, the reverse steps' own re-runs included.
  Index forward_steps() const { return steps + advances; }
  // (l + p) / l.
  double recompute_ratio() const {
    return (static_cast<double>(steps) + static_cast<double>(advances)) /
           static_cast<double>(steps);
  }
  // Time of the gradient in forward runs of l steps, from rwd::predicted_time_ratio with
  // adjoint_cost_factor = adjoint_cost and free snapshot I/O.
  // With a disk level, disk writes and reads are charged at `costs` (in forward steps, taken as
  // synchronous: background I/O can only do better).
  double predicted_time_ratio(double adjoint_cost) const {
    ScheduleCost cost;
    cost.steps = steps;
    cost.advances = advances;
    cost.reverses = reverses;
    cost.stores = stores.value_or(0);
    cost.restores = restores;
    cost.disk_stores = disk_stores.value_or(0);
    cost.disk_restores = disk_restores.value_or(0);
    CostModel model = costs;
    model.step_time = 1.0;
    model.adjoint_cost_factor = adjoint_cost;
    return rwd::predicted_time_ratio(cost, model);
  }
  // Whether every state fits in the budget (store-all needs l slots: y_0 … y_{l−1}).
  bool store_all_fits() const { return budget && *budget >= steps; }
};

namespace detail {

// UniformSchedule's slot count (store_states), computed the same way without constructing one.
inline Index uniform_slots(Index l, Index k) {
  const Index m = (l - 1) / k + 1;
  const Index last = l - (m - 1) * k;
  Index slots = m + std::max<Index>(last - 2, 0);
  if (m >= 2) slots = std::max(slots, m - 1 + std::max<Index>(k - 2, 0));
  return slots;
}
inline Index uniform_advances(Index l, Index k) {
  const Index m = (l - 1) / k + 1;
  return (m - 1) * std::min(k, l) + (l - m);
}

// The interval k whose schedule fits in `budget` slots with the fewest advances (ties: fewer
// slots). Exhaustive over the k that can fit when there are at most kMaxCandidates of them, else
// over an even grid of that many plus the ends. Refuses a budget below uniform's minimum.
inline Index choose_uniform_interval(Index l, Index budget) {
  if (budget >= std::max<Index>(l - 1, 1)) return l;  // one segment: l − 1 advances, the least
  // slots >= m >= l / k and slots >= k − 2 (m >= 2): only k in [⌈l / c⌉, c + 2] can fit.
  const Index lo = std::max<Index>(1, (l + budget - 1) / budget);
  const Index hi = std::min<Index>(l, budget + 2);
  constexpr Index kMaxCandidates = 2'000'000;
  const Index stride = hi >= lo ? std::max<Index>(1, (hi - lo) / kMaxCandidates) : 1;
  Index best = -1, best_adv = 0, best_slots = 0;
  auto consider = [&](Index k) {
    const Index slots = uniform_slots(l, k);
    if (slots > budget) return;
    const Index adv = uniform_advances(l, k);
    if (best < 0 || adv < best_adv || (adv == best_adv && slots < best_slots)) {
      best = k;
      best_adv = adv;
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
  rwd::detail::fail<InvalidArgument>("uniform checkpointing of ", l, " steps needs at least ",
                                     least, " snapshots (--interval ", least_k,
                                     "); the budget is ", budget, " (revolve needs only 1)");
}

}  // namespace detail

// The schedule of `request` for l steps, with its costs. Throws InvalidArgument for a request
// that cannot be met (a budget below what the schedule needs, l < 1, counts beyond 64 bits).
inline SchedulePlan plan_schedule(const ScheduleRequest& request, Index steps) {
  request.validate();
  if (steps < 1) rwd::detail::fail<InvalidArgument>("--steps = ", steps, " must be >= 1");
  SchedulePlan plan;
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
        rwd::detail::fail<InvalidArgument>(
            "--schedule uniform --interval ", plan.interval, " holds up to ", plan.snapshots,
            " snapshots of ", steps, " steps, more than the budget of ", *request.budget,
            "; leave out --interval to choose one that fits");
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
      plan.memory_snapshots = *request.memory_slots;
      plan.disk_snapshots = *request.disk_slots;
      plan.snapshots = plan.memory_snapshots + plan.disk_snapshots;
      plan.costs = request.costs;
      const MultiLevelSchedule schedule(steps, static_cast<int>(plan.memory_snapshots),
                                        static_cast<int>(plan.disk_snapshots), plan.costs);
      plan.name = schedule.name();
      plan.peak_slots = std::min(plan.snapshots, steps);
      plan.peak_exact = false;
      plan.advances = steps - 1;  // a lower bound until simulated
      break;
    }
    case ScheduleKind::store_all: {
      if (request.budget && *request.budget < steps)
        rwd::detail::fail<InvalidArgument>("--schedule store-all keeps all ", steps,
                                           " states y_0 ... y_", steps - 1,
                                           ", more than the budget of ", *request.budget,
                                           " snapshots; use --schedule revolve");
      plan.snapshots = steps;
      plan.name = "store-all";
      plan.advances = steps - 1;
      plan.stores = steps;
      plan.peak_slots = steps;
      break;
    }
  }
  if (plan.advances > std::numeric_limits<Index>::max() - steps)
    rwd::detail::fail<InvalidArgument>("l + p does not fit in 64 bits for l = ", steps);

  const bool small = steps <= kSimulateMaxSteps &&
                     std::min(plan.snapshots, steps) <= kSimulateMaxSlots &&
                     plan.snapshots <= std::numeric_limits<int>::max();
  plan.all_on_disk = request.all_on_disk;
  if (plan.all_on_disk) {
    plan.costs = request.costs;
    plan.name += " on disk";
    if (plan.stores) plan.disk_stores = plan.stores;
    plan.disk_restores = plan.restores;
  }
  if (small) {
    std::unique_ptr<Schedule> schedule;
    switch (plan.kind) {
      case ScheduleKind::two_level:
        schedule = std::make_unique<MultiLevelSchedule>(
            steps, static_cast<int>(plan.memory_snapshots), static_cast<int>(plan.disk_snapshots),
            plan.costs);
        break;
      case ScheduleKind::revolve:
        schedule = std::make_unique<RevolveSchedule>(steps, static_cast<int>(plan.snapshots));
        break;
      case ScheduleKind::uniform:
        schedule = std::make_unique<UniformSchedule>(steps, plan.interval);
        break;
      case ScheduleKind::store_all:
        schedule = std::make_unique<StoreAllSchedule>(steps);
        break;
    }
    const auto start = std::chrono::steady_clock::now();
    const ScheduleCost cost = simulate(*schedule);
    plan.simulate_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    plan.simulated = true;
    plan.actions = cost.actions;
    plan.name = schedule->name();
    plan.advances = cost.advances;
    plan.stores = cost.stores;
    plan.restores = cost.restores;
    plan.reverses = cost.reverses;
    plan.peak_slots = cost.peak_slots;
    plan.peak_exact = true;
    plan.disk_stores = plan.all_on_disk ? cost.stores : cost.disk_stores;
    plan.disk_restores = plan.all_on_disk ? cost.restores : cost.disk_restores;
    plan.peak_disk_slots = plan.all_on_disk ? cost.peak_slots : cost.peak_disk_slots;
    if (plan.all_on_disk) plan.name += " on disk";
  } else if (plan.kind == ScheduleKind::two_level) {
    rwd::detail::fail<InvalidArgument>("the two-level schedule is simulated to cost it; ", steps,
                                       " steps is more than the ", kSimulateMaxSteps, " it simulates");
  }
  return plan;
}

// A fresh schedule for a plan (the one plan_schedule costed).
inline std::unique_ptr<Schedule> make_base_schedule(const SchedulePlan& plan) {
  switch (plan.kind) {
    case ScheduleKind::two_level:
      return std::make_unique<MultiLevelSchedule>(plan.steps, static_cast<int>(plan.memory_snapshots),
                                                  static_cast<int>(plan.disk_snapshots), plan.costs);
    case ScheduleKind::revolve:
      return std::make_unique<RevolveSchedule>(plan.steps, static_cast<int>(plan.snapshots));
    case ScheduleKind::uniform:
      return std::make_unique<UniformSchedule>(plan.steps, plan.interval);
    case ScheduleKind::store_all:
      return std::make_unique<StoreAllSchedule>(plan.steps);
  }
  rwd::detail::fail<InvalidArgument>("internal error: unknown schedule kind");
}
inline std::unique_ptr<Schedule> make_schedule(const SchedulePlan& plan) {
  std::unique_ptr<Schedule> schedule = make_base_schedule(plan);
  if (plan.all_on_disk) return std::make_unique<DiskOnlySchedule>(std::move(schedule));
  return schedule;
}

// Snapshots of `snapshot_bytes` (state + carry) that fit in `budget_bytes`:
// ⌊budget / snapshot_bytes⌋ (rwd::snapshots_for_budget). Refuses a budget below one snapshot,
// naming the flag.
inline Index snapshots_in_memory(std::int64_t budget_bytes, Index snapshot_bytes,
                                 const char* flag = "--memory") {
  if (budget_bytes < snapshot_bytes)
    rwd::detail::fail<InvalidArgument>(flag, " = ", budget_bytes,
                                       " bytes holds no snapshot: one takes ", snapshot_bytes,
                                       " bytes (state ", snapshot_bytes - kCarryBytes,
                                       " + carry ", kCarryBytes, ")");
  return snapshots_for_budget(budget_bytes, snapshot_bytes);
}

}  // namespace rwd::cli
