// src/cli/integer_option.hpp — registers an integer option with CLI11 so that its value is read by
// rwd::cli::parse_integer (integer_text.hpp): exactly, within the range given, refused with the
// option and the range named, while the command line is parsed and before any work.
//
//   add_integer_option(*train, "--iterations,-i", settings->iterations, IntegerRange::count(),
//                      "optimizer steps");                  // Index, default shown in --help
//   add_integer_option(*run, "--seed", options->seed, IntegerRange::seed(), "noise seed");
//                                                            // std::optional<std::int64_t>
//   add_integer_option_function<int>(app, "--threads", [](int t) { ... }, range, "threads");
//
// CLI11's own integer conversion is not used for any option of rewind: it reads "1e20" into a
// 64-bit integer as 2^63 - 1 on some versions, refuses it with a message that names no range on
// others, and knows nothing of the option's meaning (a count from 1, a seed from 0).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "integer_text.hpp"

namespace rwd::cli {

namespace detail {

// "--iterations,-i" → "--iterations": the name a message uses (the first long one).
inline std::string option_long_name(const std::string& names) {
  std::string first;
  std::size_t begin = 0;
  while (begin <= names.size()) {
    std::size_t comma = names.find(',', begin);
    if (comma == std::string::npos) comma = names.size();
    const std::string name = names.substr(begin, comma - begin);
    if (first.empty()) first = name;
    if (name.rfind("--", 0) == 0) return name;
    begin = comma + 1;
  }
  return first;
}

template <class T>
struct OptionalValue {
  using type = T;
  static constexpr bool optional = false;
};
template <class T>
struct OptionalValue<std::optional<T>> {
  using type = T;
  static constexpr bool optional = true;
};

}  // namespace detail

// An integer option that hands each value, checked, to `use`.
template <class T>
CLI::Option* add_integer_option_function(CLI::App& app, const std::string& names,
                                         std::function<void(T)> use, IntegerRange range,
                                         const std::string& help) {
  const std::string flag = detail::option_long_name(names);
  CLI::Option* option = app.add_option_function<std::string>(
      names,
      [flag, range, use = std::move(use)](const std::string& text) {
        use(parse_integer<T>(flag, text, range));
      },
      help);
  option->type_name("INT");
  return option;
}

// An integer option stored in `target` (an integer, or a std::optional of one that stays empty
// when the option is not given); `target` must outlive the parse, as with CLI::App::add_option.
template <class Target>
CLI::Option* add_integer_option(CLI::App& app, const std::string& names, Target& target,
                                IntegerRange range, const std::string& help) {
  using Value = typename detail::OptionalValue<Target>::type;
  CLI::Option* option = add_integer_option_function<Value>(
      app, names, [&target](Value value) { target = value; }, range, help);
  if constexpr (!detail::OptionalValue<Target>::optional)
    option->default_str(std::to_string(target));
  return option;
}

// An integer option kept as typed, in a std::optional<std::string> that a later step reads
// (checkpoint_flags.hpp: --steps, --snapshots, ...), checked against `range` as it is parsed.
inline CLI::Option* add_integer_text_option(CLI::App& app, const std::string& names,
                                            std::optional<std::string>& target, IntegerRange range,
                                            const std::string& help) {
  const std::string flag = detail::option_long_name(names);
  CLI::Option* option = app.add_option_function<std::string>(
      names,
      [flag, range, &target](const std::string& text) {
        (void)parse_integer<std::int64_t>(flag, text, range);
        target = text;
      },
      help);
  option->type_name("INT");
  return option;
}

}  // namespace rwd::cli
