// src/cli/checkpoint_flags.hpp — the checkpointing flags, declared once for every subcommand that
// plans a run (`plan`, `run`), and their one validation.
//
//   rwd::cli::CheckpointFlags flags;               // as typed; std::nullopt = not given
//   flags.steps = "1e5";
//   flags.snapshots = "20";
//   rwd::cli::CheckpointSettings settings =
//       rwd::cli::resolve_checkpoint_flags(flags, rwd::cli::FlagUse::plan);
//   // settings.request: the rwd::PlanRequest; settings.memory_bytes, .disk_directory, ...
//
// Flags (checkpoint_flag_options.hpp registers them with CLI11):
//   --steps L  --snapshots C  --memory BYTES  --schedule NAME  --interval K  --adjoint-cost F
//   --disk DIR  --ram-snapshots K  --disk-snapshots D  --disk-write-cost S  --disk-read-cost S
//   --json
// and for subcommands that run (FlagUse::run, and FlagUse::fit less a few): --drift POLICY,
// --sync-io, --keep-snapshots,
// --resume, --compression LEVEL. Counts accept 1e6; byte counts accept units (byte_size.hpp).
//
// One rule set, the same words in every subcommand: what excludes what, what needs what, and
// every value's range, each refused with the flag named before any work. The only differences
// between uses are what a use means by "no flags": `plan` always plans (revolve by default, so it
// needs a budget) while `run` then uses the store-all driver; and `run` needs --disk for a disk
// level because it writes one.
//
// Header-only and free of CLI11/JSON, so tests/cli/cli_test.cpp can use it with rewind alone.
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

#include "byte_size.hpp"
#include "rewind/adjoint/drift_monitor.hpp"
#include "rewind/error.hpp"
#include "rewind/types.hpp"
#include "schedule_plan.hpp"

namespace rwd::cli {

// Which subcommand the flags serve (see the top of this file). A fit (FlagUse::fit) takes the
// run's flags less those that make no sense for many short runs at changing parameters: --steps
// (the observations set the horizon), --resume and --keep-snapshots (no snapshot file outlives one
// gradient), --adjoint-cost (predictions only) and the three-level --device-snapshots and
// --host-snapshots (a fit runs on the CPU backend).
enum class FlagUse { plan, run, fit };

// The checkpointing flags as typed; std::nullopt = not given on the command line.
struct CheckpointFlags {
  std::optional<std::string> steps;           // --steps L
  std::optional<std::string> snapshots;       // --snapshots C
  std::optional<std::string> memory;          // --memory BYTES ("256MiB")
  std::optional<std::string> schedule;        // --schedule NAME: a registered schedule family
  std::optional<std::string> interval;        // --interval K (uniform)
  std::optional<double> adjoint_cost;         // --adjoint-cost F (predictions only)
  std::optional<std::string> disk;            // --disk DIR
  std::optional<std::string> ram_snapshots;   // --ram-snapshots K (two-level)
  std::optional<std::string> disk_snapshots;  // --disk-snapshots D (two-level, may be 0)
  std::optional<double> disk_write_cost;      // --disk-write-cost STEPS per snapshot
  std::optional<double> disk_read_cost;       // --disk-read-cost STEPS per snapshot
  bool json = false;                          // --json
  bool stage_aware = false;                   // --stage-aware: stage snapshots may be kept
  std::optional<double> copy_cost;            // --copy-cost STEPS per snapshot copy (stage-aware)
  std::optional<std::string> online_rule;     // --online-rule least-worst-case | never-above-...

