// src/cli/model_problem.hpp — a model loaded from a plugin (--model PATH) as one more problem of
// the registry (problem_registry.hpp): the subcommands run it through the same ProblemInfo
// operations, on the same templated code, as a built-in problem.
//
//   const rwd::cli::ProblemInfo& info = rwd::cli::load_model_problem("build/sir.so");
//   rwd::cli::RunReport report = info.run(settings, on_plan);   // settings.problem = &info
//
// The plugin is loaded by rwd::load_model_plugin (rewind/plugin_model.hpp), which refuses a path
// that does not exist, a file that is not a shared library, a library that is not a rewind model
// and a model of another ABI version. The command line also needs the model's
// default_parameters and initial_state(p, y0), and an rhs that is finite at the start: a model
// without them is refused here, naming the path. The facts: the model's type name, a fixed state
// size, its state names as observable fields, its parameter names (any finite value; a model
// declares no domains), default_dt and default_steps where the model declares them (else 0.01
// and 100). A run starts from initial_state(θ) and reports dJ/dθ including θ's effect through it.
//
// A stencil model (a PDE on a grid, rewind/plugin_stencil_model.hpp) becomes a sized problem
// instead, its grid chosen with --n (stencil_model_problem.hpp).
//
// Each path is loaded once per process; the entry lives until the process ends.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "problem_registry.hpp"

namespace rwd::cli {

// The registry entry of the model plugin at `path` (or InvalidArgument, naming the path).
const ProblemInfo& load_model_problem(const std::string& path);

// What `rewind plan --model PATH` weighs: the bytes of the model's state (8 per value), the
// seconds of one fixed step of `method` (any method `rewind run` takes, with its defaults; empty:
// the run's default for the model) at the model's default dt from initial_state(default θ), and of
// one reversed step (step_timing.hpp).
struct ModelStepTiming {
  std::string name;
  std::string method;  // the method timed (rwd::method_name)
  Index state_size = 0;
  std::int64_t state_bytes = 0;
  double step_seconds = 0.0;  // one step (rwd::measure_step_seconds)
  // A step and a reversed step on the same steps, the run's first (rwd::AdjointStepSeconds), and
  // from them the adjoint cost F of rwd::CostModel: a reversed step, less the step it re-runs,
  // in steps.
  double first_step_seconds = 0.0;
  double first_adjoint_step_seconds = 0.0;
  double adjoint_cost_factor = 0.0;
  int stage_units = 0;  // stage vectors a kept step holds (0: keeps none)
  // An implicit or Rosenbrock method's work per step and per reversed step, on the same steps
  // ("2.1 Newton iterations, 1 Jacobian, …"); empty for the others.
  std::string step_work;
  std::string adjoint_step_work;
};
// n: a stencil model's grid, cells per dimension (default: its default); refused for a model of
// fixed size.
ModelStepTiming time_model_step(const std::string& path, const std::string& method,
                                std::optional<Index> n = std::nullopt);

// "PATH (xxh3 HEX)": the plugin's file and the XXH3-64 hash of its bytes — what identifies a
// model's code for a resumed run.
std::string model_file_identity(const std::string& path);

}  // namespace rwd::cli
