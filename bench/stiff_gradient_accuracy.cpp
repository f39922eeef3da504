// bench/stiff_gradient_accuracy.cpp — exact discrete adjoints of the implicit Runge–Kutta
// methods against CVODES's continuous adjoint: for each method and tolerance, the gradient's time
// and its error against a tightly converged reference, in one run, side by side.
//
//   build/bench/stiff_gradient_accuracy                    # Robertson (about 1 s)
//   build/bench/stiff_gradient_accuracy --brusselator 32   # the 2-D Brusselator, 2·32² unknowns
//   … --brusselator 64 --solvers sparse,gmres              # only these linear solvers' rows
//   … --brusselator 256 --solvers gmres-ilu --reference gmres-ilu  # ILU(0)-preconditioned GMRES
//   … --brusselator 64 --solvers gmres --reference gmres --rtols 1e-8,1e-10 --reference-rtol 1e-12
//                                          # the Brusselator's rows at these rtols, a tighter
//                                          reference
//   … --kept-stages       # each esdirk/rodas row again keeping stages ("+kept", below)
//   … --json                                              # one JSON line per row instead
//   … --brusselator 256 --solvers gmres --reference gmres --snapshots 40 --repeats 1
//     --methods esdirk43  # (one line) a large grid: the esdirk43 rows alone (of esdirk32,
//     esdirk43, rodas4),
//                         # checkpointed (online revolve with 40 snapshots instead of store-all),
//                         # each row and the reference run once
//
// Robertson's kinetics in the cvsRoberts setting ([0, 4·10⁷], θ = (0.04, 10⁴, 3·10⁷),
// y0 = (1, 0, 0)); the Brusselator on [0, 10] (rwd::Brusselator2D: its defaults, species
// interleaved per cell, hand-written jvp, vjp, band and sparse Jacobian). J = ½|y(T)|².
// Methods: esdirk32 and esdirk43 (rwd::DiagonallyImplicitRungeKutta, adaptive steps at rtol,
// Newton at its defaults unless rtol < 10⁻⁸, then 10⁻²·rtol) under the store-all driver: dense
// LU for Robertson; for the Brusselator LAPACK's band LU ("/band", the band Jacobian assembled
// from 4n + 1 vjps), KLU ("/sparse", the problem's sparse Jacobian) and matrix-free GMRES
// ("/gmres", jvps forward, vjps in the adjoint) and the same GMRES right-preconditioned by ILU(0)
// of the sparse Jacobian at each Newton iterate and each reversed stage ("/gmres-ilu"). rodas4
// (rwd::RosenbrockStepper, adaptive steps at the same tolerances, no Newton iteration, the
// problem's second derivatives jvp_vjp in its adjoint) with the direct solvers, and for Robertson
// ros34pw2 too. bdf = rwd::CvodesIntervalStepper on one interval [0, T] under the store-all driver,
// which is CVODES's own adjoint (CVodeF/CVodeB with checkpoints in memory) at rtol for the forward,
// adjoint and quadrature problems: dense for Robertson; band, sparse (KLU) and gmres
// (unpreconditioned SPGMR) for the Brusselator. atol = 10⁻⁴·rtol for Robertson, rtol for the
// Brusselator (its values are of order 1). The reference: esdirk43 at a tight rtol with Newton
// at 10⁻¹³ (KLU for the Brusselator); its agreement with BDF at the same rtol is printed as a
// check. With --kept-stages each implicit and Rosenbrock row is followed by the same run under
// the store-all driver keeping every step's stages (StoreAllOptions::keep_stages, row "…+kept"):
// the same gradient bits, no step re-run in the reverse sweep, stage_count() times the memory.
//
// With --snapshots C the implicit and Rosenbrock rows (and the reference) run under
// rwd::CheckpointedAdjoint with revolve_schedule(C) — online(C) for these adaptive runs — in
// place of the store-all driver, whose memory grows with the steps (a 2·256² state is 1 MiB):
// the same gradient bits (every schedule gives them), a different time; --kept-stages is then
// refused (stage-keeping schedules need a fixed number of steps).
//
// The error of a gradient is max_j |g_j − ref_j| / |ref_j| over θ's components (Robertson's
// scales differ by 10¹⁰, so a norm would only see dJ/dp1). Times are the median of 3 runs (of
// --repeats R: 1 runs each row once), on one thread (rwd::set_thread_count(1)).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/cvodes_interval_stepper.hpp"
#include "rewind/integrators/diagonally_implicit_runge_kutta.hpp"
#include "rewind/integrators/rosenbrock.hpp"
#include "rewind/parallel.hpp"
#include "rewind/problems/brusselator2d.hpp"
#include "rewind/problems/robertson.hpp"
#include "rewind/schedule/schedules.hpp"

