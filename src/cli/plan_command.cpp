// src/cli/plan_command.cpp — see plan_command.hpp.
#include "plan_command.hpp"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "byte_size.hpp"
#include "rewind/error.hpp"
#include "schedule_plan.hpp"

namespace rwd::cli {
namespace {

using Json = nlohmann::ordered_json;

struct RawPlanOptions {
  std::string steps;
  std::string snapshots;
  std::string memory;
  std::string state_bytes;
  std::string schedule = "revolve";
  std::string interval;
  double adjoint_cost = kDefaultAdjointCost;
  bool json = false;
};

// What was asked for, checked, and what it costs.
struct PlanOutcome {
  SchedulePlan plan;
  std::optional<std::int64_t> memory_bytes;
  std::optional<std::int64_t> state_bytes;
  double adjoint_cost = kDefaultAdjointCost;
  std::optional<Index> snapshot_bytes() const {
    if (!state_bytes) return std::nullopt;
    return *state_bytes + kCarryBytes;
  }
};

std::string fmt(const char* spec, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, spec, value);
  return buffer;
}

// a·b as a JSON integer when it fits, else as a double.
Json product(Index a, Index b) {
  Index out = 0;
  if (!__builtin_mul_overflow(a, b, &out)) return Json(out);
  return Json(static_cast<double>(a) * static_cast<double>(b));
}
double product_d(Index a, Index b) { return static_cast<double>(a) * static_cast<double>(b); }

void row(std::ostream& out, const std::string& label, const std::string& value) {
  char padded[64];
  std::snprintf(padded, sizeof padded, "  %-30s", label.c_str());
  out << padded << value << "\n";
}

std::string share(double part, double whole) {
  const double pct = 100.0 * part / whole;
  return pct >= 0.1 ? fmt("%.3g%%", pct) : fmt("%.2g%%", pct);
}

void print_text(std::ostream& out, const PlanOutcome& o) {
  const SchedulePlan& p = o.plan;
  const Index l = p.steps;
  out << "rewind plan: " << p.name << " for " << l << " steps\n";
  row(out, "steps l", std::to_string(l));
  std::string c = std::to_string(p.snapshots);
  if (p.kind == ScheduleKind::revolve) c += " (the initial state's snapshot included)";
  if (p.kind == ScheduleKind::uniform) c += " (the most this schedule holds at once)";
  if (p.kind == ScheduleKind::store_all) c += " (one per step: y_0 ... y_{l-1})";
  row(out, "snapshots c", c);
  if (o.memory_bytes) {
    row(out, "  from --memory",
        "floor(" + std::to_string(*o.memory_bytes) + " / (" + std::to_string(*o.state_bytes) +
            " + " + std::to_string(kCarryBytes) + ")) = " + std::to_string(*p.budget) +
            " snapshots");
    out << "    each snapshot holds a state (--state-bytes) and its integrator carry: "
        << kCarryBytes << " bytes\n    = sizeof(rwd::Carry) (t, h, controller memory, step index)\n";
  }
  if (p.kind == ScheduleKind::uniform) {
    std::string k = std::to_string(p.interval);
    if (p.interval_chosen)
      k += " (chosen: the fewest advances within " + std::to_string(*p.budget) + " snapshots)";
    row(out, "interval k", k);
  }
  if (p.kind == ScheduleKind::revolve)
    row(out, "repetitions r",
        std::to_string(p.repetitions) + " (no step is advanced more than r times)");
  row(out, "forward steps l + p", std::to_string(p.forward_steps()));
  row(out, "recomputed steps p",
      std::to_string(p.advances) + " (advances; the first sweep's " + std::to_string(l - 1) +
          " included)");
  row(out, "recompute ratio (l + p) / l", fmt("%.6g", p.recompute_ratio()));
  row(out, "stores / restores",
      (p.stores ? std::to_string(*p.stores) : std::string("unknown (no closed form)")) + " / " +
          std::to_string(p.restores));
  row(out, "peak slots",
      (p.peak_exact ? "" : "at most ") + std::to_string(p.peak_slots));
  const double store_all_states = static_cast<double>(l) + 1.0;
  if (const auto sb = o.snapshot_bytes()) {
    const double peak = product_d(p.peak_slots, *sb);
    const double all = store_all_states * static_cast<double>(*sb);
    row(out, "peak snapshot memory",
        format_bytes(peak) + " (" + std::to_string(p.peak_slots) + " x " + std::to_string(*sb) +
            " bytes), " + share(peak, all) + " of store-all");
    row(out, "store-all memory",
        format_bytes(all) + " (l + 1 = " + std::to_string(l + 1) + " states with carries)");
  } else {
    row(out, "peak snapshot memory",
        std::to_string(p.peak_slots) + " states, " + share(static_cast<double>(p.peak_slots),
                                                           store_all_states) +
            " of store-all (--state-bytes S gives bytes)");
    row(out, "store-all memory", "l + 1 = " + std::to_string(l + 1) + " states");
  }
  row(out, "predicted time",
      fmt("%.4g", p.predicted_time_ratio(o.adjoint_cost)) +
          " forward runs = (p + l*(1 + F)) / l, F = " + fmt("%g", o.adjoint_cost) +
          " (--adjoint-cost)");
  if (p.simulated)
    row(out, "counts",
        "exact: rwd::simulate ran the schedule's " + std::to_string(p.actions) + " actions in " +
            fmt("%.3g", p.simulate_seconds) + " s");
  else
    row(out, "counts",
        "closed form (l > " + std::to_string(kSimulateMaxSteps) +
            " or too many slots to simulate cheaply)");
  if (p.budget && *p.budget >= l && p.kind != ScheduleKind::store_all)
    out << "\nc >= l: every state fits in the budget, so store-all is possible (--schedule "
           "store-all,\nor the default `rewind run` without --snapshots).\n";
  out << "\nConventions (Griewank-Walther): the initial state takes one snapshot; p counts every\n"
         "step the schedule advances; each reverse step re-runs its own forward step, so forward\n"
         "evaluations total l + p. See rewind plan --help.\n";
}

Json plan_json(const PlanOutcome& o) {
  const SchedulePlan& p = o.plan;
  const Index l = p.steps;
  const auto null = Json(nullptr);
  const auto opt = [&](const auto& v) { return v ? Json(*v) : null; };
  Json j;
  j["schedule"] = p.name;
  j["schedule_kind"] = schedule_kind_name(p.kind);
  j["steps"] = l;
  j["snapshots"] = p.snapshots;
  j["budget"] = opt(p.budget);
  j["memory_bytes"] = opt(o.memory_bytes);
  j["state_bytes"] = opt(o.state_bytes);
  j["carry_bytes"] = kCarryBytes;
  j["snapshot_bytes"] = opt(o.snapshot_bytes());
  j["interval"] = p.kind == ScheduleKind::uniform ? Json(p.interval) : null;
  j["interval_chosen"] = p.interval_chosen;
  j["repetitions"] = p.kind == ScheduleKind::revolve ? Json(p.repetitions) : null;
  j["forward_steps"] = p.forward_steps();
  j["recomputed_steps"] = p.advances;
  j["recompute_ratio"] = p.recompute_ratio();
  j["stores"] = opt(p.stores);
  j["restores"] = p.restores;
  j["reverses"] = p.reverses;
  j["peak_slots"] = p.peak_slots;
  j["peak_slots_exact"] = p.peak_exact;
  const auto sb = o.snapshot_bytes();
  j["peak_snapshot_bytes"] = sb ? product(p.peak_slots, *sb) : null;
  j["store_all_states"] = l + 1;
  j["store_all_bytes"] = sb ? product(l + 1, *sb) : null;
  j["store_all_possible"] = p.kind == ScheduleKind::store_all || (p.budget && *p.budget >= l);
  j["adjoint_cost"] = o.adjoint_cost;
  j["predicted_time_ratio"] = p.predicted_time_ratio(o.adjoint_cost);
  j["counts"] = p.simulated ? "simulated" : "closed form";
  j["simulated_actions"] = p.simulated ? Json(p.actions) : null;
  return j;
}

std::string plan_help() {
  return "Conventions (Griewank & Walther, Algorithm 799 'revolve', ACM TOMS 26(1), 2000):\n"
         "  l         steps of the run; reversing them needs the states y_0 ... y_{l-1}.\n"
         "  c         snapshots, the initial state's included.\n"
         "  p         recomputed steps = every step the schedule advances, the first\n"
         "            sweep's l - 1 included; for revolve the minimum, p(l, c) = r*l -\n"
         "            C(c + r, r - 1) with r the smallest integer such that C(c + r, c) >= l.\n"
         "  l + p     forward steps: each reverse step also re-runs its own forward step.\n"
         "  (l + p)/l recompute ratio, in forward runs (store-all: (2l - 1)/l).\n"
         "  time      (p + l*(1 + F)) / l forward runs, F = --adjoint-cost: the adjoint part\n"
         "            of a reverse step, in forward steps, on top of the step it re-runs\n"
         "            (rwd::CostModel::adjoint_cost_factor; snapshot I/O taken as free).\n"
         "  memory    a snapshot is a state plus its integrator carry, sizeof(rwd::Carry) = " +
         std::to_string(kCarryBytes) +
         "\n"
         "            bytes; with --memory, c = floor(BYTES / (S + " +
         std::to_string(kCarryBytes) +
         ")). Store-all memory is\n"
         "            l + 1 such states (y_0 ... y_l).\n"
         "Counts are exact: the schedule is run through rwd::simulate (about 10 ns per action)\n"
         "when l <= 1e8, else taken from the closed forms (revolve's stores are then unknown\n"
         "and its peak is bounded by min(c, l)).\n"
         "Byte counts accept B, KiB, MiB, GiB, TiB (also K, M, G, T), KB, MB, GB, TB, and\n"
         "plain numbers such as 1e6. Counts accept 1e6 too.\n"
         "\n"
         "Examples:\n"
         "  rewind plan --steps 100000 --snapshots 20\n"
         "  rewind plan --steps 1e6 --memory 1GiB --state-bytes 8MiB --json\n"
         "  rewind plan --steps 5000 --schedule uniform --interval 100";
}

}  // namespace

