// rwd::component_misfit: any set of state components, NaN data left out — one term's value and
// gradient, its gradient through the checkpointed driver bit for bit store-all's, and its
// refusals.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <vector>

#include "fit_test_problems.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/fit/misfit.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/error_message.hpp"

namespace rwd {
namespace {

using rwd::testing::error_message;
using rwd::testing::expect_message;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

TEST(ComponentMisfit, SumsMeasuredComponentsOnlyAndLeavesNanOut) {
  // Components 3 and 0 of a 4-state vector, in that order; at step 5 component 0 is missing.
  const Eigen::MatrixXd data{{1.0, 2.0}, {0.5, kNan}};
  const auto misfit = component_misfit({2, 5}, {3, 0}, data, 4, 0.5);
  const Eigen::VectorXd y{{0.25, 9.0, 9.0, 3.0}};
  Eigen::VectorXd grad = Eigen::VectorXd::Constant(4, 7.0);
  // At step 2: r = (3 − 1, 0.25 − 0.5) = (2, −0.25); J = ½ |r|² / σ² = 2 · 4.0625.
  EXPECT_DOUBLE_EQ(misfit.observation(2, 0.0, y, grad), 8.125);
  EXPECT_EQ(grad, (Eigen::VectorXd{{-1.0, 0.0, 0.0, 8.0}}));
  // At step 5 only component 3 counts: r = 3 − 2 = 1; the missing one has no gradient.
  EXPECT_DOUBLE_EQ(misfit.observation(5, 0.0, y, grad), 2.0);
  EXPECT_EQ(grad, (Eigen::VectorXd{{0.0, 0.0, 0.0, 4.0}}));
}

TEST(ComponentMisfit, CheckpointedGradientIsStoreAllBitForBit) {
  const LotkaVolterra<> model;
  ExplicitRungeKutta stepper(model, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 300));
  Eigen::MatrixXd data(1, 6);
  data << 1.2, kNan, 0.7, 0.9, kNan, 1.4;  // the predators only, two missing
  const auto misfit = component_misfit({40, 90, 150, 200, 260, 300}, {1}, data, 2, 0.1);
  const Eigen::VectorXd y0 = model.default_initial_state();
  Eigen::VectorXd theta = model.default_parameters();
  theta[0] *= 1.2;
  StoreAllAdjoint reference_driver(stepper, misfit);
  const auto reference = reference_driver.run(y0, theta);
  ASSERT_GT(reference.grad_theta.norm(), 0.0);
  CheckpointedAdjoint driver(stepper, misfit);
  for (Index snapshots : {2, 5, 11}) {
    const auto run = driver.run(y0, theta, revolve_schedule(snapshots));
    EXPECT_EQ(std::memcmp(&run.loss, &reference.loss, sizeof(double)), 0);
    EXPECT_EQ(std::memcmp(run.grad_theta.data(), reference.grad_theta.data(), 4 * sizeof(double)),
              0);
  }
}

TEST(ComponentMisfit, RefusesBadInput) {
  const Eigen::MatrixXd one{{1.0}};
  expect_message(error_message<InvalidArgument>([&] {
                   component_misfit({1}, {0, 0}, one, 2, 1);
                 }),
                 "observed component 0 is listed twice");
  expect_message(error_message<InvalidArgument>([&] { component_misfit({1}, {2}, one, 2, 1); }),
                 "observed component 2 is outside the state (2 components)");
  expect_message(error_message<InvalidArgument>([&] {
                   component_misfit({3, 3}, {0}, one, 2, 1);
                 }),
                 "observed step 3 (row 1) does not follow 3");
  expect_message(error_message<InvalidArgument>([&] { component_misfit({1}, {0}, one, 2, 0.0); }),
                 "σ = 0 must be finite and > 0");
  const Eigen::MatrixXd inf{{std::numeric_limits<double>::infinity()}};
  expect_message(error_message<InvalidArgument>([&] { component_misfit({1}, {0}, inf, 2, 1); }),
                 "datum of component 0 at step 1 is inf");
}

}  // namespace
}  // namespace rwd
