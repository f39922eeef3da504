// BDF through CVODES on macro-intervals: Robertson's gradient against SUNDIALS' own documented
// adjoint example (cvsRoberts_ASAi_dns), against finite differences, the same bits under every
// revolve budget over intervals, zero drift, and clear errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/forward_loss.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/cvodes_interval_stepper.hpp"
#include "rewind/problems/brusselator2d.hpp"
#include "rewind/problems/robertson.hpp"
#include "rewind/schedule/schedules.hpp"

namespace {

using rwd::Index;
using V = Eigen::VectorXd;
using Objective = rwd::Objective<rwd::EigenBackend>;

// G = q(T) = ∫ y3 dt: the functional of cvsRoberts_ASAi_dns, with its tolerances.
rwd::CvodesOptions example_tolerances() {
  rwd::CvodesOptions o;
  o.rtol = 1e-6;
  o.atol = {1e-8, 1e-14, 1e-6, 1e-6};
  o.rtol_adjoint = 1e-6;
  o.atol_adjoint = 1e-8;
  o.atol_quadrature = 1e-6;
  o.steps_per_adjoint_checkpoint = 150;
  return o;
}

Objective integral_of_y3() {
  V w = V::Zero(4);
  w[3] = 1.0;
  return Objective::terminal_linear(w);
}

TEST(CvodesIntervals, ReproducesSundialsRobertsonAdjointExample) {
  // SUNDIALS' cvsRoberts_ASAi_dns prints, for T = 4e7: G = 3.9983e+07,
  // dG/dp = (7.6842e+05, -3.0691e+00, 5.1145e-04), lambda(t0) = 3.9967e+07 (three times).
  rwd::Robertson model(true);
  rwd::CvodesIntervalStepper stepper(model, example_tolerances(), rwd::IntervalGrid{0.0, 4e7, 1});
  rwd::StoreAllAdjoint driver(stepper, integral_of_y3());
  const auto r = driver.run(model.default_initial_state(), model.default_parameters());
  std::printf("G = %.4e, dG/dp = (%.4e, %.4e, %.4e), lambda0 = (%.4e, %.4e, %.4e)\n", r.loss,
              r.grad_theta[0], r.grad_theta[1], r.grad_theta[2], r.grad_y0[0], r.grad_y0[1],
              r.grad_y0[2]);
  // The example prints 5 significant digits; both are continuous adjoints at rtol = 1e-6.
  EXPECT_NEAR(r.loss, 3.9983e7, 5e-4 * 3.9983e7);
  EXPECT_NEAR(r.grad_theta[0], 7.6842e5, 2e-3 * 7.6842e5);
  EXPECT_NEAR(r.grad_theta[1], -3.0691, 2e-3 * 3.0691);
  EXPECT_NEAR(r.grad_theta[2], 5.1145e-4, 2e-3 * 5.1145e-4);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(r.grad_y0[i], 3.9967e7, 2e-3 * 3.9967e7);
}

TEST(CvodesIntervals, EveryRevolveBudgetOverIntervalsGivesTheSameBits) {
  rwd::Robertson model(true);
  rwd::CvodesIntervalStepper stepper(model, example_tolerances(), rwd::IntervalGrid{0.0, 4e5, 12});
  rwd::StoreAllAdjoint reference_driver(stepper, integral_of_y3());
  const auto reference =
      reference_driver.run(model.default_initial_state(), model.default_parameters());
  for (int snapshots : {2, 3, 5}) {
    rwd::CheckpointOptions options;
    options.drift_policy = rwd::DriftPolicy::fail;  // every replay must restart CVODES identically
    rwd::CheckpointedAdjoint driver(stepper, integral_of_y3(), options);
    const auto r = driver.run(model.default_initial_state(), model.default_parameters(),
                              rwd::revolve_schedule(snapshots));
    EXPECT_EQ(r.loss, reference.loss);
    EXPECT_EQ(r.grad_theta, reference.grad_theta) << snapshots;
    EXPECT_EQ(r.grad_y0, reference.grad_y0) << snapshots;
    EXPECT_TRUE(r.drift.bitwise_identical());
    EXPECT_GT(r.drift.replayed_steps_checked, 0);
    EXPECT_EQ(r.summary.reversed_steps, 12);
  }
}

TEST(CvodesIntervals, GradientMatchesFiniteDifferencesToTheTolerance) {
  // Tight tolerances, T = 50 (the example's second case): central differences of the forward
  // functional in each log-parameter against the continuous adjoint.
  rwd::Robertson model(true);
  rwd::CvodesOptions tight;
  tight.rtol = 1e-11;
  tight.atol = {1e-14, 1e-18, 1e-14, 1e-12};
  tight.rtol_adjoint = 1e-11;
  tight.atol_adjoint = 1e-12;
  tight.atol_quadrature = 1e-12;
  rwd::CvodesIntervalStepper stepper(model, tight, rwd::IntervalGrid{0.0, 50.0, 5});
  rwd::StoreAllAdjoint driver(stepper, integral_of_y3());
  const V theta = model.default_parameters(), y0 = model.default_initial_state();
  const auto r = driver.run(y0, theta);
  for (int k = 0; k < 3; ++k) {
    const double h = 1e-5 * theta[k];
    V plus = theta, minus = theta;
    plus[k] += h;
    minus[k] -= h;
    const double fd = (rwd::forward_loss(stepper, integral_of_y3(), y0, plus) -
                       rwd::forward_loss(stepper, integral_of_y3(), y0, minus)) /
                      (2 * h);
    EXPECT_NEAR(r.grad_theta[k], fd, 1e-5 * std::abs(fd)) << "p" << k + 1;
  }
  // cvsRoberts_ASAi_dns, tB0 = 50: dG/dp = (1.7341e+02, -5.0591e-04, 8.4323e-08).
  EXPECT_NEAR(r.grad_theta[0], 1.7341e2, 1e-3 * 1.7341e2);
  EXPECT_NEAR(r.grad_theta[1], -5.0591e-4, 1e-3 * 5.0591e-4);
  EXPECT_NEAR(r.grad_theta[2], 8.4323e-8, 1e-3 * 8.4323e-8);
}

TEST(CvodesIntervals, FailuresNameTheIntervalAndBadSettingsAreRefused) {
  rwd::Robertson model(true);
  rwd::CvodesOptions starved = example_tolerances();
  starved.max_steps_per_interval = 5;
  rwd::CvodesIntervalStepper stepper(model, starved, rwd::IntervalGrid{0.0, 4e7, 4});
  rwd::StoreAllAdjoint driver(stepper, integral_of_y3());
  try {
    driver.run(model.default_initial_state(), model.default_parameters());
    FAIL() << "5 steps cannot cover Robertson's first interval";
  } catch (const rwd::SolverError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("interval 0"), std::string::npos) << what;
    EXPECT_NE(what.find("CV_TOO_MUCH_WORK"), std::string::npos) << what;
  }
  rwd::CvodesOptions bad = example_tolerances();
  bad.steps_per_adjoint_checkpoint = 2;
  EXPECT_THROW(rwd::CvodesIntervalStepper(model, bad, rwd::IntervalGrid{0.0, 1.0, 1}),
               rwd::InvalidArgument);
  bad = example_tolerances();
  bad.atol = {1e-8, 1e-8};
  EXPECT_THROW(rwd::CvodesIntervalStepper(model, bad, rwd::IntervalGrid{0.0, 1.0, 1}),
               rwd::InvalidArgument);
  EXPECT_THROW(
      rwd::CvodesIntervalStepper(model, example_tolerances(), rwd::IntervalGrid{0.0, 1.0, 0}),
      rwd::InvalidArgument);
}

}  // namespace

