// src/cli/checkpoint_flag_options.hpp — registers the checkpointing flags (checkpoint_flags.hpp)
// with a CLI11 subcommand, with one help text each.
//
//   auto flags = std::make_shared<rwd::cli::CheckpointFlags>();
//   rwd::cli::add_checkpoint_flags(*plan, *flags, rwd::cli::FlagUse::plan);
//   plan->callback([flags] { auto c = rwd::cli::resolve_checkpoint_flags(*flags, FlagUse::plan);
//   });
#pragma once

#include <CLI/CLI.hpp>

#include "checkpoint_flags.hpp"

namespace rwd::cli {

// Adds --steps … --json (and the run-only flags for FlagUse::run) to `command`, parsing into
// `flags`, which must outlive the parse. --steps is required for FlagUse::plan.
void add_checkpoint_flags(CLI::App& command, CheckpointFlags& flags, FlagUse use);

}  // namespace rwd::cli
