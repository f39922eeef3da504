// src/cli/plan_command.hpp — the `rewind plan` subcommand: what a checkpointing schedule costs
// for l steps and a snapshot budget, before running anything.
//
//   rewind plan --steps 100000 --snapshots 20
//   rewind plan --steps 1e6 --memory 1GiB --state-bytes 8MiB --json
//   rewind plan --steps 5000 --schedule uniform --interval 100
//
// The subcommand's callback plans the schedule (schedule_plan.hpp) and prints a cost table or,
// with --json, one JSON object on stdout. Errors propagate as exceptions; main.cpp turns them
// into exit statuses (2 for bad input).
//
// JSON keys: "schedule" (name), "schedule_kind", "steps", "snapshots" (the schedule's slot
// budget c), "budget" (asked for, or null), "memory_bytes", "state_bytes", "carry_bytes",
// "snapshot_bytes" (state + carry; null without --state-bytes), "interval" (uniform, else null),
// "interval_chosen", "repetitions" (revolve's r, else null), "forward_steps" (l + p),
// "recomputed_steps" (p), "recompute_ratio" ((l + p)/l), "stores" (null when unknown),
// "restores", "reverses", "peak_slots", "peak_slots_exact", "peak_snapshot_bytes",
// "store_all_states" (l + 1), "store_all_bytes" (both bytes null without --state-bytes),
// "store_all_possible", "adjoint_cost", "predicted_time_ratio", "counts" ("simulated" or
// "closed form"), "simulated_actions".
#pragma once

#include <CLI/CLI.hpp>

namespace rwd::cli {

CLI::App* add_plan_command(CLI::App& app);

}  // namespace rwd::cli
