// Contract 2, schedule independence: on a deterministic backend the checkpointed gradient is
// bit-for-bit the store-all gradient, for every schedule and budget — problems × tableaux ×
// (fixed, adaptive) × (revolve with c = 1, 2, 3, 7, l and beyond, uniform, store-all, revolve
// with its snapshots in an HDF5 file through background or inline I/O, two-level memory + disk
// schedules) — and every replay is bitwise faithful (drift exactly zero).
#include <gtest/gtest.h>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/backend/thrust_backend.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "rewind/problems/van_der_pol.hpp"
#include "rewind/schedule/schedules.hpp"
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

// Disk costs in forward steps: a disk much slower than a step, and one faster than a step.
CostModel slow_disk() {
  CostModel costs;
  costs.adjoint_cost_factor = 1.5;
  costs.disk_write_time = 3.0;
  costs.disk_read_time = 2.0;
  return costs;
}
CostModel fast_disk() {
  CostModel costs;
  costs.adjoint_cost_factor = 1.5;
  costs.disk_write_time = 0.2;
  costs.disk_read_time = 0.1;
  return costs;
}

template <class P>
void check_all_schedules(const P& problem, const char* method, const StepControl& control) {
  using B = typename P::Backend;
  const auto y0 = problem.default_initial_state();
  const auto theta = problem.default_parameters();
  const auto objective = objective_with_observations<B>();
  ExplicitRungeKutta stepper(problem, ButcherTableau::by_name(method), control);
  StoreAllAdjoint reference_driver(stepper, objective);
  const auto reference = reference_driver.run(y0, theta);
  const Index l = reference.summary.steps;
  ASSERT_GT(l, 8);
  ASSERT_LT(l, 400) << "keep c = 1 (quadratic recomputation) cheap";

  std::vector<std::pair<std::string, Planner>> schedules = {
      {"revolve c=1", revolve_schedule(1)},
      {"revolve c=2", revolve_schedule(2)},
      {"revolve c=3", revolve_schedule(3)},
      {"revolve c=7", revolve_schedule(7)},
      {"revolve c=l", revolve_schedule(static_cast<int>(l))},
      {"revolve c=l+5", revolve_schedule(static_cast<int>(l) + 5)},
      {"uniform k=4", uniform_schedule(4)},
      {"store-all", store_all_schedule()},
      {"revolve c=3 on disk, background I/O", on_disk(revolve_schedule(3))},
      {"revolve c=7 on disk, inline I/O", on_disk(revolve_schedule(7))},
      {"uniform k=5 on disk, background I/O, 1 buffer", on_disk(uniform_schedule(5))},
      {"two-level 2+6 disk, background I/O", two_level_schedule(2, 6, slow_disk())},
      {"two-level 1+3 disk, inline I/O", two_level_schedule(1, 3, fast_disk())}};
  test::ScratchDirectory scratch;
  for (const auto& [name, factory] : schedules) {
    SCOPED_TRACE(name);
    CheckpointOptions options;
    options.drift_policy = DriftPolicy::fail;
    options.disk.directory = scratch.path();
    options.disk.asynchronous = name.find("inline") == std::string::npos;
    if (name.find("1 buffer") != std::string::npos) options.disk.staging_buffers = 1;
    CheckpointedAdjoint driver(stepper, objective, options);
    const auto result = driver.run(y0, theta, factory);
    EXPECT_EQ(result.summary.steps, l);
    EXPECT_EQ(result.summary.reversed_steps, l);
    testing::expect_same_gradient_bits<B>(result, reference);
    EXPECT_EQ(result.drift.max_rel_drift, 0.0);
    EXPECT_EQ(result.drift.first_drift_step, -1);
    if (result.summary.recomputed_steps > l - 1) {  // some step was replayed
      EXPECT_GT(result.drift.replayed_steps_checked, 0);
    }
    if (name.find("two-level") != std::string::npos) {
      EXPECT_LE(result.summary.storage.stores_on(LevelKind::disk), result.summary.stores);
      EXPECT_LE(result.summary.storage.peak_bytes_on(LevelKind::memory),
                2 * (B::size(y0) * 8 + static_cast<Index>(sizeof(Carry))));
    } else if (name.find("disk") != std::string::npos) {
      EXPECT_EQ(result.summary.storage.stores_on(LevelKind::disk), result.summary.stores);
      EXPECT_EQ(result.summary.storage.restores_on(LevelKind::disk), result.summary.restores);
      EXPECT_GT(result.summary.storage.stores_on(LevelKind::disk), 0);
      EXPECT_EQ(result.summary.storage.peak_bytes_on(LevelKind::memory), 0);  // nothing in memory
    } else {
      EXPECT_EQ(result.summary.storage.stores_on(LevelKind::disk), 0);
    }
    EXPECT_TRUE(scratch.files().empty()) << "the snapshot file is removed after the run";
  }
}

// Tolerances per order, so every pair takes a few dozen to a few hundred steps.
StepControl adaptive_for(const std::string& method, double t_final) {
  const double rtol = method == "heun" ? 1e-3 : method == "bs3" ? 1e-5 : 1e-8;
  return StepControl::adaptive(0.0, t_final, rtol, rtol * 1e-2);
}

class ScheduleIndependence : public ::testing::TestWithParam<std::string> {};

TEST_P(ScheduleIndependence, Lorenz63Fixed) {
  check_all_schedules(Lorenz63<>(), GetParam().c_str(), StepControl::fixed(0.0, 0.01, 60));
}
TEST_P(ScheduleIndependence, GrayScottFixed) {
  check_all_schedules(GrayScott<>(8), GetParam().c_str(), StepControl::fixed(0.0, 1.0, 30));
}
TEST_P(ScheduleIndependence, VanDerPolAdaptive) {
  if (!ButcherTableau::by_name(GetParam()).has_embedded()) GTEST_SKIP() << "fixed-step method";
  check_all_schedules(VanDerPol<>(), GetParam().c_str(), adaptive_for(GetParam(), 3.0));
}
TEST_P(ScheduleIndependence, Lorenz96AdaptiveOnThrust) {
  if (!ButcherTableau::by_name(GetParam()).has_embedded()) GTEST_SKIP() << "fixed-step method";
  check_all_schedules(Lorenz96<ThrustBackend>(12), GetParam().c_str(),
                      adaptive_for(GetParam(), 1.0));
}

INSTANTIATE_TEST_SUITE_P(AllTableaux, ScheduleIndependence,
                         ::testing::Values("euler", "heun", "rk4", "rk38", "bs3", "dopri5",
                                           "tsit5"));

TEST(ScheduleIndependence, RevolveCountsMatchTheSchedule) {
  Lorenz96<> problem(16);
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 200));
  CheckpointedAdjoint driver(stepper, Objective<EigenBackend>::terminal_squared_norm());
  const auto r = driver.run(problem.default_initial_state(), problem.default_parameters(),
                            revolve_schedule(5));
  // 200 steps with 5 snapshots: r = 4 (β(5, 3) = 56 < 200 ≤ β(5, 4) = 126? no: β(5,4) = 126 < 200
  // ≤ β(5, 5) = 252), so r = 5 and p = 5·200 − β(6, 4) = 1000 − 210 = 790 advances.
  EXPECT_EQ(r.summary.recomputed_steps, 790);
  EXPECT_EQ(r.summary.forward_steps, 200 + 790);
  EXPECT_LE(r.summary.storage.peak_bytes_on(LevelKind::memory),
            5 * (16 * 8 + static_cast<std::int64_t>(sizeof(Carry))));
}

}  // namespace
}  // namespace rwd
