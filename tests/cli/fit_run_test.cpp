// Tests of `rewind generate PROBLEM` and `rewind fit` below the command line
// (src/cli/observation_run.hpp, src/cli/fit_run.hpp): a fit works for every built-in problem, and
// the fit's own refusals name the flag.
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <string>

#include "../../src/cli/fit_run.hpp"
#include "../../src/cli/observation_run.hpp"
#include "../../src/cli/problem_registry.hpp"
#include "support/error_message.hpp"

namespace rwd::cli {
namespace {

struct ScratchFile {
  std::filesystem::path path;
  explicit ScratchFile(const std::string& name)
      : path(std::filesystem::temp_directory_path() /
             ("rewind-fit-run-test-" + std::to_string(::getpid()) + "-" + name + ".h5")) {
    std::filesystem::remove(path);
  }
  ~ScratchFile() { std::filesystem::remove(path); }
};

// A small, quick setting of each problem, and the parameter its fit estimates.
struct FitCase {
  const char* problem;
  std::optional<Index> n;
  const char* steps;
  const char* every;
  const char* observe;
  const char* fitted;
};

const FitCase kCases[] = {
    {"linear", 3, "200", "20", "all", "A[0][1]"},
    {"lorenz63", {}, "100", "10", "x", "rho"},
    {"lorenz96", 10, "100", "10", "all", "F"},
    {"lotka_volterra", {}, "300", "10", "prey", "gamma"},
    {"van_der_pol", {}, "300", "10", "x", "mu"},
    {"gray_scott", 32, "300", "50", "v", "F"},
    {"heat2d", 12, "100", "20", "u", "kappa"},
    {"robertson", {}, "8", "2", "y1", "p1"},
    {"brusselator", 6, "6", "2", "all", "B"},
};

// Every built-in problem: noise-free observations, one parameter started 5 % away; the fit lowers
// J by orders of magnitude and moves the parameter toward the value the data were made with.
TEST(FitRun, WorksForEveryBuiltInProblem) {
  for (const FitCase& c : kCases) {
    SCOPED_TRACE(c.problem);
    ScratchFile file(c.problem);
    GenerateOptions generate;
    generate.run.problem = c.problem;
    generate.run.n = c.n;
    generate.run.checkpoint.steps = c.steps;
    generate.observe_every = c.every;
    generate.observe = c.observe;
    save_observations(file.path, generate_observations(generate));

    FitCommandOptions options;
    options.problem = c.problem;
    options.observations = file.path.string();
    options.fit = c.fitted;
    options.checkpoint.snapshots = "4";
    options.max_evaluations = 25;
    options.sigma = 1e-3;
    FitSettings settings = resolve_fit_settings(options);
    ASSERT_EQ(settings.fitted.size(), 1u);
    const Index i = settings.fitted[0].index;
    const double truth = settings.observations.parameters[i];
    settings.theta_start[i] = truth * 1.05;
    settings.fitted[0].value = truth * 1.05;
    settings.bounds[0] = {std::min(0.5 * truth, 1.5 * truth), std::max(0.5 * truth, 1.5 * truth)};
    const FitReport report = run_fit(settings);
    ASSERT_FALSE(report.result.failed) << report.result.failure;
    ASSERT_GE(report.result.history.size(), 2u);
    const double start_loss = report.result.history.front().loss;
    EXPECT_LT(report.result.loss, 1e-3 * start_loss);
    EXPECT_LT(std::abs(report.result.theta[i] - truth), 0.1 * std::abs(0.05 * truth));
    EXPECT_EQ(report.checkpoint.plan.kind, ScheduleKind::revolve);
  }
}

TEST(FitRun, RefusesWhatDoesNotMatchTheFile) {
  ScratchFile file("lv");
  GenerateOptions generate;
  generate.run.problem = "lotka_volterra";
  generate.run.checkpoint.steps = "100";
  generate.observe_every = "10";
  save_observations(file.path, generate_observations(generate));
  const auto refusal = [&](auto&& change) {
    FitCommandOptions options;
    options.problem = "lotka_volterra";
    options.observations = file.path.string();
    options.fit = "alpha";
    change(options);
    return rwd::testing::error_message<InvalidArgument>([&] { resolve_fit_settings(options); });
  };
  EXPECT_NE(refusal([](auto& o) { o.problem = "lorenz63"; }).find("observes lotka_volterra"),
            std::string::npos);
  EXPECT_NE(refusal([](auto& o) { o.fit = "alpha,alpha"; }).find("named twice"), std::string::npos);
  EXPECT_NE(refusal([](auto& o) { o.start = "beta=1"; }).find("beta is not fitted"),
            std::string::npos);
  EXPECT_NE(refusal([](auto& o) { o.parameters = "alpha=1"; }).find("alpha is fitted"),
            std::string::npos);
  EXPECT_NE(refusal([](auto& o) { o.bounds = "alpha=2:1"; }).find("the lower bound must be below"),
            std::string::npos);
  EXPECT_NE(refusal([](auto& o) { o.bounds = "alpha=2:3"; }).find("outside its bounds"),
            std::string::npos);
  EXPECT_NE(refusal([](auto& o) { o.checkpoint.steps = "50"; }).find("the observation file's"),
            std::string::npos);
  EXPECT_NE(refusal([](auto& o) { o.sigma = -1.0; }).find("--sigma = -1"), std::string::npos);
  EXPECT_NE(refusal([](auto& o) { o.max_evaluations = 0; }).find("--max-evaluations"),
            std::string::npos);
}

TEST(GenerateRun, RefusesBadObservationRequests) {
  const auto refusal = [&](auto&& change) {
    GenerateOptions generate;
    generate.run.problem = "gray_scott";
    generate.run.n = 16;
    generate.run.checkpoint.steps = "40";
    generate.observe_every = "10";
    change(generate);
    return rwd::testing::error_message<InvalidArgument>([&] { generate_observations(generate); });
  };
  EXPECT_NE(refusal([](auto& g) { g.observe = "w"; }).find("choose one of all, u, v"),
            std::string::npos);
  EXPECT_NE(refusal([](auto& g) { g.noise = -0.1; }).find("--noise"), std::string::npos);
  EXPECT_NE(refusal([](auto& g) { g.observe_every = "50"; }).find("exceeds the horizon"),
            std::string::npos);
  EXPECT_NE(refusal([](auto& g) { g.observe_every.reset(); }).find("--observe-every K is required"),
            std::string::npos);
  EXPECT_NE(refusal([](auto& g) { g.run.parameters = "k=-1"; }).find(">= 0"), std::string::npos);
}

}  // namespace
}  // namespace rwd::cli
