// src/cli/problem_fields.hpp — the named parts of a built-in problem's state that can be observed
// (rewind generate --observe v): "all", and per problem its fields or components.
//
//   auto field = rwd::cli::require_field("--observe", "v", info, /*n=*/64, /*state_size=*/8192);
//   // field.offset = 4096, field.count = 4096: Gray–Scott's v block
//
// Every field is a contiguous block of the state (rwd::ObservedField); problems whose species are
// interleaved per cell (Brusselator) offer "all" only.
//
// Header-only and free of CLI11/JSON, so tests/cli/cli_test.cpp can use it with rewind alone.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "problem_registry.hpp"
#include "rewind/error.hpp"
#include "rewind/fit/observations.hpp"
#include "rewind/types.hpp"

namespace rwd::cli {

// The observable fields of a problem of size n with state_size unknowns, "all" first.
inline std::vector<ObservedField> problem_fields(const ProblemInfo& info, Index state_size) {
  std::vector<ObservedField> fields = {{"all", 0, state_size}};
  const auto components = [&](std::initializer_list<const char*> names) {
    Index at = 0;
    for (const char* name : names) fields.push_back({name, at++, 1});
  };
  switch (info.id) {
    case ProblemId::gray_scott:  // y = [u; v], n² each
      fields.push_back({"u", 0, state_size / 2});
      fields.push_back({"v", state_size / 2, state_size / 2});
      break;
    case ProblemId::heat2d:
      fields.push_back({"u", 0, state_size});
      break;
    case ProblemId::lotka_volterra:
      components({"prey", "predator"});
      break;
    case ProblemId::lorenz63:
    case ProblemId::stochastic_lorenz63:
      components({"x", "y", "z"});
      break;
    case ProblemId::van_der_pol:
      components({"x", "v"});
      break;
    case ProblemId::robertson:
      components({"y1", "y2", "y3"});
      break;
    case ProblemId::linear:
    case ProblemId::lorenz96:
    case ProblemId::brusselator:
    case ProblemId::ornstein_uhlenbeck:
      break;
  }
  return fields;
}

// The field called `name` (case-sensitive: Gray–Scott's u and v are names, not letters).
inline ObservedField require_field(const char* flag, std::string_view name, const ProblemInfo& info,
                                   Index state_size) {
  const std::vector<ObservedField> fields = problem_fields(info, state_size);
  std::string known;
  for (const ObservedField& field : fields) {
    if (field.name == name) return field;
    known += (known.empty() ? "" : ", ") + field.name;
  }
  rwd::detail::fail<InvalidArgument>(flag, " = '", name, "': ", info.name,
                                     " has no such field; choose one of ", known);
}

}  // namespace rwd::cli
