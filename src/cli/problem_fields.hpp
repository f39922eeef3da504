// src/cli/problem_fields.hpp — the named parts of a built-in problem's state that can be observed
// (rewind generate --observe v): "all", and per problem its fields or components.
//
//   auto field = rwd::cli::require_field("--observe", "v", info, /*state_size=*/8192);
//   // field.offset = 4096, field.count = 4096: Gray–Scott's v block
//
// Every field is a contiguous block of the state (rwd::ObservedField), as the problem declares it
// next to its equations (rwd::StateFieldFact); problems whose species are interleaved per cell
// (Brusselator) offer "all" only.
//
// Free of CLI11/JSON.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "problem_registry.hpp"
#include "rewind/error.hpp"
#include "rewind/fit/observations.hpp"
#include "rewind/types.hpp"

namespace rwd::cli {

// The observable fields of a problem with state_size unknowns, "all" first, then the fields the
// problem declares (ProblemFacts::fields), each a block of the state.
inline std::vector<ObservedField> problem_fields(const ProblemInfo& info, Index state_size) {
  std::vector<ObservedField> fields = {{"all", 0, state_size}};
  for (const StateFieldFact& field : info.fields) {
    const Index count = state_size / field.blocks;
    fields.push_back({field.name, field.block * count, count});
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
