// src/cli/method_flag_options.cpp — see method_flag_options.hpp.
#include "method_flag_options.hpp"

#include <string>

#include "run_settings.hpp"

namespace rwd::cli {
namespace {

std::string method_help(MethodFlagUse use) {
  const std::string methods =
      "euler | heun | rk4 | rk38 | bs3 | dopri5 | tsit5 (default rk4;\n"
      "bdf for robertson and brusselator), or for problems with\n"
      "noise euler_maruyama (their default) | milstein, or\n"
      "implicit: backward_euler | trapezoid | sdirk2 | esdirk32 |\n"
      "esdirk43, or Rosenbrock: ros3p | ros34pw2 | rodas4 (exact\n"
      "discrete adjoints for stiff problems), or\n"
      "bdf: CVODES BDF on --steps intervals of length --dt, with\n"
      "--rtol/--atol; the adjoint is CVODES's, interval by interval";
  if (use == MethodFlagUse::fit)
    return "with --observations: the method to refit with (default:\n"
           "the file's, with its recorded tolerances and solver);\n"
           "with --data: a Runge-Kutta method, explicit, implicit or\n"
           "Rosenbrock (default rk4, esdirk43 for robertson and\n"
           "brusselator; not bdf). Any of:\n" +
           methods;
  if (use == MethodFlagUse::generate) return methods + "\n(fixed steps: no --adaptive)";
  return methods;
}

}  // namespace

void add_method_flags(CLI::App& command, RunOptions& options, MethodFlagUse use) {
  const bool run = use == MethodFlagUse::run;
  command.add_option("--method", options.method, method_help(use));
  if (run) {
    command.add_flag("--adaptive", options.adaptive,
                     "adaptive steps from the method's embedded error estimate\n"
                     "(heun, bs3, dopri5, tsit5, trapezoid, sdirk2, esdirk32,\n"
                     "esdirk43, ros3p, ros34pw2, rodas4); the gradient is exact\n"
                     "for the steps taken");
    command.add_option("--t-final", options.t_final,
                       "with --adaptive: end time (default steps * dt)");
  }
  if (use == MethodFlagUse::fit)
    command.add_flag("--adaptive", options.adaptive,
                     "with --data: adaptive steps from the method's embedded\n"
                     "error estimate to --rtol/--atol, landing on every data\n"
                     "time, chosen at the start and again at the estimate\n"
                     "(held while the optimiser moves); for data spanning\n"
                     "decades of time");
  const std::string tolerance_use = run ? "with --adaptive or bdf"
                                    : use == MethodFlagUse::fit
                                        ? "bdf, or --data with --adaptive"
                                        : "bdf (the only adaptive method here)";
  command.add_option("--rtol", options.rtol,
                     tolerance_use + ": relative tolerance (default 1e-6)" +
                         (use == MethodFlagUse::fit ? "\n(default: the file's)" : ""));
  command.add_option("--atol", options.atol,
                     tolerance_use + ": absolute tolerance (default 1e-9)" +
                         (use == MethodFlagUse::fit ? "\n(default: the file's)" : ""));
  command.add_option("--linear-solver", options.linear_solver,
                     "with bdf: dense | band | sparse | gmres (default: band for\n"
                     "problems with a band, dense otherwise); the implicit\n"
                     "methods: dense | band | sparse | gmres | gmres-ilu,\n"
                     "Rosenbrock: dense | band | sparse (default band for\n"
                     "problems with a band); sparse: KLU with the problem's own\n"
                     "sparse Jacobian (brusselator, stencil models); gmres:\n"
                     "matrix-free; gmres-ilu: GMRES preconditioned by ILU(0) of\n"
                     "that sparse Jacobian");
  command.add_option("--newton-rtol", options.newton_rtol,
                     "implicit methods: Newton's relative tolerance (default\n"
                     "1e-10); the gradient is exact up to this residual");
  command.add_option("--newton-atol", options.newton_atol,
                     "implicit methods: Newton's absolute tolerance (default 1e-12)");
  command.add_option("--max-substeps", options.max_substeps,
                     "implicit and Rosenbrock methods, fixed steps: a step whose\n"
                     "stage equations fail whole is taken as 2, 4, ... equal\n"
                     "substeps, at most this many (default 64; 1: stop there)");
}

}  // namespace rwd::cli
