// bench/backsolve_accuracy.cpp — how far the continuous backsolve adjoint is from the exact
// gradient, with and without re-anchoring, on the spiral and on Lorenz-63 (the table in
// docs/neural_odes.md).
//
//   backsolve_accuracy                 # markdown table on stdout, ~1 s
//
// For each case: the exact discrete gradient (rwd::StoreAllAdjoint, the reference), plain
// backsolve (rwd::BacksolveAdjoint, anchors every ⌈√N⌉ steps used only to measure drift) and
// re-anchored backsolve (y reset to the forward state every 10 steps). Error = ‖g − g_exact‖ /
// ‖g_exact‖ over (dJ/dθ, dJ/dy0); drift = largest ‖y_back − y_fwd‖ / ‖y_fwd‖ at the anchors.
// J = ½|y_T|², RK4. A backward solve that overflows is reported with the step where it did.
#include <cstdio>
#include <string>

#include "rewind/adjoint/backsolve_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/neural/mlp.hpp"
#include "rewind/neural/neural_ode.hpp"
#include "rewind/problems/cubic_spiral.hpp"
#include "rewind/problems/lorenz63.hpp"

namespace {

using V = Eigen::VectorXd;
using Objective = rwd::Objective<rwd::EigenBackend>;

V stacked(const rwd::GradientResult<V>& r) {
  V g(r.grad_theta.size() + r.grad_y0.size());
  g << r.grad_theta, r.grad_y0;
  return g;
}

template <class P>
void row(const std::string& name, const P& problem, const V& y0, const V& theta, double dt,
         rwd::Index steps) {
  rwd::ExplicitRungeKutta stepper(problem, rwd::ButcherTableau::rk4(),
                                  rwd::StepControl::fixed(0.0, dt, steps));
  const Objective J = Objective::terminal_squared_norm();
  rwd::StoreAllAdjoint exact_driver(stepper, J);
  const V exact = stacked(exact_driver.run(y0, theta));
  auto cell = [&](bool reanchor) -> std::string {
    rwd::BacksolveOptions options;
    options.reanchor = reanchor;
    if (reanchor) options.anchor_interval = 10;
    rwd::BacksolveAdjoint driver(stepper, J, options);
    char text[96];
    try {
      const auto r = driver.run(y0, theta);
      std::snprintf(text, sizeof text, "%.2e (drift %.1e)",
                    (stacked(r) - exact).norm() / exact.norm(), r.drift.max_rel_drift);
    } catch (const rwd::NumericalError& e) {
      const std::string what = e.what();
      const auto at = what.find("at step ");
      std::snprintf(
          text, sizeof text, "overflow (%s)",
          at == std::string::npos ? "?" : what.substr(at, what.find(' ', at + 8) - at).c_str());
    }
    return text;
  };
  std::printf("| %s | %g | %lld | %s | %s |\n", name.c_str(), dt * static_cast<double>(steps),
              static_cast<long long>(steps), cell(false).c_str(), cell(true).c_str());
}

}  // namespace

int main() {
  std::printf(
      "| problem | t_final | RK4 steps | plain backsolve: error (drift) | re-anchored every 10 "
      "steps: error (drift) |\n");
  std::printf("| --- | --- | --- | --- | --- |\n");
  rwd::CubicSpiral spiral;
  row("spiral, true dynamics (θ = A)", spiral, spiral.default_initial_state(),
      spiral.default_parameters(), 25.0 / 999, 999);
  row("spiral, true dynamics (θ = A)", spiral, spiral.default_initial_state(),
      spiral.default_parameters(), 25.0 / 9990, 9990);
  const rwd::nn::Mlp mlp({2, 50, 2}, rwd::nn::Activation::tanh);
  const rwd::nn::NeuralOde neural(mlp, 1, rwd::nn::InputFeatures::cube);
  row("spiral, neural ODE 2-50-2 (initial θ)", neural, spiral.default_initial_state(),
      mlp.initial_parameters(1), 25.0 / 999, 999);
  rwd::Lorenz63<> lorenz;
  for (double t : {1.0, 2.0, 5.0, 10.0, 20.0})
    row("Lorenz-63", lorenz, lorenz.default_initial_state(), lorenz.default_parameters(), 0.01,
        static_cast<rwd::Index>(t / 0.01 + 0.5));
  return 0;
}
