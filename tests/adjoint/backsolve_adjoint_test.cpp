// The continuous backsolve adjoint (rewind/adjoint/backsolve_adjoint.hpp) against the exact
// discrete adjoint (StoreAllAdjoint): it converges to it at the integrator's order, handles
// observation terms, measures its drift against the forward checkpoints, and re-anchoring bounds
// that drift on a chaotic system where plain backsolve loses the gradient. Measured errors are
// printed (one line per case) so that runs can be compared.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "rewind/adjoint/backsolve_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/backend/thrust_backend.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/problems/linear.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/lotka_volterra.hpp"
#include "rewind/problems/van_der_pol.hpp"
#include "rewind/warning.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using V = Eigen::VectorXd;
using J = Objective<B>;

// (dJ/dθ, dJ/dy0) stacked.
V stacked(const GradientResult<V>& r) {
  V g(r.grad_theta.size() + r.grad_y0.size());
  g << r.grad_theta, r.grad_y0;
  return g;
}

struct Comparison {
  GradientResult<V> exact;
  BacksolveResult<V> backsolve;
  // ‖g_backsolve − g_exact‖ / ‖g_exact‖ over (dJ/dθ, dJ/dy0), and over each part.
  double error() const {
    return (stacked(backsolve) - stacked(exact)).norm() / stacked(exact).norm();
  }
  double error_y0() const {
    return (backsolve.grad_y0 - exact.grad_y0).norm() / exact.grad_y0.norm();
  }
  double error_theta() const {
    return (backsolve.grad_theta - exact.grad_theta).norm() / exact.grad_theta.norm();
  }
};

template <class P>
Comparison compare(const P& problem, const StepControl& control, const J& objective,
                   BacksolveOptions options = {}, ButcherTableau tableau = ButcherTableau::rk4(),
                   V y0 = V(), V theta = V()) {
  if (y0.size() == 0) y0 = problem.default_initial_state();
  if (theta.size() == 0) theta = problem.default_parameters();
  ExplicitRungeKutta stepper(problem, tableau, control);
  StoreAllAdjoint exact(stepper, objective);
  BacksolveAdjoint backsolve(stepper, objective, options);
  Comparison c{exact.run(y0, theta), backsolve.run(y0, theta)};
  return c;
}

BacksolveOptions reanchored(Index interval) {
  BacksolveOptions o;
  o.reanchor = true;
  o.anchor_interval = interval;
  return o;
}

// ½ Σ_k |y_k − d_k|² at several steps, plus ½|y_N|² unless `terminal` is false.
J misfit(std::vector<Index> steps, bool terminal) {
  auto observation = [](Index step, double, const V& y, V& grad) {
    grad = y.array() - 0.1 * static_cast<double>(step % 7);
    return 0.5 * grad.squaredNorm();
  };
  J::TerminalFn end;
  if (terminal)
    end = [](double, const V& y, V& grad) {
      grad = y;
      return 0.5 * y.squaredNorm();
    };
  return J(end, std::move(steps), observation);
}

// ---- convergence to the discrete gradient --------------------------------------------------

TEST(BacksolveAdjoint, LinearConvergesToTheDiscreteGradientAtFourthOrder) {
  // y' = A y, RK4, t ∈ [0, 5]. Both gradients converge to the ODE's at O(h^4), so their
  // difference does too: halving h divides it by ~16.
  LinearOde<> linear(4);
  const auto objective = J::terminal_squared_norm();
  std::vector<double> errors;
  for (Index steps : {50, 100, 200, 400}) {
    const auto c = compare(linear, StepControl::fixed(0.0, 5.0 / static_cast<double>(steps), steps),
                           objective);
    errors.push_back(c.error());
    std::printf(
        "linear n=4 rk4 T=5 N=%4ld: rel error %.3e (dJ/dtheta %.3e, dJ/dy0 %.3e), drift %.3e\n",
        static_cast<long>(steps), c.error(), c.error_theta(), c.error_y0(),
        c.backsolve.drift.max_rel_drift);
    // For a linear autonomous problem the adjoint ODE integrated by the same RK method is the
    // discrete adjoint: R(hA)ᵀ = R(hAᵀ) for the stability polynomial R. dJ/dy0 agrees to
    // round-off; dJ/dθ (a quadrature along the reconstructed y) carries the O(h^4) difference.
    EXPECT_LT(c.error_y0(), 1e-12);
    EXPECT_EQ(c.exact.loss, c.backsolve.loss) << "the loss comes from the same forward sweep";
  }
  for (std::size_t i = 1; i < errors.size(); ++i) {
    const double order = std::log2(errors[i - 1] / errors[i]);
    std::printf("  observed order N=%d->%d: %.3f\n", 50 << (i - 1), 50 << i, order);
    EXPECT_GE(order, 3.5);
    EXPECT_LE(order, 4.5);
  }
}