namespace {

TEST(CvodesIntervals, BandSolverOnTheBrusselatorIsScheduleIndependentAndMatchesFiniteDifferences) {
  rwd::Brusselator2D model(12);  // 288 unknowns, half-bandwidth 24
  rwd::CvodesOptions o;
  o.rtol = 1e-9;
  o.atol = {1e-11};
  o.rtol_adjoint = 1e-9;
  o.atol_adjoint = 1e-11;
  o.atol_quadrature = 1e-11;
  o.linear_solver = rwd::CvodesLinearSolver::band;
  rwd::CvodesIntervalStepper stepper(model, o, rwd::IntervalGrid{0.0, 2.0, 6});
  const Objective J = Objective::terminal_squared_norm();
  const V theta = model.default_parameters(), y0 = model.default_initial_state();
  rwd::StoreAllAdjoint reference_driver(stepper, J);
  const auto reference = reference_driver.run(y0, theta);
  rwd::CheckpointOptions options;
  options.drift_policy = rwd::DriftPolicy::fail;
  rwd::CheckpointedAdjoint driver(stepper, J, options);
  const auto r = driver.run(y0, theta, rwd::revolve_schedule(2));
  EXPECT_EQ(r.grad_theta, reference.grad_theta);
  EXPECT_EQ(r.grad_y0, reference.grad_y0);
  for (int k = 0; k < 3; ++k) {
    const double h = 1e-5 * theta[k];
    V plus = theta, minus = theta;
    plus[k] += h;
    minus[k] -= h;
    const double fd =
        (rwd::forward_loss(stepper, J, y0, plus) - rwd::forward_loss(stepper, J, y0, minus)) /
        (2 * h);
    EXPECT_NEAR(r.grad_theta[k], fd, 1e-5 * std::abs(fd) + 1e-9) << "theta[" << k << "]";
  }
  EXPECT_NE(r.summary.method.find("band"), std::string::npos) << r.summary.method;
}

}  // namespace

