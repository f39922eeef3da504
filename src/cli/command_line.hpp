// src/cli/command_line.hpp — the whole command line of `rewind`: the top-level options and every
// subcommand, registered on a CLI::App. main.cpp parses with it; so does the command-line fuzzing
// harness (tests/fuzz/fuzz_command_line.cpp), which stops before the subcommands' actions.
//
//   CLI::App app{rwd::cli::kRewindDescription, "rewind"};
//   rwd::cli::add_rewind_command_line(app);
//   app.parse(argc, argv);            // CLI::ParseError or rwd::InvalidArgument for bad input
#pragma once

#include <CLI/CLI.hpp>

namespace rwd::cli {

// --threads above this is a typo, not a machine.
inline constexpr int kMaxThreads = 4096;

// --version, --threads, the footer and the subcommands run, plan, inspect, train (and train
// spiral), predict, generate (one per problem, and spiral) and fit.
void add_rewind_command_line(CLI::App& app, const char* version);

// Thrown by a parse of an app given to stop_before_actions once the command line is checked.
struct CommandLineChecked {};

// Makes app.parse stop, by throwing CommandLineChecked, after every option was converted and
// range-checked and before any subcommand's action runs: nothing is done and nothing written.
// (Replacing the actions instead would free the option targets their lambdas own.)
void stop_before_actions(CLI::App& app);

}  // namespace rwd::cli
