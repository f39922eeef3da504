// rwd::fit's options beyond the plain fit, and the CSV reader: the initial state estimated too
// (noise-free data give it back), rwd::predict repeating the fit's run at the data times, the
// iteration callback, a caller's plan (the same bits as the request's; refused for other
// steps), standard errors skipped; rwd::load_data_csv's format and every refusal, naming the
// file and line.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "problems/models/sir_model.hpp"
#include "rewind/fit/data_csv.hpp"
#include "rewind/fit/fit_data.hpp"
#include "rewind/model.hpp"
#include "rewind/problems/lotka_volterra.hpp"
#include "support/error_message.hpp"

namespace rwd {
namespace {

using rwd::testing::error_message;
using rwd::testing::expect_message;

template <class Call>
void refused(Call&& call, const std::string& part) {
  expect_message(error_message<InvalidArgument>(std::forward<Call>(call)), part);
}

const std::vector<double> kDays{1.0, 2.5, 4.0, 6.0, 8.0, 11.0, 14.0, 18.0, 23.0, 30.0};

// I and R of the SIR model at kDays from θ = (0.52, 0.21, 1000), exact (rwd::predict's run).
TimeSeries exact_sir_series(const FitSpec& spec) {
  const auto problem = auto_problem(SirFromTenInfected{});
  const Eigen::VectorXd theta{{0.52, 0.21, 1000.0}};
  const Eigen::MatrixXd states = predict(problem, kDays, spec, theta);
  TimeSeries data;
  data.times = kDays;
  data.columns = {"I", "R"};
  data.values = states.rightCols(2);
  return data;
}

FitSpec sir_spec() {
  FitSpec spec;
  spec.fit = {{"beta", 0.45, 0.1, 2.0}, {"gamma", 0.25, 0.05, 1.0}};
  spec.fixed = {{"N", 1000.0}};
  spec.max_step = 0.25;
  spec.sigma = 1.0;
  return spec;
}

TEST(FitDataOptions, PredictRepeatsTheFitsRunAtTheDataTimes) {
  const auto problem = auto_problem(SirFromTenInfected{});
  const FitSpec spec = sir_spec();
  const TimeSeries data = exact_sir_series(spec);
  // At the generating θ the misfit of exact data is zero: the fit's run is predict's, bit for bit.
  FitSpec at_truth = spec;
  at_truth.fit = {{"beta", 0.52, 0.1, 2.0}, {"gamma", 0.21, 0.05, 1.0}};
  at_truth.max_evaluations = 1;
  at_truth.uncertainty = false;
  const DataFitResult r = fit(problem, data, at_truth);
  EXPECT_EQ(r.residual_sum_of_squares, 0.0);
  // Rows are times, columns states; S + I + R = N along the run.
  const Eigen::MatrixXd states = predict(problem, kDays, spec, r.theta);
  ASSERT_EQ(states.rows(), static_cast<Index>(kDays.size()));
  ASSERT_EQ(states.cols(), 3);
  for (Index k = 0; k < states.rows(); ++k) EXPECT_NEAR(states.row(k).sum(), 1000.0, 1e-9);
  refused([&] { (void)predict(problem, kDays, spec, Eigen::VectorXd::Ones(2)); },
          "rwd::predict: θ has 2 values but the model has 3 parameters");
}

TEST(FitDataOptions, EstimatesTheInitialStateTooFromExactData) {
  const auto problem = auto_problem(SirFromTenInfected{});
  FitSpec spec = sir_spec();
  const TimeSeries data = exact_sir_series(spec);
  // Start 20 % off in y0 (990, 10, 0) and the rates; fit both.
  spec.initial_state = Eigen::Vector3d{980.0, 12.0, 0.0};
  spec.fit_initial_state = true;
  spec.max_evaluations = 400;
  const DataFitResult r = fit(problem, data, spec);
  ASSERT_TRUE(r.converged) << r.status;
  // S(0) ≈ 990 is weakly determined by I and R alone (the optimiser stops on J's tolerance).
  EXPECT_NEAR(r.estimates[0], 0.52, 1e-4);
  EXPECT_NEAR(r.estimates[1], 0.21, 1e-4);
  EXPECT_NEAR(r.initial_state[0], 990.0, 1.0);
  EXPECT_NEAR(r.initial_state[1], 10.0, 1e-2);
  EXPECT_NEAR(r.initial_state[2], 0.0, 1e-2);
  // The covariance is over the 2 rates and y0's 3 components; y0's errors come apart.
  EXPECT_EQ(r.covariance.rows(), 5);
  EXPECT_EQ(r.standard_errors.size(), 2);
  EXPECT_EQ(r.initial_state_standard_errors.size(), 3);
  EXPECT_EQ(r.history.front().initial_state, spec.initial_state);
}

TEST(FitDataOptions, TheInitialStateFromParametersMovesWithTheFit) {
  const auto problem = auto_problem(SirFromTenInfected{});
  FitSpec spec = sir_spec();
  const TimeSeries data = exact_sir_series(spec);
  spec.fit.push_back({"N", 900.0, 500.0, 2000.0});
  spec.fixed.clear();
  spec.max_evaluations = 400;
  const DataFitResult r = fit(problem, data, spec);
  ASSERT_TRUE(r.converged) << r.status;
  EXPECT_NEAR(r.estimates[2], 1000.0, 1e-2);
  EXPECT_NEAR(r.initial_state[0], r.estimates[2] - 10.0, 1e-12);  // initial_state(θ̂)
}

TEST(FitDataOptions, CallsBackEveryIterationAndCanSkipTheStandardErrors) {
  const auto problem = auto_problem(SirFromTenInfected{});
  FitSpec spec = sir_spec();
  const TimeSeries data = exact_sir_series(spec);
  std::vector<double> losses;
  spec.on_iteration = [&](const FitIteration& it) { losses.push_back(it.loss); };
  spec.uncertainty = false;
  const DataFitResult r = fit(problem, data, spec);
  ASSERT_EQ(losses.size(), r.history.size());
  for (std::size_t i = 0; i < losses.size(); ++i) EXPECT_EQ(losses[i], r.history[i].loss);
  EXPECT_TRUE(std::isnan(r.standard_errors[0]));
  EXPECT_FALSE(r.positive_definite);
}

TEST(FitDataOptions, ACallersPlanGivesTheRequestsBitsAndMustFitTheSteps) {
  const auto problem = auto_problem(SirFromTenInfected{});
  FitSpec spec = sir_spec();
  const TimeSeries data = exact_sir_series(spec);
  spec.max_evaluations = 5;
  spec.uncertainty = false;
  spec.checkpoints = PlanRequest::revolve(4);
  const DataFitResult by_request = fit(problem, data, spec);
  const auto steps =
      static_cast<Index>(data_step_grid(0.0, kDays, spec.max_step).step_sizes.size());
  spec.plan = plan_checkpoints(PlanRequest::revolve(4), steps);
  const DataFitResult by_plan = fit(problem, data, spec);
  EXPECT_EQ(by_request.theta, by_plan.theta);
  EXPECT_EQ(by_request.residual_sum_of_squares, by_plan.residual_sum_of_squares);
  spec.plan = plan_checkpoints(PlanRequest::revolve(4), steps + 1);
  refused([&] { (void)fit(problem, data, spec); }, "FitSpec::plan is for " +
                                                       std::to_string(steps + 1) +
                                                       " steps but the run to the last "
                                                       "data time takes " +
                                                       std::to_string(steps));
}

TEST(FitDataOptions, ABuiltInProblemTakesItsStatesByIndex) {
  const LotkaVolterra<> problem;
  FitSpec spec;
  spec.fit = {{"alpha", 1.2, 0.1, 5.0}};
  spec.max_step = 0.01;
  spec.sigma = 1.0;
  const Eigen::MatrixXd states =
      predict(problem, {0.5, 1.0, 1.5, 2.0}, spec, problem.default_parameters());
  TimeSeries data;
  data.times = {0.5, 1.0, 1.5, 2.0};
  data.column_indices = {1};
  data.values = states.col(1);
  const DataFitResult r = fit(problem, data, spec);
  EXPECT_NEAR(r.estimates[0], problem.default_parameters()[0], 1e-6) << r.status;
}

// --- rwd::load_data_csv ------------------------------------------------------------------------

class DataCsv : public ::testing::Test {
 protected:
  std::filesystem::path write(const std::string& text) {
    std::ofstream(path_) << text;
    return path_;
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::filesystem::path path_ = std::filesystem::temp_directory_path() /
                                ("rewind_data_csv_" + std::to_string(::getpid()) + ".csv");
};

TEST_F(DataCsv, ReadsCommentsHeaderValuesAndMissingCells) {
  const TimeSeries data =
      load_data_csv(write("# measured\n\nday, I ,R\r\n0.5,12.5,\n1,nan,3\n# late\n2.25,NA,4e1\n"));
  EXPECT_EQ(data.columns, (std::vector<std::string>{"I", "R"}));
  EXPECT_EQ(data.times, (std::vector<double>{0.5, 1.0, 2.25}));
  ASSERT_EQ(data.values.rows(), 3);
  EXPECT_EQ(data.values(0, 0), 12.5);
  EXPECT_TRUE(std::isnan(data.values(0, 1)));
  EXPECT_TRUE(std::isnan(data.values(1, 0)));
  EXPECT_TRUE(std::isnan(data.values(2, 0)));
  EXPECT_EQ(data.values(2, 1), 40.0);
}

TEST_F(DataCsv, RefusesBadFilesNamingTheLine) {
  refused([&] { (void)load_data_csv("/nonexistent/data.csv"); },
          "data file '/nonexistent/data.csv' does not exist");
  refused([&] { (void)load_data_csv(write("# nothing\n")); }, "has no header line");
  refused([&] { (void)load_data_csv(write("t,I\n")); }, "has a header but no data row");
  refused([&] { (void)load_data_csv(write("1,2\n3,4\n")); },
          "line 1: '1,2' is numbers, not a header");
  refused([&] { (void)load_data_csv(write("t\n1\n")); }, "names a time column and no measured");
  refused([&] { (void)load_data_csv(write("t,I,\n1,2,3\n")); },
          "line 1: header column 3 has no name");
  refused([&] { (void)load_data_csv(write("t,I,I\n1,2,3\n")); },
          "line 1: the header names 'I' twice");
  refused([&] { (void)load_data_csv(write("t,I\n1,2\n2,3,4\n")); },
          "line 3: 3 cells, but the header 't,…' has 2");
  refused([&] { (void)load_data_csv(write("#\nt,I\n1,2x\n")); },
          "line 3: I = '2x' is not a number");
  refused([&] { (void)load_data_csv(write("t,I\n,2\n")); }, "line 2: the time is missing");
}

}  // namespace
}  // namespace rwd