TEST(BacksolveAdjoint, NonlinearAgreesWithTheDiscreteGradientToTheDiscretisationError) {
  // Lotka–Volterra and Van der Pol over t ∈ [0, 5]: the difference is O(h^4) — below C·h^4 with
  // a modest C, and shrinking at least ~16-fold when h halves (Lotka–Volterra: 3.9–4.0; Van der
  // Pol is not yet asymptotic at these h and shrinks faster, ~4.9).
  LotkaVolterra<> lv;
  VanDerPol<> vdp;
  const auto objective = J::terminal_squared_norm();
  for (int which : {0, 1}) {
    double previous = 0.0;
    for (Index steps : {100, 200, 400}) {
      const double h = 5.0 / static_cast<double>(steps);
      const auto control = StepControl::fixed(0.0, h, steps);
      const auto c =
          which == 0 ? compare(lv, control, objective) : compare(vdp, control, objective);
      std::printf("%s rk4 T=5 h=%.4f: rel error %.3e (dJ/dtheta %.3e, dJ/dy0 %.3e), drift %.3e\n",
                  which == 0 ? "lotka-volterra" : "van der pol", h, c.error(), c.error_theta(),
                  c.error_y0(), c.backsolve.drift.max_rel_drift);
      EXPECT_LT(c.error(), 10.0 * std::pow(h, 4.0));
      if (previous > 0.0) {
        const double order = std::log2(previous / c.error());
        EXPECT_GE(order, 3.5);
        if (which == 0) {
          EXPECT_LE(order, 4.5);
        }
      }
      previous = c.error();
    }
  }
}

TEST(BacksolveAdjoint, UsesTheForwardTableau) {
  // Heun (2 stages, order 2) forwards → Heun backwards: 2 augmented right-hand sides per step,
  // and a difference that shrinks at least at second order (observed: third — the discrete
  // adjoint of Heun and Heun on the adjoint equation share their leading error term here).
  LotkaVolterra<> lv;
  const auto objective = J::terminal_squared_norm();
  const auto coarse =
      compare(lv, StepControl::fixed(0.0, 0.01, 500), objective, {}, ButcherTableau::heun());
  const auto fine =
      compare(lv, StepControl::fixed(0.0, 0.005, 1000), objective, {}, ButcherTableau::heun());
  const double order = std::log2(coarse.error() / fine.error());
  std::printf("lotka-volterra heun T=5: rel error %.3e (h=0.01), %.3e (h=0.005), order %.3f\n",
              coarse.error(), fine.error(), order);
  EXPECT_GE(order, 1.5);
  EXPECT_NE(coarse.backsolve.summary.method.find("heun"), std::string::npos);
  EXPECT_EQ(coarse.backsolve.summary.rhs_evaluations_reverse, 2 * 500);
  // Explicit Euler both ways: first order.
  const auto euler1 =
      compare(lv, StepControl::fixed(0.0, 0.005, 1000), objective, {}, ButcherTableau::euler());
  const auto euler2 =
      compare(lv, StepControl::fixed(0.0, 0.0025, 2000), objective, {}, ButcherTableau::euler());
  const double euler_order = std::log2(euler1.error() / euler2.error());
  std::printf("lotka-volterra euler T=5: rel error %.3e (h=0.005), %.3e (h=0.0025), order %.3f\n",
              euler1.error(), euler2.error(), euler_order);
  EXPECT_GE(euler_order, 0.8);
  EXPECT_LE(euler_order, 1.2);
}

