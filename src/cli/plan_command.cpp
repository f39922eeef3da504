// src/cli/plan_command.cpp — see plan_command.hpp.
#include "plan_command.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "byte_size.hpp"
#include "checkpoint_flag_options.hpp"
#include "model_problem.hpp"
#include "online_plan.hpp"
#include "plot_script.hpp"
#include "process_group.hpp"
#include "report_output.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/butcher_tableau.hpp"
#include "rewind/schedule/revolve_cost.hpp"
#include "rewind/store/disk_cost_probe.hpp"
#include "schedule_plan.hpp"

namespace rwd::cli {
namespace {

using Json = nlohmann::ordered_json;

// What was asked for, checked, and what it costs.
struct PlanOutcome {
  CheckpointPlan plan;
  std::optional<DiskCosts> measured;  // --disk with --state-bytes and --step-time
  std::optional<double> step_time;
  // Two-level: the same run with only the memory snapshots, and with every snapshot free.
  std::optional<double> memory_only_ratio;
  std::optional<double> free_io_ratio;
  std::optional<std::int64_t> memory_bytes;
  std::optional<std::int64_t> state_bytes;
  double adjoint_cost = kDefaultAdjointCost;
  bool adjoint_cost_measured = false;  // on --model (no --adjoint-cost given)
  // --stage-aware: the method named, and revolve at the same budget for comparison.
  std::optional<std::string> method;
  std::optional<CheckpointPlan> revolve;
  // --model: its state's bytes, a step's and a reversed step's time, measured
  std::optional<ModelStepTiming> model;
  std::string model_path;
  std::string model_method;  // the method of the timed step
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
double product_d(Index a, Index b) {
  return static_cast<double>(a) * static_cast<double>(b);
}

void row(std::ostream& out, const std::string& label, const std::string& value) {
  char padded[64];
  std::snprintf(padded, sizeof padded, "  %-30s", label.c_str());
  out << padded << value << "\n";
}

std::string share(double part, double whole) {
  const double pct = 100.0 * part / whole;
  return pct >= 0.1 ? fmt("%.3g%%", pct) : fmt("%.2g%%", pct);
}

void print_text(std::ostream& out, const PlanOutcome& outcome) {
  const CheckpointPlan& plan = outcome.plan;
  const Index l = plan.steps;
  out << "rewind plan: " << plan.name << " for " << l << " steps\n";
  row(out, "steps l", std::to_string(l));
  if (outcome.model)
    row(out, "model (--model)",
        outcome.model->name + ": " + std::to_string(outcome.model->state_size) + " states, " +
            std::to_string(outcome.model->state_bytes) + " bytes; one " + outcome.model_method +
            " step " + fmt("%.3g us", 1e6 * outcome.model->step_seconds) + " (measured)");
  if (outcome.model) {
    row(out, "  on its first steps",
        "a step " + fmt("%.3g us", 1e6 * outcome.model->first_step_seconds) + ", reversed " +
            fmt("%.3g us", 1e6 * outcome.model->first_adjoint_step_seconds) +
            " (the step re-run, then its adjoint)");
    if (!outcome.model->step_work.empty()) {
      row(out, "  work per step", outcome.model->step_work);
      row(out, "  per reversed step", outcome.model->adjoint_step_work);
    }
  }
  const ScheduleFamily& family = *plan.family;
  std::string c = std::to_string(plan.snapshots);
  if (const std::string note = family.snapshots_note(); !note.empty()) c += " (" + note + ")";
  row(out, "snapshots c", c);
  if (outcome.memory_bytes) {
    row(out, "  from --memory",
        "floor(" + std::to_string(*outcome.memory_bytes) + " / (" +
            std::to_string(*outcome.state_bytes) + " + " + std::to_string(kCarryBytes) +
            ")) = " + std::to_string(*plan.budget) + " snapshots");
    out << "    each snapshot holds a state (--state-bytes) and its integrator carry: "
        << kCarryBytes
        << " bytes\n    = sizeof(rwd::Carry) (t, h, controller memory, step index, noise seed)\n";
  }
  for (const PlanLine& line : family.plan_lines(plan)) row(out, line.label, line.value);
  if (plan.uses_disk()) {
    for (const PlanLine& line : family.disk_lines(plan)) row(out, line.label, line.value);
    if (outcome.measured)
      row(out, "measured in --disk",
          "one snapshot write " + fmt("%.3g ms", 1e3 * outcome.measured->write_seconds) +
              ", read " + fmt("%.3g ms", 1e3 * outcome.measured->read_seconds) + "; one step " +
              fmt("%.3g ms", 1e3 * *outcome.step_time) +
              (outcome.model ? " (measured on --model)" : " (--step-time)"));
    row(out, "disk write / read cost",
        fmt("%.4g", plan.costs.disk_write_time) + " / " + fmt("%.4g", plan.costs.disk_read_time) +
            " forward steps per snapshot");
    row(out, "disk stores / restores",
        count_or_unknown(plan.stores_on(LevelKind::disk)) + " / " +
            count_or_unknown(plan.restores_on(LevelKind::disk)) + ", peak " +
            std::to_string(plan.peak_slots_on(LevelKind::disk)) + " on disk");
  }
  if (outcome.method)
    row(out, "stage snapshots",
        std::to_string(plan.stage_stores) + " stored (" + std::to_string(plan.stage_units) +
            " slots each: the stages of " + *outcome.method + "), " +
            std::to_string(plan.stage_reverses) + " steps reversed from them");
  row(out, "forward steps l + p", std::to_string(plan.forward_steps()));
  if (plan.stage_reverses > 0)
    row(out, "recomputed steps p",
        std::to_string(plan.forward_steps() - l) + " (forward evaluations beyond the l steps)");
  else
    row(out, "recomputed steps p",
        std::to_string(plan.advances) + " (advances; the first sweep's " + std::to_string(l - 1) +
            " included)");
  row(out, "recompute ratio (l + p) / l", fmt("%.6g", plan.recompute_ratio()));
  row(out, "stores / restores",
      (plan.stores ? std::to_string(*plan.stores) : std::string("unknown (no closed form)")) +
          " / " + std::to_string(plan.restores));
  row(out, "peak slots", (plan.peak_exact ? "" : "at most ") + std::to_string(plan.peak_slots));
  const double store_all_states = static_cast<double>(l) + 1.0;
  if (const auto sb = outcome.snapshot_bytes()) {
    const double peak = product_d(plan.peak_slots, *sb);
    const double all = store_all_states * static_cast<double>(*sb);
    row(out, "peak snapshot memory",
        format_bytes(peak) + " (" + std::to_string(plan.peak_slots) + " x " + std::to_string(*sb) +
            " bytes), " + share(peak, all) + " of store-all");
    row(out, "store-all memory",
        format_bytes(all) + " (l + 1 = " + std::to_string(l + 1) + " states with carries)");
  } else {
    row(out, "peak snapshot memory",
        std::to_string(plan.peak_slots) + " states, " +
            share(static_cast<double>(plan.peak_slots), store_all_states) +
            " of store-all (--state-bytes S gives bytes)");
    row(out, "store-all memory", "l + 1 = " + std::to_string(l + 1) + " states");
  }
  row(out, "predicted time",
      fmt("%.4g", plan.predicted_time_ratio(outcome.adjoint_cost)) +
          (plan.uses_disk() ? " forward runs = (p + l*(1 + F) + disk I/O) / l, F = "
                            : " forward runs = (p + l*(1 + F)) / l, F = ") +
          fmt("%.3g", outcome.adjoint_cost) +
          (outcome.adjoint_cost_measured ? " (measured: reversed / step - 1)"
                                         : " (--adjoint-cost)"));
  if (outcome.model)
    row(out, "  in seconds",
        fmt("%.4g s", plan.predicted_time_ratio(outcome.adjoint_cost) * static_cast<double>(l) *
                          outcome.model->step_seconds) +
            " for the gradient of " + std::to_string(l) + " steps of " + outcome.model->name);
  if (outcome.revolve)
    row(out, "  revolve, same memory",
        fmt("%.4g", outcome.revolve->predicted_time_ratio(outcome.adjoint_cost)) +
            " forward runs, " + std::to_string(outcome.revolve->forward_steps()) +
            " forward steps (" + outcome.revolve->name + ")");
  if (outcome.memory_only_ratio)
    row(out, "  memory only",
        fmt("%.4g", *outcome.memory_only_ratio) + " forward runs: revolve(c = " +
            std::to_string(plan.slots_on(LevelKind::memory)) + ") without the disk");
  if (outcome.free_io_ratio)
    row(out, "  if the disk were free",
        fmt("%.4g", *outcome.free_io_ratio) + " forward runs: revolve(c = " +
            std::to_string(plan.slots_on(LevelKind::memory) + plan.slots_on(LevelKind::disk)) +
            ") in memory (a lower bound)");
  if (plan.simulated)
    row(out, "counts",
        "exact: rwd::simulate ran the schedule's " + std::to_string(plan.actions) + " actions in " +
            fmt("%.3g", plan.simulate_seconds) + " s");
  else
    row(out, "counts",
        "closed form (l > " + std::to_string(kSimulateMaxSteps) +
            " or too many slots to simulate cheaply)");
  if (plan.budget && *plan.budget >= l && !family.keeps_every_state())
    out << "\nc >= l: every state fits in the budget, so store-all is possible (--schedule "
           "store-all,\nor the default `rewind run` without --snapshots).\n";
  out << "\nConventions (Griewank-Walther): the initial state takes one snapshot; p counts every\n"
         "step the schedule advances; each reverse step re-runs its own forward step, so forward\n"
         "evaluations total l + p. See rewind plan --help.\n";
}

Json plan_json(const PlanOutcome& outcome) {
  const CheckpointPlan& plan = outcome.plan;
  const Index l = plan.steps;
  const auto null = Json(nullptr);
  const auto opt = [&](const auto& v) { return v ? Json(*v) : null; };
  Json j;
  j["schedule"] = plan.name;
  j["schedule_kind"] = plan.family->name();
  j["steps"] = l;
  j["snapshots"] = plan.snapshots;
  j["budget"] = opt(plan.budget);
  j["memory_bytes"] = opt(outcome.memory_bytes);
  j["state_bytes"] = opt(outcome.state_bytes);
  j["carry_bytes"] = kCarryBytes;
  j["snapshot_bytes"] = opt(outcome.snapshot_bytes());
  const auto fact = [&](const char* key) { return opt(plan_fact(plan, key)); };
  j["interval"] = fact("interval");
  j["interval_chosen"] = plan.interval_chosen;
  j["repetitions"] = fact("repetitions");
  j["forward_steps"] = plan.forward_steps();
  j["recomputed_steps"] = plan.forward_steps() - l;  // p: the advances, less reverses from stages
  j["recompute_ratio"] = plan.recompute_ratio();
  j["stores"] = opt(plan.stores);
  j["restores"] = plan.restores;
  j["reverses"] = plan.reverses;
  j["peak_slots"] = plan.peak_slots;
  j["peak_slots_exact"] = plan.peak_exact;
  const auto sb = outcome.snapshot_bytes();
  j["peak_snapshot_bytes"] = sb ? product(plan.peak_slots, *sb) : null;
  j["store_all_states"] = l + 1;
  j["store_all_bytes"] = sb ? product(l + 1, *sb) : null;
  j["store_all_possible"] = plan.family->keeps_every_state() || (plan.budget && *plan.budget >= l);
  j["adjoint_cost"] = outcome.adjoint_cost;
  j["adjoint_cost_measured"] = outcome.adjoint_cost_measured;
  j["predicted_time_ratio"] = plan.predicted_time_ratio(outcome.adjoint_cost);
  j["memory_snapshots"] = fact("memory_snapshots");
  j["disk_snapshots"] = fact("disk_snapshots");
  j["all_on_disk"] = plan.all_on_disk();
  j["disk_write_cost"] = plan.uses_disk() ? Json(plan.costs.disk_write_time) : null;
  j["disk_read_cost"] = plan.uses_disk() ? Json(plan.costs.disk_read_time) : null;
  j["disk_stores"] = opt(plan.stores_on(LevelKind::disk));
  j["disk_restores"] = opt(plan.restores_on(LevelKind::disk));
  j["peak_disk_slots"] = plan.uses_disk() ? Json(plan.peak_slots_on(LevelKind::disk)) : null;
  j["model"] = outcome.model ? Json(outcome.model_path) : null;
  j["model_method"] = outcome.model ? Json(outcome.model_method) : null;
  j["model_step_seconds"] = outcome.model ? Json(outcome.model->step_seconds) : null;
  j["model_first_step_seconds"] = outcome.model ? Json(outcome.model->first_step_seconds) : null;
  j["model_first_adjoint_step_seconds"] =
      outcome.model ? Json(outcome.model->first_adjoint_step_seconds) : null;
  j["model_step_work"] = outcome.model ? Json(outcome.model->step_work) : null;
  j["model_adjoint_step_work"] = outcome.model ? Json(outcome.model->adjoint_step_work) : null;
  j["predicted_seconds"] =
      outcome.model ? Json(outcome.plan.predicted_time_ratio(outcome.adjoint_cost) *
                           static_cast<double>(outcome.plan.steps) * outcome.model->step_seconds)
                    : null;
  j["measured_disk_write_seconds"] =
      outcome.measured ? Json(outcome.measured->write_seconds) : null;
  j["measured_disk_read_seconds"] = outcome.measured ? Json(outcome.measured->read_seconds) : null;
  j["memory_only_time_ratio"] = opt(outcome.memory_only_ratio);
  j["free_io_time_ratio"] = opt(outcome.free_io_ratio);
  j["counts"] = plan.simulated ? "simulated" : "closed form";
  j["simulated_actions"] = plan.simulated ? Json(plan.actions) : null;
  j["stage_aware"] = outcome.method.has_value();
  j["method"] = outcome.method ? Json(*outcome.method) : null;
  j["stage_units"] = plan.stage_units;
  j["state_stores"] = opt(plan.stores);
  j["stage_stores"] = plan.stage_stores;
  j["stage_reverses"] = plan.stage_reverses;
  j["revolve_forward_steps"] = outcome.revolve ? Json(outcome.revolve->forward_steps()) : null;
  j["revolve_predicted_time_ratio"] =
      outcome.revolve ? Json(outcome.revolve->predicted_time_ratio(outcome.adjoint_cost)) : null;
  return j;
}

// The picture's data (scripts/plot_plan.py documents the format): the trade-off of memory-only
// revolve over budgets spread geometrically from 1 to l, the two-level curve over disk budgets
// for the plan's K when there is one, the chosen point, and for l <= kPlotMaxActionSteps every
// action of the schedule.
constexpr Index kPlotMaxActionSteps = 200;

Json plot_json(const PlanOutcome& outcome) {
  const CheckpointPlan& plan = outcome.plan;
  const Index l = plan.steps;
  const auto ratio_of = [l](Index c) {
    return (static_cast<double>(l) + static_cast<double>(revolve_advances(l, c))) /
           static_cast<double>(l);
  };
  Json memory_curve = Json::array();
  Index previous = 0;
  for (double c = 1.0; previous < l; c *= 1.25) {
    const Index budget = std::min<Index>(l, std::max<Index>(previous + 1, static_cast<Index>(c)));
    memory_curve.push_back({budget, ratio_of(budget)});
    previous = budget;
  }
  Json tradeoff = {{"memory", memory_curve}};
  const auto fact = [&](const char* key) {
    const std::optional<Index> value = plan_fact(plan, key);
    return value ? Json(*value) : Json(nullptr);
  };
  Json chosen = {{"snapshots", std::max<Index>(plan.snapshots, 1)},
                 {"ratio", plan.recompute_ratio()},
                 {"disk_snapshots", fact("disk_snapshots")},
                 {"time_ratio", plan.predicted_time_ratio(outcome.adjoint_cost)}};
  if (plan.family->with_disk_slots(plan, 0)) {
    // The same faster levels with fewer and more disk snapshots: a dozen plans, each simulated
    // once.
    Json curve = Json::array();
    const Index top = std::max<Index>(2 * plan.slots_on(LevelKind::disk), 8);
    for (Index d = 0; d <= top; d += std::max<Index>(top / 12, 1)) {
      PlanRequest request = *plan.family->with_disk_slots(plan, d);
      request.costs.adjoint_cost_factor = outcome.adjoint_cost;
      curve.push_back({d, plan_checkpoints(request, l).predicted_time_ratio(outcome.adjoint_cost)});
    }
    tradeoff["two_level"] = curve;
    tradeoff["two_level_memory_snapshots"] = plan.slots_on(LevelKind::memory);
  }
  Json j;
  j["steps"] = l;
  j["schedule"] = plan.name;
  j["kind"] = plan.family->name();
  j["snapshots"] = plan.snapshots;
  j["memory_snapshots"] = fact("memory_snapshots");
  j["disk_snapshots"] = fact("disk_snapshots");
  j["all_on_disk"] = plan.all_on_disk();
  j["chosen"] = chosen;
  j["tradeoff"] = tradeoff;
  if (l <= kPlotMaxActionSteps) {
    Json actions = Json::array();
    const std::unique_ptr<Schedule> schedule = plan.schedule();
    Index at = 0;
    // Host slots of a three-level plan are drawn as memory: the picture has two rows.
    const StorageLevel* disk = plan.level(LevelKind::disk);
    const auto level = [&](int slot) {
      return disk && slot >= disk->first_slot ? "disk" : "memory";
    };
    for (Action a = schedule->next(); a.kind != ActionKind::done; a = schedule->next()) {
      switch (a.kind) {
        case ActionKind::advance:
          actions.push_back({{"kind", "advance"}, {"from", at}, {"to", a.step}});
          at = a.step;
          break;
        case ActionKind::store:
          actions.push_back(
              {{"kind", "store"}, {"step", a.step}, {"slot", a.slot}, {"level", level(a.slot)}});
          break;
        case ActionKind::restore:
          actions.push_back(
              {{"kind", "restore"}, {"step", a.step}, {"slot", a.slot}, {"level", level(a.slot)}});
          at = a.step;
          break;
        case ActionKind::reverse:
          if (a.uses_stages())
            actions.push_back({{"kind", "reverse"}, {"step", a.step}, {"slot", a.slot}});
          else
            actions.push_back({{"kind", "reverse"}, {"step", a.step}});
          break;
        case ActionKind::store_stages:
          actions.push_back({{"kind", "store-stages"},
                             {"step", a.step},
                             {"slot", a.slot},
                             {"level", level(a.slot)}});
          at = a.step + 1;
          break;
        case ActionKind::free:
          actions.push_back({{"kind", "free"}, {"slot", a.slot}});
          break;
        case ActionKind::done:
          break;
      }
    }
    j["actions"] = actions;
  }
  return j;
}

// Writes FILE.png through scripts/plot_plan.py (Debian's matplotlib, /usr/bin/python3); the data
// stays beside it as FILE.plan.json.
void write_plot(const PlanOutcome& outcome, const std::string& png) {
  const std::filesystem::path data = std::filesystem::path(png).replace_extension(".plan.json");
  run_plot_script("plot_plan.py", plot_json(outcome).dump(1), data.string(), png);
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
         "  rewind plan --steps 5000 --schedule uniform --interval 100\n"
         "  rewind plan --online --steps 1e5 --snapshots 20\n"
         "  rewind plan --model stiff_model.so --method esdirk43 --steps 1e4 --snapshots 20 \\\n"
         "              --stage-aware\n"
         "  rewind plan --steps 1e5 --ram-snapshots 4 --disk-snapshots 100 --disk-write-cost 2 \\\n"
         "              --disk-read-cost 1\n"
         "  rewind plan --steps 1e5 --ram-snapshots 4 --disk-snapshots 100 --disk /scratch \\\n"
         "              --state-bytes 8MiB --step-time 0.004\n"
         "Two levels: K snapshots in memory and D on disk; the schedule minimises the predicted\n"
         "time with a disk write and read costing --disk-write-cost and --disk-read-cost forward\n"
         "steps (default 1 each), or as measured in --disk DIR (--state-bytes and --step-time\n"
         "needed). `rewind run` measures both itself.";
}

// The options only `rewind plan` has; the checkpointing flags are shared with `run`.
struct PlanOnlyOptions {
  CheckpointFlags checkpoint;
  std::optional<std::string> state_bytes;  // --state-bytes S
  std::optional<double> step_time;         // --step-time SECONDS
  std::string model;                       // --model PATH: both measured on the model
  std::optional<Index> n;                  // --n N: a stencil model's grid (N per dimension)
  std::string plot;                        // --plot FILE.png
  bool online = false;                     // --online: the online schedule (online_plan.hpp)
  std::optional<std::string> method;       // --method NAME: the stages of --stage-aware
};

// Checks the flags, measures the disk when asked, and plans.
PlanOutcome plan_outcome(const PlanOnlyOptions& options) {
  const CheckpointSettings settings = resolve_checkpoint_flags(options.checkpoint, FlagUse::plan);
  PlanRequest request = settings.request;
  PlanOutcome outcome;
  outcome.adjoint_cost = settings.adjoint_cost;
  if (options.state_bytes)
    outcome.state_bytes = parse_byte_size("--state-bytes", *options.state_bytes);
  if (options.n && options.model.empty())
    rwd::detail::fail<InvalidArgument>("--n ", *options.n,
                                       " sizes a stencil model's grid; give it with --model PATH");
  if (!options.model.empty()) {
    if (options.state_bytes || options.step_time)
      rwd::detail::fail<InvalidArgument>(
          "--model measures the state's bytes and a step's time itself; drop --state-bytes and "
          "--step-time");
    outcome.model = time_model_step(options.model, options.method.value_or(""), options.n);
    outcome.model_method = outcome.model->method;
    outcome.model_path = options.model;
    outcome.state_bytes = outcome.model->state_bytes;
    outcome.step_time = outcome.model->step_seconds;
    if (!options.checkpoint.adjoint_cost) {  // F as measured, unless given
      outcome.adjoint_cost = request.costs.adjoint_cost_factor = outcome.model->adjoint_cost_factor;
      outcome.adjoint_cost_measured = true;
    }
  }
  if (settings.memory_bytes) {
    if (!outcome.state_bytes)
      rwd::detail::fail<InvalidArgument>(
          "--memory needs --state-bytes S, the bytes of one state, to count snapshots");
    outcome.memory_bytes = settings.memory_bytes;
    request.budget =
        snapshots_in_memory(*settings.memory_bytes, *outcome.state_bytes + kCarryBytes, "--memory");
  }
  // A disk costs one forward step per write and per read unless given or measured.
  request.costs.disk_write_time = settings.disk_write_cost.value_or(1.0);
  request.costs.disk_read_time = settings.disk_read_cost.value_or(1.0);
  if (options.step_time) {
    if (!(*options.step_time > 0.0) || !std::isfinite(*options.step_time))
      rwd::detail::fail<InvalidArgument>("--step-time = ", *options.step_time,
                                         " must be finite and > 0");
    if (settings.disk_directory.empty())
      rwd::detail::fail<InvalidArgument>("--step-time weighs disk costs measured in --disk DIR");
    if (!outcome.state_bytes)
      rwd::detail::fail<InvalidArgument>("measuring the disk needs --state-bytes S");
    outcome.step_time = options.step_time;
  }
  if (outcome.step_time && !settings.disk_directory.empty()) {
    outcome.measured = measure_disk_costs(settings.disk_directory, (*outcome.state_bytes + 7) / 8,
                                          static_cast<int>(kCarryBytes));
    if (!settings.disk_write_cost)
      request.costs.disk_write_time = outcome.measured->write_seconds / *outcome.step_time;
    if (!settings.disk_read_cost)
      request.costs.disk_read_time = outcome.measured->read_seconds / *outcome.step_time;
  }
  if (!options.plot.empty() && options.plot.find('\'') != std::string::npos)
    rwd::detail::fail<InvalidArgument>("--plot '", options.plot, "': the file name has a quote");

  const Index l = *settings.steps;
  if (options.method && !settings.stage_aware && options.model.empty())
    rwd::detail::fail<InvalidArgument>(
        "--method names the stages of --stage-aware or the step --model times; add one");
  if (settings.stage_aware) {
    if (!options.method)
      rwd::detail::fail<InvalidArgument>(
          "--stage-aware needs --method NAME (rk4, heun, ...): a stage snapshot holds its stages");
    if (!request.family->binomial_budget(request) || request.all_on_disk)
      rwd::detail::fail<InvalidArgument>(
          "--stage-aware needs a budget in memory (--snapshots C or --memory BYTES) and no "
          "other --schedule or disk level");
    // The stage vectors a kept step holds: the timed stepper's with --model (any method that
    // keeps its stages), else the explicit tableau's.
    const int stages = outcome.model ? outcome.model->stage_units
                                     : rwd::ButcherTableau::by_name(*options.method).stages;
    if (stages == 0)
      rwd::detail::fail<InvalidArgument>(
          "--stage-aware: --method ", *options.method,
          " keeps no stage values; name a Runge-Kutta or Rosenbrock method");
    outcome.method = *options.method;
    // Snapshot copies at --copy-cost, free without it: rewind plan has no problem to time them.
    rwd::CostModel costs;
    costs.adjoint_cost_factor = outcome.adjoint_cost;
    costs.write_time = costs.read_time = settings.copy_cost.value_or(0.0);
    outcome.plan = choose_stage_plan(l, *request.budget, stages, costs);
    outcome.revolve = plan_checkpoints(request, l);
    outcome.revolve->costs.write_time = outcome.revolve->costs.read_time = costs.write_time;
    return outcome;
  }
  outcome.plan = plan_checkpoints(request, l);
  const CheckpointPlan& plan = outcome.plan;
  if (plan.level(LevelKind::memory) && plan.level(LevelKind::disk) &&
      !plan.level(LevelKind::host)) {
    // Memory and disk: against revolve with the memory slots alone, and with every slot in memory.
    PlanRequest memory_only;
    memory_only.budget = plan.slots_on(LevelKind::memory);
    outcome.memory_only_ratio =
        plan_checkpoints(memory_only, l).predicted_time_ratio(outcome.adjoint_cost);
    PlanRequest free_io;
    free_io.budget = plan.slots_on(LevelKind::memory) + plan.slots_on(LevelKind::disk);
    outcome.free_io_ratio = plan_checkpoints(free_io, l).predicted_time_ratio(outcome.adjoint_cost);
  }
  return outcome;
}

}  // namespace

CLI::App* add_plan_command(CLI::App& app) {
  auto options = std::make_shared<PlanOnlyOptions>();
  CLI::App* plan =
      app.add_subcommand("plan",
                         "Predict what checkpointing l steps costs: forward and recomputed steps,\n"
                         "stores, peak memory and time, for revolve, uniform or store-all.");
  plan->footer(plan_help());
  add_checkpoint_flags(*plan, options->checkpoint, FlagUse::plan);
  plan->add_option("--state-bytes", options->state_bytes,
                   "S: bytes of one state (8 * unknowns for doubles); needed\n"
                   "by --memory and to measure the disk")
      ->type_name("S");
  plan->add_option("--step-time", options->step_time,
                   "seconds of one forward step, to weigh disk costs\n"
                   "measured in --disk DIR (with --state-bytes)")
      ->type_name("SECONDS");
  plan->add_option("--model", options->model,
                   "a model plugin (rewind_add_model): its state's bytes, the\n"
                   "time of one of its steps (--method, default the run's) and of one\n"
                   "reversed step measured, instead of --state-bytes and\n"
                   "--step-time; F (--adjoint-cost) from them unless given")
      ->type_name("PATH");
  plan->add_option("--n", options->n,
                   "with --model of a stencil model: its grid, N cells per dimension\n"
                   "(default: the model's default_grid_size)")
      ->type_name("N");
  plan->add_option("--plot", options->plot,
                   "also draw the plan to FILE.png: the schedule as steps against\n"
                   "actions (l <= 200) and the memory-recomputation trade-off\n"
                   "with the chosen point (needs python3-matplotlib)")
      ->type_name("FILE.png");

  plan->add_option("--method", options->method,
                   "with --stage-aware: the Runge-Kutta method whose stages a\n"
                   "stage snapshot holds (rk4: 4 state-sized slots); with --model:\n"
                   "the method timed, any of `rewind run`'s (esdirk43, rodas4, ...)")
      ->type_name("NAME");
  plan->add_flag("--online", options->online,
                 "the online schedule, for runs whose length is known only when\n"
                 "they stop: its cost if the run ends at --steps L, with\n"
                 "--snapshots C, against offline revolve's p(L, C)");

  plan->callback([options] {
    ProcessGroup::require_one_process("rewind plan");
    if (options->online) {
      std::vector<std::string> others;
      if (options->state_bytes) others.emplace_back("--state-bytes");
      if (options->step_time) others.emplace_back("--step-time");
      if (!options->model.empty()) others.emplace_back("--model");
      if (!options->plot.empty()) others.emplace_back("--plot");
      const OnlinePlan online = online_plan_for_flags(options->checkpoint, others);
      if (options->checkpoint.json)
        emit_json_report(online_plan_json(online));
      else
        print_online_plan(std::cout, online);
      return;
    }
    if (options->checkpoint.online_rule)
      rwd::detail::fail<InvalidArgument>(
          "--online-rule applies with --online only (the online schedule's rule)");
    const PlanOutcome outcome = plan_outcome(*options);
    if (options->checkpoint.json)
      emit_json_report(plan_json(outcome));
    else
      print_text(std::cout, outcome);
    if (!options->plot.empty()) write_plot(outcome, options->plot);
  });
  return plan;
}

}  // namespace rwd::cli
