// src/cli/method_flag_options.hpp — registers the integration method's flags (--method, its
// tolerances, linear solver and Newton tolerances) with a CLI11 subcommand: one definition for
// `rewind run`, `generate` and `fit`, parsed into RunOptions and checked by one function,
// resolve_run_settings (run_settings.hpp).
//
//   auto options = std::make_shared<rwd::cli::RunOptions>();
//   rwd::cli::add_method_flags(*generate, *options, rwd::cli::MethodFlagUse::generate);
//
// run: --method, --adaptive, --t-final, --rtol, --atol, --linear-solver, --newton-rtol,
// --newton-atol, --max-substeps. generate and fit: the same without --adaptive and --t-final
// (observations are step indices of a run whose steps do not depend on θ: fixed steps, or BDF's
// fixed intervals).
#pragma once

#include <CLI/CLI.hpp>

namespace rwd::cli {

struct RunOptions;

// Which subcommand the flags are for: their help says what they do there.
enum class MethodFlagUse { run, generate, fit };

// Adds the method's flags to `command`, parsing into `options`, which must outlive the parse.
void add_method_flags(CLI::App& command, RunOptions& options, MethodFlagUse use);

}  // namespace rwd::cli