// ---- observation terms ---------------------------------------------------------------------

TEST(BacksolveAdjoint, ObservationTermsJumpTheAdjoint) {
  LotkaVolterra<> lv;
  const auto control = StepControl::fixed(0.0, 0.0125, 400);
  const std::vector<Index> steps = {0, 1, 37, 100, 250, 399, 400};
  for (bool terminal : {true, false}) {
    const auto objective = misfit(steps, terminal);
    BacksolveOptions backward_states;
    backward_states.observe_backward_states = true;
    BacksolveOptions anchored_backward_states = reanchored(10);
    anchored_backward_states.observe_backward_states = true;
    const auto at_forward = compare(lv, control, objective);
    const auto reconstructed = compare(lv, control, objective, backward_states);
    const auto anchored = compare(lv, control, objective, anchored_backward_states);
    std::printf(
        "lotka-volterra misfit at %zu steps%s, h=0.0125: rel error %.3e (backward y), "
        "%.3e (forward y), %.3e (backward y re-anchored every 10)\n",
        steps.size(), terminal ? " + terminal" : "", reconstructed.error(), at_forward.error(),
        anchored.error());
    EXPECT_LT(reconstructed.error(), 1e-6);
    EXPECT_LT(at_forward.error(), 1e-6);
    EXPECT_LT(anchored.error(), 1e-6);
    EXPECT_EQ(reconstructed.exact.loss, reconstructed.backsolve.loss);
    EXPECT_EQ(at_forward.exact.loss, at_forward.backsolve.loss);
    // Storage: observations at forward states keep one n-vector per observed step below N.
    EXPECT_EQ(at_forward.backsolve.summary.storage.peak_bytes_on(LevelKind::memory) -
                  reconstructed.backsolve.summary.storage.peak_bytes_on(LevelKind::memory),
              static_cast<std::int64_t>(steps.size() - 1) * 2 *
                  static_cast<std::int64_t>(sizeof(double)));
    EXPECT_NE(reconstructed.backsolve.summary.schedule.find("backward states"), std::string::npos);
  }
  // Without the jumps the gradient would be far off: check the observations matter.
  const auto terminal_only = compare(lv, control, J::terminal_squared_norm());
  const auto with_observations = compare(lv, control, misfit(steps, true));
  EXPECT_GT((stacked(terminal_only.exact) - stacked(with_observations.exact)).norm(),
            0.1 * stacked(with_observations.exact).norm());
}

// ---- drift and re-anchoring ----------------------------------------------------------------

TEST(BacksolveAdjoint, DriftIsTinyOnAShortLinearRun) {
  LinearOde<> linear(3);
  const Index steps = 100;
  BacksolveOptions options;
  options.anchor_interval = 10;
  const auto c =
      compare(linear, StepControl::fixed(0.0, 0.01, steps), J::terminal_squared_norm(), options);
  const auto& d = c.backsolve.drift;
  std::printf("linear n=3 rk4 T=1 h=0.01: max drift %.3e at step %ld over %ld anchors\n",
              d.max_rel_drift, static_cast<long>(d.max_drift_step),
              static_cast<long>(d.anchors_checked));
  EXPECT_EQ(d.anchors_checked, 10);  // steps 90, 80, …, 0
  ASSERT_EQ(d.samples.size(), 10u);
  EXPECT_EQ(d.samples.front().step, 90);
  EXPECT_EQ(d.samples.back().step, 0);
  EXPECT_DOUBLE_EQ(d.samples.front().t, 0.9);
  EXPECT_LT(d.max_rel_drift, 1e-10);
  EXPECT_EQ(d.first_drift_step, -1);
  EXPECT_EQ(d.anchors_above_threshold, 0);
  EXPECT_EQ(d.reanchored, 0);
  EXPECT_EQ(d.threshold, options.drift_threshold);
  EXPECT_EQ(c.backsolve.anchors, 10);
  EXPECT_EQ(c.backsolve.anchor_interval, 10);
}

