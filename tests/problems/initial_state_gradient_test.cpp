// rwd::differentiate without y0, for a model whose initial state depends on θ: the run starts
// from initial_state(θ) and grad_theta is the total dJ/dθ (θ's effect through y0 included) —
// the same bits as the driver's gradient plus total_parameter_gradient by hand, under every
// strategy; checkpointing gives the store-all bits; central differences of the whole run agree.
#include <gtest/gtest.h>

#include <cmath>

#include "problems/models/sir_model.hpp"
#include "rewind/adjoint/differentiate.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/model.hpp"
#include "rewind/objective.hpp"
#include "rewind/schedule/checkpoint_plan.hpp"

namespace rwd {
namespace {

// J = ½ |y_N|² after 200 RK4 steps of a tenth of a day.
struct SirRun {
  AutoProblem<Sir> problem = auto_problem(Sir{});
  ExplicitRungeKutta<AutoProblem<Sir>> stepper{problem, ButcherTableau::rk4(),
                                               StepControl::fixed(0.0, 0.1, 200)};
  Objective<EigenBackend> objective = Objective<EigenBackend>::terminal_squared_norm();
  Eigen::VectorXd theta{{0.5, 0.25, 1000.0}};

  double loss(const Eigen::VectorXd& at) {
    return differentiate(stepper, objective, at, StoreAllStrategy{}).loss;
  }
};

TEST(InitialStateGradient, AddsTheInitialStatesPathToTheDriversGradient) {
  SirRun run;
  const auto by_hand =
      differentiate(run.stepper, run.objective, run.problem.initial_state(run.theta), run.theta,
                    StoreAllStrategy{});
  const auto total = differentiate(run.stepper, run.objective, run.theta, StoreAllStrategy{});
  EXPECT_EQ(total.loss, by_hand.loss);
  EXPECT_EQ(total.grad_y0, by_hand.grad_y0);
  EXPECT_EQ(total.grad_theta,
            run.problem.total_parameter_gradient(run.theta, by_hand.grad_y0, by_hand.grad_theta));
  // N reaches J through y0 = (0.99 N, 0.01 N, 0) and through the rhs: the two differ.
  EXPECT_NE(total.grad_theta[2], by_hand.grad_theta[2]);
}

TEST(InitialStateGradient, EveryStrategyGivesTheStoreAllBits) {
  SirRun run;
  const auto reference = differentiate(run.stepper, run.objective, run.theta, StoreAllStrategy{});
  const auto revolve =
      differentiate(run.stepper, run.objective, run.theta, CheckpointStrategy{revolve_schedule(7)});
  EXPECT_EQ(revolve.grad_theta, reference.grad_theta);
  const AdjointStrategy chosen = CheckpointStrategy{revolve_schedule(3)};
  EXPECT_EQ(differentiate(run.stepper, run.objective, run.theta, chosen).grad_theta,
            reference.grad_theta);
  // The continuous adjoint is an approximation of the same total derivative.
  const auto backsolve = differentiate(run.stepper, run.objective, run.theta, BacksolveStrategy{});
  for (Index j = 0; j < 3; ++j)
    EXPECT_NEAR(backsolve.grad_theta[j], reference.grad_theta[j],
                1e-4 * std::abs(reference.grad_theta[j]));
}

TEST(InitialStateGradient, AgreesWithCentralDifferencesOfTheWholeRun) {
  SirRun run;
  const auto total = differentiate(run.stepper, run.objective, run.theta, StoreAllStrategy{});
  for (Index j = 0; j < 3; ++j) {
    const double h = 1e-5 * std::max(1.0, std::abs(run.theta[j]));
    Eigen::VectorXd up = run.theta, down = run.theta;
    up[j] += h;
    down[j] -= h;
    const double difference = (run.loss(up) - run.loss(down)) / (2.0 * h);
    EXPECT_NEAR(total.grad_theta[j], difference, 1e-6 * std::abs(difference))
        << "theta[" << j << "]";
  }
}

}  // namespace
}  // namespace rwd
