// rewind/problems/problem_facts.hpp — what a problem says about itself to the tools that run it by
// name (the `rewind` command line, and later models loaded as plugins): names, a description,
// its parameters' names and domains, the named parts of its state, default sizes and run
// lengths, and which other forms of it exist (device, split across MPI ranks).
//
//   struct Lorenz63Declaration {
//     static ProblemFacts facts() {
//       return {.name = "lorenz63", .description = "Lorenz-63, chaotic; ...",
//               .fixed_state_size = 3, .default_dt = 0.01, .default_steps = 200,
//               .parameters = {{"sigma"}, {"rho"}, {"beta"}},
//               .fields = state_components({"x", "y", "z"})};
//     }
//     static Lorenz63<> make(Index) { return Lorenz63<>(); }
//   };
//
// Plain data, with no knowledge of how a problem is integrated, checkpointed or driven from a
// command line: each built-in problem declares its facts in its own header, next to its
// equations, and a front end keeps the list of declarations (src/cli/builtin_problems.hpp).
#pragma once

#include <cmath>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "rewind/types.hpp"

namespace rwd {

// Which values a parameter may take (always finite): a value outside means another model (a
// negative diffusion is ill-posed, a negative rate reverses a reaction), not another setting of
// this one.
enum class ParameterDomain { any, nonnegative, positive };

// "must be finite and > 0": the rule, for error messages.
inline const char* parameter_domain_rule(ParameterDomain domain) {
  switch (domain) {
    case ParameterDomain::any:
      return "must be finite";
    case ParameterDomain::nonnegative:
      return "must be finite and >= 0";
    case ParameterDomain::positive:
      return "must be finite and > 0";
  }
  return "?";
}

// Whether value lies in the domain (NaN and ±inf never do).
inline bool in_parameter_domain(ParameterDomain domain, double value) {
  if (!std::isfinite(value)) return false;
  switch (domain) {
    case ParameterDomain::any:
      return true;
    case ParameterDomain::nonnegative:
      return value >= 0.0;
    case ParameterDomain::positive:
      return value > 0.0;
  }
  return false;
}

// One entry of θ: its name (as parameter_names() spells it) and domain.
struct ParameterFact {
  std::string name;
  ParameterDomain domain = ParameterDomain::positive;
};

// A named part of the state that can be observed: block `block` (0-based) of the state cut into
// `blocks` equal, contiguous blocks. Gray–Scott's y = [u; v] has u = block 0 of 2 and v = block 1
// of 2; a component of a 3-variable system is block i of 3.
struct StateFieldFact {
  std::string name;
  Index block = 0;
  Index blocks = 1;
};

// Components named in state order: name i is block i of names.size().
inline std::vector<StateFieldFact> state_components(std::initializer_list<const char*> names) {
  std::vector<StateFieldFact> fields;
  Index block = 0;
  for (const char* name : names)
    fields.push_back({name, block++, static_cast<Index>(names.size())});
  return fields;
}

// Every member has a default: a declaration names only what it has (designated initializers).
struct ProblemFacts {
  std::string name{};   // canonical name, as printed in reports (lower case, '_' between words)
  std::string alias{};  // one more accepted name besides the '-' spellings (empty: none)
  std::string description{};  // one line: the model, and θ's names (with their defaults)
  // The size n a front end asks for (--n): what it means and its default. Empty / 0 when the
  // state size is fixed.
  std::string size_meaning{};
  Index default_n = 0;
  Index fixed_state_size = 0;  // the state size of a fixed-size problem (0 for sized ones)
  double default_dt = 0.0;     // step size of a default run (and, times default_steps, the horizon)
  Index default_steps = 0;
  bool stiff = false;  // its default method is an implicit one (BDF)
  // What limits the horizon at the defaults, measured (one line; empty: nothing does): a decay
  // that reaches a steady state or underflows, a chaotic gradient that overflows.
  std::string horizon{};
  bool noise = false;  // an SDE (rwd::SdeProblem): stepped by a stochastic scheme
  // θ's entries in θ order, by name and domain. Empty when the names depend on the size
  // (LinearOde's A[i][j]); every entry then lies in sized_parameter_domain.
  std::vector<ParameterFact> parameters{};
  ParameterDomain sized_parameter_domain = ParameterDomain::any;
  // The named parts of the state besides "all" (empty: "all" only, e.g. when species are
  // interleaved per cell).
  std::vector<StateFieldFact> fields{};
  // The state is fields on an n × n grid, row-major, one block of n² values per field (pictures
  // draw it as images).
  bool grid_fields = false;
  bool device_form = false;       // has a form whose kernels run on a device (Thrust/CUDA)
  bool distributed_form = false;  // has a form whose state splits across MPI ranks

  bool sized() const { return !size_meaning.empty(); }

  // The domain of the parameter called `name` (the problem's spelling).
  ParameterDomain parameter_domain(std::string_view parameter) const {
    for (const ParameterFact& p : parameters)
      if (p.name == parameter) return p.domain;
    return sized_parameter_domain;
  }
};

}  // namespace rwd
