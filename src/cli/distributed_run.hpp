// src/cli/distributed_run.hpp — `rewind run` under mpirun: a problem whose state splits across the
// ranks (gray_scott, heat2d, lorenz96, brusselator: rwd::DistributedGrayScott, …; a stencil model
// plugin on a 2-D or 3-D grid: rwd::DistributedPluginStencilProblem) runs the same
// gradient_run.hpp code on the distributed backend; every rank holds its rows of every state and
// snapshot, rank 0 prints the report.
//
//   mpirun -np 4 rewind run gray_scott --n 708 --steps 200 --snapshots 10
//   mpirun -np 4 rewind run --model build/gray_scott.so --n 708 --snapshots 10
//
// The gradient has the same bits for every number of ranks (the backend's reductions fold in a
// fixed global order). Problems without a distributed form run in one process; under a launcher
// with more than one rank they are refused before any work, naming those that split.
// Only built with MPI (REWIND_CLI_WITH_MPI).
#pragma once

#include <string>
#include <vector>

#include "gradient_run.hpp"
#include "problem_registry.hpp"
#include "rewind/plugin_stencil_model.hpp"
#include "run_report.hpp"
#include "run_settings.hpp"

namespace rwd::cli {

// Whether the problem has a form whose state splits across ranks.
bool splits_across_ranks(const ProblemInfo& problem);

// Where the problems' facts (ProblemFacts::distributed_form) and the split models the tool
// runs disagree, one line each; empty when they agree (checked by cli_test).
std::vector<std::string> split_form_mismatches();

// "lorenz96, gray_scott, heat2d, brusselator": the built-in problems that split.
std::string problems_split_across_ranks();

// Runs the problem the settings name split across MPI_COMM_WORLD; refuses (InvalidArgument) a
// problem that does not split (splits_across_ranks).
RunReport run_gradient_across_ranks(const RunSettings& settings, const PlanCallback& on_plan);

// `rewind run --model PATH` under mpirun for a stencil model on a 2-D or 3-D grid (n cells per
// side): split across MPI_COMM_WORLD from the model's initial state for θ (--parameters applied),
// dJ/dθ including θ's effect through it: the same bits for any rank count — with the explicit
// methods the one-process run's bits too; with GMRES (esdirk43, bdf) the one-process run's
// gradient to round-off, its reductions folding in another order.
RunReport run_stencil_model_across_ranks(const StencilPlugin& plugin, const RunSettings& settings,
                                         const PlanCallback& on_plan);

}  // namespace rwd::cli