  // FlagUse::run (and FlagUse::fit for drift, sync_io, compression) only.
  std::optional<std::string> device_snapshots;  // --device-snapshots K (three-level)
  std::optional<std::string> host_snapshots;    // --host-snapshots H (three-level, may be 0)
  std::optional<std::string> drift;             // --drift ignore | warn | fail
  bool sync_io = false;                         // --sync-io: disk I/O inline, not in the background
  bool keep_snapshots = false;     // --keep-snapshots: leave the file for rewind inspect
  bool resume = false;             // --resume: continue a killed run from DIR/rewind-resume.h5
  std::optional<int> compression;  // --compression 0..9 (checked as it is parsed)
};

// The flags checked and turned into a plan request.
struct CheckpointSettings {
  std::optional<Index> steps;  // --steps, when given
  // Whether a checkpointed run was asked for (any of --snapshots, --memory, --schedule, the
  // two-level flags or --disk); always true for FlagUse::plan.
  bool checkpointed = false;
  // Kind, budget (--snapshots), interval, two-level slots, all_on_disk, and the disk costs given
  // (0 for a cost not given: see disk_write_cost/disk_read_cost).
  PlanRequest request;
  std::optional<std::int64_t> memory_bytes;  // --memory: a budget waiting for the state size
  double adjoint_cost = kDefaultAdjointCost;
  std::string disk_directory;             // --disk; empty: no disk level
  std::optional<double> disk_write_cost;  // given; otherwise measured (run) or 1 step (plan)
  std::optional<double> disk_read_cost;
  bool json = false;
  // --stage-aware: the budget may also hold step stages (schedule_plan.hpp: choose_stage_plan).
  bool stage_aware = false;
  // --copy-cost: one snapshot copy into or out of memory, in forward steps, for the stage-aware
  // chooser; not given: measured (run) or free (plan).
  std::optional<double> copy_cost;
  // --online-rule: the online schedule's rule past β(c, 3), for runs of unknown length.
  OnlineRule online_rule = OnlineRule::least_worst_case;
  bool online_rule_given = false;

