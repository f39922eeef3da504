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

#include "../../src/cli/data_fit_run.hpp"
#include "../../src/cli/fit_run.hpp"
#include "../../src/cli/observation_run.hpp"
#include "../../src/cli/problem_registry.hpp"
#include "rewind/neural/time_series.hpp"
#include "support/error_message.hpp"
#include "support/scratch_directory.hpp"

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
    EXPECT_EQ(report.checkpoint.plan.family, &rwd::revolve_family());
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

// A two-level fit measures the disk in its first stage and plans every later stage with those
// costs (not with none: the placement of disk snapshots depends on them).
TEST(FitRun, LaterStagesPlanWithTheFirstStagesDiskCosts) {
  ScratchFile file("stages-disk");
  GenerateOptions generate;
  generate.run.problem = "lotka_volterra";
  generate.run.checkpoint.steps = "200";
  generate.observe_every = "20";
  save_observations(file.path, generate_observations(generate));
  const rwd::test::ScratchDirectory disk("fit-stages-disk");
  FitCommandOptions options;
  options.problem = "lotka_volterra";
  options.observations = file.path.string();
  options.fit = "alpha";
  options.start = "alpha=1.2";
  options.stages = 2;
  options.max_evaluations = 3;
  options.checkpoint.disk = disk.path().string();
  options.checkpoint.ram_snapshots = "2";
  options.checkpoint.disk_snapshots = "4";
  const FitReport report = run_fit(resolve_fit_settings(options), {}, {});
  ASSERT_EQ(report.stages.size(), 2u);
  const CheckpointReport& last = report.checkpoint;
  ASSERT_TRUE(last.disk_costs_measured);
  ASSERT_GT(last.step_seconds, 0.0);
  EXPECT_GT(last.plan.costs.disk_write_time, 0.0);
  EXPECT_DOUBLE_EQ(last.plan.costs.disk_write_time,
                   last.disk_costs.write_seconds / last.step_seconds);
  EXPECT_DOUBLE_EQ(last.plan.costs.disk_read_time,
                   last.disk_costs.read_seconds / last.step_seconds);
}

// --stages S: stage s fits the observations up to s/S of the horizon, from where s − 1 ended.
TEST(FitRun, StagesFitGrowingHorizonsEachFromTheLast) {
  ScratchFile file("stages");
  GenerateOptions generate;
  generate.run.problem = "lotka_volterra";
  generate.run.checkpoint.steps = "600";
  generate.observe_every = "20";  // 30 observed steps: 20, 40, ..., 600
  generate.noise = 0.01;
  save_observations(file.path, generate_observations(generate));
  FitCommandOptions options;
  options.problem = "lotka_volterra";
  options.observations = file.path.string();
  options.fit = "alpha,gamma";
  options.start = "alpha=1.3,gamma=3.4";
  options.stages = 3;
  options.checkpoint.snapshots = "5";
  const FitSettings settings = resolve_fit_settings(options);
  EXPECT_EQ(stage_observation_count(settings.observations, 1, 3), 10);
  EXPECT_EQ(stage_observation_count(settings.observations, 2, 3), 20);
  EXPECT_EQ(stage_observation_count(settings.observations, 3, 3), 30);
  const Observations first = first_observations(settings.observations, 10);
  EXPECT_EQ(first.steps, 200);
  EXPECT_EQ(first.data.cols(), 10);
  EXPECT_EQ(first.data.col(9), settings.observations.data.col(9));

  int stages_seen = 0;
  const FitReport report = run_fit(settings, {}, [&](int stage, int stages, Index steps, Index n) {
    ++stages_seen;
    EXPECT_EQ(stages, 3);
    EXPECT_EQ(steps, 200 * stage);
    EXPECT_EQ(n, 10 * stage);
  });
  EXPECT_EQ(stages_seen, 3);
  ASSERT_EQ(report.stages.size(), 3u);
  ASSERT_FALSE(report.result.failed) << report.result.failure;
  // Each stage starts where the last ended; the history joins them, evaluations add up.
  EXPECT_EQ(report.result.history.size(), report.history_stage.size());
  EXPECT_EQ(report.history_stage.front(), 1);
  EXPECT_EQ(report.history_stage.back(), 3);
  int evaluations = 0;
  for (const FitReport::Stage& stage : report.stages) evaluations += stage.evaluations;
  EXPECT_EQ(report.result.evaluations, evaluations);
  EXPECT_EQ(report.checkpoint.plan.steps, 600) << "the last stage plans the whole horizon";
  ASSERT_TRUE(report.uncertainty && report.uncertainty->positive_definite);
  for (Index i = 0; i < 2; ++i) {
    const Index index = settings.fitted[static_cast<std::size_t>(i)].index;
    EXPECT_LT(std::abs(report.result.theta[index] - settings.observations.parameters[index]),
              4.0 * report.uncertainty->standard_errors[i]);
  }

  options.stages = 31;
  EXPECT_NE(rwd::testing::error_message<InvalidArgument>([&] {
              resolve_fit_settings(options);
            }).find("--stages = 31 must lie in [1, 30]"),
            std::string::npos);
}

