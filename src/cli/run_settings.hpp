// src/cli/run_settings.hpp — what `rewind run` was asked to do, checked and completed.
//
//   rwd::cli::RunOptions options;            // as typed: unset fields take the problem's default
//   options.problem = "lorenz96";
//   options.dt = 0.01;
//   rwd::cli::RunSettings settings = rwd::cli::resolve_run_settings(options);  // or
//   InvalidArgument
//
// resolve_run_settings refuses bad input before any work, naming the command-line flag and the
// rule ("--dt = -1 must be a finite step size > 0"), fills in the per-problem defaults of
// problem_registry.hpp and builds the method (rwd::Method) and the step control.
//
// Checkpointing: the flags shared with `rewind plan` (checkpoint_flags.hpp, validated there);
// --snapshots C, --memory BYTES, --schedule, the two-level flags or --disk select the
// checkpointed driver (rwd::CheckpointedAdjoint); without them the run uses the store-all driver
// (rwd::StoreAllAdjoint). A budget in bytes becomes a snapshot count only when the state size is
// known (gradient_run.hpp).
//
// Header-only and free of CLI11/JSON, so tests/cli/cli_test.cpp can use it with rewind alone.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "byte_size.hpp"
#include "checkpoint_flags.hpp"
#include "model_problem.hpp"
#include "problem_parameters.hpp"
#include "problem_registry.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/butcher_tableau.hpp"
#include "rewind/integrators/cvodes_interval_stepper.hpp"
#include "rewind/integrators/step_control.hpp"
#include "rewind/integrators/stepper_factory.hpp"
#include "rewind/integrators/stochastic_stepper.hpp"
#include "rewind/types.hpp"