TEST(BacksolveAdjoint, ReanchoringBoundsTheDriftOnLorenz63) {
  Lorenz63<> lorenz;
  const auto objective = J::terminal_squared_norm();
  // t ∈ [0, 2], h = 0.01: backwards in time Lorenz-63 expands volume like e^{13.7 t}, so plain
  // backsolve's reconstructed y leaves the forward trajectory; its gradient is still finite.
  {
    const auto control = StepControl::fixed(0.0, 0.01, 200);
    const auto plain = compare(lorenz, control, objective);
    const auto anchored = compare(lorenz, control, objective, reanchored(10));
    std::printf(
        "lorenz63 rk4 T=2 h=0.01: plain drift %.3e (first above 1e-6 at step %ld) error "
        "%.3e; re-anchored every 10: drift %.3e error %.3e\n",
        plain.backsolve.drift.max_rel_drift,
        static_cast<long>(plain.backsolve.drift.first_drift_step), plain.error(),
        anchored.backsolve.drift.max_rel_drift, anchored.error());
    EXPECT_GT(plain.backsolve.drift.max_rel_drift, 1e-3);
    EXPECT_GE(plain.backsolve.drift.first_drift_step, 0);
    EXPECT_LT(anchored.backsolve.drift.max_rel_drift, plain.backsolve.drift.max_rel_drift);
    EXPECT_LT(anchored.error(), plain.error());
    EXPECT_LT(anchored.error(), 1e-3);
    EXPECT_EQ(anchored.backsolve.drift.reanchored, anchored.backsolve.drift.anchors_checked);
    EXPECT_EQ(anchored.backsolve.summary.restores, anchored.backsolve.drift.reanchored);
  }
  // t ∈ [0, 10], h = 0.01: plain backsolve's backward state overflows — a NumericalError naming
  // the step, never a gradient — while the re-anchored run gives one close to the exact one.
  {
    const auto control = StepControl::fixed(0.0, 0.01, 1000);
    std::string message;
    double plain_error = -1.0, plain_drift = -1.0;
    try {
      const auto plain = compare(lorenz, control, objective);
      plain_error = plain.error();
      plain_drift = plain.backsolve.drift.max_rel_drift;
    } catch (const NumericalError& e) {
      message = e.what();
    }
    const auto anchored = compare(lorenz, control, objective, reanchored(10));
    std::printf(
        "lorenz63 rk4 T=10 h=0.01: plain %s (error %.3e, drift %.3e); re-anchored every "
        "10: drift %.3e error %.3e\n",
        message.empty() ? "finished" : message.c_str(), plain_error, plain_drift,
        anchored.backsolve.drift.max_rel_drift, anchored.error());
    if (message.empty()) {
      EXPECT_GT(plain_drift, 1e-3);
      EXPECT_LT(anchored.error(), plain_error);
    } else {
      EXPECT_NE(message.find("step"), std::string::npos);
      EXPECT_NE(message.find("t = "), std::string::npos);
      EXPECT_NE(message.find("drifted"), std::string::npos) << "the drift so far is reported";
    }
    EXPECT_LT(anchored.error(), 1e-4);
    EXPECT_LT(anchored.backsolve.drift.max_rel_drift, 1e-4);
  }
}

TEST(BacksolveAdjoint, PlainGradientDoesNotDependOnTheAnchors) {
  // Without re-anchoring the anchors only measure: the gradient is bitwise the same for any
  // interval, including one longer than the run (which keeps y0 alone).
  LotkaVolterra<> lv;
  const auto control = StepControl::fixed(0.0, 0.01, 100);
  const auto objective = misfit({3, 50}, true);
  BacksolveOptions every_step, longer;
  every_step.anchor_interval = 1;
  longer.anchor_interval = 1000;
  const auto a = compare(lv, control, objective);
  const auto b = compare(lv, control, objective, every_step);
  const auto c = compare(lv, control, objective, longer);
  EXPECT_EQ(a.backsolve.anchor_interval, 10);  // ⌈√100⌉
  EXPECT_EQ(a.backsolve.anchors, 10);
  EXPECT_EQ(b.backsolve.anchors, 100);
  EXPECT_EQ(c.backsolve.anchors, 1);
  EXPECT_EQ(c.backsolve.drift.anchors_checked, 1);
  EXPECT_EQ(c.backsolve.drift.max_drift_step, 0);
  for (const auto* r : {&b, &c}) {
    EXPECT_TRUE(stacked(r->backsolve) == stacked(a.backsolve));
    EXPECT_EQ(r->backsolve.loss, a.backsolve.loss);
  }
  // Re-anchoring at every step, with the interval longer than the run, is plain backsolve but
  // for the last backward step.
  const auto anchored_longer = compare(lv, control, objective, reanchored(1000));
  EXPECT_TRUE(stacked(anchored_longer.backsolve) == stacked(a.backsolve));
  EXPECT_LT(a.error(), 1e-6);
}

