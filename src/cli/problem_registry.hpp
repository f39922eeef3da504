// src/cli/problem_registry.hpp — the built-in problems the `rewind` tool can run, by name.
//
//   const rwd::cli::ProblemInfo* info = rwd::cli::find_problem("lorenz-96");  // → lorenz96
//   rwd::cli::with_problem(*info, /*n=*/40, [](const auto& problem, const auto& y0,
//                                              const auto& theta, const auto& names) { ... });
//
// One table holds every problem's canonical name, aliases, a one-line description and the
// defaults of the `run` subcommand (size, step size, steps), so that the name lookup, the help
// text and the runs cannot disagree. Names are matched case-insensitively with '-' and '_'
// interchangeable (lotka-volterra, Gray_Scott, van-der-pol all work).
//
// Header-only and free of CLI11/JSON, so tests/cli/cli_test.cpp can use it with rewind alone.
#pragma once

#include <cctype>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/problems/brusselator2d.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/heat2d.hpp"
#include "rewind/problems/linear.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "rewind/problems/lotka_volterra.hpp"
#include "rewind/problems/ornstein_uhlenbeck.hpp"
#include "rewind/problems/robertson.hpp"
#include "rewind/problems/stochastic_lorenz63.hpp"
#include "rewind/problems/van_der_pol.hpp"
#include "rewind/types.hpp"

namespace rwd::cli {

enum class ProblemId {
  linear,
  lorenz63,
  lorenz96,
  lotka_volterra,
  van_der_pol,
  gray_scott,
  heat2d,
  robertson,
  brusselator,
  ornstein_uhlenbeck,
  stochastic_lorenz63
};

struct ProblemInfo {
  ProblemId id;
  const char* name;         // canonical name, as printed in reports
  const char* alias;        // one more accepted name besides the '-' spellings (nullptr = none)
  const char* description;  // one line for --help
  // --n: what it means for this problem, and its default; nullptr / 0 when the size is fixed.
  const char* size_meaning;
  Index default_n;
  Index fixed_state_size;  // state size of a fixed-size problem (0 for sized ones)
  double default_dt;       // fixed step size (and, times default_steps, the horizon)
  Index default_steps;
  bool stiff = false;  // its default method is bdf (a step is then one interval)
  // What limits the horizon at the defaults, measured (one line for --help; nullptr = nothing
  // does): a decay that reaches a steady state or underflows, a chaotic gradient that overflows.
  // tests/cli/problems_alive_test.cpp checks these.
  const char* horizon = nullptr;
  // An SDE (rwd::SdeProblem): run with --method euler_maruyama (its default) or milstein, its
  // draws keyed by --seed.
  bool noise = false;

  bool sized() const { return size_meaning != nullptr; }
};

// Every problem the tool knows, in the order --help lists them.
inline const std::vector<ProblemInfo>& problem_table() {
  static const std::vector<ProblemInfo> table = {
      {ProblemId::linear, "linear", nullptr,
       "y' = A y, a damped oscillator chain; theta = the n*n entries of A", "dimension n", 3, 0,
       0.01, 200, false,
       "decays like e^(-0.1 t): at n = 3, J and its gradient underflow near t = 3670 (367 000 "
       "steps), reported degenerate"},
      {ProblemId::lorenz63, "lorenz63", nullptr,
       "Lorenz-63, chaotic; theta = (sigma, rho, beta) = (10, 28, 8/3)", nullptr, 0, 3, 0.01, 200,
       false,
       "dJ/dy0 grows like e^(0.9 t) and overflows double near t = 789 (78 900 steps): a "
       "NaN/Inf error"},
      {ProblemId::lorenz96, "lorenz96", nullptr,
       "Lorenz-96 ring of N variables, chaotic; theta = (F) = (8)", "N", 40, 0, 0.01, 200, false,
       "at N = 40 dJ/dy0 grows like e^(1.7 t) and overflows double near t = 418 (41 800 steps): "
       "a NaN/Inf error"},
      {ProblemId::lotka_volterra, "lotka_volterra", nullptr,
       "Lotka-Volterra predator-prey; theta = (alpha, beta, delta, gamma)", nullptr, 0, 2, 0.01,
       200},
      {ProblemId::van_der_pol, "van_der_pol", "vanderpol",
       "Van der Pol oscillator; theta = (mu) = (1)", nullptr, 0, 2, 0.01, 200},
      {ProblemId::gray_scott, "gray_scott", nullptr,
       "Gray-Scott reaction-diffusion on a periodic n x n grid; theta = (Du, Dv, F, k) = (0.16, "
       "0.08, 0.037, 0.06)",
       "grid side n", 64, 0, 1.0, 200, false,
       "a labyrinth that fills the grid by ~3000 steps and stays (checked to 10^6 steps, n >= 32)"},
      // dt = 1 is stable (and monotone) for Euler and RK4 at every n with kappa = 0.2: the
      // limits are 2/(8 kappa) and 2.785/(8 kappa) or more (rewind/problems/heat2d.hpp).
      {ProblemId::heat2d, "heat2d", "heat",
       "2D heat equation u' = kappa Lap(u) + s0 g on an n x n grid, cold walls; theta = (kappa, "
       "s0)",
       "grid side n", 64, 0, 1.0, 1000, false,
       "decays to a steady state (time scale n^2/(2 pi^2 kappa) steps): at n = 64 it stops "
       "changing near step 23 000, reported stationary"},
      // Stiff: meant for --method bdf, where a step is one interval (40 of 1e6 make 4e7).
      {ProblemId::robertson, "robertson", "roberts",
       "Robertson kinetics, stiff (use --method bdf); theta = (p1, p2, p3) = (0.04, 1e4, 3e7)",
       nullptr, 0, 3, 1.0e6, 40, true},
      {ProblemId::brusselator, "brusselator", nullptr,
       "2D Brusselator on an n x n grid, no-flux, stiff (use --method bdf); theta = (A, B, alpha)",
       "grid side n", 16, 0, 0.5, 20, true},
      {ProblemId::ornstein_uhlenbeck, "ornstein_uhlenbeck", "ou",
       "Ornstein-Uhlenbeck SDE dy = kappa (mu - y) dt + sigma dW, n independent components; "
       "theta = (kappa, mu, sigma) = (2, 1, 0.5)",
       "components n", 1, 0, 0.01, 200, false, nullptr, true},
      {ProblemId::stochastic_lorenz63, "stochastic_lorenz63", nullptr,
       "Lorenz-63 with multiplicative noise s*y_i dW_i; theta = (sigma, rho, beta, s) = (10, 28, "
       "8/3, 0.2)",
       nullptr, 0, 3, 0.005, 200, false, nullptr, true},
  };
  return table;
}

namespace detail {
// Lower case, '-' → '_'.
inline std::string normalise_problem_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    out.push_back(ch == '-' ? '_' : static_cast<char>(std::tolower(c)));
  }
  return out;
}
}  // namespace detail

