// src/cli/run_command.cpp — see run_command.hpp.
#include "run_command.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <variant>

#include "checkpoint_flag_options.hpp"
#include "device_run.hpp"
#include "gradient_run.hpp"
#include "integer_option.hpp"
#include "json_report.hpp"
#include "method_flag_options.hpp"
#include "problem_registry.hpp"
#include "process_group.hpp"
#include "progress.hpp"
#include "report_output.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/stepper_factory.hpp"
#include "run_settings.hpp"
#include "text_report.hpp"

#if REWIND_CLI_WITH_MPI
#include "distributed_run.hpp"
#endif

namespace rwd::cli {
namespace {

std::string format_number(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", x);
  return buffer;
}

// Every problem's name, " | " between them, wrapped for the help's option column.
std::string problem_names() {
  std::string text, line;
  for (const ProblemInfo& p : problem_table()) {
    const std::string word = line.empty() && text.empty() ? p.name : " | " + p.name;
    if (line.size() + word.size() > 50) {
      text += line + " |\n";
      line = p.name;
    } else {
      line += word;
    }
  }
  return text + line;
}

// One line per problem: name, description, size option and defaults.
std::string problems_help() {
  std::string text = "Problems (defaults: --n, --dt, --steps):\n";
  // The name column is as wide as the longest name, so a name never runs into its description.
  std::size_t width = 0;
  for (const ProblemInfo& p : problem_table()) width = std::max(width, p.name.size());
  for (const ProblemInfo& p : problem_table()) {
    text += "  " + p.name + std::string(width + 2 - p.name.size(), ' ');
    text += p.description;
    text += "\n                    ";
    if (p.sized())
      text += "--n = " + p.size_meaning + " (default " + std::to_string(p.default_n) + ")";
    else
      text += "fixed size " + std::to_string(p.fixed_state_size) + " (no --n)";
    text +=
        ", dt " + format_number(p.default_dt) + ", " + std::to_string(p.default_steps) + " steps";
    if (!p.alias.empty()) text += "; also '" + p.alias + "'";
    text += "\n";
    if (!p.horizon.empty()) text += "                    " + p.horizon + "\n";
  }
  text +=
      "  Names may use '-' for '_' (lotka-volterra, gray-scott, van-der-pol).\n"
      "\n"
      "Output: the problem and sizes, J, |dJ/dy0|, |dJ/dtheta| (and dJ/dtheta when it has\n"
      "at most 8 entries), a finite-difference spot check of dJ/dy0 and the run's summary;\n"
      "a line 'degenerate: ...' when the gradient is zero or negligible or the state stopped\n"
      "changing before the end (rewind/adjoint/gradient_health.hpp).\n"
      "--json prints the same as one JSON object on stdout.\n"
      "\n"
      "Checkpointing: --snapshots C or --memory BYTES (and optionally --schedule) run the\n"
      "checkpointed adjoint, which keeps at most C snapshots and recomputes the rest; with\n"
      "--memory, C = floor(BYTES / (8 * state size + sizeof(rwd::Carry))). The gradient is bit\n"
      "for bit that of the store-all run; the report adds the schedule's counts (as in\n"
      "`rewind plan`), memory against store-all, and the drift monitor's verdict on every\n"
      "replay. Text mode first prints the predicted recompute ratio and time.\n"
      "\n"
      "Disk: --disk DIR keeps snapshots in an HDF5 file in DIR (removed at the end unless\n"
      "--keep-snapshots; check it with `rewind inspect`): with --ram-snapshots K\n"
      "--disk-snapshots D the two-level schedule places K in memory and D on disk to\n"
      "minimise time under the disk's write and read costs (measured before the run unless\n"
      "--disk-write-cost/--disk-read-cost give them in forward steps); with --snapshots C\n"
      "all C go to disk. Writes run behind and reads ahead on a background thread\n"
      "(--sync-io: inline); the summary reports how much disk time was hidden.\n"
      "When stderr is a terminal, a progress bar shows the forward and reverse sweeps.\n"
      "\n"
      "Noise: ornstein_uhlenbeck and stochastic_lorenz63 are SDEs, stepped by\n"
      "--method euler_maruyama or milstein with draws keyed by (--seed, step, component):\n"
      "replays from snapshots regenerate them, so every schedule gives the store-all bits,\n"
      "and the gradient is the pathwise one for that seed (the spot check uses the same\n"
      "draws).\n"
      "\n"
      "Examples: rewind run lorenz96 --n 40 --steps 200 --method rk4 --dt 0.01\n"
      "          rewind run gray_scott --n 71 --steps 2000 --snapshots 20";
  return text;
}

// Under mpirun, a problem that splits across ranks runs split (even on one rank, so that every
// rank count gives the same bits); one that does not runs in one process only.
RunReport run_on_this_job(const RunSettings& settings, const PlanCallback& on_plan) {
  if (settings.backend != RunBackend::eigen) {
    if (ProcessGroup::launched() && ProcessGroup::size() > 1)
      rwd::detail::fail<InvalidArgument>(
          "--backend thrust|cuda runs in one process; under mpirun use --backend eigen");
    if (settings.backend == RunBackend::thrust) return run_gradient_on_thrust(settings, on_plan);
    return run_gradient_on_cuda(settings, on_plan);
  }
#if REWIND_CLI_WITH_MPI
  if (ProcessGroup::launched() &&
      (splits_across_ranks(*settings.problem) || ProcessGroup::size() > 1))
    return run_gradient_across_ranks(settings, on_plan);
#endif
  return run_gradient(settings, on_plan);
}

// A fixed step of an implicit or Rosenbrock method that fails (a singular iteration matrix, a
// Newton iteration that does not converge, a non-finite state) is most often a step too large for
// a stiff problem — a stiff problem's default dt is sized for bdf, which chooses its own steps
// within it. When the method could choose its steps too (it has an embedded error estimate), the
// error says so.
bool could_adapt_instead(const RunSettings& settings) {
  if (settings.control.is_adaptive()) return false;
  if (const auto* implicit = std::get_if<ImplicitRungeKuttaMethod>(&settings.method))
    return implicit->tableau.has_embedded();
  if (const auto* rosenbrock = std::get_if<RosenbrockMethod>(&settings.method))
    return rosenbrock->tableau.has_embedded();
  return false;
}

template <class Failure>
[[noreturn]] void fail_with_adaptive_hint(const RunSettings& settings, const Failure& failure) {
  throw Failure(std::string(failure.what()) + "; these were fixed steps of dt = " +
                rwd::cli::detail::shortest(settings.control.dt) + ": with --adaptive, " +
                method_name(settings.method) + " chooses its own steps");
}

RunReport run_with_step_hint(const RunSettings& settings, const PlanCallback& on_plan) {
  try {
    return run_on_this_job(settings, on_plan);
  } catch (const SolverError& e) {
    if (could_adapt_instead(settings)) fail_with_adaptive_hint(settings, e);
    throw;
  } catch (const NumericalError& e) {
    if (could_adapt_instead(settings)) fail_with_adaptive_hint(settings, e);
    throw;
  }
}

}  // namespace

CLI::App* add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* run =
      app.add_subcommand("run",
                         "Integrate a built-in problem; J = 1/2 |y_N|^2, its exact gradient\n"
                         "(store-all adjoint, or checkpointed with --snapshots/--memory)\n"
                         "and a finite-difference check of dJ/dy0.");
  run->footer(problems_help());