namespace {

using V = Eigen::VectorXd;

// A problem and its setting: how its implicit rows factor their stage matrices, which of
// CVODES's solvers its bdf row uses, and the suffix that names them in the table.
template <class P>
struct Case {
  const P& problem;
  V y0, theta;
  double horizon;
  double atol_per_rtol;  // atol = atol_per_rtol · rtol
  rwd::ImplicitLinearSolver implicit_solver;
  rwd::CvodesLinearSolver bdf_solver;
  std::string suffix;  // "" for Robertson, "/band", "/sparse", "/gmres", "/gmres-ilu"
};

struct Row {
  std::string method;
  double rtol = 0.0;
  rwd::Index steps = 0;
  double seconds = 0.0;
  V grad;
  rwd::Index krylov_products = 0;  // the GMRES rows: jvps and vjps of the stage solves
};

// How every row runs: the calls timed (their median), and the snapshots of a checkpointed
// implicit or Rosenbrock row (0: the store-all driver).
struct RunOptions {
  int repeats = 3;
  int snapshots = 0;
  std::string methods = "esdirk32,esdirk43,rodas4";  // the Brusselator's rows (--methods)
};
RunOptions& run_options() {
  static RunOptions options;
  return options;
}

// The median time of run_options().repeats calls of `run`, and the last call's result.
template <class Run>
double median_seconds(Run&& run) {
  std::vector<double> times;
  for (int i = 0; i < run_options().repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// The store-all driver, keeping stages or not.
rwd::StoreAllOptions store_all_options(bool keep_stages) {
  rwd::StoreAllOptions options;
  options.keep_stages = keep_stages;
  return options;
}

// The gradient of `stepper`'s run: store-all (keeping stages or not), or checkpointed with
// run_options().snapshots.
template <class Stepper>
auto gradient_of(Stepper& stepper, const V& y0, const V& theta, bool keep_stages) {
  const auto objective = rwd::Objective<rwd::EigenBackend>::terminal_squared_norm();
  if (run_options().snapshots > 0) {
    rwd::CheckpointedAdjoint driver(stepper, objective);
    const auto r = driver.run(y0, theta, rwd::revolve_schedule(run_options().snapshots));
    return std::make_pair(r.summary.steps, V(r.grad_theta));
  }
  rwd::StoreAllAdjoint driver(stepper, objective, store_all_options(keep_stages));
  const auto r = driver.run(y0, theta);
  return std::make_pair(r.summary.steps, V(r.grad_theta));
}

// The row's name.
std::string row_name(const std::string& method, const std::string& suffix, bool keep_stages) {
  return method + suffix + (keep_stages ? "+kept" : "");
}

template <class P>
Row implicit_gradient(const Case<P>& c, const std::string& method, double rtol, double newton_rtol,
                      bool keep_stages = false) {
  rwd::NewtonOptions newton;
  newton.rtol = newton_rtol;
  newton.atol = std::min(1e-12, newton_rtol * 1e-2);
  newton.linear_solver = c.implicit_solver;
  rwd::DiagonallyImplicitRungeKutta stepper(
      c.problem, rwd::ImplicitTableau::by_name(method),
      rwd::StepControl::adaptive(0.0, c.horizon, rtol, rtol * c.atol_per_rtol), newton);
  Row row{row_name(method, c.suffix, keep_stages), rtol, 0, 0.0, V()};
  row.seconds = median_seconds([&] {
    stepper.reset_counters();
    std::tie(row.steps, row.grad) = gradient_of(stepper, c.y0, c.theta, keep_stages);
    row.krylov_products = stepper.implicit_counters().gmres_products;
  });
  return row;
}

template <class P>
Row rosenbrock_gradient(const Case<P>& c, const std::string& method, double rtol,
                        bool keep_stages = false) {
  rwd::RosenbrockStepper stepper(
      c.problem, rwd::RosenbrockTableau::by_name(method),
      rwd::StepControl::adaptive(0.0, c.horizon, rtol, rtol * c.atol_per_rtol), c.implicit_solver);
  Row row{row_name(method, c.suffix, keep_stages), rtol, 0, 0.0, V()};
  row.seconds = median_seconds(
      [&] { std::tie(row.steps, row.grad) = gradient_of(stepper, c.y0, c.theta, keep_stages); });
  return row;
}

template <class P>
Row bdf_gradient(const Case<P>& c, double rtol) {
  rwd::CvodesOptions options;
  options.rtol = options.rtol_adjoint = rtol;
  options.atol = {rtol * c.atol_per_rtol};
  options.atol_adjoint = options.atol_quadrature = rtol * c.atol_per_rtol;
  options.linear_solver = c.bdf_solver;
  options.max_steps_per_interval = 10000000;
  rwd::CvodesIntervalStepper stepper(c.problem, options, rwd::IntervalGrid{0.0, c.horizon, 1});
  rwd::StoreAllAdjoint driver(stepper, rwd::Objective<rwd::EigenBackend>::terminal_squared_norm());
  Row row{"bdf" + c.suffix, rtol, 0, 0.0, V()};
  row.seconds = median_seconds([&] {
    const auto result = driver.run(c.y0, c.theta);
    row.steps = result.summary.rhs_evaluations_forward;  // BDF: its right-hand sides
    row.grad = result.grad_theta;
  });
  return row;
}

double max_relative_error(const V& g, const V& ref) {
  double worst = 0.0;
  for (Eigen::Index j = 0; j < ref.size(); ++j)
    worst = std::max(worst, std::abs(g[j] - ref[j]) / std::abs(ref[j]));
  return worst;
}

// The table of one problem: the reference row and the reference BDF row (rtol → row), then the
// rows of every rtol (rtol, Newton rtol → rows).
void print_table(const std::string& title, double reference_rtol, const Row& reference,
                 const Row& bdf_reference, const std::vector<Row>& rows, bool json) {
  if (json) {
    for (const Row& r : rows) {
      nlohmann::ordered_json j;
      j["problem"] = title;
      j["method"] = r.method;
      j["rtol"] = r.rtol;
      j["steps_or_rhs"] = r.steps;
      j["seconds"] = r.seconds;
      j["max_relative_error"] = max_relative_error(r.grad, reference.grad);
      j["krylov_products"] = r.krylov_products;
      std::cout << j.dump() << "\n";
    }
    return;
  }
  std::printf("%s, J = |y(T)|^2 / 2, dJ/dtheta against %s at rtol %.0e\n", title.c_str(),
              reference.method.c_str(), reference_rtol);
  std::printf("(reference vs CVODES %s at rtol %.0e: max relative difference %.2e)\n\n",
              bdf_reference.method.c_str(), reference_rtol,
              max_relative_error(bdf_reference.grad, reference.grad));
  std::printf("%-24s %7s %12s %11s %14s %16s\n", "method", "rtol", "steps (rhs)", "seconds",
              "dJ/dθ error", "Krylov products");
  for (const Row& r : rows)
    std::printf("%-24s %7.0e %12lld %11.5f %14.2e %16lld\n", r.method.c_str(), r.rtol,
                static_cast<long long>(r.steps), r.seconds,
                max_relative_error(r.grad, reference.grad),
                static_cast<long long>(r.krylov_products));
  std::printf(
      "\nsteps: accepted steps for esdirk*, ros*, rodas4; right-hand sides of the forward run for "
      "bdf. Krylov products: the jvps and vjps of the esdirk GMRES rows' stage solves (0 for the "
      "others)\n");
}

double newton_rtol_for(double rtol) {
  return rtol < 1e-8 ? rtol * 1e-2 : 1e-10;
}

// `run(keep_stages)`'s row, and with `kept_twins` the same run keeping stages after it.
template <class Run>
void add_rows(std::vector<Row>& rows, bool kept_twins, Run&& run) {
  rows.push_back(run(false));
  if (kept_twins) rows.push_back(run(true));
}

void robertson_table(bool json, bool kept) {
  const rwd::Robertson problem;
  const Case<rwd::Robertson> c{
      problem, problem.default_initial_state(),  problem.default_parameters(),   4e7,
      1e-4,    rwd::ImplicitLinearSolver::dense, rwd::CvodesLinearSolver::dense, ""};
  const double reference_rtol = 1e-11;
  const Row reference = implicit_gradient(c, "esdirk43", reference_rtol, 1e-13);
  const Row bdf_reference = bdf_gradient(c, reference_rtol);
  std::vector<Row> rows;
  for (double rtol : {1e-4, 1e-6, 1e-8, 1e-10}) {
    for (const char* method : {"esdirk32", "esdirk43"})
      add_rows(rows, kept, [&](bool keep) {
        return implicit_gradient(c, method, rtol, newton_rtol_for(rtol), keep);
      });
    for (const char* method : {"ros34pw2", "rodas4"})
      add_rows(rows, kept, [&](bool keep) { return rosenbrock_gradient(c, method, rtol, keep); });
    rows.push_back(bdf_gradient(c, rtol));
  }
  print_table("Robertson on [0, 4e7]", reference_rtol, reference, bdf_reference, rows, json);
}

// Whether `list` (comma-separated) names `solver`.
bool names(const std::string& list, const std::string& solver) {
  return ("," + list + ",").find("," + solver + ",") != std::string::npos;
}

// The cases whose CVODES rows are run: each once (gmres-ilu's are gmres's: CVODES's SPGMR has no
// preconditioner here).
template <class Case>
std::vector<const Case*> bdf_cases(const std::vector<const Case*>& cases, const Case& gmres) {
  std::vector<const Case*> out;
  for (const Case* c : cases) {
    const Case* bdf = c->implicit_solver == rwd::ImplicitLinearSolver::gmres_ilu ? &gmres : c;
    if (std::find(out.begin(), out.end(), bdf) == out.end()) out.push_back(bdf);
  }
  return out;
}

void brusselator_table(rwd::Index n, const std::string& solvers, const std::string& reference_by,
                       bool json, bool kept, const std::vector<double>& rtols,
                       double reference_rtol) {
  const rwd::Brusselator2D problem(n);
  const V theta = problem.default_parameters(), y0 = problem.default_initial_state();
  using Case = ::Case<rwd::Brusselator2D>;
  const auto with = [&](rwd::ImplicitLinearSolver implicit, rwd::CvodesLinearSolver bdf,
                        const char* suffix) {
    return Case{problem, y0, theta, 10.0, 1.0, implicit, bdf, suffix};
  };
  const Case band = with(rwd::ImplicitLinearSolver::band, rwd::CvodesLinearSolver::band, "/band");
  const Case sparse =
      with(rwd::ImplicitLinearSolver::sparse, rwd::CvodesLinearSolver::sparse, "/sparse");
  const Case gmres =
      with(rwd::ImplicitLinearSolver::gmres, rwd::CvodesLinearSolver::gmres, "/gmres");
  // CVODES has no ILU: its rows for this case would be the gmres case's (unpreconditioned SPGMR).
  const Case gmres_ilu =
      with(rwd::ImplicitLinearSolver::gmres_ilu, rwd::CvodesLinearSolver::gmres, "/gmres-ilu");
  std::vector<const Case*> cases;
  for (const Case* c : {&band, &sparse, &gmres, &gmres_ilu})
    if (names(solvers, c->suffix.substr(1))) cases.push_back(c);
  if (cases.empty() || !names("band,sparse,gmres,gmres-ilu", reference_by))
    throw rwd::InvalidArgument("--solvers '" + solvers + "' and --reference '" + reference_by +
                               "': each one of band, sparse, gmres, gmres-ilu");
  const Case& by = reference_by == "band"        ? band
                   : reference_by == "gmres"     ? gmres
                   : reference_by == "gmres-ilu" ? gmres_ilu
                                                 : sparse;
  const Row reference = implicit_gradient(by, "esdirk43", reference_rtol, 1e-13);
  const Row bdf_reference = bdf_gradient(*bdf_cases<Case>({&by}, gmres).front(), reference_rtol);
  std::vector<Row> rows;
  for (double rtol : rtols) {
    const double newton = newton_rtol_for(rtol);
    const std::string& methods = run_options().methods;
    for (const Case* c : cases)
      if (names(methods, "esdirk43"))
        add_rows(rows, kept,
                 [&](bool keep) { return implicit_gradient(*c, "esdirk43", rtol, newton, keep); });
    for (const Case* c : {&gmres, &gmres_ilu})
      if (names(solvers, c->suffix.substr(1)) && names(methods, "esdirk32"))
        add_rows(rows, kept,
                 [&](bool keep) { return implicit_gradient(*c, "esdirk32", rtol, newton, keep); });
    for (const Case* c : cases)  // Rosenbrock: direct solvers only
      if (c != &gmres && c != &gmres_ilu && names(methods, "rodas4"))
        add_rows(rows, kept,
                 [&](bool keep) { return rosenbrock_gradient(*c, "rodas4", rtol, keep); });
    for (const Case* c : bdf_cases(cases, gmres)) rows.push_back(bdf_gradient(*c, rtol));
  }
  // CVODES a decade tighter again than the tightest rtol: its accuracy where esdirk43's is.
  for (const Case* c : bdf_cases(cases, gmres))
    rows.push_back(bdf_gradient(*c, rtols.back() * 0.1));
  print_table("Brusselator 2x" + std::to_string(n) + "^2 on [0, 10]", reference_rtol, reference,
              bdf_reference, rows, json);
}

// "1e-8,1e-10" → {1e-8, 1e-10}: each in (0, 1), in the order given (the tightest last).
std::vector<double> parse_rtols(const std::string& list) {
  std::vector<double> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const double rtol = std::stod(list.substr(start, comma - start));
    if (!(rtol > 0.0 && rtol < 1.0))
      throw rwd::InvalidArgument("--rtols: " + list.substr(start, comma - start) +
                                 " must be in (0, 1)");
    out.push_back(rtol);
    start = comma + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) try {
  bool json = false, kept = false;
  rwd::Index brusselator = 0;
  std::string solvers = "band,sparse,gmres", reference_by = "sparse";
  std::vector<double> rtols{1e-4, 1e-6, 1e-8};  // the Brusselator's rows
  double reference_rtol = 1e-10;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json")
      json = true;
    else if (arg == "--kept-stages")
      kept = true;
    else if (arg == "--brusselator" && i + 1 < argc)
      brusselator = std::stoll(argv[++i]);
    else if (arg == "--solvers" && i + 1 < argc)
      solvers = argv[++i];
    else if (arg == "--reference" && i + 1 < argc)
      reference_by = argv[++i];
    else if (arg == "--rtols" && i + 1 < argc)
      rtols = parse_rtols(argv[++i]);
    else if (arg == "--reference-rtol" && i + 1 < argc)
      reference_rtol = std::stod(argv[++i]);
    else if (arg == "--snapshots" && i + 1 < argc)
      run_options().snapshots = std::stoi(argv[++i]);
    else if (arg == "--repeats" && i + 1 < argc)
      run_options().repeats = std::stoi(argv[++i]);
    else if (arg == "--methods" && i + 1 < argc)
      run_options().methods = argv[++i];
    else
      throw rwd::InvalidArgument("unknown argument " + arg +
                                 " (use --json, --kept-stages, --brusselator N, --solvers LIST, "
                                 "--reference S, --rtols LIST, --reference-rtol R, --snapshots C, "
                                 "--repeats R, --methods LIST)");
  }
  if (run_options().repeats < 1 || run_options().snapshots < 0)
    throw rwd::InvalidArgument("--repeats must be >= 1 and --snapshots >= 0");
  if (kept && run_options().snapshots > 0)
    throw rwd::InvalidArgument(
        "--kept-stages keeps every step's stages (store-all); it does not go with --snapshots");
  rwd::set_thread_count(1);
  if (brusselator > 0)
    brusselator_table(brusselator, solvers, reference_by, json, kept, rtols, reference_rtol);
  else
    robertson_table(json, kept);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "stiff_gradient_accuracy: %s\n", e.what());
  return 1;
}
