// `rewind run --model PATH` and `rewind generate --model PATH` (src/cli/model_problem.hpp): the
// SIR test model built as a plugin (tests/problems/models/, rewind_add_model) runs through the
// registry like a built-in problem and gives the gradient bits that rwd::auto_problem gives in
// C++ with the same settings — store-all and checkpointed, in this process and through the tool's
// --json report — with the finite-difference check agreeing; generate writes observations of a
// named state from initial_state(θ); a problem and --model together, and unknown parameter
// names, are refused.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../../src/cli/gradient_run.hpp"
#include "../../src/cli/model_problem.hpp"
#include "../../src/cli/observation_run.hpp"
#include "../../src/cli/run_settings.hpp"
#include "../problems/models/sir_model.hpp"
#include "rewind/adjoint/differentiate.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/model.hpp"
#include "support/error_message.hpp"
#include "support/scratch_directory.hpp"

namespace rwd::cli {
namespace {

using Vector = Eigen::VectorXd;

// The C++ reference: rwd::auto_problem(Sir{}) with θ = defaults but beta = 0.6, from
// initial_state(θ), RK4 with 300 steps of 0.1, J = ½|y_N|², store-all; dJ/dθ through y0 too.
struct Reference {
  double loss = 0.0;
  Vector grad_theta;
};
Reference auto_problem_reference() {
  const auto problem = auto_problem(Sir{});
  Vector theta = problem.default_parameters();
  theta[0] = 0.6;
  const Vector y0 = problem.initial_state(theta);
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.1, 300));
  const auto result = differentiate(stepper, Objective<EigenBackend>::terminal_squared_norm(), y0,
                                    theta, StoreAllStrategy{});
  return {result.loss, problem.total_parameter_gradient(theta, result.grad_y0, result.grad_theta)};
}

RunOptions sir_options() {
  RunOptions o;
  o.model = REWIND_SIR_PLUGIN;
  o.parameters = "beta=0.6";
  o.checkpoint.steps = "300";
  o.dt = 0.1;
  return o;
}

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

void expect_reference_bits(double loss, const std::vector<double>& grad_theta) {
  const Reference reference = auto_problem_reference();
  EXPECT_TRUE(same_bits(loss, reference.loss)) << loss << " vs " << reference.loss;
  ASSERT_EQ(grad_theta.size(), 3u);
  for (int i = 0; i < 3; ++i)
    EXPECT_TRUE(same_bits(grad_theta[i], reference.grad_theta[i]))
        << "dJ/dtheta[" << i << "] = " << grad_theta[i] << " vs " << reference.grad_theta[i];
}

TEST(ModelRun, GivesTheBitsOfAutoProblemWithTheSameSettings) {
  const RunSettings settings = resolve_run_settings(sir_options());
  EXPECT_EQ(settings.problem->name, "Sir");
  const RunReport report = run_gradient(settings);
  expect_reference_bits(report.loss, report.grad_theta);
  EXPECT_EQ(report.parameter_names, (std::vector<std::string>{"beta", "gamma", "N"}));
  EXPECT_EQ(report.parameters[0], 0.6);
  ASSERT_TRUE(report.fd_checked);
  EXPECT_EQ(report.fd.verdict, "agree");
}

TEST(ModelRun, CheckpointedRunGivesTheSameBits) {
  RunOptions o = sir_options();
  o.checkpoint.snapshots = "5";
  o.no_fd_check = true;
  const RunReport report = run_gradient(resolve_run_settings(o));
  EXPECT_TRUE(report.checkpointed);
  expect_reference_bits(report.loss, report.grad_theta);
}

TEST(ModelRun, TheToolsJsonReportHasTheSameBits) {
  const test::ScratchDirectory scratch("rewind-model-run");
  const std::string out = (scratch.path() / "run.json").string();
  const std::string command = std::string(REWIND_CLI) + " run --model " + REWIND_SIR_PLUGIN +
                              " --parameters beta=0.6 --steps 300 --dt 0.1 --json > " + out;
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const nlohmann::json report = nlohmann::json::parse(std::ifstream(out));
  EXPECT_EQ(report["problem"], "Sir");
  EXPECT_EQ(report["parameter_names"], nlohmann::json({"beta", "gamma", "N"}));
  EXPECT_EQ(report["fd_check"]["verdict"], "agree");
  expect_reference_bits(report["loss"].get<double>(),
                        report["grad_theta"].get<std::vector<double>>());
}

TEST(ModelRun, GenerateObservesANamedStateFromTheInitialStateOfTheParameters) {
  GenerateOptions o;
  o.run.model = REWIND_SIR_PLUGIN;
  o.run.parameters = "N=2000";
  o.run.checkpoint.steps = "100";
  o.observe_every = "10";
  o.observe = "I";
  const Observations observations = generate_observations(o);
  EXPECT_EQ(observations.problem, "Sir");
  EXPECT_EQ(observations.field.name, "I");
  EXPECT_EQ(observations.field.offset, 1);
  EXPECT_EQ(observations.field.count, 1);
  EXPECT_EQ(observations.observed_steps.size(), 10u);
  EXPECT_EQ(observations.initial_state[1], 0.01 * 2000.0);  // initial_state(θ), not of defaults
  EXPECT_EQ(observations.parameter_names, (std::vector<std::string>{"beta", "gamma", "N"}));
}

TEST(ModelRun, RefusesAProblemAndAModelTogether) {
  RunOptions o = sir_options();
  o.problem = "lorenz63";
  const std::string message =
      testing::error_message<InvalidArgument>([&] { (void)resolve_run_settings(o); });
  testing::expect_message(message, "replaces the problem 'lorenz63'");
}

TEST(ModelRun, RefusesAParameterTheModelDoesNotHave) {
  RunOptions o = sir_options();
  o.parameters = "sigma=2";
  const std::string message =
      testing::error_message<InvalidArgument>([&] { (void)resolve_run_settings(o); });
  testing::expect_message(message, "sigma");
  testing::expect_message(message, "beta, gamma, N");
}

TEST(ModelRun, LoadsEachPathOnce) {
  EXPECT_EQ(&load_model_problem(REWIND_SIR_PLUGIN), &load_model_problem(REWIND_SIR_PLUGIN));
}

}  // namespace
}  // namespace rwd::cli
