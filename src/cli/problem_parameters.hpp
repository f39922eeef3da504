// src/cli/problem_parameters.hpp — a built-in problem's parameters by name on the command line:
// --parameters F=0.04,k=0.06 (run, generate, fit), --start, --bounds F=0.01:0.1, --fit F,k.
//
//   const auto names = rwd::cli::problem_parameter_names(info, n);    // {"Du", "Dv", "F", "k"}
//   auto values = rwd::cli::parse_parameter_values("--parameters", "F=0.04,k=0.06", info, names);
//   rwd::cli::apply_parameter_values(values, theta);                   // θ[2] = 0.04, θ[3] = 0.06
//
// Names are the problem's own (ProblemInfo::description lists them; `rewind run --help` too),
// matched case-insensitively when that is unambiguous. Values are finite numbers within the
// model's domain (ProblemFacts::parameter_domain, declared by each problem): a diffusion
// coefficient or a rate must be > 0, a feed or a damping >= 0; forcings and matrix entries may take
// any finite value. Every mistake is refused with the flag, the name and the rule before any work.
//
// Free of CLI11/JSON.
#pragma once

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "problem_registry.hpp"
#include "rewind/error.hpp"
#include "rewind/types.hpp"

namespace rwd::cli {

// The problem's parameter names in θ order, for the size n.
inline std::vector<std::string> problem_parameter_names(const ProblemInfo& info, Index n) {
  return info.parameter_names(n);
}

// One named parameter: its index in θ and, where given, a value.
struct NamedParameter {
  std::string name;  // the problem's spelling
  Index index = 0;   // position in θ
  double value = 0.0;
};

namespace detail {

inline std::string trimmed(std::string_view text) {
  const std::size_t a = text.find_first_not_of(" \t");
  if (a == std::string_view::npos) return {};
  const std::size_t b = text.find_last_not_of(" \t");
  return std::string(text.substr(a, b - a + 1));
}

inline bool same_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

inline std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// Items of a comma-separated list, trimmed; an empty item is refused.
inline std::vector<std::string> list_items(const char* flag, std::string_view text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string item = trimmed(text.substr(start, comma - start));
    if (item.empty()) rwd::detail::fail<InvalidArgument>(flag, " = '", text, "' has an empty item");
    items.push_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return items;
}

// A finite double written as a plain number; nullopt otherwise.
inline std::optional<double> read_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(value))
    return std::nullopt;
  return value;
}

}  // namespace detail

// The index of `name` among `names`: exact match first, then a unique case-insensitive one.
inline Index parameter_index(const char* flag, const std::string& name, const ProblemInfo& info,
                             const std::vector<std::string>& names) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<Index>(i);
  Index found = -1;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (detail::same_ignoring_case(names[i], name)) {
      if (found >= 0)
        rwd::detail::fail<InvalidArgument>(flag, ": '", name,
                                           "' matches more than one parameter of ", info.name, " (",
                                           detail::joined(names), "); spell it exactly");
      found = static_cast<Index>(i);
    }
  if (found < 0)
    rwd::detail::fail<InvalidArgument>(flag, ": ", info.name, " has no parameter '", name,
                                       "'; its parameters are ", detail::joined(names));
  return found;
}

// Refuses a value outside the parameter's domain.
inline void check_parameter_value(const char* flag, const NamedParameter& p,
                                  const ProblemInfo& info) {
  const ParameterDomain domain = info.parameter_domain(p.name);
  if (!in_parameter_domain(domain, p.value))
    rwd::detail::fail<InvalidArgument>(flag, ": ", info.name, "'s ", p.name, " = ", p.value, " ",
                                       parameter_domain_rule(domain));
}

// "NAME,NAME,…" → the named parameters (values 0), each named once.
inline std::vector<NamedParameter> parse_parameter_names(const char* flag, std::string_view text,
                                                         const ProblemInfo& info,
                                                         const std::vector<std::string>& names) {
  std::vector<NamedParameter> out;
  for (const std::string& item : detail::list_items(flag, text)) {
    const Index index = parameter_index(flag, item, info, names);
    for (const NamedParameter& seen : out)
      if (seen.index == index)
        rwd::detail::fail<InvalidArgument>(flag, ": ", names[static_cast<std::size_t>(index)],
                                           " is named twice");
    out.push_back({names[static_cast<std::size_t>(index)], index, 0.0});
  }
  return out;
}

// Splits "NAME=VALUE" at the first '='; refuses an item without one.
inline std::pair<std::string, std::string> split_assignment(const char* flag,
                                                            const std::string& item,
                                                            const char* form) {
  const std::size_t eq = item.find('=');
  if (eq == std::string::npos || eq == 0)
    rwd::detail::fail<InvalidArgument>(flag, ": '", item, "' is not ", form);
  return {detail::trimmed(std::string_view(item).substr(0, eq)),
          detail::trimmed(std::string_view(item).substr(eq + 1))};
}

// "NAME=VALUE,…" → values for the named parameters, each in its domain and named once.
inline std::vector<NamedParameter> parse_parameter_values(const char* flag, std::string_view text,
                                                          const ProblemInfo& info,
                                                          const std::vector<std::string>& names) {
  std::vector<NamedParameter> out;
  for (const std::string& item : detail::list_items(flag, text)) {
    const auto [name, value_text] = split_assignment(flag, item, "NAME=VALUE (e.g. F=0.04)");
    const Index index = parameter_index(flag, name, info, names);
    for (const NamedParameter& seen : out)
      if (seen.index == index)
        rwd::detail::fail<InvalidArgument>(flag, ": ", seen.name, " is given twice");
    const std::optional<double> value = detail::read_number(value_text);
    if (!value)
      rwd::detail::fail<InvalidArgument>(flag, ": ", names[static_cast<std::size_t>(index)], " = '",
                                         value_text, "' is not a finite number");
    NamedParameter p{names[static_cast<std::size_t>(index)], index, *value};
    check_parameter_value(flag, p, info);
    out.push_back(std::move(p));
  }
  return out;
}

// θ with the given values written in.
template <class Vector>
void apply_parameter_values(const std::vector<NamedParameter>& values, Vector& theta) {
  for (const NamedParameter& p : values) theta[p.index] = p.value;
}

}  // namespace rwd::cli