  run->add_option("PROBLEM", o->problem, problem_names() + "\n(each described below)");
  run->add_option("--model", o->model,
                  "instead of PROBLEM: a model plugin (a shared library built\n"
                  "with rewind_add_model; docs/models.md), run like a built-in\n"
                  "problem under its own state and parameter names")
      ->type_name("PATH");
  add_integer_option(*run, "-n,--n", o->n, IntegerRange::count(),
                     "problem size: dimension of linear (default 3), N of\n"
                     "lorenz96 (40), grid side of gray_scott (64 -> 2*64^2 unknowns);\n"
                     "with --model of a stencil model, its grid side");
  run->add_option("--parameters", o->parameters,
                  "theta by name, replacing the problem's defaults, e.g.\n"
                  "--parameters F=0.04,k=0.06 (names in the list below)")
      ->type_name("NAME=VALUE,...");
  run->add_option("--dt", o->dt,
                  "step size (default 0.01; gray_scott 1); with --adaptive the\n"
                  "first step tried (default: chosen automatically)");
  add_method_flags(*run, *o, MethodFlagUse::run);
  add_integer_option(*run, "--seed", o->seed, IntegerRange::unsigned_seed(),
                     "noise seed of a problem with noise (ornstein_uhlenbeck,\n"
                     "stochastic_lorenz63; default 1): the key of every draw, so\n"
                     "the same seed gives the same bits; refused for problems\n"
                     "without noise");
  add_integer_option(*run, "--fd-seed", o->fd_seed, IntegerRange::unsigned_seed(),
                     "seed of the random unit direction d of the finite-\n"
                     "difference check (default 1)");
  run->add_option("--fd-epsilon", o->fd_epsilon,
                  "first step of the finite-difference check, which halves\n"
                  "it and extrapolates to 0 (default 1e-3 * max(1, |y0|_inf))");
  run->add_flag("--no-fd-check", o->no_fd_check,
                "skip the finite-difference check (typically 10 to 30\nforward runs, at most 80)");
  run->add_option("--backend", o->backend,
                  "where the state lives: eigen (default, CPU) | thrust (the\n"
                  "GPU code path on Thrust's CPP system, one CPU core) | cuda\n"
                  "(a CUDA device; rewind built with REWIND_WITH_CUDA); thrust\n"
                  "and cuda run gray_scott, heat2d and lorenz96");
  add_checkpoint_flags(*run, o->checkpoint, FlagUse::run);

  run->callback([o] {
    o->progress = stderr_is_terminal() && ProcessGroup::prints();
    const RunSettings settings = resolve_run_settings(*o);
    if (settings.backend == RunBackend::cuda) {
      if (const std::string why = cuda_unavailable_reason(); !why.empty())
        rwd::detail::fail<InvalidArgument>("--backend cuda: ", why);
    }
    PlanCallback on_plan;
    if (!settings.json)
      on_plan = [](const CheckpointReport& plan) { print_plan_prediction(std::cout, plan); };
    const RunReport report = run_with_step_hint(settings, on_plan);
    if (settings.json) {
      emit_json_report(run_report_json(report));
      emit_report_vector("grad_y0", report.grad_y0);
      emit_report_vector("grad_theta", report.grad_theta);
    } else {
      print_text_report(std::cout, report);
    }
  });
  return run;
}

}  // namespace rwd::cli
