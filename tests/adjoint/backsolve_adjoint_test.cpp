// The continuous backsolve adjoint: it converges to the exact discrete gradient at the
// integrator's order, handles observation terms, measures its drift against the checkpoints, and
// re-anchoring bounds that drift on a chaotic system where plain backsolve loses the gradient.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "rewind/adjoint/backsolve_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/lotka_volterra.hpp"

namespace {

using rwd::Index;
using V = Eigen::VectorXd;
using Objective = rwd::Objective<rwd::EigenBackend>;

struct Gradients {
  V exact, backsolve;
  rwd::BacksolveDrift drift;
  double loss_exact = 0, loss_backsolve = 0;
};

template <class P>
Gradients both(const P& problem, const V& y0, const V& theta, double t_final, Index steps, const Objective& J,
               rwd::BacksolveOptions options = {}) {
  rwd::ExplicitRungeKutta stepper(problem, rwd::ButcherTableau::rk4(),
                                  rwd::StepControl::fixed(0.0, t_final / static_cast<double>(steps), steps));
  rwd::StoreAllAdjoint exact(stepper, J);
  const auto e = exact.run(y0, theta);
  rwd::BacksolveAdjoint backsolve(stepper, J, options);
  const auto b = backsolve.run(y0, theta);
  V ge(theta.size() + y0.size()), gb(theta.size() + y0.size());
  ge << e.grad_theta, e.grad_y0;
  gb << b.grad_theta, b.grad_y0;
  return {ge, gb, b.drift, e.loss, b.loss};
}

double relative_error(const Gradients& g) { return (g.backsolve - g.exact).norm() / g.exact.norm(); }

TEST(Backsolve, ConvergesToTheDiscreteGradientAtFourthOrder) {
  rwd::LotkaVolterra<> lv;
  const V theta = lv.default_parameters(), y0 = lv.default_initial_state();
  const Objective J = Objective::terminal_squared_norm();
  const double e1 = relative_error(both(lv, y0, theta, 5.0, 100, J));
  const double e2 = relative_error(both(lv, y0, theta, 5.0, 200, J));
  const double e3 = relative_error(both(lv, y0, theta, 5.0, 400, J));
  EXPECT_LT(e1, 1e-4);
  const double order = std::log2(e2 / e3);
  EXPECT_GT(order, 3.5) << e1 << " " << e2 << " " << e3;
  EXPECT_LT(order, 4.5) << e1 << " " << e2 << " " << e3;
  const auto g = both(lv, y0, theta, 5.0, 400, J);
  EXPECT_EQ(g.loss_exact, g.loss_backsolve) << "the loss comes from the same forward sweep";
  EXPECT_LT(g.drift.max_rel_drift, 1e-6);
  EXPECT_GT(g.drift.anchors_checked, 0);
}

TEST(Backsolve, ObservationTermsJumpTheAdjoint) {
  rwd::LotkaVolterra<> lv;
  const V theta = lv.default_parameters(), y0 = lv.default_initial_state();
  std::vector<Index> steps = {0, 37, 100, 250, 400};
  std::vector<V> data;
  for (std::size_t i = 0; i < steps.size(); ++i) data.push_back(V::Constant(2, 0.5 + 0.1 * static_cast<double>(i)));
  const Objective J = Objective::trajectory_misfit(steps, data);
  const auto g = both(lv, y0, theta, 5.0, 400, J);
  EXPECT_LT(relative_error(g), 1e-6);
}

TEST(Backsolve, ReanchoringBoundsTheDriftOfAChaoticSystem) {
  rwd::Lorenz63<> lorenz;
  const V theta = lorenz.default_parameters(), y0 = lorenz.default_initial_state();
  const Objective J = Objective::terminal_squared_norm();
  const auto plain = both(lorenz, y0, theta, 2.0, 200, J);
  rwd::BacksolveOptions anchored_options;
  anchored_options.reanchor = true;
  anchored_options.anchor_interval = 10;
  const auto anchored = both(lorenz, y0, theta, 2.0, 200, J, anchored_options);
  std::printf("Lorenz-63, t = 2: plain drift %.3g error %.3g, re-anchored drift %.3g error %.3g\n",
              plain.drift.max_rel_drift, relative_error(plain), anchored.drift.max_rel_drift, relative_error(anchored));
  // Backwards in time Lorenz-63 is unstable: the reconstructed trajectory leaves the forward one.
  EXPECT_GT(plain.drift.max_rel_drift, 1e-3);
  EXPECT_LT(anchored.drift.max_rel_drift, plain.drift.max_rel_drift);
  EXPECT_LT(relative_error(anchored), relative_error(plain));
  EXPECT_LT(relative_error(anchored), 1e-2);
  // Over t = 10 the backward trajectory of plain backsolve overflows: a clear error naming the
  // step, never a gradient; re-anchored, the same horizon works.
  EXPECT_THROW(both(lorenz, y0, theta, 10.0, 1000, J), rwd::NumericalError);
  const auto long_anchored = both(lorenz, y0, theta, 10.0, 1000, J, anchored_options);
  EXPECT_LT(relative_error(long_anchored), 1e-1);
}

TEST(Backsolve, RefusesAdaptiveStepsAndStopsOnNonFiniteStates) {
  rwd::LotkaVolterra<> lv;
  const V theta = lv.default_parameters(), y0 = lv.default_initial_state();
  rwd::ExplicitRungeKutta adaptive(lv, rwd::ButcherTableau::dormand_prince(),
                                   rwd::StepControl::adaptive(0.0, 1.0, 1e-6, 1e-8));
  rwd::BacksolveAdjoint driver(adaptive, Objective::terminal_squared_norm());
  EXPECT_THROW(driver.run(y0, theta), rwd::InvalidArgument);
  rwd::ExplicitRungeKutta fixed(lv, rwd::ButcherTableau::rk4(), rwd::StepControl::fixed(0.0, 0.01, 10));
  rwd::BacksolveAdjoint nan_driver(fixed, Objective([](double, const V& y, V& grad) {
                                     grad = V::Constant(y.size(), std::nan(""));
                                     return 0.0;
                                   }));
  EXPECT_THROW(nan_driver.run(y0, theta), rwd::NumericalError);
  V bad = y0;
  bad[0] = std::nan("");
  EXPECT_THROW(nan_driver.run(bad, theta), rwd::InvalidArgument);
  rwd::BacksolveOptions negative;
  negative.anchor_interval = -1;
  EXPECT_THROW(rwd::BacksolveAdjoint(fixed, Objective::terminal_squared_norm(), negative), rwd::InvalidArgument);
}

}  // namespace
