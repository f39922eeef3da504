// The `rewind` tool's logic without its command line: problem names, option checks and defaults,
// the extrapolated finite differences, and the gradient run with its spot check. (The executable
// itself — exit statuses, messages, JSON — is tested by the ctests labelled "cli" that
// src/cli/CMakeLists.txt adds.)
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "../../src/cli/extrapolated_difference.hpp"
#include "../../src/cli/gradient_run.hpp"
#include "../../src/cli/problem_registry.hpp"
#include "../../src/cli/run_settings.hpp"

namespace rwd::cli {
namespace {

// The message of the InvalidArgument that resolve_run_settings throws ("" if none).
std::string refusal(const RunOptions& options) {
  try {
    resolve_run_settings(options);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

RunOptions options_for(const std::string& problem) {
  RunOptions o;
  o.problem = problem;
  return o;
}

TEST(ProblemRegistry, FindsCanonicalNamesAliasesAndSpellings) {
  for (const ProblemInfo& info : problem_table()) {
    ASSERT_NE(find_problem(info.name), nullptr) << info.name;
    EXPECT_EQ(find_problem(info.name)->id, info.id);
  }
  EXPECT_EQ(find_problem("lotka-volterra")->id, ProblemId::lotka_volterra);
  EXPECT_EQ(find_problem("vanderpol")->id, ProblemId::van_der_pol);
  EXPECT_EQ(find_problem("van-der-pol")->id, ProblemId::van_der_pol);
  EXPECT_EQ(find_problem("gray-scott")->id, ProblemId::gray_scott);
  EXPECT_EQ(find_problem("Lorenz96")->id, ProblemId::lorenz96);
  EXPECT_EQ(find_problem("lorenz"), nullptr);
  EXPECT_EQ(find_problem(""), nullptr);
}

TEST(ProblemRegistry, UnknownNameListsTheKnownOnes) {
  try {
    require_problem("no_such_problem");
    FAIL() << "no exception";
  } catch (const InvalidArgument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("unknown problem 'no_such_problem'"), std::string::npos) << message;
    EXPECT_NE(message.find("gray_scott"), std::string::npos) << message;
  }
}

TEST(ProblemRegistry, BuildsEachProblemWithConsistentSizes) {
  for (const ProblemInfo& info : problem_table()) {
    const Index n = info.sized() ? 4 : 0;
    with_problem(info, n,
                 [&](const auto& problem, const auto& y0, const auto& theta,
                     const std::vector<std::string>& names) {
                   EXPECT_EQ(y0.size(), problem.state_size()) << info.name;
                   EXPECT_EQ(theta.size(), problem.parameter_size()) << info.name;
                   EXPECT_EQ(static_cast<Index>(names.size()), problem.parameter_size())
                       << info.name;
                   if (!info.sized()) {
                     EXPECT_EQ(problem.state_size(), info.fixed_state_size) << info.name;
                   }
                   return 0;
                 });
  }
}

TEST(RunSettings, PerProblemDefaults) {
  const RunSettings l96 = resolve_run_settings(options_for("lorenz96"));
  EXPECT_EQ(l96.n, 40);
  EXPECT_EQ(l96.control.steps, 200);
  EXPECT_EQ(l96.control.dt, 0.01);
  EXPECT_EQ(l96.tableau.name, "rk4");
  EXPECT_FALSE(l96.control.is_adaptive());
  EXPECT_FALSE(l96.fd_epsilon.has_value());

  const RunSettings gs = resolve_run_settings(options_for("gray-scott"));
  EXPECT_EQ(gs.n, 64);
  EXPECT_EQ(gs.control.dt, 1.0);
  EXPECT_EQ(resolve_run_settings(options_for("linear")).n, 3);
  EXPECT_EQ(resolve_run_settings(options_for("lorenz63")).n, 0);
}

TEST(RunSettings, AdaptiveDefaultsToTheFixedRunsHorizon) {
  RunOptions o = options_for("lorenz63");
  o.method = "dopri5";
  o.adaptive = true;
  o.steps = 300;
  const RunSettings s = resolve_run_settings(o);
  ASSERT_TRUE(s.control.is_adaptive());
  EXPECT_DOUBLE_EQ(s.control.t_final, 3.0);
  EXPECT_EQ(s.control.rtol, kDefaultRtol);
  EXPECT_EQ(s.control.atol, kDefaultAtol);
  EXPECT_EQ(s.control.dt, 0.0);  // first step chosen automatically
}

TEST(RunSettings, RefusesBadInputNamingTheFlag) {
  RunOptions o = options_for("lorenz63");
  o.dt = -1.0;
  EXPECT_NE(refusal(o).find("--dt = -1 must be"), std::string::npos) << refusal(o);
  o = options_for("lorenz63");
  o.dt = std::nan("");
  EXPECT_NE(refusal(o).find("--dt"), std::string::npos) << refusal(o);
  o = options_for("lorenz63");
  o.steps = 0;
  EXPECT_NE(refusal(o).find("--steps = 0"), std::string::npos) << refusal(o);
  o = options_for("lorenz63");
  o.n = 5;
  EXPECT_NE(refusal(o).find("--n does not apply to lorenz63"), std::string::npos) << refusal(o);
  o = options_for("lorenz63");
  o.method = "rk9";
  EXPECT_NE(refusal(o).find("--method"), std::string::npos) << refusal(o);
  o = options_for("lorenz63");
  o.adaptive = true;  // rk4 has no error estimate
  EXPECT_NE(refusal(o).find("embedded error estimate"), std::string::npos) << refusal(o);
  o = options_for("lorenz63");
  o.t_final = 3.0;  // without --adaptive
  EXPECT_NE(refusal(o).find("--t-final applies only with --adaptive"), std::string::npos);
  o = options_for("lorenz63");
  o.method = "tsit5";
  o.adaptive = true;
  o.rtol = 1e-20;
  EXPECT_NE(refusal(o).find("--rtol = 1e-20 "), std::string::npos) << refusal(o);
  o = options_for("lorenz63");
  o.fd_epsilon = 0.0;
  EXPECT_NE(refusal(o).find("--fd-epsilon"), std::string::npos) << refusal(o);
}

TEST(ExtrapolatedDifference, ReachesRoundOffOnSmoothFunctions) {
  const auto e = extrapolated_central_difference([](double s) { return std::exp(1.0 + s); }, 0.1);
  EXPECT_NEAR(e.value, std::exp(1.0), 1e-12 * std::exp(1.0));
  EXPECT_LE(e.error_estimate, 1e-10);
  EXPECT_EQ(e.first_step, 0.1);
  EXPECT_GT(e.evaluations, 0);
  const auto s =
      extrapolated_central_difference([](double x) { return std::sin(3.0 * x) + 2.0; }, 0.5);
  EXPECT_NEAR(s.value, 3.0, 1e-11);
}

TEST(ExtrapolatedDifference, HandlesSharpFunctionsWithALargeFirstStep) {
  // Curvature scale 1e-4 and a first step of 1e-1: the sweep must halve its way into range.
  const auto e = extrapolated_central_difference(
      [](double s) { return std::exp(1e4 * s) * 1e-4 + s * s; }, 0.1);
  EXPECT_NEAR(e.value, 1.0, 1e-8);
}

TEST(ExtrapolatedDifference, NonFiniteEverywhereGivesANonFiniteValue) {
  const auto e = extrapolated_central_difference(
      [](double) { return std::numeric_limits<double>::quiet_NaN(); }, 0.1, 6);
  EXPECT_FALSE(std::isfinite(e.value));
  EXPECT_EQ(e.evaluations, 12);
}

TEST(SpotCheckDirection, IsAUnitVectorThatDependsOnlyOnTheSeed) {
  const Eigen::VectorXd a = spot_check_direction(50, 7);
  EXPECT_NEAR(a.norm(), 1.0, 1e-15);
  EXPECT_EQ(a, spot_check_direction(50, 7));
  EXPECT_NE(a, spot_check_direction(50, 8));
}

// Every problem at a small size: the adjoint agrees with the finite differences.
TEST(GradientRun, SpotCheckAgreesOnEveryProblem) {
  for (const ProblemInfo& info : problem_table()) {
    RunOptions o = options_for(info.name);
    if (info.sized()) o.n = info.id == ProblemId::gray_scott ? 8 : 5;
    o.steps = 50;
    const RunReport r = run_gradient(resolve_run_settings(o));
    EXPECT_EQ(r.summary.steps, 50) << info.name;
    EXPECT_EQ(static_cast<Index>(r.grad_theta.size()), r.parameter_size) << info.name;
    EXPECT_TRUE(std::isfinite(r.loss)) << info.name;
    ASSERT_TRUE(r.fd_checked);
    EXPECT_LT(r.fd.rel_error, 1e-6) << info.name;
    EXPECT_EQ(r.fd.verdict, "agree") << info.name;
  }
}

// The acceptance run: rewind run lorenz96 --n 40 --steps 200 --method rk4 --dt 0.01.
TEST(GradientRun, AcceptanceRunLorenz96) {
  RunOptions o = options_for("lorenz96");
  o.n = 40;
  o.steps = 200;
  o.method = "rk4";
  o.dt = 0.01;
  const RunReport r = run_gradient(resolve_run_settings(o));
  EXPECT_EQ(r.state_size, 40);
  EXPECT_EQ(r.parameter_size, 1);
  EXPECT_EQ(r.parameter_names, std::vector<std::string>{"F"});
  EXPECT_DOUBLE_EQ(r.summary.t_final, 2.0);
  EXPECT_LT(r.fd.rel_error, 1e-7);
  EXPECT_EQ(r.summary.schedule, "store-all");
}

TEST(GradientRun, AdaptiveRunChecksAgainstItsOwnSteps) {
  RunOptions o = options_for("lorenz63");
  o.method = "dopri5";
  o.adaptive = true;
  o.t_final = 1.0;
  o.rtol = 1e-8;
  const RunReport r = run_gradient(resolve_run_settings(o));
  EXPECT_TRUE(r.fd.steps_frozen);
  EXPECT_DOUBLE_EQ(r.summary.t_final, 1.0);
  EXPECT_LT(r.fd.rel_error, 1e-6);
}

TEST(GradientRun, SkipsTheSpotCheckWhenAsked) {
  RunOptions o = options_for("lorenz63");
  o.fd_check = false;
  const RunReport r = run_gradient(resolve_run_settings(o));
  EXPECT_FALSE(r.fd_checked);
  EXPECT_EQ(r.fd.loss_evaluations, 0);
  o.fd_epsilon = 1e-3;
  EXPECT_NE(refusal(o).find("--no-fd-check"), std::string::npos) << refusal(o);
}

TEST(GradientRun, BlowUpIsANumericalErrorNamingTheStep) {
  RunOptions o = options_for("lorenz96");
  o.dt = 0.5;
  o.steps = 100;
  try {
    run_gradient(resolve_run_settings(o));
    FAIL() << "no exception";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("non-finite"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("at step"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rwd::cli