CLI::App* add_plan_command(CLI::App& app) {
  auto raw = std::make_shared<RawPlanOptions>();
  CLI::App* plan = app.add_subcommand(
      "plan",
      "Predict what checkpointing l steps costs: forward and recomputed steps,\n"
      "stores, peak memory and time, for revolve, uniform or store-all.");
  plan->footer(plan_help());
  plan->add_option("--steps", raw->steps, "l: steps of the run (required)")
      ->required()
      ->type_name("L");
  auto* snapshots = plan->add_option("--snapshots", raw->snapshots,
                                     "c: snapshots, the initial state's included")
                        ->type_name("C");
  auto* memory = plan->add_option("--memory", raw->memory,
                                  "snapshot budget in bytes (256MiB, 1GiB, 1e9); needs\n"
                                  "--state-bytes; c = floor(BYTES / (S + carry bytes))")
                     ->type_name("BYTES");
  auto* state_bytes = plan->add_option("--state-bytes", raw->state_bytes,
                                       "S: bytes of one state (8 * unknowns for doubles)")
                          ->type_name("S");
  plan->add_option("--schedule", raw->schedule, "revolve | uniform | store-all (default revolve)")
      ->type_name("NAME");
  auto* interval = plan->add_option("--interval", raw->interval,
                                    "uniform: a snapshot every K steps (default: the\n"
                                    "interval with the fewest advances that fits c)")
                       ->type_name("K");
  auto* adjoint_cost = plan->add_option("--adjoint-cost", raw->adjoint_cost,
                                        "F: adjoint part of a reverse step, in forward steps\n"
                                        "(default 1.5); only for the predicted time")
                           ->type_name("F");
  plan->add_flag("--json", raw->json, "print one JSON object on stdout instead of the table");

  plan->callback([=] {
    PlanOutcome o;
    const Index l = parse_count("--steps", raw->steps);
    ScheduleRequest request;
    request.kind = parse_schedule_kind(raw->schedule);
    if (snapshots->count() && memory->count())
      rwd::detail::fail<InvalidArgument>(
          "--snapshots and --memory exclude each other: give the budget one way");
    if (state_bytes->count()) o.state_bytes = parse_byte_size("--state-bytes", raw->state_bytes);
    if (memory->count()) {
      o.memory_bytes = parse_byte_size("--memory", raw->memory);
      if (!o.state_bytes)
        rwd::detail::fail<InvalidArgument>(
            "--memory needs --state-bytes S, the bytes of one state, to count snapshots");
      request.budget = snapshots_in_memory(*o.memory_bytes, *o.state_bytes + kCarryBytes);
    }
    if (snapshots->count()) request.budget = parse_count("--snapshots", raw->snapshots);
    if (interval->count()) request.interval = parse_count("--interval", raw->interval);
    if (adjoint_cost->count() && (!std::isfinite(raw->adjoint_cost) || raw->adjoint_cost < 0.0))
      rwd::detail::fail<InvalidArgument>("--adjoint-cost = ", raw->adjoint_cost,
                                         " must be finite and >= 0");
    o.adjoint_cost = raw->adjoint_cost;
    if (request.kind == ScheduleKind::revolve && !request.budget)
      rwd::detail::fail<InvalidArgument>(
          "rewind plan needs a budget: --snapshots C, or --memory BYTES with --state-bytes S");
    o.plan = plan_schedule(request, l);
    if (raw->json)
      std::cout << plan_json(o).dump(2) << std::endl;
    else
      print_text(std::cout, o);
  });
  return plan;
}

}  // namespace rwd::cli
