// src/cli/run_command.hpp — the `rewind run PROBLEM [options]` subcommand.
//
//   CLI::App app{"..."};
//   rwd::cli::add_run_command(app);
//   app.parse(argc, argv);   // runs the problem; throws rwd::Error or CLI::ParseError on failure
//
// The subcommand's callback resolves the options (run_settings.hpp), computes the gradient and
// its spot check (gradient_run.hpp) and prints the text report or, with --json, one JSON object
// on stdout. Errors propagate as exceptions; main.cpp turns them into exit statuses.
#pragma once

#include <CLI/CLI.hpp>

namespace rwd::cli {

CLI::App* add_run_command(CLI::App& app);

}  // namespace rwd::cli
