// Contract 2 on the GPU's own snapshot levels: with the state in device memory, snapshots in
// device memory (K) and in pinned host memory (H, copied on a stream of its own and fetched ahead
// from the known schedule), the checkpointed gradient is bit for bit the device's store-all
// gradient for every (K, H) tried, the host level is really used and its restores were started
// ahead, and a host level that cannot hold the plan is refused before any step. Skipped without a
// CUDA device. (The disk level under them is the same code as on the CPU and is tested there.)
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/backend/thrust_backend.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/cuda_device.hpp"
#include "support/gpu_like_costs.hpp"
#include "support/same_gradient_bits.hpp"

namespace rwd {
namespace {

using B = ThrustBackend;
using testing::gpu_like_costs;

class ThreeLevelCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = rwd::testing::missing_cuda_device();
    if (!why.empty()) GTEST_SKIP() << why;
  }
};

Objective<B> final_state_objective() {
  return Objective<B>([](double, const B::Vector& y, B::Vector& g) {
    B::copy(y, g);
    return 0.5 * B::dot(y, y);
  });
}

TEST_F(ThreeLevelCuda, DeviceAndPinnedHostSnapshotsGiveTheStoreAllBits) {
  GrayScott<B> problem(Index{128});
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 1.0, 80));
  const auto objective = final_state_objective();
  const auto y0 = problem.default_initial_state();
  const auto theta = problem.default_parameters();
  StoreAllAdjoint reference_driver(stepper, objective);
  const auto reference = reference_driver.run(y0, theta);
  const Index l = reference.summary.steps;

  Index host_restores = 0, host_prefetches = 0;
  for (const auto& [K, H] : std::vector<std::tuple<int, int>>{{1, 1}, {1, 4}, {2, 3}, {4, 12}}) {
    SCOPED_TRACE("K = " + std::to_string(K) + ", H = " + std::to_string(H));
    CheckpointOptions options;
    options.drift_policy = DriftPolicy::fail;
    CheckpointedAdjoint driver(stepper, objective, options);
    const CheckpointPlan plan =
        plan_checkpoints(PlanRequest::three_level(K, H, 0, gpu_like_costs()), l);
    const auto result = driver.run(y0, theta, plan);
    EXPECT_EQ(result.summary.reversed_steps, l);
    testing::expect_same_gradient_bits<B>(result, reference);
    EXPECT_EQ(result.drift.max_rel_drift, 0.0);
    const SnapshotStoreStatistics& s = result.summary.storage;
    EXPECT_EQ(s.stores_on(LevelKind::host), *plan.stores_on(LevelKind::host));
    EXPECT_EQ(s.restores_on(LevelKind::host), *plan.restores_on(LevelKind::host));
    EXPECT_EQ(s.stores_on(LevelKind::disk), 0);
    host_restores += s.restores_on(LevelKind::host);
    host_prefetches += s.prefetches_on(LevelKind::host);
  }
  EXPECT_GT(host_restores, 0) << "the host level took part";
  EXPECT_GT(host_prefetches, 0) << "host restores were fetched ahead on the copy stream";
}

TEST_F(ThreeLevelCuda, AHostLevelTooSmallIsRefusedBeforeAnyStep) {
  GrayScott<B> problem(Index{64});
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 1.0, 40));
  const auto objective = final_state_objective();
  CheckpointOptions options;
  options.levels.host_bytes = 1000;  // not one snapshot of 2·64² values
  CheckpointedAdjoint driver(stepper, objective, options);
  const CheckpointPlan plan =
      plan_checkpoints(PlanRequest::three_level(1, 4, 0, gpu_like_costs()), 40);
  ASSERT_GT(plan.slots_used_on(LevelKind::host), 0);
  try {
    driver.run(problem.default_initial_state(), problem.default_parameters(), plan);
    ADD_FAILURE() << "accepted a host level smaller than one snapshot";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("host snapshots"), std::string::npos) << e.what();
  }
  EXPECT_EQ(stepper.counters().rhs_evaluations, 0) << "no step before the error";
}

}  // namespace
}  // namespace rwd
