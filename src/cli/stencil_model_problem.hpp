// src/cli/stencil_model_problem.hpp — a stencil model loaded from a plugin (--model PATH whose
// model is a PDE on a structured grid, rewind/plugin_stencil_model.hpp) as one more sized problem
// of the registry: --n N is its grid, N cells per dimension, as for the built-in PDEs.
//
// model_problem.cpp loads the plugin and hands a stencil model here. The command line needs the
// model's default_parameters and initial_cell, and an rhs that is finite at the start on the
// default grid: a model without them is refused, naming the path. The facts: the model's type
// name, its fields as observable parts of the state (field k is block k of F), its parameter
// names (any finite value), `default_grid_size` (else 32, at least the stencil's span) as the
// default n, default_dt and default_steps (else 0.01 and 100); a 2-D grid's fields are drawn as
// images. A run starts from the model's initial state for θ and reports dJ/dθ including θ's
// effect through it. The problem declares its sparse Jacobian, so the implicit methods take
// --linear-solver sparse and gmres-ilu, and bdf takes sparse (KLU).
#pragma once

#include <optional>
#include <string>

#include "model_problem.hpp"
#include "problem_registry.hpp"
#include "rewind/plugin_stencil_model.hpp"

namespace rwd::cli {

struct RunSettings;  // run_settings.hpp

// The registry entry of a loaded stencil-model plugin (or InvalidArgument, naming its path).
ProblemInfo stencil_model_entry(const StencilPlugin& plugin);

// What `rewind plan --model PATH [--n N]` weighs for a stencil model, on the grid of settings.n
// cells per dimension, with the run's settings (model_problem.hpp, step_timing.hpp).
ModelStepTiming time_stencil_model_step(const StencilPlugin& plugin, const RunSettings& settings);

}  // namespace rwd::cli
