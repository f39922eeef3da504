// src/cli/option_hint.hpp — what to tell a user whose command line was refused by the parser:
// which help page to read, and the option they probably meant.
//
//   rewind run lorenz63 --snapshot 5
//   rewind: error: The following argument was not expected: --snapshot; did you mean
//   --snapshots? (see rewind run --help)
//
// The parser (CLI11) names the unexpected argument but not the subcommand it was given to, and
// suggests nothing; these functions look at the command line again, after the parse failed.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rewind/edit_distance.hpp"

namespace rwd::cli {

// The innermost subcommand the command line names ("rewind train spiral ..." → spiral), with the
// index of the first argument after its name in *next; nullptr when argv[1] names none.
inline const CLI::App* named_subcommand(const CLI::App& app, int argc, char** argv, int* next) {
  const CLI::App* found = nullptr;
  const CLI::App* level = &app;
  int i = 1;
  while (i < argc && argv[i][0] != '-') {
    const CLI::App* child = nullptr;
    for (const CLI::App* sub : level->get_subcommands([](const CLI::App*) { return true; }))
      if (sub->check_name(argv[i])) child = sub;
    if (child == nullptr) break;
    found = level = child;
    ++i;
  }
  *next = i;
  return found;
}

// "rewind train spiral": the words that call the subcommand, for its help line.
inline std::string command_words(int argc, char** argv, int next) {
  std::string words = "rewind";
  for (int i = 1; i < next && i < argc; ++i) words += std::string(" ") + argv[i];
  return words;
}

// The long option of `command` closest to `written` ("--snapshot" → "--snapshots"), when it is
// close enough to be a slip of the keyboard: at most a third of the word's letters differ
// (at least 1, at most 3), or one is the other with a prefix missing.
inline std::optional<std::string> closest_option(const CLI::App& command,
                                                 std::string_view written) {
  const std::string_view word = written.substr(0, written.find('='));
  std::optional<std::string> best;
  std::size_t best_distance = std::max<std::size_t>(1, std::min<std::size_t>(3, word.size() / 3));
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) {
      const std::string candidate = "--" + name;
      const std::size_t d = edit_distance(word, candidate);
      if (d <= best_distance && (!best || d < best_distance)) {
        best = candidate;
        best_distance = d;
      }
    }
  }
  return best;
}

// The first argument after the subcommand that looks like an option and that `command` does
// not know, or nothing.
inline std::optional<std::string> first_unknown_option(const CLI::App& command, int argc,
                                                       char** argv, int first) {
  for (int i = first; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg.size() < 3 || arg.substr(0, 2) != "--") continue;
    const std::string name(arg.substr(0, arg.find('=')));
    if (command.get_option_no_throw(name) == nullptr) return std::string(arg);
  }
  return std::nullopt;
}

// The parser's message made useful: a "did you mean" for an unknown option close to a known one,
// and the help page of the subcommand the command line names (rewind's own otherwise).
inline std::string explain_parse_error(const CLI::App& app, const std::string& message, int argc,
                                       char** argv) {
  int next = 1;
  const CLI::App* sub = named_subcommand(app, argc, argv, &next);
  std::string text = message;
  if (sub != nullptr) {
    if (const auto unknown = first_unknown_option(*sub, argc, argv, next))
      if (const auto guess = closest_option(*sub, *unknown))
        text += "; did you mean " + *guess + "?";
    return text + " (see " + command_words(argc, argv, next) + " --help)";
  }
  return text + " (see rewind --help)";
}

}  // namespace rwd::cli
