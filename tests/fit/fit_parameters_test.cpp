// rwd::fit_parameters: Lotka–Volterra parameters recovered from exact data to 1e-6 and from noisy
// data within their statistical uncertainty; the fit in a small snapshot budget follows the
// store-all fit bit for bit (same gradients, so the same iterates); bounds hold; bad input is
// refused before any work; a model that blows up ends the fit with the best θ kept.
#include <gtest/gtest.h>

#include <Eigen/LU>

#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "fit_test_problems.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/fit/fit_parameters.hpp"
#include "rewind/fit/misfit.hpp"
#include "rewind/fit/parameter_uncertainty.hpp"
#include "support/error_message.hpp"
#include "support/scratch_directory.hpp"

namespace rwd {
namespace {

using rwd::testing::error_message;
using rwd::testing::expect_message;
using rwd::testing::lotka_volterra_observations;

constexpr double kInf = std::numeric_limits<double>::infinity();

bool same_bits(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

// θ = (α, β, δ, γ); α 15 % high and γ 15 % low, β and δ at the data's values.
Eigen::VectorXd lotka_volterra_start(const Observations& obs) {
  Eigen::VectorXd theta = obs.parameters;
  theta[0] *= 1.15;
  theta[3] *= 0.85;
  return theta;
}

FitOptions alpha_and_gamma(double alpha_upper = 3.0) {
  FitOptions options;
  options.fitted = {0, 3};
  options.bounds = {{0.5, alpha_upper}, {1.0, 6.0}};
  return options;
}

// Everything one fit of Lotka–Volterra needs, built once.
struct LotkaVolterraFit {
  explicit LotkaVolterraFit(const Observations& observations)
      : obs(observations),
        stepper(model, ButcherTableau::rk4(), StepControl::fixed(0.0, obs.dt, obs.steps)),
        misfit(observation_misfit(obs, misfit_sigma(obs))) {}

  FitResult fit(const Eigen::VectorXd& start, const FitOptions& options, const PlanRequest& request,
                const CheckpointOptions& checkpoint = {}) {
    return fit_parameters(stepper, misfit, obs.initial_state, start, options,
                          plan_checkpoints(request, obs.steps), checkpoint);
  }

  Observations obs;
  LotkaVolterra<> model;
  ExplicitRungeKutta<LotkaVolterra<>> stepper;
  Objective<EigenBackend> misfit;
};

void print(const char* name, const FitResult& r) {
  std::cout << name << ": " << r.iterations << " iterations, " << r.evaluations
            << " evaluations, J = " << r.loss << ", θ = " << r.theta.transpose() << " ("
            << r.stop_reason << ")\n";
}

TEST(FitParameters, RecoversLotkaVolterraFromExactData) {
  LotkaVolterraFit lv(lotka_volterra_observations(500, 10));  // all of y every 10 steps, 50 times
  const Eigen::VectorXd start = lotka_volterra_start(lv.obs);
  FitOptions options = alpha_and_gamma();
  std::vector<FitIteration> seen;
  options.on_iteration = [&](const FitIteration& it) { seen.push_back(it); };
  const FitResult r = lv.fit(start, options, PlanRequest::revolve(8));
  print("exact data", r);

  EXPECT_FALSE(r.failed) << r.failure;
  for (Index i : {0, 3})
    EXPECT_NEAR(r.theta[i], lv.obs.parameters[i], 1e-6 * lv.obs.parameters[i]) << "θ" << i;
  EXPECT_EQ(r.theta[1], start[1]) << "β is not fitted";
  EXPECT_EQ(r.theta[2], start[2]) << "δ is not fitted";
  EXPECT_LT(r.loss, 1e-10);
  EXPECT_EQ(r.gradient.size(), 4);
  EXPECT_GT(r.iterations, 2);
  EXPECT_LE(r.evaluations, options.max_evaluations);
  EXPECT_GE(r.evaluations, r.iterations + 1);

  // The history: the start first, J strictly decreasing, one callback per iteration, in order.
  ASSERT_EQ(static_cast<int>(r.history.size()), r.iterations + 1);
  ASSERT_EQ(seen.size(), r.history.size());
  EXPECT_TRUE(same_bits(r.history.front().theta, start));
  EXPECT_EQ(r.history.front().evaluations, 1);
  for (std::size_t k = 0; k < r.history.size(); ++k) {
    EXPECT_EQ(r.history[k].iteration, static_cast<int>(k));
    EXPECT_TRUE(same_bits(seen[k].theta, r.history[k].theta));
    EXPECT_GE(r.history[k].seconds, 0.0);
    if (k > 0) {
      EXPECT_LT(r.history[k].loss, r.history[k - 1].loss);
      EXPECT_GT(r.history[k].evaluations, r.history[k - 1].evaluations);
      EXPECT_GE(r.history[k].seconds, r.history[k - 1].seconds);
    }
  }
  EXPECT_EQ(r.history.back().loss, r.loss);
  EXPECT_TRUE(same_bits(r.history.back().theta, r.theta));
  EXPECT_GT(r.history.front().gradient_norm, 0.0);
  EXPECT_EQ(r.history.back().gradient_norm, std::hypot(r.gradient[0], r.gradient[3]));
  // Every gradient came through the checkpointed driver with the plan given.
  EXPECT_EQ(r.summary.schedule.rfind("revolve", 0), 0u) << r.summary.schedule;
  EXPECT_EQ(r.summary.steps, 500);
  EXPECT_LE(r.summary.storage.peak_bytes_on(LevelKind::memory),
            8 * (2 * 8 + static_cast<Index>(sizeof(Carry))));
}

// A first measurement is as noisy as the others: estimating y0 with θ (fitted_initial_state)
// from a start 10 % off recovers both from exact data, reports y0 through every channel (result,
// history, callback), and the joint standard errors come out in the order θ then y0.
TEST(FitParameters, RecoversTheInitialStateWithTheParameters) {
  LotkaVolterraFit lv(lotka_volterra_observations(500, 10));
  const Eigen::VectorXd start = lotka_volterra_start(lv.obs);
  const Eigen::VectorXd y0_start = lv.obs.initial_state * 1.1;
  FitOptions options = alpha_and_gamma();
  options.fitted_initial_state = {0, 1};
  options.initial_state_bounds = {{0.0, kInf}, {0.0, kInf}};
  options.max_evaluations = 200;
  std::vector<FitIteration> seen;
  options.on_iteration = [&](const FitIteration& it) { seen.push_back(it); };
  const CheckpointPlan plan = plan_checkpoints(PlanRequest::revolve(8), lv.obs.steps);
  const FitResult r = fit_parameters(lv.stepper, lv.misfit, y0_start, start, options, plan);
  print("θ and y0", r);
  ASSERT_FALSE(r.failed) << r.failure;
  for (Index i : {0, 3})
    EXPECT_NEAR(r.theta[i], lv.obs.parameters[i], 1e-5 * lv.obs.parameters[i]) << "θ" << i;
  ASSERT_EQ(r.initial_state.size(), 2);
  for (Index i : {0, 1})
    EXPECT_NEAR(r.initial_state[i], lv.obs.initial_state[i], 1e-5) << "y0[" << i << "]";
  EXPECT_EQ(r.theta.size(), 4);
  EXPECT_EQ(r.gradient.size(), 4);
  EXPECT_EQ(r.initial_state_gradient.size(), 2);
  EXPECT_TRUE(same_bits(r.history.front().initial_state, y0_start));
  EXPECT_TRUE(same_bits(r.history.back().initial_state, r.initial_state));
  ASSERT_EQ(seen.size(), r.history.size());
  EXPECT_TRUE(same_bits(seen.back().initial_state, r.initial_state));
  EXPECT_TRUE(same_bits(seen.back().theta, r.theta));

  // Standard errors over (α, γ, y0[0], y0[1]): a minimum, four finite positive errors; the
  // θ block agrees with those of a fit with y0 fixed only in being no smaller (y0 is uncertain).
  const ParameterUncertainty u = parameter_uncertainty(lv.stepper, lv.misfit, r, options, plan);
  ASSERT_TRUE(u.positive_definite);
  EXPECT_EQ(u.evaluations, 8);
  ASSERT_EQ(u.standard_errors.size(), 4);
  EXPECT_TRUE((u.standard_errors.array() > 0.0).all());
  const ParameterUncertainty fixed_y0 =
      parameter_uncertainty(lv.stepper, lv.misfit, r.initial_state, r.theta, options.fitted, plan);
  ASSERT_TRUE(fixed_y0.positive_definite);
  for (Index a : {0, 1})
    EXPECT_GE(u.standard_errors[a], fixed_y0.standard_errors[a] * (1.0 - 1e-6));

  // Without fitted components the result still carries y0 (the one given).
  const FitResult plain = lv.fit(start, alpha_and_gamma(), PlanRequest::revolve(8));
  EXPECT_TRUE(same_bits(plain.initial_state, lv.obs.initial_state));
  EXPECT_EQ(plain.initial_state_gradient.size(), 0);
}

TEST(FitParameters, RefusesBadInitialStateOptions) {
  LotkaVolterraFit lv(lotka_volterra_observations(100, 10));
  const CheckpointPlan plan = plan_checkpoints(PlanRequest::store_all(), lv.obs.steps);
  const auto refused = [&](const FitOptions& options, const char* needle) {
    expect_message(error_message<InvalidArgument>([&] {
                     fit_parameters(lv.stepper, lv.misfit, lv.obs.initial_state, lv.obs.parameters,
                                    options, plan);
                   }),
                   needle);
  };
  FitOptions options = alpha_and_gamma();
  options.fitted_initial_state = {0};
  refused(options, "1 fitted components of y0");
  options.initial_state_bounds = {{0.0, kInf}};
  options.fitted_initial_state = {2};
  refused(options, "outside y0's indices 0 to 1");
  options.fitted_initial_state = {1};
  options.initial_state_bounds = {{5.0, kInf}};
  refused(options, "lies outside its bounds");
  options.fitted_initial_state = {0, 0};
  options.initial_state_bounds = {{0.0, kInf}, {0.0, kInf}};
  refused(options, "listed twice");
}

// With noise σ, J is ½ χ², so near the fit θ̂ its Hessian is the inverse covariance of θ̂
// (Gauss–Newton; the Fisher information of Gaussian noise). The recovered parameters must lie
// within 4 standard deviations of the truth, and 2J/(number of data) must be near 1.
TEST(FitParameters, RecoversLotkaVolterraFromNoisyDataWithinItsUncertainty) {
  const double sigma = 0.05;
  LotkaVolterraFit lv(lotka_volterra_observations(500, 10, sigma, 2024));
  const Eigen::VectorXd start = lotka_volterra_start(lv.obs);
  const FitOptions options = alpha_and_gamma();
  const FitResult r = lv.fit(start, options, PlanRequest::revolve(8));
  print("noisy data", r);
  ASSERT_FALSE(r.failed) << r.failure;

  // The standard errors from the Hessian of J in (α, γ) at the fit.
  const ParameterUncertainty u =
      parameter_uncertainty(lv.stepper, lv.misfit, lv.obs.initial_state, r.theta, options.fitted,
                            plan_checkpoints(PlanRequest::revolve(8), lv.obs.steps));
  ASSERT_TRUE(u.positive_definite);
  EXPECT_EQ(u.evaluations, 4);
  for (std::size_t a = 0; a < options.fitted.size(); ++a) {
    const Index i = options.fitted[a];
    const double deviation = u.standard_errors[static_cast<Index>(a)];
    std::cout << "θ" << i << " = " << r.theta[i] << " ± " << deviation << " (true "
              << lv.obs.parameters[i] << ", " << (r.theta[i] - lv.obs.parameters[i]) / deviation
              << " σ)\n";
    EXPECT_GT(deviation, 0.0);
    EXPECT_LT(std::abs(r.theta[i] - lv.obs.parameters[i]), 4.0 * deviation) << "θ" << i;
    EXPECT_LT(deviation, 0.01 * lv.obs.parameters[i])
        << "the data determine θ" << i << " to better than 1 %";
  }
  const double data = static_cast<double>(lv.obs.data.size());
  EXPECT_NEAR(2.0 * r.loss / data, 1.0, 0.3) << "χ² per datum";
  // The gradient at the fit is small against its size at the start.
  EXPECT_LT(r.history.back().gradient_norm, 1e-3 * r.history.front().gradient_norm);
}

// For J = ½ (θ − a)ᵀ A (θ − a) the gradient is linear, so its central differences are exact:
// the Hessian is A and the covariance A⁻¹ (over the fitted indices; the others held fixed).
TEST(ParameterUncertainty, IsTheInverseHessianOfAQuadratic) {
  Eigen::Matrix3d a;
  a << 4.0, 1.0, 0.5, 1.0, 3.0, 0.25, 0.5, 0.25, 2.0;
  const Eigen::Vector3d centre(1.0, -2.0, 0.5);
  const auto gradient = [&](const Eigen::VectorXd& theta) -> Eigen::VectorXd {
    return a * (theta - centre);
  };
  const std::vector<Index> fitted = {2, 0};
  const ParameterUncertainty u = detail::uncertainty_from_gradients(gradient, centre, fitted);
  ASSERT_TRUE(u.positive_definite);
  Eigen::Matrix2d expected;
  expected << a(2, 2), a(2, 0), a(0, 2), a(0, 0);
  EXPECT_LT((u.hessian - expected).norm(), 1e-9);
  EXPECT_LT((u.covariance - expected.inverse()).norm(), 1e-9);
  EXPECT_NEAR(u.standard_errors[0], std::sqrt(expected.inverse()(0, 0)), 1e-9);
  EXPECT_EQ(u.evaluations, 4);

  // A saddle is no minimum: no standard errors, said so.
  Eigen::Matrix3d saddle = a;
  saddle(0, 0) = -4.0;
  const ParameterUncertainty s = detail::uncertainty_from_gradients(
      [&](const Eigen::VectorXd& theta) -> Eigen::VectorXd { return saddle * (theta - centre); },
      centre, fitted);
  EXPECT_FALSE(s.positive_definite);
  EXPECT_TRUE(std::isnan(s.standard_errors[0]));

  EXPECT_THROW(detail::uncertainty_from_gradients(gradient, centre, {0, 0}), InvalidArgument);
  EXPECT_THROW(detail::uncertainty_from_gradients(gradient, centre, {3}), InvalidArgument);
}

TEST(FitParameters, SmallSnapshotBudgetFollowsTheStoreAllFitBitForBit) {
  LotkaVolterraFit lv(lotka_volterra_observations(500, 10, 0.05, 99));
  const Eigen::VectorXd start = lotka_volterra_start(lv.obs);
  FitOptions options = alpha_and_gamma();
  options.max_evaluations = 40;
  const FitResult reference = lv.fit(start, options, PlanRequest::store_all());
  ASSERT_FALSE(reference.failed) << reference.failure;
  ASSERT_GT(reference.iterations, 3);

  test::ScratchDirectory scratch("rewind-fit");
  CheckpointOptions on_disk;
  on_disk.disk.directory = scratch.path();
  CostModel costs;
  costs.disk_write_time = 2.0;
  costs.disk_read_time = 1.0;
  const std::vector<std::pair<const char*, PlanRequest>> plans = {
      {"revolve(3)", PlanRequest::revolve(3)},
      {"two-level 2+4, disk", PlanRequest::two_level(2, 4, costs)}};
  for (const auto& [name, request] : plans) {
    SCOPED_TRACE(name);
    const FitResult r = lv.fit(start, options, request, on_disk);
    EXPECT_EQ(r.evaluations, reference.evaluations);
    EXPECT_EQ(r.iterations, reference.iterations);
    EXPECT_EQ(r.stop_reason, reference.stop_reason);
    EXPECT_TRUE(same_bits(r.theta, reference.theta));
    EXPECT_TRUE(same_bits(r.gradient, reference.gradient));
    EXPECT_EQ(std::memcmp(&r.loss, &reference.loss, sizeof(double)), 0);
    ASSERT_EQ(r.history.size(), reference.history.size());
    for (std::size_t k = 0; k < r.history.size(); ++k) {
      EXPECT_TRUE(same_bits(r.history[k].theta, reference.history[k].theta)) << "iteration " << k;
      EXPECT_EQ(std::memcmp(&r.history[k].loss, &reference.history[k].loss, sizeof(double)), 0)
          << "iteration " << k;
      EXPECT_EQ(r.history[k].evaluations, reference.history[k].evaluations);
    }
    EXPECT_GT(r.summary.recomputed_steps, reference.summary.recomputed_steps) << "it did recompute";
    EXPECT_LT(r.summary.storage.peak_bytes_on(LevelKind::memory),
              reference.summary.storage.peak_bytes_on(LevelKind::memory));
  }
  EXPECT_TRUE(scratch.files().empty());
}

// The field case: F and k of a Gray–Scott grid from noisy observations of v alone, gradients in
// a budget of 6 snapshots for 400 steps.
TEST(FitParameters, RecoversGrayScottFeedAndKillFromObservationsOfV) {
  const Index n = 12;
  const Observations obs = testing::gray_scott_observations(n, 400, 20, 1e-3);
  const GrayScott<> model(n);
  ExplicitRungeKutta stepper(model, ButcherTableau::rk4(),
                             StepControl::fixed(0.0, obs.dt, obs.steps));
  const auto misfit = observation_misfit(obs, misfit_sigma(obs));
  Eigen::VectorXd start = obs.parameters;
  start[2] *= 1.15;  // F
  start[3] *= 0.88;  // k
  FitOptions options;
  options.fitted = {2, 3};
  options.bounds = {{0.01, 0.1}, {0.03, 0.08}};
  const FitResult r = fit_parameters(stepper, misfit, obs.initial_state, start, options,
                                     plan_checkpoints(PlanRequest::revolve(6), obs.steps));
  print("Gray-Scott", r);
  ASSERT_FALSE(r.failed) << r.failure;
  for (Index i : {2, 3})
    EXPECT_NEAR(r.theta[i], obs.parameters[i], 1e-3 * obs.parameters[i]) << "θ" << i;
  EXPECT_EQ(r.theta[0], obs.parameters[0]);
  EXPECT_EQ(r.theta[1], obs.parameters[1]);
  EXPECT_NEAR(2.0 * r.loss / static_cast<double>(obs.data.size()), 1.0, 0.2) << "χ² per datum";
}

TEST(FitParameters, KeepsEveryIterateInsideTheBounds) {
  LotkaVolterraFit lv(lotka_volterra_observations(300, 10));
  const Eigen::VectorXd start = lotka_volterra_start(lv.obs);
  FitOptions options;
  options.fitted = {0};
  options.bounds = {{1.6, 2.0}};  // the true α = 1.5 lies below the box
  const FitResult r = lv.fit(start, options, PlanRequest::revolve(5));
  print("α bounded away from the truth", r);
  EXPECT_FALSE(r.failed) << r.failure;
  EXPECT_EQ(r.theta[0], 1.6) << "the fit ends on the active bound";
  for (const FitIteration& it : r.history) {
    EXPECT_GE(it.theta[0], 1.6);
    EXPECT_LE(it.theta[0], 2.0);
  }
  EXPECT_GT(r.gradient[0], 0.0) << "J would fall further below the bound";
}

TEST(FitParameters, RefusesBadInputBeforeAnyWork) {
  LotkaVolterraFit lv(lotka_volterra_observations(100, 10));
  const Eigen::VectorXd start = lotka_volterra_start(lv.obs);  // α = 1.725, γ = 2.55
  int iterations = 0;
  auto refused = [&](const FitOptions& options, const Eigen::VectorXd& theta = Eigen::VectorXd()) {
    FitOptions counted = options;
    counted.on_iteration = [&](const FitIteration&) { ++iterations; };
    return error_message<InvalidArgument>(
        [&] { lv.fit(theta.size() ? theta : start, counted, PlanRequest::revolve(4)); });
  };
  FitOptions options = alpha_and_gamma(1.7);
  expect_message(refused(options),
                 "the start θ[0] = 1.7249999999999999 lies outside its bounds [0.5, 1.7]");
  options = alpha_and_gamma();
  options.bounds[1] = {3.0, 3.0};
  expect_message(refused(options), "the bounds of θ[3], [3, 3], must satisfy lower < upper");
  options.bounds[1] = {4.0, 2.0};
  expect_message(refused(options), "the bounds of θ[3], [4, 2]");
  options = alpha_and_gamma();
  options.fitted = {0, 4};
  expect_message(refused(options), "fitted index 4 is outside θ's indices 0 to 3");
  options.fitted = {0, -1};
  expect_message(refused(options), "fitted index -1");
  options.fitted = {3, 3};
  expect_message(refused(options), "θ[3] is listed twice among the fitted indices");
  options = alpha_and_gamma();
  options.bounds.pop_back();
  expect_message(refused(options), "1 bounds for 2 fitted parameters");
  options = alpha_and_gamma();
  options.fitted.clear();
  options.bounds.clear();
  expect_message(refused(options), "no parameter is to be fitted");
  options = alpha_and_gamma();
  Eigen::VectorXd bad = start;
  bad[1] = std::nan("");
  expect_message(refused(options, bad), "the start θ[1] = nan is not finite");
  options.max_evaluations = 0;
  expect_message(refused(options), "max_evaluations = 0 must be >= 1");
  options = alpha_and_gamma();
  expect_message(refused(options, Eigen::VectorXd::Ones(3)),
                 "theta_start has 3 components but the stepper's problem has 4");
  EXPECT_EQ(iterations, 0);

  // A plan for another horizon, and an adaptive stepper.
  expect_message(error_message<InvalidArgument>([&] {
                   fit_parameters(lv.stepper, lv.misfit, lv.obs.initial_state, start,
                                  alpha_and_gamma(), plan_checkpoints(PlanRequest::revolve(4), 99));
                 }),
                 "is for 99 steps but the stepper takes 100");
  ExplicitRungeKutta adaptive(lv.model, ButcherTableau::by_name("dopri5"),
                              StepControl::adaptive(0.0, 1.0, 1e-6, 1e-9));
  expect_message(error_message<InvalidArgument>([&] {
                   fit_parameters(adaptive, lv.misfit, lv.obs.initial_state, start,
                                  alpha_and_gamma(),
                                  plan_checkpoints(PlanRequest::revolve(4), 100));
                 }),
                 "needs a fixed-step stepper");
  EXPECT_EQ(lv.stepper.counters().steps, 0) << "nothing was integrated";
}

// The log scale's chain rule: for a smooth J(θ), the optimiser's gradient dJ/dx (to_gradient of
// the exact dJ/dθ) against central differences of J(to_theta(x)) in x = 1 + ln(θ/θ_start), for a
// log-scaled rate of 3e7 and one of 0.04, and a linear one beside them.
TEST(FitCoordinates, TheLogScalesGradientIsTheChainRuleOfFiniteDifferencesInLogTheta) {
  Eigen::VectorXd theta_start(4);
  theta_start << 0.04, 2.5, 3e7, -1.0;
  FitOptions options;
  options.fitted = {0, 2, 3};
  options.bounds = {{0.0, kInf}, {1e6, 1e9}, {-5.0, 5.0}};
  options.log_scale = {2, 0};
  options.validate(theta_start);
  const detail::FitCoordinates coordinates(theta_start, options);
  EXPECT_EQ(coordinates.start(), (std::vector<double>{1.0, 1.0, -1.0})) << "linear: θ / |θ_start|";
  EXPECT_EQ(coordinates.lower()[0], -kInf) << "a lower bound of 0 is no bound in log θ";
  EXPECT_NEAR(coordinates.lower()[1], 1.0 + std::log(1e6 / 3e7), 1e-15);
  EXPECT_NEAR(coordinates.upper()[1], 1.0 + std::log(1e9 / 3e7), 1e-15);
  EXPECT_EQ(coordinates.upper()[0], kInf);
  EXPECT_EQ(coordinates.lower()[2], -5.0) << "the linear one: bounds / |θ_start|";

  // J(θ) = sin(θ0 / 0.04) + (θ2 / 3e7)³ θ1 + θ3² θ0, and its gradient.
  const auto loss = [](const Eigen::VectorXd& t) {
    return std::sin(t[0] / 0.04) + std::pow(t[2] / 3e7, 3) * t[1] + t[3] * t[3] * t[0];
  };
  const auto gradient = [](const Eigen::VectorXd& t) {
    Eigen::VectorXd g = Eigen::VectorXd::Zero(4);
    g[0] = std::cos(t[0] / 0.04) / 0.04 + t[3] * t[3];
    g[1] = std::pow(t[2] / 3e7, 3);
    g[2] = 3.0 * std::pow(t[2] / 3e7, 2) * t[1] / 3e7;
    g[3] = 2.0 * t[3] * t[0];
    return g;
  };
  const std::vector<double> x = {1.3, 0.6, 0.7};  // θ0 = 0.04 e^0.3, θ2 = 3e7 e^-0.4
  Eigen::VectorXd theta = theta_start;
  coordinates.to_theta(x, theta);
  EXPECT_NEAR(theta[0], 0.04 * std::exp(0.3), 1e-17);
  EXPECT_NEAR(theta[2], 3e7 * std::exp(-0.4), 1e-8);
  EXPECT_EQ(theta[3], 0.7);
  EXPECT_EQ(theta[1], 2.5) << "not fitted: left alone";
  std::vector<double> g(3);
  coordinates.to_gradient(theta, gradient(theta), g);
  for (std::size_t j = 0; j < 3; ++j) {
    const double h = 1e-5;
    std::vector<double> up = x, down = x;
    up[j] += h;
    down[j] -= h;
    Eigen::VectorXd theta_up = theta_start, theta_down = theta_start;
    coordinates.to_theta(up, theta_up);
    coordinates.to_theta(down, theta_down);
    const double difference = (loss(theta_up) - loss(theta_down)) / (2.0 * h);
    EXPECT_NEAR(g[j], difference, 1e-8 * std::max(1.0, std::abs(difference))) << "x" << j;
  }
  EXPECT_DOUBLE_EQ(g[1], gradient(theta)[2] * theta[2]) << "dJ/dlog θ = θ dJ/dθ";
}

// Fitted on the log scale, Lotka–Volterra's α and γ come back from exact data as on the linear
// scale; every iterate stays positive.
TEST(FitParameters, FitsOnTheLogScale) {
  LotkaVolterraFit lv(lotka_volterra_observations(500, 10));
  const Eigen::VectorXd start = lotka_volterra_start(lv.obs);
  FitOptions options = alpha_and_gamma();
  options.bounds[1] = {0.0, kInf};
  options.log_scale = {0, 3};
  const FitResult r = lv.fit(start, options, PlanRequest::revolve(8));
  print("log scale", r);
  EXPECT_FALSE(r.failed) << r.failure;
  for (Index i : {0, 3})
    EXPECT_NEAR(r.theta[i], lv.obs.parameters[i], 1e-6 * lv.obs.parameters[i]) << "θ" << i;
  for (const FitIteration& it : r.history) EXPECT_GT(it.theta[3], 0.0);
}

TEST(FitParameters, RefusesALogScaleThatCannotHold) {
  LotkaVolterraFit lv(lotka_volterra_observations(100, 10));
  Eigen::VectorXd start = lotka_volterra_start(lv.obs);
  const auto refused = [&](const FitOptions& options, const Eigen::VectorXd& theta) {
    return error_message<InvalidArgument>([&] { lv.fit(theta, options, PlanRequest::revolve(4)); });
  };
  FitOptions options = alpha_and_gamma();
  options.log_scale = {1};
  expect_message(refused(options, start), "θ[1] is on the log scale but not fitted");
  options.log_scale = {3, 3};
  expect_message(refused(options, start), "θ[3] is listed twice on the log scale");
  options.log_scale = {3};
  options.bounds[1] = {-1.0, 6.0};
  expect_message(refused(options, start),
                 "θ[3] is fitted on the log scale, so its lower bound must be >= 0, not -1");
  options.bounds[1] = {-kInf, kInf};
  Eigen::VectorXd negative = start;
  negative[3] = 0.0;
  expect_message(refused(options, negative),
                 "θ[3] is fitted on the log scale, so its start must be > 0, not 0");
  EXPECT_EQ(lv.stepper.counters().steps, 0) << "nothing was integrated";
}

// NLopt's gradient test is absolute on the scaled J: from a start where the gradient is 10¹²
// times the one near the minimum, the fit stops early reporting success; restarts rescale J at
// the best θ and go on to the minimum, with iterations, evaluations and history running on.
TEST(FitParameters, RestartsGoOnAfterAnEarlyStop) {
  // J = (θ − 1)² + 10⁶ (θ − 1)⁴ from θ = 100: a steep quartic far out, a shallow quadratic near 1.
  const auto gradient = [](const Eigen::VectorXd& theta) {
    const double d = theta[0] - 1.0;
    detail::FitGradient run;
    run.loss = d * d + 1e6 * d * d * d * d;
    run.grad_theta = Eigen::VectorXd::Constant(1, 2.0 * d + 4e6 * d * d * d);
    return run;
  };
  FitOptions options;
  options.fitted = {0};
  options.bounds = {{-kInf, kInf}};
  options.max_evaluations = 300;
  const Eigen::VectorXd start = Eigen::VectorXd::Constant(1, 100.0);
  const FitResult once = detail::fit_with_gradient(gradient, start, options);
  print("no restart", once);
  options.restarts = 10;
  const FitResult restarted = detail::fit_with_gradient(gradient, start, options);
  print("restarts", restarted);
  EXPECT_EQ(once.restarts, 0);
  EXPECT_EQ(once.optimizer_code, 1) << "the early stop this test is about";
  EXPECT_GT(std::abs(once.theta[0] - 1.0), 1e-3);
  EXPECT_GE(restarted.restarts, 1);
  EXPECT_NEAR(restarted.theta[0], 1.0, 1e-3);
  EXPECT_LT(restarted.loss, once.loss);
  ASSERT_GE(restarted.history.size(), once.history.size());
  for (std::size_t k = 0; k < once.history.size(); ++k)
    EXPECT_TRUE(same_bits(restarted.history[k].theta, once.history[k].theta))
        << "the first round is the fit without restarts, bit for bit";
  EXPECT_EQ(static_cast<int>(restarted.history.size()), restarted.iterations + 1);
  options.restarts = -1;
  expect_message(
      error_message<InvalidArgument>([&] { detail::fit_with_gradient(gradient, start, options); }),
      "restarts = -1 must be >= 0");
}

TEST(FitParameters, AnExceptionOfTheIterationCallbackReachesTheCaller) {
  LotkaVolterraFit lv(lotka_volterra_observations(200, 10));
  FitOptions options = alpha_and_gamma();
  int calls = 0;
  options.on_iteration = [&](const FitIteration& it) {
    ++calls;
    if (it.iteration == 2) throw std::runtime_error("interrupted by the user");
  };
  expect_message(error_message<std::runtime_error>([&] {
                   lv.fit(lotka_volterra_start(lv.obs), options, PlanRequest::revolve(4));
                 }),
                 "interrupted by the user");
  EXPECT_EQ(calls, 3);
}

// A σ far below the data's scale makes the first gradient huge, so L-BFGS's first trial step
// runs into the upper bound of α, where RK4 with dt = 0.01 is unstable (α·dt ≫ 2.8) and the
// prey overflow: the driver's NumericalError ends the fit, and the start — the best θ so far —
// is kept.
TEST(FitParameters, ANonFiniteEvaluationEndsTheFitKeepingTheBestParameters) {
  // J = ½ |θ − (2, 3)|², whose third evaluation meets a state that blew up (as a driver reports
  // it: NumericalError naming the step and t).
  const Eigen::Vector2d centre(2.0, 3.0);
  int calls = 0;
  const auto gradient = [&](const Eigen::VectorXd& theta) {
    if (++calls == 3)
      throw NumericalError("state became non-finite (NaN or Inf) at step 17, t = 0.17");
    detail::FitGradient run;
    run.grad_theta = theta - centre;
    run.loss = 0.5 * run.grad_theta.squaredNorm();
    return run;
  };
  FitOptions options;
  options.fitted = {0, 1};
  options.bounds = {{0.1, 1e4}, {0.1, 1e4}};
  const FitResult r = detail::fit_with_gradient(gradient, Eigen::Vector2d(1.0, 1.0), options);
  print("blow-up", r);
  EXPECT_TRUE(r.failed);
  EXPECT_EQ(r.evaluations, 3);
  expect_message(r.failure, "evaluation 3 (θ = ");
  expect_message(r.failure, "non-finite");
  expect_message(r.failure, "at step 17");
  expect_message(r.stop_reason, "stopped: evaluation");
  ASSERT_FALSE(r.history.empty());
  EXPECT_TRUE(same_bits(r.theta, r.history.back().theta));
  EXPECT_LE(r.loss, 0.5 * (1.0 + 4.0)) << "the best so far, not the start or the failed point";
  EXPECT_TRUE(r.gradient.allFinite());
}

}  // namespace
}  // namespace rwd