// `rewind fit --data` reads an HDF5 series (rewind train's format) as the same CSV: the same
// columns and the same fit, bit for bit.
TEST(DataFitRun, ReadsAnHdf5SeriesAsTheSameCsv) {
  training::TimeSeries series;
  series.times = {0.0, 1.0, 2.0, 3.0, 4.0};
  series.values.resize(2, 5);
  series.values << 10.0, 7.5, 5.1, 3.9, 3.2, 5.0, 6.1, 7.8, 8.4, 8.2;
  series.names = {"prey", "predator"};
  ScratchFile h5("series");
  const std::filesystem::path csv = h5.path.string() + ".csv";
  training::save_time_series_hdf5(h5.path, series);
  training::save_time_series_csv(csv, series);
  FitCommandOptions options;
  options.problem = "lotka_volterra";
  options.fit = "alpha";
  options.dt = 0.05;
  options.max_evaluations = 5;
  options.uncertainty = false;
  options.data = h5.path.string();
  const DataFitReport from_h5 = run_data_fit(resolve_data_fit_settings(options));
  options.data = csv.string();
  const DataFitReport from_csv = run_data_fit(resolve_data_fit_settings(options));
  std::filesystem::remove(csv);
  EXPECT_EQ(from_h5.settings.column_names, (std::vector<std::string>{"prey", "predator"}));
  EXPECT_EQ(from_h5.settings.data.values, from_csv.settings.data.values);
  EXPECT_EQ(from_h5.result.theta, from_csv.result.theta);
  EXPECT_EQ(from_h5.result.residual_sum_of_squares, from_csv.result.residual_sum_of_squares);
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

// What a file records of its method is what a fit of it runs: BDF's tolerances and linear
// solver, an implicit method's Newton tolerances; another --method starts from its own defaults;
// given flags win; a file without settings (format version 1) gives the method's defaults.
TEST(FitRun, RepeatsTheFilesMethodSettingsUnlessTold) {
  Observations file;
  file.method = "bdf";
  file.method_settings = {1e-10, 1e-14, "dense", 0.0, 0.0};
  RunOptions flags;
  RunOptions run = detail::fit_method_options(flags, file);
  EXPECT_EQ(run.method, "bdf");
  EXPECT_EQ(run.rtol, 1e-10);
  EXPECT_EQ(run.atol, 1e-14);
  EXPECT_EQ(run.linear_solver, "dense");
  EXPECT_FALSE(run.newton_rtol) << "bdf records none";
  flags.rtol = 1e-8;
  EXPECT_EQ(detail::fit_method_options(flags, file).rtol, 1e-8) << "a given flag wins";
  EXPECT_EQ(detail::fit_method_options(flags, file).atol, 1e-14);
  flags = {};
  flags.method = "esdirk43";
  run = detail::fit_method_options(flags, file);
  EXPECT_EQ(run.method, "esdirk43");
  EXPECT_FALSE(run.rtol || run.atol) << "another method: its own defaults";
  EXPECT_TRUE(run.linear_solver.empty());
  file.method_settings = {};
  run = detail::fit_method_options({}, file);
  EXPECT_FALSE(run.rtol || run.atol || run.newton_rtol || run.newton_atol);

  // Generated with settings, refitted: the run settings come back as recorded.
  GenerateOptions generate;
  generate.run.problem = "robertson";
  generate.run.method = "esdirk43";
  generate.run.dt = 0.002;
  generate.run.newton_rtol = 1e-11;
  generate.run.linear_solver = "dense";
  generate.run.checkpoint.steps = "20";
  generate.observe_every = "10";
  const Observations made = generate_observations(generate);
  EXPECT_EQ(made.method_settings.newton_rtol, 1e-11);
  EXPECT_EQ(made.method_settings.newton_atol, 1e-12) << "the default it ran with, recorded";
  EXPECT_EQ(made.method_settings.linear_solver, "dense");
  EXPECT_EQ(made.method_settings.rtol, 0.0);
}

// --dt with --observations: every observed time and the horizon become whole numbers of the new
// steps, or the refit is refused naming the time.
TEST(FitRun, RefitsOnOtherStepsOnlyWhereEveryObservedTimeFalls) {
  Observations file;
  file.dt = 0.4;
  file.steps = 100;
  file.observed_steps = {5, 10, 100};
  const Observations finer = detail::on_steps_of(file, 0.001, "f.h5");
  EXPECT_EQ(finer.steps, 40000);
  EXPECT_EQ(finer.observed_steps, (std::vector<Index>{2000, 4000, 40000}));
  EXPECT_EQ(finer.dt, 0.001);
  const std::string refused =
      rwd::testing::error_message<InvalidArgument>([&] { detail::on_steps_of(file, 0.3, "f.h5"); });
  EXPECT_NE(refused.find("--dt = 0.3: the observed time t = 2 of 'f.h5' (step 5 of 0.4) is not a "
                         "whole number of steps of 0.3"),
            std::string::npos)
      << refused;
  EXPECT_NE(rwd::testing::error_message<InvalidArgument>([&] {
              detail::on_steps_of(file, -1.0, "f.h5");
            }).find("--dt = -1 must be finite and > 0"),
            std::string::npos);
}

}  // namespace
}  // namespace rwd::cli
