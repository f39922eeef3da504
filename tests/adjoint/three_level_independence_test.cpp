// Contract 2 on three snapshot levels: with a three-level plan (device, host, disk) the
// checkpointed gradient is bit for bit the store-all gradient for every (K, H, D) tried, on the
// Eigen backend (device level = memory) and on ThrustBackend's CPP system (the simulated device
// level), with adaptive steps too; the summary counts each level's stores and restores exactly as
// the plan does; and bad input — no device or host level, levels too small for the slots — is
// refused before any step, with nothing left on disk.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/backend/thrust_backend.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/gpu_like_costs.hpp"
#include "support/same_gradient_bits.hpp"
#include "support/scratch_directory.hpp"

namespace rwd {
namespace {

template <class B>
Objective<B> objective_with_observations() {
  return Objective<B>(
      [](double, const typename B::Vector& y, typename B::Vector& g) {
        B::copy(y, g);
        return 0.5 * B::dot(y, y);
      },
      {0, 3, 7},
      [](Index, double, const typename B::Vector& y, typename B::Vector& g) {
        B::copy(y, g);
        B::scale(0.25, g);
        return 0.125 * B::dot(y, y);
      });
}

using testing::gpu_like_costs;

// A GPU's costs, and costs that make the host level the dear one, so plans of both kinds run.
CostModel dear_host() {
  CostModel c = gpu_like_costs();
  c.host_write_time = 2.0;
  c.host_read_time = 2.5;
  c.disk_write_time = 0.5;
  c.disk_read_time = 0.25;
  return c;
}

using Levels = std::tuple<int, int, int>;  // K device, H host, D disk

template <class P>
void check_three_levels(const P& problem, const char* method, const StepControl& control) {
  using B = typename P::Backend;
  const auto y0 = problem.default_initial_state();
  const auto theta = problem.default_parameters();
  const auto objective = objective_with_observations<B>();
  ExplicitRungeKutta stepper(problem, ButcherTableau::by_name(method), control);
  StoreAllAdjoint reference_driver(stepper, objective);
  const auto reference = reference_driver.run(y0, theta);
  const Index l = reference.summary.steps;
  ASSERT_GT(l, 8);

  test::ScratchDirectory scratch;
  int with_device = 0, with_host = 0, with_disk = 0;
  for (const CostModel& costs : {gpu_like_costs(), dear_host()})
    for (const auto& [K, H, D] : std::vector<Levels>{{1, 0, 0},
                                                     {0, 1, 0},
                                                     {0, 2, 3},
                                                     {2, 0, 3},
                                                     {1, 1, 1},
                                                     {2, 3, 0},
                                                     {2, 3, 8},
                                                     {3, 6, 20},
                                                     {1, 4, 2}}) {
      SCOPED_TRACE("K = " + std::to_string(K) + ", H = " + std::to_string(H) + ", D = " +
                   std::to_string(D) + ", host write " + std::to_string(costs.host_write_time));
      CheckpointOptions options;
      options.drift_policy = DriftPolicy::fail;
      options.disk.directory = scratch.path();
      CheckpointedAdjoint driver(stepper, objective, options);
      const CheckpointPlan plan = plan_checkpoints(PlanRequest::three_level(K, H, D, costs), l);
      const auto result = driver.run(y0, theta, plan);
      EXPECT_EQ(result.summary.reversed_steps, l);
      testing::expect_same_gradient_bits<B>(result, reference);
      EXPECT_EQ(result.drift.max_rel_drift, 0.0);
      // Every level did what the plan said.
      const SnapshotStoreStatistics& s = result.summary.storage;
      EXPECT_EQ(result.summary.stores, *plan.stores);
      EXPECT_EQ(result.summary.restores, plan.restores);
      const Index host_stores = *plan.stores_on(LevelKind::host);
      const Index host_restores = *plan.restores_on(LevelKind::host);
      const Index disk_stores = *plan.stores_on(LevelKind::disk);
      const Index disk_restores = *plan.restores_on(LevelKind::disk);
      EXPECT_EQ(s.stores_on(LevelKind::host), host_stores);
      EXPECT_EQ(s.restores_on(LevelKind::host), host_restores);
      EXPECT_EQ(s.stores_on(LevelKind::disk), disk_stores);
      EXPECT_EQ(s.restores_on(LevelKind::disk), disk_restores);
      EXPECT_EQ(s.stores_on(LevelKind::memory), *plan.stores - host_stores - disk_stores);
      EXPECT_EQ(s.restores_on(LevelKind::memory), plan.restores - host_restores - disk_restores);
      EXPECT_EQ(s.stores_on(LevelKind::memory), *plan.stores_on(LevelKind::memory));
      EXPECT_EQ(s.restores_on(LevelKind::memory), *plan.restores_on(LevelKind::memory));
      const std::int64_t snapshot = B::size(y0) * 8 + static_cast<Index>(sizeof(Carry));
      EXPECT_LE(s.peak_bytes_on(LevelKind::memory), K * snapshot);
      EXPECT_LE(s.peak_bytes_on(LevelKind::host), H * snapshot);
      EXPECT_LE(s.peak_bytes_on(LevelKind::disk), D * snapshot);
      with_device += s.stores_on(LevelKind::memory) > 0;
      with_host += s.stores_on(LevelKind::host) > 0;
      with_disk += s.stores_on(LevelKind::disk) > 0;
      if (s.stores_on(LevelKind::host) > 0) {
        EXPECT_NE(result.summary.full().find("host stores / restores"), std::string::npos);
      }
      EXPECT_TRUE(scratch.files().empty()) << "the snapshot file is removed after the run";
    }
  EXPECT_GT(with_device, 4);  // every level took part in several runs
  EXPECT_GT(with_host, 4);
  EXPECT_GT(with_disk, 4);
}

TEST(ThreeLevelIndependence, Lorenz63FixedOnEigen) {
  check_three_levels(Lorenz63<>(), "rk4", StepControl::fixed(0.0, 0.01, 60));
}
TEST(ThreeLevelIndependence, GrayScottFixedOnEigen) {
  check_three_levels(GrayScott<>(8), "tsit5", StepControl::fixed(0.0, 1.0, 30));
}
TEST(ThreeLevelIndependence, Lorenz96FixedOnThrust) {
  check_three_levels(Lorenz96<ThrustBackend>(12), "rk4", StepControl::fixed(0.0, 0.01, 70));
}
TEST(ThreeLevelIndependence, Lorenz96AdaptiveOnThrust) {
  check_three_levels(Lorenz96<ThrustBackend>(12), "dopri5",
                     StepControl::adaptive(0.0, 1.0, 1e-8, 1e-10));
}

TEST(ThreeLevelIndependence, BadLevelsAreRefusedBeforeAnyStep) {
  Lorenz96<ThrustBackend> problem(12);
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 50));
  const auto objective = objective_with_observations<ThrustBackend>();
  const auto y0 = problem.default_initial_state();
  const auto theta = problem.default_parameters();
  test::ScratchDirectory scratch;
  const auto refused = [&](const CheckpointOptions& options, const auto& planner,
                           const std::string& says) {
    CheckpointedAdjoint driver(stepper, objective, options);
    try {
      driver.run(y0, theta, planner);
      ADD_FAILURE() << "accepted; expected an error saying '" << says << "'";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
    EXPECT_EQ(stepper.counters().rhs_evaluations, 0) << "no step before the error";
    EXPECT_TRUE(scratch.files().empty()) << "nothing left on disk";
  };
  EXPECT_THROW(three_level_schedule(0, 0, 4, gpu_like_costs()),
               InvalidArgument);  // no memory level
  EXPECT_THROW(three_level_schedule(0, 0, 0, gpu_like_costs()), InvalidArgument);
  EXPECT_THROW(three_level_schedule(-1, 2, 4, gpu_like_costs()), InvalidArgument);
  EXPECT_THROW(three_level_schedule(2, 2, -4, gpu_like_costs()), InvalidArgument);

  CheckpointOptions options;
  options.disk.directory = scratch.path();
  const CheckpointPlan plan =
      plan_checkpoints(PlanRequest::three_level(2, 4, 10, gpu_like_costs()), 50);
  ASSERT_GT(plan.slots_used_on(LevelKind::host), 0);
  ASSERT_GT(plan.slots_used_on(LevelKind::disk), 0);
  CheckpointOptions small_device = options;
  small_device.levels.device_bytes = 100;  // not one snapshot of 12 values + carry
  refused(small_device, plan, "device snapshots");
  CheckpointOptions small_host = options;
  small_host.levels.host_bytes = 200;
  refused(small_host, plan, "host snapshots");
  CheckpointOptions no_directory;
  refused(no_directory, plan, "set the snapshot directory");
}

}  // namespace
}  // namespace rwd
