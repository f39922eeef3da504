// bench/ad_choice/whole_gradient_bench.cpp — the whole store-all gradient against the forward run,
// with derived vjps against hand-written ones, side by side (issue 42, item 4: the dense rows).
//
//   cmake --build build --target whole_gradient_bench
//   bench/ad_choice/run_whole_gradient.sh build     # runs it, prints the table of ad_choice.md
//
// Per (case, vjp), one run, one thread: "Forward/<vjp>/<case>" times rwd::forward_loss (one
// forward sweep that stores nothing) and "Gradient/<vjp>/<case>" rwd::differentiate with
// rwd::StoreAllStrategy (forward sweep storing every state, then the reverse sweep), both with the
// same stepper, objective (½|y_N|²), initial state and parameters. Cases, explicit Runge–Kutta
// with fixed steps:
//
//   Lorenz63        RK4, 2000 steps of 0.005 from (1, 1, 1), σ = 10, ρ = 28, β = 8/3
//   LotkaVolterra   Dormand–Prince 5(4) (its seven stages), 2000 steps of 0.005 from (1, 1)
//
// vjps: Hand (the built-in problem, rwd::Lorenz63<> or rwd::LotkaVolterra<>, with its hand-written
// vjp), Derived (rwd::auto_problem of the same rhs written as a templated model,
// tests/problems/models/templated_builtins.hpp: Sacado's forward mode), and for Lorenz-63 OwnVjp
// (rwd::auto_problem of a templated model with its own hand-written vjp, which the problem uses).
// The rhs is the same expressions in every variant, so the forward runs cost the same; the
// gradients differ only in the vjp. tests/problems/hand_written_derivatives_test.cpp checks these
// models against the built-ins.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "problems/models/templated_builtins.hpp"
#include "rewind/adjoint/differentiate.hpp"
#include "rewind/adjoint/forward_loss.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/model.hpp"
#include "rewind/parallel.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/lotka_volterra.hpp"

namespace {

using Vector = rwd::EigenBackend::Vector;
using Objective = rwd::Objective<rwd::EigenBackend>;

// Registers Forward/<vjp>/<name> and Gradient/<vjp>/<name> for one problem.
template <class Problem>
void register_case(const std::string& name, const std::string& vjp,
                   std::shared_ptr<const Problem> problem, rwd::ButcherTableau tableau, Vector y0,
                   Vector theta) {
  const rwd::StepControl control = rwd::StepControl::fixed(0.0, 0.005, 2000);
  auto stepper = std::make_shared<rwd::ExplicitRungeKutta<Problem>>(*problem, tableau, control);
  const Objective objective = Objective::terminal_squared_norm();
  benchmark::RegisterBenchmark(("Forward/" + vjp + "/" + name).c_str(),
                               [=](benchmark::State& state) {
                                 rwd::set_thread_count(1);
                                 for (auto _ : state) {
                                   double loss = rwd::forward_loss(*stepper, objective, y0, theta);
                                   benchmark::DoNotOptimize(loss);
                                 }
                                 (void)problem;  // kept alive with the stepper that refers to it
                               })
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark(("Gradient/" + vjp + "/" + name).c_str(), [=](benchmark::State&
                                                                                 state) {
    rwd::set_thread_count(1);
    for (auto _ : state) {
      auto result = rwd::differentiate(*stepper, objective, y0, theta, rwd::StoreAllStrategy{});
      benchmark::DoNotOptimize(result.grad_theta.data());
    }
  })->Unit(benchmark::kMicrosecond);
}

void register_all() {
  const Vector lorenz_y0{{1.0, 1.0, 1.0}}, lorenz_theta{{10.0, 28.0, 8.0 / 3.0}};
  const auto rk4 = rwd::ButcherTableau::rk4();
  register_case("Lorenz63", "Hand", std::make_shared<const rwd::Lorenz63<>>(), rk4, lorenz_y0,
                lorenz_theta);
  register_case("Lorenz63", "Derived",
                std::make_shared<const rwd::AutoProblem<rwd::test_models::Lorenz63>>(), rk4,
                lorenz_y0, lorenz_theta);
  register_case("Lorenz63", "OwnVjp",
                std::make_shared<const rwd::AutoProblem<rwd::test_models::Lorenz63WithOwnVjp>>(),
                rk4, lorenz_y0, lorenz_theta);
  const Vector lv_y0{{1.0, 1.0}};
  const Vector lv_theta = rwd::LotkaVolterra<>::default_parameters();
  const auto dopri = rwd::ButcherTableau::dormand_prince();
  register_case("LotkaVolterra", "Hand", std::make_shared<const rwd::LotkaVolterra<>>(), dopri,
                lv_y0, lv_theta);
  register_case("LotkaVolterra", "Derived",
                std::make_shared<const rwd::AutoProblem<rwd::test_models::LotkaVolterra>>(), dopri,
                lv_y0, lv_theta);
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