  DriftPolicy drift = DriftPolicy::warn;
  bool sync_io = false;
  bool keep_snapshots = false;
  bool resume = false;
  int compression = 0;
};

inline const char* drift_policy_name(DriftPolicy policy) {
  switch (policy) {
    case DriftPolicy::ignore:
      return "ignore";
    case DriftPolicy::warn:
      return "warn";
    case DriftPolicy::fail:
      return "fail";
  }
  return "?";
}

inline DriftPolicy parse_drift_policy(std::string_view text) {
  std::string key(text);
  for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (key == "ignore") return DriftPolicy::ignore;
  if (key == "warn") return DriftPolicy::warn;
  if (key == "fail") return DriftPolicy::fail;
  rwd::detail::fail<InvalidArgument>("--drift = '", text,
                                     "' is not a policy; choose ignore, warn or fail");
}

namespace detail {

// "--disk-write-cost = -1 must be ..." with the value as typed by a person (1e-20, not 9.99e-21).
inline void require_cost(const char* flag, const std::optional<double>& value, const char* rule) {
  if (value && (!std::isfinite(*value) || *value < 0.0))
    rwd::detail::fail<InvalidArgument>(flag, " = ", *value, " ", rule);
}

// A count that may be 0 (--disk-snapshots 0: the two-level schedule with memory only).
inline Index parse_count_or_zero(const char* flag, const std::string& text) {
  return parse_integer<Index>(flag, text, IntegerRange::count_or_zero());
}

inline void require_directory(const std::string& directory) {
  if (directory.empty()) rwd::detail::fail<InvalidArgument>("--disk needs a directory");
  std::error_code error;
  const auto status = std::filesystem::status(directory, error);
  if (!std::filesystem::exists(status))
    rwd::detail::fail<InvalidArgument>("--disk '", directory,
                                       "': the snapshot directory does not exist");
  if (!std::filesystem::is_directory(status))
    rwd::detail::fail<InvalidArgument>("--disk '", directory, "' is not a directory");
}

}  // namespace detail

// Checks the flags and builds the request; InvalidArgument naming the flag otherwise. A budget in
// bytes stays in memory_bytes until the state size is known (plan: --state-bytes; run: the
// problem's size).
inline CheckpointSettings resolve_checkpoint_flags(const CheckpointFlags& flags, FlagUse use) {
  CheckpointSettings settings;
  settings.json = flags.json;
  settings.stage_aware = flags.stage_aware;
  if (flags.copy_cost && !flags.stage_aware)
    rwd::detail::fail<InvalidArgument>(
        "--copy-cost prices the snapshot copies the --stage-aware chooser weighs; add "
        "--stage-aware");
  detail::require_cost("--copy-cost", flags.copy_cost,
                       "must be finite and >= 0 (forward steps per snapshot copy)");
  settings.copy_cost = flags.copy_cost;
  if (flags.online_rule) {
    settings.online_rule = parse_online_rule(*flags.online_rule);
    settings.online_rule_given = true;
  }
  if (flags.steps) settings.steps = parse_count("--steps", *flags.steps);

  const bool three_level = flags.device_snapshots || flags.host_snapshots;
  const bool two_level = !three_level && (flags.ram_snapshots || flags.disk_snapshots);
  settings.checkpointed = use == FlagUse::plan || flags.snapshots || flags.memory ||
                          flags.schedule || two_level || three_level || flags.disk;
  PlanRequest& request = settings.request;
  if (flags.schedule) request.family = &parse_schedule_family(*flags.schedule);

  if (flags.snapshots && flags.memory)
    rwd::detail::fail<InvalidArgument>(
        "--snapshots and --memory exclude each other: give the budget one way");
  if (flags.snapshots) request.budget = parse_count("--snapshots", *flags.snapshots);
  if (flags.memory) settings.memory_bytes = parse_byte_size("--memory", *flags.memory);
  if (flags.interval) request.interval = parse_count("--interval", *flags.interval);
  if (flags.ram_snapshots)
    request.memory_slots = parse_count("--ram-snapshots", *flags.ram_snapshots);
  if (flags.disk_snapshots)
    request.disk_slots = detail::parse_count_or_zero("--disk-snapshots", *flags.disk_snapshots);
  if (three_level) {
    // Device, host and disk levels (rwd::ThreeLevelSchedule): K and H from their flags, D from
    // --disk-snapshots (0 without it); the costs are measured before the run.
    if (flags.ram_snapshots || flags.snapshots || flags.memory || flags.schedule)
      rwd::detail::fail<InvalidArgument>(
          "--device-snapshots/--host-snapshots select the three-level schedule; drop ",
          flags.ram_snapshots ? "--ram-snapshots"
          : flags.snapshots   ? "--snapshots"
          : flags.memory      ? "--memory"
                              : "--schedule");
    const Index device = flags.device_snapshots ? detail::parse_count_or_zero(
                                                      "--device-snapshots", *flags.device_snapshots)
                                                : 0;
    const Index host = flags.host_snapshots
                           ? detail::parse_count_or_zero("--host-snapshots", *flags.host_snapshots)
                           : 0;
    const Index disk = request.disk_slots.value_or(0);
    if (device + host == 0)
      rwd::detail::fail<InvalidArgument>(
          "--device-snapshots 0 --host-snapshots 0: the three-level schedule needs a snapshot in "
          "memory (device or host) for the initial state");
    if (disk > 0 && !flags.disk)
      rwd::detail::fail<InvalidArgument>("--disk-snapshots ", disk,
                                         " needs --disk DIR (where the disk snapshots go)");
    if (flags.disk && disk == 0)
      rwd::detail::fail<InvalidArgument>(
          "--disk with --device-snapshots/--host-snapshots needs --disk-snapshots D >= 1");
    request = PlanRequest::three_level(device, host, disk, request.costs);
  }
  if (two_level) {
    // The flags of the two-level family's fields.
    const ScheduleFamily& two_level_family = rwd::two_level_family();
    if (flags.schedule && request.family != &two_level_family)
      rwd::detail::fail<InvalidArgument>(
          "--ram-snapshots/--disk-snapshots select the two-level schedule, not --schedule ",
          *flags.schedule);
    request.family = &two_level_family;
  }

  if (!settings.checkpointed && (flags.interval || flags.drift || flags.adjoint_cost))
    rwd::detail::fail<InvalidArgument>(flags.interval ? "--interval"
                                       : flags.drift  ? "--drift"
                                                      : "--adjoint-cost",
                                       " applies only to checkpointed runs: add --snapshots C, "
                                       "--memory BYTES or --schedule");
  detail::require_cost("--adjoint-cost", flags.adjoint_cost, "must be finite and >= 0");
  settings.adjoint_cost = flags.adjoint_cost.value_or(kDefaultAdjointCost);
  request.costs.adjoint_cost_factor = settings.adjoint_cost;

  // The disk level.
  const bool disk_tuning =
      flags.sync_io || flags.keep_snapshots || flags.compression || flags.resume;
  if (!flags.disk && disk_tuning)
    rwd::detail::fail<InvalidArgument>(flags.sync_io          ? "--sync-io"
                                       : flags.keep_snapshots ? "--keep-snapshots"
                                       : flags.resume         ? "--resume"
                                                              : "--compression",
                                       " needs --disk DIR (where the snapshot file goes)");
  if (flags.resume) {
    // What would make the next attempt's schedule differ from this one's, or its file
    // unreadable after a kill, is refused now rather than at the resume.
    if (flags.compression.value_or(0) > 0)
      rwd::detail::fail<InvalidArgument>(
          "--resume writes the snapshot file uncompressed (a compressed chunk moves at every "
          "write, and a kill meanwhile could leave the file unreadable): drop --compression");
    // Costs measured before planning are kept in the snapshot file, and a later attempt plans
    // with them (resume_costs.hpp): two-level and three-level plans continue alike.
  }
  if (use != FlagUse::plan && two_level && !flags.disk)
    rwd::detail::fail<InvalidArgument>(
        "--ram-snapshots/--disk-snapshots need --disk DIR (where the disk snapshots go)");
  if ((flags.disk_write_cost || flags.disk_read_cost) && !two_level && !flags.disk)
    rwd::detail::fail<InvalidArgument>(
        "--disk-write-cost/--disk-read-cost weigh a disk level: add --ram-snapshots K "
        "--disk-snapshots D, or --disk DIR");
  detail::require_cost("--disk-write-cost", flags.disk_write_cost,
                       "must be finite and >= 0 (forward steps per snapshot)");
  detail::require_cost("--disk-read-cost", flags.disk_read_cost,
                       "must be finite and >= 0 (forward steps per snapshot)");
  settings.disk_write_cost = flags.disk_write_cost;
  settings.disk_read_cost = flags.disk_read_cost;
  // Placeholders until measured or defaulted; PlanRequest::validate needs finite values.
  request.costs.disk_write_time = flags.disk_write_cost.value_or(0.0);
  request.costs.disk_read_time = flags.disk_read_cost.value_or(0.0);
  if (flags.disk) {
    if (!two_level && !three_level && !flags.snapshots && !flags.memory)
      rwd::detail::fail<InvalidArgument>(
          "--disk needs a budget: --ram-snapshots K --disk-snapshots D (two-level), or "
          "--snapshots C (every snapshot on disk)");
    detail::require_directory(*flags.disk);
    settings.disk_directory = *flags.disk;
    request.all_on_disk = !two_level && !three_level;
    if (flags.compression && (*flags.compression < 0 || *flags.compression > 9))
      rwd::detail::fail<InvalidArgument>("--compression = ", *flags.compression,
                                         " must lie in [0, 9]");
    settings.compression = flags.compression.value_or(0);
    settings.sync_io = flags.sync_io;
    settings.keep_snapshots = flags.keep_snapshots;
    settings.resume = flags.resume;
  }
  if (flags.drift) settings.drift = parse_drift_policy(*flags.drift);

  // Left at the default schedule (revolve) without a budget: say what plan needs.
  if (use == FlagUse::plan && request.family == PlanRequest{}.family && !request.budget &&
      !settings.memory_bytes)
    rwd::detail::fail<InvalidArgument>(
        "rewind plan needs a budget: --snapshots C, or --memory BYTES with --state-bytes S, or "
        "--ram-snapshots K --disk-snapshots D");
  if (settings.checkpointed)
    validate_plan_request_flags(request, settings.memory_bytes.has_value());
  return settings;
}

}  // namespace rwd::cli
