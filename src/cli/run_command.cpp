// src/cli/run_command.cpp — see run_command.hpp.
#include "run_command.hpp"

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "gradient_run.hpp"
#include "json_report.hpp"
#include "problem_registry.hpp"
#include "progress.hpp"
#include "run_settings.hpp"
#include "text_report.hpp"

namespace rwd::cli {
namespace {

// The values CLI11 parses into; `given` is read from the options' counts after parsing.
struct RawRunOptions {
  std::string problem;
  Index n = 0;
  Index steps = 0;
  double dt = 0.0;
  std::string method;
  bool adaptive = false;
  double t_final = 0.0;
  double rtol = 0.0;
  double atol = 0.0;
  std::string linear_solver;
  std::int64_t seed = 1;  // signed, so that a negative seed is refused, not wrapped
  double fd_epsilon = 0.0;
  bool no_fd_check = false;
  bool json = false;
  Index snapshots = 0;
  std::string memory;
  std::string schedule;
  Index interval = 0;
  std::string drift;
  double adjoint_cost = 0.0;
  std::string disk;
  Index ram_snapshots = 0;
  Index disk_snapshots = 0;
  bool sync_io = false;
  bool keep_snapshots = false;
  int compression = 0;
  double disk_write_cost = 0.0;
  double disk_read_cost = 0.0;
};

std::string format_number(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", x);
  return buffer;
}

// One line per problem: name, description, size option and defaults.
std::string problems_help() {
  std::string text = "Problems (defaults: --n, --dt, --steps):\n";
  for (const ProblemInfo& p : problem_table()) {
    char name[24];
    std::snprintf(name, sizeof name, "  %-16s", p.name);
    text += name;
    text += p.description;
    text += "\n                    ";
    if (p.sized())
      text +=
          "--n = " + std::string(p.size_meaning) + " (default " + std::to_string(p.default_n) + ")";
    else
      text += "fixed size " + std::to_string(p.fixed_state_size) + " (no --n)";
    text +=
        ", dt " + format_number(p.default_dt) + ", " + std::to_string(p.default_steps) + " steps";
    if (p.alias) text += "; also '" + std::string(p.alias) + "'";
    text += "\n";
    if (p.horizon) text += "                    " + std::string(p.horizon) + "\n";
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
      "Examples: rewind run lorenz96 --n 40 --steps 200 --method rk4 --dt 0.01\n"
      "          rewind run gray_scott --n 71 --steps 2000 --snapshots 20";
  return text;
}

}  // namespace

CLI::App* add_run_command(CLI::App& app) {
  auto raw = std::make_shared<RawRunOptions>();
  CLI::App* run =
      app.add_subcommand("run",
                         "Integrate a built-in problem; J = 1/2 |y_N|^2, its exact gradient\n"
                         "(store-all adjoint, or checkpointed with --snapshots/--memory)\n"
                         "and a finite-difference check of dJ/dy0.");
  run->footer(problems_help());

  run->add_option("PROBLEM", raw->problem,
                  "linear | lorenz63 | lorenz96 | lotka_volterra |\n"
                  "van_der_pol | gray_scott (see the list below)")
      ->required();
  auto* n = run->add_option("-n,--n", raw->n,
                            "problem size: dimension of linear (default 3), N of\n"
                            "lorenz96 (40), grid side of gray_scott (64 -> 2*64^2 unknowns)");
  auto* steps = run->add_option("--steps", raw->steps,
                                "number of fixed steps (default 200); with --adaptive it\n"
                                "only sets the default --t-final");
  auto* dt = run->add_option("--dt", raw->dt,
                             "step size (default 0.01; gray_scott 1); with --adaptive the\n"
                             "first step tried (default: chosen automatically)");
  run->add_option("--method", raw->method,
                  "euler | heun | rk4 | rk38 | bs3 | dopri5 | tsit5 (default rk4;\n"
                  "bdf for robertson and brusselator), or\n"
                  "bdf: CVODES BDF on --steps intervals of length --dt, with\n"
                  "--rtol/--atol; the adjoint is CVODES's, interval by interval");
  run->add_flag("--adaptive", raw->adaptive,
                "adaptive steps from the method's embedded error estimate\n"
                "(heun, bs3, dopri5, tsit5); the gradient is exact for the\n"
                "steps taken");
  auto* t_final =
      run->add_option("--t-final", raw->t_final, "with --adaptive: end time (default steps * dt)");
  auto* rtol =
      run->add_option("--rtol", raw->rtol, "with --adaptive or bdf: relative tolerance (default 1e-6)");
  auto* atol =
      run->add_option("--atol", raw->atol, "with --adaptive or bdf: absolute tolerance (default 1e-9)");
  run->add_option("--linear-solver", raw->linear_solver,
                  "with bdf: dense | band | gmres (default: band for problems\n"
                  "with a band, dense otherwise)");
  run->add_option("--seed", raw->seed,
                  "seed of the random unit direction d of the finite-\n"
                  "difference check (default 1)");
  auto* fd_epsilon = run->add_option("--fd-epsilon", raw->fd_epsilon,
                                     "first step of the finite-difference check, which halves\n"
                                     "it and extrapolates to 0 (default 1e-3 * max(1, |y0|_inf))");
  run->add_flag("--no-fd-check", raw->no_fd_check,
                "skip the finite-difference check (typically 10 to 30\nforward runs, at most 80)");
  run->add_flag("--json", raw->json, "print one JSON object on stdout instead of the text report");
  auto* snapshots = run->add_option("--snapshots", raw->snapshots,
                                    "checkpointed: at most C snapshots (the initial state's\n"
                                    "included); see `rewind plan`")
                       ->type_name("C");
  auto* memory = run->add_option("--memory", raw->memory,
                                 "checkpointed: a snapshot budget in bytes (256MiB, 1GiB,\n"
                                 "1e9): C = floor(BYTES / (8 * state size + carry))")
                    ->type_name("BYTES");
  auto* schedule = run->add_option("--schedule", raw->schedule,
                                   "checkpointed: revolve | uniform | store-all (default\n"
                                   "revolve; uniform and store-all need no budget)")
                      ->type_name("NAME");
  auto* interval =
      run->add_option("--interval", raw->interval, "uniform: a snapshot every K steps")
          ->type_name("K");
  auto* drift = run->add_option("--drift", raw->drift,
                                "checkpointed: a replay that differs from the first sweep:\n"
                                "ignore | warn (default; one line on stderr) | fail (exit 1)")
                   ->type_name("POLICY");
  auto* adjoint_cost = run->add_option("--adjoint-cost", raw->adjoint_cost,
                                       "checkpointed: adjoint part of a reverse step in forward\n"
                                       "steps, for the predicted time only (default 1.5)")
                          ->type_name("F");
  auto* disk = run->add_option("--disk", raw->disk,
                               "snapshots in an HDF5 file in DIR: the disk level of\n"
                               "--ram-snapshots/--disk-snapshots, or all --snapshots")
                   ->type_name("DIR");
  auto* ram_snapshots = run->add_option("--ram-snapshots", raw->ram_snapshots,
                                        "two-level: K snapshots in memory (with --disk)")
                            ->type_name("K");
  auto* disk_snapshots = run->add_option("--disk-snapshots", raw->disk_snapshots,
                                         "two-level: D snapshots on disk (with --disk)")
                             ->type_name("D");
  run->add_flag("--sync-io", raw->sync_io, "disk writes and reads inline, not in the background");
  run->add_flag("--keep-snapshots", raw->keep_snapshots,
                "leave the snapshot file in DIR after the run");
  auto* compression = run->add_option("--compression", raw->compression,
                                      "deflate level 1-9 of the snapshot file (default 0: none)")
                          ->type_name("LEVEL");
  auto* disk_write_cost =
      run->add_option("--disk-write-cost", raw->disk_write_cost,
                      "two-level: one snapshot write in forward steps (default:\nmeasured)")
          ->type_name("STEPS");
  auto* disk_read_cost =
      run->add_option("--disk-read-cost", raw->disk_read_cost,
                      "two-level: one snapshot read in forward steps (default:\nmeasured)")
          ->type_name("STEPS");

  run->callback([=] {
    RunOptions o;
    o.problem = raw->problem;
    if (n->count()) o.n = raw->n;
    if (steps->count()) o.steps = raw->steps;
    if (dt->count()) o.dt = raw->dt;
    o.method = raw->method;
    o.adaptive = raw->adaptive;
    if (t_final->count()) o.t_final = raw->t_final;
    if (rtol->count()) o.rtol = raw->rtol;
    if (atol->count()) o.atol = raw->atol;
    o.linear_solver = raw->linear_solver;
    if (raw->seed < 0) rwd::detail::fail<InvalidArgument>("--seed = ", raw->seed, " must be >= 0");
    o.seed = static_cast<std::uint64_t>(raw->seed);
    if (fd_epsilon->count()) o.fd_epsilon = raw->fd_epsilon;
    o.fd_check = !raw->no_fd_check;
    o.json = raw->json;
    if (snapshots->count()) o.snapshots = raw->snapshots;
    if (memory->count()) o.memory = raw->memory;
    if (schedule->count()) o.schedule = raw->schedule;
    if (interval->count()) o.interval = raw->interval;
    if (drift->count()) o.drift = raw->drift;
    if (adjoint_cost->count()) o.adjoint_cost = raw->adjoint_cost;
    if (disk->count()) o.disk = raw->disk;
    if (ram_snapshots->count()) o.ram_snapshots = raw->ram_snapshots;
    if (disk_snapshots->count()) o.disk_snapshots = raw->disk_snapshots;
    o.sync_io = raw->sync_io;
    o.keep_snapshots = raw->keep_snapshots;
    if (compression->count()) o.compression = raw->compression;
    if (disk_write_cost->count()) o.disk_write_cost = raw->disk_write_cost;
    if (disk_read_cost->count()) o.disk_read_cost = raw->disk_read_cost;
    o.progress = stderr_is_terminal();

    const RunSettings settings = resolve_run_settings(o);
    PlanCallback on_plan;
    if (!settings.json)
      on_plan = [](const CheckpointReport& plan) { print_plan_prediction(std::cout, plan); };
    const RunReport report = run_gradient(settings, on_plan);
    if (settings.json)
      std::cout << run_report_json(report).dump(2) << std::endl;
    else
      print_text_report(std::cout, report);
  });
  return run;
}

}  // namespace rwd::cli
