// The observation misfit J = ½ Σ_k |H y_k − d_k|² / σ²: its value, its gradient against finite
// differences, and contract 2 — through rwd::CheckpointedAdjoint its gradient (θ and y0) is bit
// for bit rwd::StoreAllAdjoint's for revolve with several budgets, uniform, a store-all plan,
// revolve on disk and two-level memory + disk schedules: the observation terms are evaluated
// inside recomputed segments, and must give the same bits there.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "fit_test_problems.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/forward_loss.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/fit/misfit.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/error_message.hpp"
#include "support/gradient_check.hpp"
#include "support/scratch_directory.hpp"

namespace rwd {
namespace {

using rwd::testing::error_message;
using rwd::testing::expect_message;
using rwd::testing::gray_scott_observations;
using rwd::testing::lotka_volterra_observations;

bool same_bits(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

CostModel slow_disk() {
  CostModel costs;
  costs.adjoint_cost_factor = 1.5;
  costs.disk_write_time = 3.0;
  costs.disk_read_time = 2.0;
  return costs;
}

// Every schedule against store-all, at a θ away from the data's (so residuals and gradients are
// far from zero).
template <class Model>
void expect_schedule_independence(const Model& model, const Observations& obs,
                                  const Eigen::VectorXd& theta, bool include_single_snapshot) {
  const auto misfit = observation_misfit(obs, misfit_sigma(obs));
  ExplicitRungeKutta stepper(model, ButcherTableau::by_name(obs.method),
                             StepControl::fixed(0.0, obs.dt, obs.steps));
  StoreAllAdjoint reference_driver(stepper, misfit);
  const auto reference = reference_driver.run(obs.initial_state, theta);
  ASSERT_GT(reference.loss, 0.0);
  ASSERT_GT(reference.grad_theta.norm(), 0.0);
  ASSERT_GT(reference.grad_y0.norm(), 0.0);

  std::vector<std::pair<std::string, Planner>> schedules = {
      {"revolve c=2", revolve_schedule(2)},
      {"revolve c=5", revolve_schedule(5)},
      {"revolve c=17", revolve_schedule(17)},
      {"uniform k=7", uniform_schedule(7)},
      {"store-all plan", store_all_schedule()},
      {"revolve c=4 on disk", on_disk(revolve_schedule(4))},
      {"two-level 2+6, disk", two_level_schedule(2, 6, slow_disk())},
      {"two-level 1+3, disk, inline I/O", two_level_schedule(1, 3, slow_disk())}};
  if (include_single_snapshot) schedules.emplace_back("revolve c=1", revolve_schedule(1));
  test::ScratchDirectory scratch("rewind-misfit");
  for (const auto& [name, planner] : schedules) {
    SCOPED_TRACE(name);
    CheckpointOptions options;
    options.drift_policy = DriftPolicy::fail;
    options.disk.directory = scratch.path();
    options.disk.asynchronous = name.find("inline") == std::string::npos;
    CheckpointedAdjoint driver(stepper, misfit, options);
    const auto result = driver.run(obs.initial_state, theta, planner);
    EXPECT_EQ(std::memcmp(&result.loss, &reference.loss, sizeof(double)), 0)
        << result.loss << " vs " << reference.loss;
    EXPECT_TRUE(same_bits(result.grad_theta, reference.grad_theta));
    EXPECT_TRUE(same_bits(result.grad_y0, reference.grad_y0));
    if (name != "store-all plan") {
      EXPECT_GT(result.summary.recomputed_steps, obs.steps - 1)
          << "observation terms met in recomputed segments";
    }
    EXPECT_EQ(result.drift.first_drift_step, -1);
    if (name.find("disk") != std::string::npos) {
      EXPECT_GT(result.summary.storage.stores_on(LevelKind::disk), 0);
    }
    EXPECT_TRUE(scratch.files().empty());
  }
}

TEST(ObservationMisfit, IsHalfTheWeightedSquaredResidual) {
  const Observations obs = lotka_volterra_observations(300, 10, 0.05);
  const double sigma = 0.05;
  const auto misfit = observation_misfit(obs, sigma);
  EXPECT_EQ(misfit.observation_steps(), obs.observed_steps);
  EXPECT_FALSE(misfit.has_terminal());

  const LotkaVolterra<> model;
  ExplicitRungeKutta stepper(model, ButcherTableau::rk4(),
                             StepControl::fixed(0.0, obs.dt, obs.steps));
  Eigen::VectorXd theta = obs.parameters;
  theta[1] *= 1.1;
  const Eigen::MatrixXd predicted =
      observe_trajectory(stepper, obs.initial_state, theta, obs.observed_steps, obs.field, 0.0, 0);
  const double expected = 0.5 * (predicted - obs.data).squaredNorm() / (sigma * sigma);
  const double J = forward_loss(stepper, misfit, obs.initial_state, theta);
  EXPECT_NEAR(J, expected, 1e-12 * expected);

  // One term's gradient is Hᵀ(H y − d)/σ², zero outside the observed field.
  const Observations gs = gray_scott_observations(4, 20, 5);
  const auto v_misfit = observation_misfit(gs, 2.0);
  Eigen::VectorXd y = Eigen::VectorXd::Constant(32, 0.5);
  Eigen::VectorXd grad = Eigen::VectorXd::Constant(32, 9.0);
  const double term = v_misfit.observation(10, 10.0, y, grad);
  const Eigen::VectorXd r = y.tail(16) - gs.data.col(1);
  EXPECT_NEAR(term, 0.125 * r.squaredNorm(), 1e-15);
  EXPECT_EQ(grad.head(16), Eigen::VectorXd::Zero(16));
  EXPECT_TRUE(grad.tail(16).isApprox(r / 4.0, 1e-15));
}

TEST(ObservationMisfit, IsZeroWithAZeroGradientAtExactDataAndTheirParameters) {
  const Observations obs = lotka_volterra_observations(200, 10);
  const LotkaVolterra<> model;  // the stepper keeps a reference: the model must outlive it
  ExplicitRungeKutta stepper(model, ButcherTableau::rk4(),
                             StepControl::fixed(0.0, obs.dt, obs.steps));
  StoreAllAdjoint driver(stepper, observation_misfit(obs, misfit_sigma(obs)));
  const auto result = driver.run(obs.initial_state, obs.parameters);
  EXPECT_EQ(result.loss, 0.0);
  EXPECT_EQ(result.grad_theta, Eigen::VectorXd::Zero(4));
  EXPECT_EQ(result.grad_y0, Eigen::VectorXd::Zero(2));
}

TEST(ObservationMisfit, CheckpointedGradientIsStoreAllBitForBitLotkaVolterra) {
  const Observations obs = lotka_volterra_observations(500, 10, 0.05);
  Eigen::VectorXd theta = obs.parameters;
  theta[0] *= 1.15;
  theta[3] *= 0.85;
  expect_schedule_independence(LotkaVolterra<>(), obs, theta, /*include_single_snapshot=*/true);
}

TEST(ObservationMisfit, CheckpointedGradientIsStoreAllBitForBitGrayScottObservingV) {
  const Observations obs = gray_scott_observations(12, 300, 20, 0.01);
  Eigen::VectorXd theta = obs.parameters;
  theta[2] *= 1.12;  // F
  theta[3] *= 0.9;   // k
  expect_schedule_independence(GrayScott<>(12), obs, theta, /*include_single_snapshot=*/false);
}

TEST(ObservationMisfit, GradientAgreesWithFiniteDifferences) {
  {
    SCOPED_TRACE("Lotka-Volterra");
    const Observations obs = lotka_volterra_observations(500, 10, 0.05);
    const auto misfit = observation_misfit(obs, misfit_sigma(obs));
    const LotkaVolterra<> model;
    ExplicitRungeKutta stepper(model, ButcherTableau::rk4(),
                               StepControl::fixed(0.0, obs.dt, obs.steps));
    Eigen::VectorXd theta = obs.parameters;
    theta[0] *= 1.15;
    theta[3] *= 0.85;
    CheckpointedAdjoint driver(stepper, misfit);
    const auto result = driver.run(obs.initial_state, theta, revolve_schedule(6));
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      const auto in_theta = testing::directional_fd(stepper, misfit, obs.initial_state, theta,
                                                    result.grad_theta, 1, seed, 1e-6);
      EXPECT_LT(in_theta.rel_error(), 1e-7) << in_theta.adjoint << " vs " << in_theta.fd;
      const auto in_y0 = testing::directional_fd(stepper, misfit, obs.initial_state, theta,
                                                 result.grad_y0, 0, seed, 1e-6);
      EXPECT_LT(in_y0.rel_error(), 1e-7) << in_y0.adjoint << " vs " << in_y0.fd;
    }
    // Each parameter on its own, so none hides behind another in a random direction.
    for (Index i = 0; i < 4; ++i) {
      const double h = 1e-6 * std::abs(theta[i]);
      Eigen::VectorXd plus = theta, minus = theta;
      plus[i] += h;
      minus[i] -= h;
      const double fd = (forward_loss(stepper, misfit, obs.initial_state, plus) -
                         forward_loss(stepper, misfit, obs.initial_state, minus)) /
                        (2 * h);
      EXPECT_NEAR(result.grad_theta[i], fd, 1e-7 * std::abs(fd)) << "dJ/dθ" << i;
    }
  }
  {
    SCOPED_TRACE("Gray-Scott, v observed");
    const Observations obs = gray_scott_observations(12, 300, 20, 0.01);
    const auto misfit = observation_misfit(obs, misfit_sigma(obs));
    const GrayScott<> model(12);
    ExplicitRungeKutta stepper(model, ButcherTableau::rk4(),
                               StepControl::fixed(0.0, obs.dt, obs.steps));
    Eigen::VectorXd theta = obs.parameters;
    theta[2] *= 1.1;
    CheckpointedAdjoint driver(stepper, misfit);
    const auto result = driver.run(obs.initial_state, theta, revolve_schedule(4));
    for (std::uint64_t seed : {4u, 5u}) {
      const auto check = testing::directional_fd(stepper, misfit, obs.initial_state, theta,
                                                 result.grad_theta, 1, seed, 1e-7);
      EXPECT_LT(check.rel_error(), 1e-6) << check.adjoint << " vs " << check.fd;
    }
  }
}

TEST(ObservationMisfit, RefusesANonPositiveSigmaAndInvalidObservations) {
  const Observations obs = lotka_volterra_observations(100, 10);
  for (double sigma : {0.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    SCOPED_TRACE(sigma);
    expect_message(error_message<InvalidArgument>([&] { observation_misfit(obs, sigma); }),
                   "must be finite and > 0");
  }
  Observations bad = obs;
  bad.observed_steps[1] = bad.observed_steps[0];
  EXPECT_THROW(observation_misfit(bad, 1.0), InvalidArgument);

  // A stepper of another problem: the state size is named at the first term.
  const auto misfit = observation_misfit(obs, 1.0);
  Eigen::VectorXd y = Eigen::VectorXd::Zero(3), grad = Eigen::VectorXd::Zero(3);
  expect_message(error_message<InvalidArgument>([&] { misfit.observation(10, 0.1, y, grad); }),
                 "observation misfit at step 10: the state has 3 components but the observations "
                 "were made of a state of 2");
}

TEST(ObservationMisfit, SigmaIsTheNoiseOrOne) {
  EXPECT_EQ(misfit_sigma(lotka_volterra_observations(20, 10, 0.25)), 0.25);
  EXPECT_EQ(misfit_sigma(lotka_volterra_observations(20, 10, 0.0)), 1.0);
}

}  // namespace
}  // namespace rwd