TEST(BacksolveAdjoint, DriftPolicyWarnsOrFails) {
  Lorenz63<> lorenz;
  const auto control = StepControl::fixed(0.0, 0.01, 150);
  BacksolveOptions options;
  options.drift_policy = DriftPolicy::fail;
  options.drift_threshold = 1e-3;
  try {
    compare(lorenz, control, J::terminal_squared_norm(), options);
    ADD_FAILURE() << "expected a DriftError";
  } catch (const DriftError& e) {
    EXPECT_NE(std::string(e.what()).find("drift_threshold"), std::string::npos) << e.what();
  }
  options.drift_policy = DriftPolicy::warn;
  ::testing::internal::CaptureStderr();
  const auto c = compare(lorenz, control, J::terminal_squared_norm(), options);
  const std::string warned = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(warned.find("backsolve"), std::string::npos);
  EXPECT_EQ(std::count(warned.begin(), warned.end(), '\n'), 1) << warned;  // once per run
  EXPECT_GT(c.backsolve.drift.anchors_above_threshold, 0);
}

TEST(BacksolveAdjoint, DriftWarningReachesTheUserHandlerNotStderr) {
  Lorenz63<> lorenz;
  BacksolveOptions options;
  options.drift_policy = DriftPolicy::warn;
  options.drift_threshold = 1e-3;
  std::vector<Warning> seen;
  ScopedWarningHandler capture([&](const Warning& w) { seen.push_back(w); });
  ::testing::internal::CaptureStderr();
  const auto c =
      compare(lorenz, StepControl::fixed(0.0, 0.01, 150), J::terminal_squared_norm(), options);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_GT(c.backsolve.drift.anchors_above_threshold, 0);
  ASSERT_EQ(seen.size(), 1u);  // once per run
  EXPECT_EQ(seen[0].source, "backsolve");
  EXPECT_NE(seen[0].message.find("drifted from the forward checkpoint"), std::string::npos)
      << seen[0].message;
}

// ---- step control ----------------------------------------------------------------------------

TEST(BacksolveAdjoint, AdaptiveStepsReplayTheAcceptedStepsBackwards) {
  LotkaVolterra<> lv;
  const auto objective = misfit({5, 20}, true);
  for (double tol : {1e-6, 1e-8}) {
    const auto c = compare(lv, StepControl::adaptive(0.0, 5.0, tol, tol), objective, {},
                           ButcherTableau::dormand_prince());
    const Index steps = c.backsolve.summary.steps;
    std::printf(
        "lotka-volterra dopri5 adaptive tol=%.0e: %ld steps, rel error %.3e, %ld anchors "
        "every %ld, drift %.3e\n",
        tol, static_cast<long>(steps), c.error(), static_cast<long>(c.backsolve.anchors),
        static_cast<long>(c.backsolve.anchor_interval), c.backsolve.drift.max_rel_drift);
    EXPECT_EQ(steps, c.exact.summary.steps);
    EXPECT_EQ(c.backsolve.summary.reversed_steps, steps);
    EXPECT_LT(c.error(), 100.0 * tol);
    EXPECT_EQ(c.exact.loss, c.backsolve.loss);
    // Automatic anchors for an unknown N: about √N of them.
    const double root = std::sqrt(static_cast<double>(steps));
    EXPECT_GE(static_cast<double>(c.backsolve.anchors), 0.5 * root);
    EXPECT_LE(static_cast<double>(c.backsolve.anchors), 2.0 * root + 2.0);
    EXPECT_EQ(c.backsolve.anchors, (steps - 1) / c.backsolve.anchor_interval + 1);
  }
}