namespace {

// Robertson whose vector-Jacobian product turns NaN: the forward solve succeeds, the backward
// one cannot, and the run must stop naming the backward solve and its interval.
struct RobertsonWithBrokenAdjoint : rwd::Robertson {
  using rwd::Robertson::Robertson;
  void vjp(double t, const V& y, const V& theta, const V& v, V& out_y, V& out_theta) const {
    rwd::Robertson::vjp(t, y, theta, v, out_y, out_theta);
    out_y[0] = std::nan("");
  }
};

TEST(CvodesIntervals, BackwardFailureNamesTheIntervalAndReturnsNothing) {
  RobertsonWithBrokenAdjoint model(true);
  rwd::CvodesIntervalStepper stepper(model, example_tolerances(), rwd::IntervalGrid{0.0, 40.0, 4});
  rwd::StoreAllAdjoint driver(stepper, integral_of_y3());
  try {
    driver.run(model.default_initial_state(), model.default_parameters());
    FAIL() << "a NaN adjoint right-hand side produced a gradient";
  } catch (const rwd::SolverError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("backward"), std::string::npos) << what;
    EXPECT_NE(what.find("interval 3"), std::string::npos)
        << what;  // the last interval is reversed first
  }
}

}  // namespace

namespace {

TEST(CvodesIntervals, MatrixFreeGmresAgreesWithTheBandSolver) {
  // (That the jvp is the transpose of the vjp is checked in problems/problem_contract_test.cpp.)
  rwd::Brusselator2D model(12);
  const V y = model.default_initial_state(), theta = model.default_parameters();

  rwd::CvodesOptions o;
  o.rtol = o.rtol_adjoint = 1e-9;
  o.atol = {1e-11};
  o.atol_adjoint = o.atol_quadrature = 1e-11;
  o.linear_solver = rwd::CvodesLinearSolver::band;
  rwd::CvodesIntervalStepper band(model, o, rwd::IntervalGrid{0.0, 2.0, 4});
  o.linear_solver = rwd::CvodesLinearSolver::gmres;
  rwd::CvodesIntervalStepper gmres(model, o, rwd::IntervalGrid{0.0, 2.0, 4});
  const Objective J = Objective::terminal_squared_norm();
  rwd::StoreAllAdjoint band_driver(band, J), gmres_driver(gmres, J);
  const auto a = band_driver.run(y, theta), b = gmres_driver.run(y, theta);
  EXPECT_LT((a.grad_theta - b.grad_theta).norm(), 1e-5 * a.grad_theta.norm());
  EXPECT_LT((a.grad_y0 - b.grad_y0).norm(), 1e-5 * a.grad_y0.norm());
  EXPECT_NE(b.summary.method.find("gmres"), std::string::npos);
}

}  // namespace
