// src/cli/checkpoint_flag_options.cpp — see checkpoint_flag_options.hpp.
#include "checkpoint_flag_options.hpp"

#include "integer_option.hpp"
#include "rewind/schedule/schedule_registry.hpp"

namespace rwd::cli {

void add_checkpoint_flags(CLI::App& command, CheckpointFlags& flags, FlagUse use) {
  const bool plan = use == FlagUse::plan;
  const bool fit = use == FlagUse::fit;
  if (!fit) {
    auto* steps =
        add_integer_text_option(command, "--steps", flags.steps, IntegerRange::count(),
                                plan ? "l: steps of the run (required; 1e6 is accepted)"
                                     : "number of fixed steps (default: the problem's); with\n"
                                       "--adaptive it only sets the default --t-final")
            ->type_name("L");
    if (plan) steps->required();
  }
  add_integer_text_option(command, "--snapshots", flags.snapshots, IntegerRange::count(),
                          "c: at most C snapshots, the initial state's included\n"
                          "(selects the checkpointed adjoint; see `rewind plan`)")
      ->type_name("C");
  command
      .add_option("--memory", flags.memory,
                  "a snapshot budget in bytes (256MiB, 1GiB, 1e9):\n"
                  "c = floor(BYTES / (state bytes + carry bytes))")
      ->type_name("BYTES");
  command
      .add_option("--schedule", flags.schedule,
                  // The registered families (rwd::schedule_family_names), one of them per run.
                  rwd::schedule_family_names(/*only_plannable=*/true) +
                      "\n(default revolve; uniform and store-all need no budget)")
      ->type_name("NAME");
  add_integer_text_option(command, "--interval", flags.interval, IntegerRange::count(),
                          "uniform: a snapshot every K steps (default: the\n"
                          "interval with the fewest advances that fits c)")
      ->type_name("K");
  if (!fit)
    command
        .add_option("--adjoint-cost", flags.adjoint_cost,
                    "F: adjoint part of a reverse step, in forward steps\n"
                    "(default 1.5); only for the predicted time")
        ->type_name("F");
  command
      .add_option("--disk", flags.disk,
                  "snapshots in an HDF5 file in DIR: the disk level of\n"
                  "--ram-snapshots/--disk-snapshots, or all --snapshots")
      ->type_name("DIR");
  add_integer_text_option(command, "--ram-snapshots", flags.ram_snapshots, IntegerRange::count(),
                          "two-level: K snapshots in memory")
      ->type_name("K");
  add_integer_text_option(command, "--disk-snapshots", flags.disk_snapshots,
                          IntegerRange::count_or_zero(), "two-level: D snapshots on disk")
      ->type_name("D");
  command
      .add_option("--disk-write-cost", flags.disk_write_cost,
                  "one snapshot write, in forward steps (default: measured\n"
                  "by run; 1 in plan unless measured with --step-time)")
      ->type_name("STEPS");
  command
      .add_option("--disk-read-cost", flags.disk_read_cost,
                  "one snapshot read, in forward steps (default as for\n"
                  "--disk-write-cost)")
      ->type_name("STEPS");
  command
      .add_option("--copy-cost", flags.copy_cost,
                  "with --stage-aware: one snapshot copy into or out of\n"
                  "memory, in forward steps (default: measured by run,\n"
                  "free in plan)")
      ->type_name("STEPS");
  command.add_flag("--stage-aware", flags.stage_aware,
                   plan ? "the budget may also hold the stages of steps (Runge-Kutta,\n"
                          "fixed steps): the least predicted time of revolve,\n"
                          "stage-aware (CAMS), store-all and store-all-stages"
                        : "the budget may also hold the stages of steps (Runge-Kutta,\n"
                          "fixed steps): the least predicted time of revolve,\n"
                          "stage-aware (CAMS), store-all and store-all-stages;\n"
                          "without a budget, store-all keeping every step's stages\n"
                          "(with --adaptive too: each step keeps its size)");
  command
      .add_option("--online-rule", flags.online_rule,
                  plan ? "with --online, past beta(c, 3): least-worst-case (default)\n"
                         "or never-above-dynamic (Wang-Moin-Iaccarino's moves)"
                       : "a run of unknown length (--adaptive, a stop condition) runs\n"
                         "the online schedule; past beta(c, 3) it follows\n"
                         "least-worst-case (default) or never-above-dynamic\n"
                         "(never more recomputation than Wang-Moin-Iaccarino's)")
      ->type_name("RULE");
  command.add_flag("--json", flags.json,
                   "print one JSON object on stdout instead of the text report");
  if (plan) return;
  command
      .add_option("--drift", flags.drift,
                  "checkpointed: a replay that differs from the first sweep:\n"
                  "ignore | warn (default; one line on stderr) | fail (exit 1)")
      ->type_name("POLICY");
  command.add_flag("--sync-io", flags.sync_io,
                   "disk writes and reads inline, not in the background");
  add_integer_option(command, "--compression", flags.compression, IntegerRange::between(0, 9),
                     "deflate level 1-9 of the snapshot file (default 0: none)")
      ->type_name("LEVEL");
  if (fit) return;
  command.add_flag("--keep-snapshots", flags.keep_snapshots,
                   "leave the snapshot file in DIR after the run");
  command.add_flag("--resume", flags.resume,
                   "make the run resumable, or continue one: the snapshot file\n"
                   "DIR/rewind-resume.h5 (one per rank under MPI:\n"
                   "rewind-resume.rank<K>.h5) records the run and its progress; a\n"
                   "run killed (or stopped by SIGINT/SIGTERM) goes on from it\n"
                   "when the same command is run again, to the same bits; the\n"
                   "file goes once the run completes");
  add_integer_text_option(command, "--device-snapshots", flags.device_snapshots,
                          IntegerRange::count_or_zero(),
                          "three-level: K snapshots in device memory (--backend\n"
                          "cuda; the backend's own memory elsewhere), with\n"
                          "--host-snapshots H in (pinned) host memory and\n"
                          "--disk DIR --disk-snapshots D in the HDF5 file; the\n"
                          "copy costs are measured before the run")
      ->type_name("K");
  add_integer_text_option(command, "--host-snapshots", flags.host_snapshots,
                          IntegerRange::count_or_zero(), "three-level: H snapshots in host memory")
      ->type_name("H");
}

}  // namespace rwd::cli