TEST(BacksolveAdjoint, PrescribedStepsMatchFixedSteps) {
  LotkaVolterra<> lv;
  const auto objective = misfit({5, 20}, true);
  const auto fixed = compare(lv, StepControl::fixed(0.0, 0.05, 60), objective);
  const auto prescribed =
      compare(lv, StepControl::prescribed(0.0, std::vector<double>(60, 0.05)), objective);
  EXPECT_LT((stacked(fixed.backsolve) - stacked(prescribed.backsolve)).norm(),
            1e-12 * stacked(fixed.backsolve).norm());
  EXPECT_LT(prescribed.error(), 1e-4);
}

// ---- summary ---------------------------------------------------------------------------------

TEST(BacksolveAdjoint, SummaryDescribesTheRun) {
  LotkaVolterra<> lv;
  const Index steps = 100;
  const auto c =
      compare(lv, StepControl::fixed(0.0, 0.01, steps), misfit({0, 50}, true), reanchored(7));
  const Summary& s = c.backsolve.summary;
  EXPECT_EQ(s.schedule, "backsolve (anchors every 7, re-anchored)");
  EXPECT_NE(s.method.find("rk4"), std::string::npos);
  EXPECT_EQ(s.backend, std::string("eigen"));
  EXPECT_EQ(s.steps, steps);
  EXPECT_EQ(s.forward_steps, steps);
  EXPECT_EQ(s.recomputed_steps, 0);
  EXPECT_EQ(s.reversed_steps, steps);
  EXPECT_EQ(s.rhs_evaluations_forward, 4 * steps);
  EXPECT_EQ(s.rhs_evaluations_reverse, 4 * steps);
  EXPECT_EQ(s.vjp_evaluations, 4 * steps);
  EXPECT_EQ(s.stores, 15);  // steps 0, 7, …, 98
  EXPECT_EQ(s.restores, 15);
  // 15 anchors and the observation gradients at steps 0 and 50, of 2 doubles each.
  EXPECT_EQ(s.storage.peak_bytes_on(LevelKind::memory),
            (15 + 2) * 2 * static_cast<std::int64_t>(sizeof(double)));
  EXPECT_DOUBLE_EQ(s.t_final, 1.0);
  EXPECT_GE(s.forward_seconds, 0.0);
  EXPECT_GE(s.reverse_seconds, 0.0);
  EXPECT_EQ(s.state_size, 2);
  EXPECT_EQ(s.parameter_size, 4);
  EXPECT_TRUE(c.backsolve.y_final == c.exact.y_final);
}

// ---- other backends --------------------------------------------------------------------------

TEST(BacksolveAdjoint, RunsOnTheThrustBackend) {
  using T = ThrustBackend;
  Lorenz63<T> lorenz;
  Lorenz63<> lorenz_eigen;
  const auto control = StepControl::fixed(0.0, 0.01, 100);
  ExplicitRungeKutta stepper(lorenz, ButcherTableau::rk4(), control);
  BacksolveAdjoint driver(stepper, Objective<T>::terminal_squared_norm(), reanchored(10));
  const auto r = driver.run(lorenz.default_initial_state(), lorenz.default_parameters());
  const auto e = compare(lorenz_eigen, control, J::terminal_squared_norm(), reanchored(10));
  std::vector<double> gy(3), gt(3);
  T::copy_to_host(r.grad_y0, gy);
  T::copy_to_host(r.grad_theta, gt);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(gy[static_cast<std::size_t>(i)], e.backsolve.grad_y0[i],
                1e-12 * e.backsolve.grad_y0.norm());
    EXPECT_NEAR(gt[static_cast<std::size_t>(i)], e.backsolve.grad_theta[i],
                1e-12 * e.backsolve.grad_theta.norm());
  }
  EXPECT_EQ(r.summary.backend, std::string(T::name));
  EXPECT_NEAR(r.drift.max_rel_drift, e.backsolve.drift.max_rel_drift, 1e-9);
}

// ---- errors ----------------------------------------------------------------------------------