// The entry for a name or alias; nullptr if there is none.
inline const ProblemInfo* find_problem(std::string_view name) {
  const std::string key = detail::normalise_problem_name(name);
  for (const ProblemInfo& info : problem_table()) {
    if (key == info.name) return &info;
    if (info.alias && key == detail::normalise_problem_name(info.alias)) return &info;
  }
  return nullptr;
}

// "linear, lorenz63, lorenz96, lotka_volterra, van_der_pol, gray_scott, heat2d".
inline std::string problem_name_list() {
  std::string out;
  for (const ProblemInfo& info : problem_table()) {
    if (!out.empty()) out += ", ";
    out += info.name;
  }
  return out;
}

// "ornstein_uhlenbeck, stochastic_lorenz63": the problems with noise.
inline std::string noise_problem_list() {
  std::string out;
  for (const ProblemInfo& info : problem_table()) {
    if (!info.noise) continue;
    if (!out.empty()) out += ", ";
    out += info.name;
  }
  return out;
}

// The problems with device right-hand sides and VJPs that are worth a device (`rewind run
// --backend thrust|cuda`): the large ones, gray_scott, heat2d and lorenz96.
inline bool runs_on_device(const ProblemInfo& problem) {
  switch (problem.id) {
    case ProblemId::gray_scott:
    case ProblemId::heat2d:
    case ProblemId::lorenz96:
    case ProblemId::brusselator:
      return true;
    default:
      return false;
  }
}
inline std::string device_problem_list() {
  std::string names;
  for (const ProblemInfo& p : problem_table())
    if (runs_on_device(p)) names += (names.empty() ? "" : ", ") + std::string(p.name);
  return names;
}

// Like find_problem, but refuses an unknown name with an InvalidArgument listing the known ones.
inline const ProblemInfo& require_problem(std::string_view name) {
  if (const ProblemInfo* info = find_problem(name)) return *info;
  rwd::detail::fail<InvalidArgument>("unknown problem '", name, "'; choose one of ",
                                     problem_name_list());
}

// Builds the problem (n is its size; ignored for fixed-size problems) with its default initial
// state and parameters, and returns f(problem, y0, theta, parameter_names). The problem lives
// only for the duration of the call. Throws InvalidArgument for a size the problem refuses.
template <class F>
decltype(auto) with_problem(const ProblemInfo& info, Index n, F&& f) {
  auto call = [&](const auto& problem) -> decltype(auto) {
    const auto y0 = problem.default_initial_state();
    const auto theta = problem.default_parameters();
    const std::vector<std::string> names = problem.parameter_names();
    return std::forward<F>(f)(problem, y0, theta, names);
  };
  switch (info.id) {
    case ProblemId::linear:
      return call(LinearOde<>(n));
    case ProblemId::lorenz63:
      return call(Lorenz63<>());
    case ProblemId::lorenz96:
      return call(Lorenz96<>(n));
    case ProblemId::lotka_volterra:
      return call(LotkaVolterra<>());
    case ProblemId::van_der_pol:
      return call(VanDerPol<>());
    case ProblemId::gray_scott:
      return call(GrayScott<>(n));
    case ProblemId::heat2d:
      return call(Heat2D<>(n));
    case ProblemId::robertson:
      return call(Robertson());
    case ProblemId::brusselator:
      return call(Brusselator2D(n));
    case ProblemId::ornstein_uhlenbeck:
      return call(OrnsteinUhlenbeck<>(n));
    case ProblemId::stochastic_lorenz63:
      return call(StochasticLorenz63<>());
  }
  rwd::detail::fail<InvalidArgument>("internal error: problem '", info.name, "' has no builder");
}

}  // namespace rwd::cli