namespace rwd::cli {

// The options of `rewind run` as given; std::nullopt = not given on the command line. CLI11
// parses into this struct directly (run_command.cpp).
struct RunOptions {
  std::string problem;
  std::string model;         // --model PATH: a model plugin instead of a built-in problem
  std::optional<Index> n;    // problem size (see ProblemInfo::size_meaning)
  std::optional<double> dt;  // fixed: the step; adaptive: the first step tried
  std::string method;        // empty: the problem's default (rk4, or bdf for stiff problems)
  bool adaptive = false;
  std::optional<double> t_final;  // adaptive only
  std::optional<double> rtol;     // adaptive only
  std::optional<double> atol;     // adaptive only
  std::string linear_solver;      // bdf: dense | band | gmres; empty: band if the problem has one
  std::optional<double> newton_rtol;  // implicit Runge–Kutta methods: NewtonOptions::rtol
  std::optional<double> newton_atol;  // … and NewtonOptions::atol
  std::optional<int> max_substeps;    // implicit and Rosenbrock methods: a failed fixed step's cut
  std::optional<std::uint64_t> seed;  // --seed: noise seed of a problem with noise (0 … 2^64 − 1)
  std::uint64_t fd_seed = 1;          // direction of the finite-difference spot check (--fd-seed)
  std::optional<double> fd_epsilon;  // first (largest) spot-check step; default: default_fd_step
  bool no_fd_check = false;          // skip the spot check
  bool progress = false;             // progress bar on stderr (set when it is a terminal)
  std::optional<std::string> parameters;  // --parameters NAME=VALUE,… (problem_parameters.hpp)
  std::string backend = "eigen";          // --backend eigen | thrust | cuda
  // --steps (fixed steps; with --adaptive only the default --t-final), --json and the
  // checkpointing flags: any of --snapshots, --memory, --schedule, the two-level flags or --disk
  // selects the checkpointed driver.
  CheckpointFlags checkpoint;
};

// Where the state lives (--backend): Eigen vectors on the CPU, rwd::ThrustBackend on Thrust's
// CPP device system (the GPU code path on one CPU core), or on a CUDA device (device_run.hpp).
enum class RunBackend { eigen, thrust, cuda };

// Everything a run needs, with defaults filled in.
struct RunSettings {
  const ProblemInfo* problem = nullptr;
  RunBackend backend = RunBackend::eigen;
  Index n = 0;  // problem size (0 for fixed-size problems)
  // --method (rwd::Method, stepped through rwd::with_stepper): a Runge–Kutta tableau; for
  // problems with noise (ProblemInfo::noise) euler_maruyama or milstein, with the key of the
  // draws (--seed, default 1); or bdf, CVODES on macro-intervals, where a "step" is one interval
  // of length --dt and --steps intervals make the horizon (--rtol, --atol, and --linear-solver
  // when given; otherwise band when the problem has a band).
  Method method;
  StepControl control;     // fixed (t0 = 0, dt, steps) or adaptive (0 → t_final, rtol, atol)
  std::uint64_t seed = 1;  // direction of the finite-difference spot check (--fd-seed)
  std::optional<double> fd_epsilon;  // nullopt: chosen from y0 (default_fd_step)
  bool fd_check = true;
  bool json = false;
  bool progress = false;
  std::vector<NamedParameter> parameters;  // --parameters: θ entries replacing the defaults
  // Checkpointing (checkpoint.checkpointed = false: the store-all driver). A --memory budget
  // becomes a snapshot count when the state size is known, and disk costs not given are measured
  // before the run (gradient_run.hpp).
  CheckpointSettings checkpoint;
};

// Adaptive tolerances when not given (StepControl's defaults).
inline constexpr double kDefaultRtol = 1e-6;
inline constexpr double kDefaultAtol = 1e-9;

namespace detail {
// The shortest text that reads back as value: 1e-20, not 9.9999999999999995e-21.
inline std::string shortest(double value) {
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  return std::string(buffer, end);
}
[[noreturn]] inline void refuse(const char* flag, double value, const char* rule) {
  rwd::detail::fail<InvalidArgument>(flag, " = ", shortest(value), " ", rule);
}
inline void require_positive_finite(const char* flag, double value, const char* rule) {
  if (!(value > 0.0) || !std::isfinite(value)) refuse(flag, value, rule);
}
}  // namespace detail

// --backend: thrust and cuda run the problems with device right-hand sides (runs_on_device) by
// Runge–Kutta, or by CVODES BDF with the matrix-free GMRES solver over rewind's device N_Vector
// (rewind/integrators/thrust_cvodes.hpp; --linear-solver dense or band is refused by the stepper
// before any step); whether a CUDA device is there is asked by the caller (device_run.hpp), still
// before any work.
inline void resolve_backend(const std::string& backend, const std::string& method,
                            RunSettings& settings) {
  if (backend == "eigen") {
    settings.backend = RunBackend::eigen;
    return;
  }
  if (backend == "thrust")
    settings.backend = RunBackend::thrust;
  else if (backend == "cuda")
    settings.backend = RunBackend::cuda;
  else
    rwd::detail::fail<InvalidArgument>("--backend = '", backend,
                                       "' is not a backend (eigen, thrust, cuda)");
  if (!runs_on_device(*settings.problem))
    rwd::detail::fail<InvalidArgument>("--backend ", backend, ": ", settings.problem->name,
                                       " has no device right-hand side; the problems that do: ",
                                       device_problem_list(), " (run it with --backend eigen)");
  (void)method;
}

// The built-in problem `problem` names, or the model plugin at `model` (--model PATH,
// model_problem.hpp): exactly one of the two.
inline const ProblemInfo& require_problem_or_model(const std::string& problem,
                                                   const std::string& model) {
  if (model.empty()) {
    if (problem.empty())
      rwd::detail::fail<InvalidArgument>("name a problem (one of ", problem_name_list(),
                                         ") or give --model PATH");
    return require_problem(problem);
  }
  if (!problem.empty())
    rwd::detail::fail<InvalidArgument>("--model ", model, " replaces the problem '", problem,
                                       "': give one of the two");
  return load_model_problem(model);
}

// --linear-solver for an implicit or Rosenbrock method: dense, band, sparse, gmres or gmres-ilu
// (empty: the default, band for a problem with a band, dense otherwise; Rosenbrock refuses the
// two GMRES).
inline ImplicitLinearSolver implicit_linear_solver(const RunOptions& options,
                                                   const std::string& method) {
  if (options.linear_solver.empty()) return ImplicitLinearSolver::automatic;
  if (options.linear_solver == "dense") return ImplicitLinearSolver::dense;
  if (options.linear_solver == "band") return ImplicitLinearSolver::band;
  if (options.linear_solver == "sparse") return ImplicitLinearSolver::sparse;
  if (options.linear_solver == "gmres") return ImplicitLinearSolver::gmres;
  if (options.linear_solver == "gmres-ilu") return ImplicitLinearSolver::gmres_ilu;
  rwd::detail::fail<InvalidArgument>("--linear-solver '", options.linear_solver, "': --method ",
                                     method,
                                     " solves with dense, band or sparse LU or GMRES, "
                                     "matrix-free or preconditioned by ILU(0) (dense, band, "
                                     "sparse, gmres, gmres-ilu; default band for a problem "
                                     "with a band)");
}

// --max-substeps N, refused outside [1, 2^20] (rewind/integrators/held_step_substeps.hpp).
inline int checked_max_substeps(int n) {
  if (n < 1 || n > rwd::detail::kMaxHeldStepSubsteps)
    rwd::detail::fail<InvalidArgument>("--max-substeps ", n,
                                       ": must be in [1, 2^20] (1: a fixed step whose stage "
                                       "equations fail stops the run)");
  return n;
}

// A Rosenbrock method solves one linear system per stage and no nonlinear one: the Newton flags
// do not apply; --linear-solver chooses how its matrices are factored.
inline void apply_rosenbrock_options(const RunOptions& options, RosenbrockMethod& rosenbrock) {
  if (options.newton_rtol || options.newton_atol)
    rwd::detail::fail<InvalidArgument>(options.newton_rtol ? "--newton-rtol" : "--newton-atol",
                                       ": --method ", rosenbrock.tableau.name,
                                       " is a Rosenbrock method, which solves no nonlinear "
                                       "system (no Newton iteration)");
  rosenbrock.linear_solver = implicit_linear_solver(options, rosenbrock.tableau.name);
  if (options.max_substeps) rosenbrock.max_substeps = checked_max_substeps(*options.max_substeps);
}

// The implicit methods' flags: --newton-rtol/--newton-atol into the method's NewtonOptions, and
// --linear-solver dense, band or sparse. For an explicit method, any of them is refused.
inline void apply_implicit_options(const RunOptions& options, ImplicitRungeKuttaMethod* implicit) {
  if (!implicit) {
    if (!options.linear_solver.empty())
      rwd::detail::fail<InvalidArgument>(
          "--linear-solver applies to --method bdf and the implicit methods (an explicit "
          "Runge-Kutta method solves no linear systems)");
    if (options.newton_rtol || options.newton_atol)
      rwd::detail::fail<InvalidArgument>(
          options.newton_rtol ? "--newton-rtol" : "--newton-atol",
          " applies to the implicit methods (backward_euler, trapezoid, sdirk2, esdirk32, "
          "esdirk43)");
    if (options.max_substeps)
      rwd::detail::fail<InvalidArgument>(
          "--max-substeps applies to the implicit and Rosenbrock methods' fixed steps");
    return;
  }
  implicit->newton.linear_solver = implicit_linear_solver(options, implicit->tableau.name);
  if (options.newton_rtol) {
    detail::require_positive_finite("--newton-rtol", *options.newton_rtol,
                                    "must be finite and > 0");
    implicit->newton.rtol = *options.newton_rtol;
  }
  if (options.newton_atol) {
    detail::require_positive_finite("--newton-atol", *options.newton_atol,
                                    "must be finite and > 0");
    implicit->newton.atol = *options.newton_atol;
  }
  if (options.max_substeps)
    implicit->newton.max_substeps = checked_max_substeps(*options.max_substeps);
  implicit->newton.validate();
}

inline RunSettings resolve_run_settings(const RunOptions& options) {
  RunSettings settings;
  settings.problem = &require_problem_or_model(options.problem, options.model);
  const ProblemInfo& info = *settings.problem;

  if (info.sized()) {
    settings.n = options.n.value_or(info.default_n);
  } else if (options.n) {
    rwd::detail::fail<InvalidArgument>("--n does not apply to ", info.name,
                                       ", whose state size is fixed at ", info.fixed_state_size);
  }

  if (options.parameters)
    settings.parameters = parse_parameter_values("--parameters", *options.parameters, info,
                                                 problem_parameter_names(info, settings.n));

  const Index steps = options.checkpoint.steps ? parse_count("--steps", *options.checkpoint.steps)
                                               : info.default_steps;
  if (options.dt)
    detail::require_positive_finite("--dt", *options.dt, "must be a finite step size > 0");
  const double dt = options.dt.value_or(info.default_dt);

  const std::string method = options.method.empty() ? (info.stiff   ? "bdf"
                                                       : info.noise ? "euler_maruyama"
                                                                    : "rk4")
                                                    : options.method;
  const bool sde_method = method == "euler_maruyama" || method == "milstein";
  if (info.noise && !sde_method)
    rwd::detail::fail<InvalidArgument>(
        info.name, " has noise: --method euler_maruyama or milstein, not '", method, "'");
  if (sde_method && !info.noise)
    rwd::detail::fail<InvalidArgument>("--method ", method, " needs a problem with noise (",
                                       noise_problem_list(), "); ", info.name, " has none");
  if (options.seed && !info.noise)
    rwd::detail::fail<InvalidArgument>(
        "--seed is the noise seed, and ", info.name,
        " has no noise; the finite-difference check's direction is seeded by --fd-seed");
  const std::uint64_t noise_seed = options.seed.value_or(1);
  if (method == "bdf") {
    if (options.adaptive)
      rwd::detail::fail<InvalidArgument>(
          "--method bdf chooses its own steps; --adaptive is for Runge-Kutta methods");
    if (options.t_final)
      rwd::detail::fail<InvalidArgument>(
          "--method bdf: the horizon is --steps intervals of --dt; drop --t-final");
    const double rtol = options.rtol.value_or(kDefaultRtol);
    const double atol = options.atol.value_or(kDefaultAtol);
    detail::require_positive_finite("--rtol", rtol, "must be finite and > 0");
    if (rtol < 1e-15)
      detail::refuse("--rtol", rtol, "is below double-precision round-off; use >= 1e-15");
    detail::require_positive_finite("--atol", atol, "must be finite and > 0");
    BdfMethod bdf;
    bdf.options.rtol = bdf.options.rtol_adjoint = rtol;
    bdf.options.atol = {atol};
    bdf.options.atol_adjoint = bdf.options.atol_quadrature = atol;
    if (!options.linear_solver.empty()) {
      if (options.linear_solver == "dense")
        bdf.linear_solver = CvodesLinearSolver::dense;
      else if (options.linear_solver == "band")
        bdf.linear_solver = CvodesLinearSolver::band;
      else if (options.linear_solver == "gmres")
        bdf.linear_solver = CvodesLinearSolver::gmres;
      else if (options.linear_solver == "sparse")
        bdf.linear_solver = CvodesLinearSolver::sparse;
      else
        rwd::detail::fail<InvalidArgument>("--linear-solver '", options.linear_solver,
                                           "' is not known (dense, band, sparse, gmres)");
    }
    settings.method = bdf;
    // Each fixed step is one macro-interval (rwd::bdf_interval_grid).
    settings.control = StepControl::fixed(0.0, dt, steps);
  } else if (sde_method) {
    if (options.adaptive || options.t_final || options.rtol || options.atol)
      rwd::detail::fail<InvalidArgument>("--method ", method,
                                         " takes fixed steps: drop --adaptive, --t-final, --rtol "
                                         "and --atol");
    if (!options.linear_solver.empty())
      rwd::detail::fail<InvalidArgument>("--linear-solver applies to --method bdf");
    settings.method = StochasticMethod{
        method == "milstein" ? SdeScheme::milstein : SdeScheme::euler_maruyama, noise_seed};
    settings.control = StepControl::fixed(0.0, dt, steps);
  } else {
    try {
      settings.method = method_by_name(method);  // a tableau's name: bdf and the SDEs' are above
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(std::string("--method: ") + e.what());
    }
    auto* implicit = std::get_if<ImplicitRungeKuttaMethod>(&settings.method);
    auto* rosenbrock = std::get_if<RosenbrockMethod>(&settings.method);
    if (rosenbrock)
      apply_rosenbrock_options(options, *rosenbrock);
    else
      apply_implicit_options(options, implicit);
    const bool embedded =
        implicit     ? implicit->tableau.has_embedded()
        : rosenbrock ? rosenbrock->tableau.has_embedded()
                     : std::get<ExplicitRungeKuttaMethod>(settings.method).tableau.has_embedded();
    if (options.adaptive) {
      if (!embedded)
        rwd::detail::fail<InvalidArgument>(
            "--method ", method,
            " has no embedded error estimate, so it cannot take --adaptive steps; use heun, bs3, "
            "dopri5, tsit5 (explicit) or trapezoid, sdirk2, esdirk32, esdirk43 (implicit)");
      const double t_final = options.t_final.value_or(static_cast<double>(steps) * dt);
      detail::require_positive_finite("--t-final", t_final, "must be a finite end time > 0");
      const double rtol = options.rtol.value_or(kDefaultRtol);
      const double atol = options.atol.value_or(kDefaultAtol);
      detail::require_positive_finite("--rtol", rtol, "must be finite and > 0");
      if (rtol < 1e-15)
        detail::refuse("--rtol", rtol, "is below double-precision round-off; use >= 1e-15");
      detail::require_positive_finite("--atol", atol, "must be finite and > 0");
      // An explicit --dt is the first step tried; otherwise the stepper chooses it.
      settings.control = StepControl::adaptive(0.0, t_final, rtol, atol, options.dt.value_or(0.0));
    } else {
      if (options.t_final || options.rtol || options.atol)
        rwd::detail::fail<InvalidArgument>(
            options.t_final ? "--t-final"
            : options.rtol  ? "--rtol"
                            : "--atol",
            " applies only with --adaptive; fixed steps end at steps * dt");
      settings.control = StepControl::fixed(0.0, dt, steps);
    }
  }
  settings.control.validate();

  if (options.fd_epsilon)
    detail::require_positive_finite("--fd-epsilon", *options.fd_epsilon, "must be finite and > 0");
  if (options.fd_epsilon && options.no_fd_check)
    rwd::detail::fail<InvalidArgument>("--fd-epsilon and --no-fd-check exclude each other");
  settings.fd_check = !options.no_fd_check;
  settings.fd_epsilon = options.fd_epsilon;
  settings.seed = options.fd_seed;
  settings.json = options.checkpoint.json;
  settings.progress = options.progress;

  settings.checkpoint = resolve_checkpoint_flags(options.checkpoint, FlagUse::run);
  resolve_backend(options.backend, method, settings);
  return settings;
}

}  // namespace rwd::cli