TEST(BacksolveAdjoint, RefusesBadInputBeforeAnyWork) {
  LotkaVolterra<> lv;
  const V theta = lv.default_parameters(), y0 = lv.default_initial_state();
  ExplicitRungeKutta stepper(lv, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 10));
  BacksolveAdjoint driver(stepper, J::terminal_squared_norm());
  V bad = y0;
  bad[0] = std::nan("");
  EXPECT_THROW(driver.run(bad, theta), InvalidArgument);
  V bad_theta = theta;
  bad_theta[2] = INFINITY;
  EXPECT_THROW(driver.run(y0, bad_theta), InvalidArgument);
  EXPECT_THROW(driver.run(V::Ones(3), theta), InvalidArgument);
  EXPECT_THROW(driver.run(y0, V::Ones(2)), InvalidArgument);
  EXPECT_EQ(stepper.counters().steps, 0) << "refused before any step";
  BacksolveOptions negative;
  negative.anchor_interval = -1;
  EXPECT_THROW(BacksolveAdjoint(stepper, J::terminal_squared_norm(), negative), InvalidArgument);
  BacksolveOptions nan_threshold;
  nan_threshold.drift_threshold = std::nan("");
  EXPECT_THROW(BacksolveAdjoint(stepper, J::terminal_squared_norm(), nan_threshold),
               InvalidArgument);
  BacksolveAdjoint past_the_end(stepper, misfit({11}, true));
  EXPECT_THROW(past_the_end.run(y0, theta), InvalidArgument);
  EXPECT_EQ(stepper.counters().steps, 0);
}

TEST(BacksolveAdjoint, NonFiniteValuesStopTheRunNamingTheStep) {
  LotkaVolterra<> lv;
  const V theta = lv.default_parameters(), y0 = lv.default_initial_state();
  ExplicitRungeKutta stepper(lv, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 10));
  BacksolveAdjoint nan_terminal(stepper, J([](double, const V& y, V& grad) {
                                  grad = V::Constant(y.size(), std::nan(""));
                                  return 0.0;
                                }));
  EXPECT_THROW(nan_terminal.run(y0, theta), NumericalError);
  // An observation with a finite value but a NaN gradient: caught where the gradient is added.
  BacksolveAdjoint nan_observation(stepper,
                                   J(J::TerminalFn{}, {4}, [](Index, double, const V& y, V& grad) {
                                     grad = y;
                                     grad[1] = std::nan("");
                                     return 0.0;
                                   }));
  try {
    nan_observation.run(y0, theta);
    ADD_FAILURE() << "expected a NumericalError";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("step 4"), std::string::npos) << e.what();
  }
}

TEST(BacksolveAdjoint, TheAugmentedSystemIsAProblemThatCannotBeDifferentiated) {
  static_assert(Problem<BacksolveSystem<LotkaVolterra<>>>);
  LotkaVolterra<> lv;
  BacksolveSystem system(lv, 1.0);
  EXPECT_EQ(system.state_size(), 2 * 2 + 4);
  EXPECT_EQ(system.parameter_size(), 4);
  const V theta = lv.default_parameters();
  V z = V::Zero(8), dz = V::Zero(8), out_z = V::Zero(8), out_theta = V::Zero(4);
  z << 1.0, 2.0, 0.5, -0.25, 0, 0, 0, 0;
  system.rhs(0.25, z, theta, dz);
  // dz/dτ = (−f, (∂f/∂y)ᵀ a, (∂f/∂θ)ᵀ a) at t = 1 − 0.25.
  V f(2), vy(2), vt(4);
  lv.rhs(0.75, z.head(2), theta, f);
  lv.vjp(0.75, z.head(2), theta, z.segment(2, 2), vy, vt);
  EXPECT_TRUE(dz.head(2) == -f);
  EXPECT_TRUE(dz.segment(2, 2) == vy);
  EXPECT_TRUE(dz.tail(4) == vt);
  try {
    system.vjp(0.0, z, theta, z, out_z, out_theta);
    ADD_FAILURE() << "expected an error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("second derivatives"), std::string::npos);
  }
}

}  // namespace
}  // namespace rwd
