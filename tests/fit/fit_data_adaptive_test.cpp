// rwd::fit with adaptive steps (FitSpec::rtol > 0): the error controller chooses the steps at the
// start, every data time a stop time the run lands on, and again at the estimate until they
// settle; the optimiser runs on steps held between the choices. Robertson's three rates from
// noisy data at log-spaced times (the transient, the plateau and the decay) with an implicit and
// a Rosenbrock method, in a few hundred steps where fixed ones take 80 000; the SIR rates with
// dopri5; the gradient the same bits under store-all and revolve, agreeing with finite
// differences on the steps held; the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "problems/models/robertson_model.hpp"
#include "problems/models/sir_model.hpp"
#include "rewind/fit/fit_data.hpp"
#include "rewind/fit/gradient_check.hpp"
#include "rewind/model.hpp"
#include "support/error_message.hpp"

namespace rwd {
namespace {

using rwd::testing::error_message;
using rwd::testing::expect_message;

template <class Call>
void refused(Call&& call, const std::string& part) {
  expect_message(error_message<InvalidArgument>(std::forward<Call>(call)), part);
}

bool same_bits(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(double)) == 0;
}

// 16 times spaced evenly in log t from 0.01 to 40 (bench/stiff_data_fit.py's): the fast
// transient, y₂'s plateau and the slow decay.
std::vector<double> log_times() {
  std::vector<double> times;
  for (int k = 0; k < 16; ++k) times.push_back(0.01 * std::pow(4000.0, k / 15.0));
  times.back() = 40.0;
  return times;
}

// Gaussian noise of standard deviation σ, the same on every platform (std::mt19937_64 is
// specified exactly; Box–Muller by hand, as <random>'s distributions differ between libraries).
void add_noise(Eigen::MatrixXd& values, double sigma, std::uint64_t seed) {
  std::mt19937_64 bits(seed);
  const auto uniform = [&] { return (static_cast<double>(bits() >> 11) + 0.5) * 0x1p-53; };
  for (Index i = 0; i < values.size(); ++i)
    values.data()[i] +=
        sigma * std::sqrt(-2.0 * std::log(uniform())) * std::cos(2.0 * M_PI * uniform());
}

// Every state of Robertson's kinetics at `times` from a tightly converged adaptive run of
// `method` at the true rates, with noise of σ = 10⁻⁶ (3 % of y₂'s plateau) drawn from `seed`.
TimeSeries robertson_series(const std::string& method, std::vector<double> times,
                            std::uint64_t seed) {
  const auto problem = auto_problem(RobertsonModel{});
  FitSpec tight;
  tight.method = method;
  tight.rtol = 1e-11;
  tight.atol = 1e-16;
  tight.newton.rtol = 1e-13;
  tight.newton.atol = 1e-18;
  TimeSeries data;
  data.times = std::move(times);
  data.columns = {"y1", "y2", "y3"};
  data.values = predict(problem, data.times, tight, Eigen::VectorXd{{0.04, 1e4, 3e7}});
  add_noise(data.values, 1e-6, seed);
  return data;
}

// The three rates on the log scale from 2.5, 1/4 and 3 times the truth, bounded by [0, 10⁹], on
// `method`'s adaptive steps to rtol 10⁻⁸, atol 10⁻¹⁴, two restarts, σ estimated.
FitSpec robertson_rates_spec(const std::string& method) {
  FitSpec spec;
  spec.method = method;
  spec.rtol = 1e-8;
  spec.atol = 1e-14;
  spec.newton.rtol = 1e-12;
  spec.newton.atol = 1e-16;
  spec.fit = {
      {"k1", 0.1, 0.0, 1e9, true}, {"k2", 2.5e3, 0.0, 1e9, true}, {"k3", 9e7, 0.0, 1e9, true}};
  spec.restarts = 2;
  return spec;
}

// The fit found every rate within 3 standard errors, on steps that settled.
void expect_the_true_rates(const DataFitResult& r) {
  ASSERT_FALSE(r.failed) << r.status;
  ASSERT_TRUE(r.positive_definite);
  const double truth[] = {0.04, 1e4, 3e7};
  for (Index j = 0; j < 3; ++j)
    EXPECT_LT(std::abs(r.estimates[j] - truth[j]), 3.0 * r.standard_errors[j]) << j;
  EXPECT_TRUE(r.steps_settled);
}

TEST(FitDataAdaptive, RobertsonsRatesWithImplicitAndRosenbrockSteps) {
  // bench/stiff_data_fit.py's fit on fixed steps of 5·10⁻⁴ (80 000 a run); here the steps are
  // adaptive.
  const auto problem = auto_problem(RobertsonModel{});
  for (const char* method : {"esdirk43", "rodas4"}) {
    SCOPED_TRACE(method);
    const TimeSeries data = robertson_series(method, log_times(), 43);
    const DataFitResult r = fit(problem, data, robertson_rates_spec(method));
    expect_the_true_rates(r);
    EXPECT_EQ(r.data_steps.size(), data.times.size());
    EXPECT_EQ(r.data_steps.back(), r.steps);
    EXPECT_LT(r.steps, 2000);  // fixed steps short enough for the transient: 80 000
  }
}

// The cvsRoberts horizon: every state at 0.4·10^k for k = −3 … 7 (to 4·10⁷, y₁ nearly spent),
// noise 10⁻⁶, from the same start. rodas4's stages solve no Newton system; esdirk43's held steps
// of about 1.6·10⁵ near t = 3·10⁶, chosen at one θ, have no stage solution at some θ the optimiser
// tries, and are taken there in substeps (NewtonOptions::max_substeps).
TEST(FitDataAdaptive, RosenbrockAndImplicitStepsFitRobertsonOverTheCvsRobertsHorizon) {
  const auto problem = auto_problem(RobertsonModel{});
  std::vector<double> times;
  for (int k = -3; k <= 7; ++k) times.push_back(0.4 * std::pow(10.0, k));
  for (const char* method : {"rodas4", "esdirk43"}) {
    SCOPED_TRACE(method);
    const DataFitResult r =
        fit(problem, robertson_series(method, times, 44), robertson_rates_spec(method));
    expect_the_true_rates(r);
    EXPECT_LT(r.steps, 5000);
  }
}

// SIR from unevenly spaced infected counts with noise of σ = 2, dopri5's adaptive steps.
TimeSeries sir_series(const std::vector<double>& days, double noise = 2.0) {
  const auto problem = auto_problem(SirFromTenInfected{});
  FitSpec tight;
  tight.method = "dopri5";
  tight.rtol = 1e-12;
  tight.atol = 1e-12;
  TimeSeries data;
  data.times = days;
  data.columns = {"I"};
  data.values = predict(problem, days, tight, Eigen::VectorXd{{0.52, 0.21, 1000.0}}).col(1);
  add_noise(data.values, noise, 7);
  return data;
}

FitSpec sir_adaptive_spec() {
  FitSpec spec;
  spec.method = "dopri5";
  spec.rtol = 1e-9;
  spec.atol = 1e-9;
  spec.fit = {{"beta", 0.4, 0.25, 2.0}, {"gamma", 0.3, 0.125, 1.0}};
  spec.fixed = {{"N", 1000.0}};
  spec.sigma = 1.0;
  return spec;
}

const std::vector<double> kDays{1.0, 2.5, 4.0, 5.25, 7.0, 8.5, 10.0, 13.0, 17.0, 24.0, 34.0, 50.0};

TEST(FitDataAdaptive, SirRatesWithDopri5) {
  const auto problem = auto_problem(SirFromTenInfected{});
  FitSpec spec = sir_adaptive_spec();
  spec.sigma = 0.0;  // estimated
  const DataFitResult r = fit(problem, sir_series(kDays), spec);
  ASSERT_TRUE(r.converged) << r.status;
  ASSERT_TRUE(r.positive_definite);
  EXPECT_TRUE(r.steps_settled);
  const double truth[] = {0.52, 0.21};
  for (Index j = 0; j < 2; ++j)
    EXPECT_LT(std::abs(r.estimates[j] - truth[j]), 3.0 * r.standard_errors[j]) << j;
  EXPECT_GT(r.sigma, 1.0);  // the noise is 2
  EXPECT_LT(r.sigma, 4.0);
}

TEST(FitDataAdaptive, TheGradientHasTheSameBitsUnderEverySchedule) {
  const auto problem = auto_problem(SirFromTenInfected{});
  const TimeSeries data = sir_series(kDays);
  FitSpec spec = sir_adaptive_spec();
  spec.max_evaluations = 1;  // the gradient at the start
  spec.uncertainty = false;
  const DataFitResult store_all = fit(problem, data, spec);
  for (const PlanRequest& request : {PlanRequest::revolve(3), PlanRequest::revolve(1)}) {
    spec.checkpoints = request;
    const DataFitResult replayed = fit(problem, data, spec);
    EXPECT_TRUE(same_bits(replayed.gradient, store_all.gradient));
    EXPECT_EQ(replayed.residual_sum_of_squares, store_all.residual_sum_of_squares);
    EXPECT_EQ(replayed.steps, store_all.steps);
    EXPECT_GT(replayed.summary.recomputed_steps, 0);
  }
}

TEST(FitDataAdaptive, TheGradientAgreesWithFiniteDifferences) {
  // On the steps an adaptive run at θ chose, held while θ is differenced, as a fit holds them:
  // J is smooth there, and the check is as tight as for fixed steps.
  const auto problem = auto_problem(SirFromTenInfected{});
  FitSpec spec = sir_adaptive_spec();
  spec.rtol = 1e-6;
  const GradientCheck check =
      check_gradient(problem, sir_series(kDays), Eigen::VectorXd{{0.45, 0.25, 1000.0}}, spec);
  EXPECT_TRUE(check.passed) << check.report();
}

TEST(FitDataAdaptive, RefusesTolerancesThatMeanNothing) {
  const auto problem = auto_problem(SirFromTenInfected{});
  const TimeSeries data = sir_series(kDays);
  FitSpec spec = sir_adaptive_spec();
  spec.rtol = -0.5;
  refused([&] { fit(problem, data, spec); },
          "rwd::fit: FitSpec::rtol = -0.5 must be finite and >= 0 (0: fixed steps of max_step)");
  spec.rtol = 1e-6;
  spec.atol = 0.0;
  refused([&] { fit(problem, data, spec); },
          "rwd::fit: FitSpec::atol = 0 must be finite and > 0 with adaptive steps");
  spec.atol = 1e-9;
  spec.method = "rk4";  // no embedded error estimate
  expect_message(error_message<InvalidArgument>([&] { fit(problem, data, spec); }), "rk4");
}

}  // namespace
}  // namespace rwd
