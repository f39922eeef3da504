// Held steps cut into substeps (rewind/integrators/held_step_substeps.hpp): a fixed or prescribed
// step whose stage equations fail whole is taken as 2, 4, … equal substeps. On Robertson's
// kinetics, a step of 100 after the first transient fails whole for esdirk43 and goes in two
// halves: its map and its gradient are those of the two halves taken as steps (the same bits),
// the gradient agrees with central finite differences of the same map, and every schedule and
// store — the stage-keeping ones, which keep a marker instead of such a step's stages, included —
// gives the store-all bits with no drift. With max_substeps = 1 the run stops at the step as
// before, naming it; a count out of range is refused. The Rosenbrock engine cuts a step whose
// I − hγJ is singular the same way (a growing mode with hγλ = 1).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/diagonally_implicit_runge_kutta.hpp"
#include "rewind/integrators/rosenbrock.hpp"
#include "rewind/model.hpp"
#include "rewind/problems/robertson.hpp"
#include "rewind/schedule/schedules.hpp"
#include "rewind/warning.hpp"
#include "support/same_gradient_bits.hpp"
#include "support/scratch_directory.hpp"

namespace rwd {
namespace {

using V = Eigen::VectorXd;

bool same_bits(const V& a, const V& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(double)) == 0;
}

// 40 steps growing from 10⁻⁵ through the first transient (to t ≈ 0.30), then `tail`.
std::vector<double> step_sizes(const std::vector<double>& tail) {
  std::vector<double> sizes;
  for (int k = 0; k < 40; ++k) sizes.push_back(1e-5 * std::pow(1.25, static_cast<double>(k)));
  sizes.insert(sizes.end(), tail.begin(), tail.end());
  return sizes;
}

NewtonOptions newton(int max_substeps) {
  NewtonOptions options;
  options.rtol = 1e-12;
  options.atol = 1e-14;
  options.max_substeps = max_substeps;
  return options;
}

DiagonallyImplicitRungeKutta<Robertson> esdirk43(const Robertson& problem,
                                                 const std::vector<double>& tail,
                                                 int max_substeps = 64) {
  return DiagonallyImplicitRungeKutta(problem, ImplicitTableau::esdirk43(),
                                      StepControl::prescribed(0.0, step_sizes(tail)),
                                      newton(max_substeps));
}

// Each planner's checkpointed gradient of `stepper`'s run (disk levels in a scratch directory):
// `reference`'s bits, with no drift in any replay.
template <class Stepper, class Reference>
void expect_every_planner_gives(Stepper& stepper, const Objective<EigenBackend>& objective,
                                const V& y0, const V& theta,
                                const std::vector<std::pair<std::string, Planner>>& planners,
                                const Reference& reference) {
  test::ScratchDirectory scratch;
  CheckpointOptions options;
  options.drift_policy = DriftPolicy::fail;
  options.disk.directory = scratch.path();
  for (const auto& [name, planner] : planners) {
    SCOPED_TRACE(name);
    const auto r = CheckpointedAdjoint(stepper, objective, options).run(y0, theta, planner);
    testing::expect_same_gradient_bits<EigenBackend>(r, reference);
    EXPECT_TRUE(r.drift.bitwise_identical());
  }
}

V run(DiagonallyImplicitRungeKutta<Robertson>& stepper, const V& y0, const V& theta) {
  V y = y0;
  Carry carry = stepper.initial_carry(y, theta);
  while (!stepper.finished(carry)) stepper.step(y, carry, theta);
  return y;
}

TEST(ImplicitSubsteps, AHeldStepThatFailsWholeIsItsHalvesTakenAsSteps) {
  const Robertson problem;
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  auto held = esdirk43(problem, {100.0, 100.0});
  std::vector<Warning> warnings;
  V y;
  {
    ScopedWarningHandler keep([&](const Warning& w) { warnings.push_back(w); });
    y = run(held, y0, theta);
    run(held, y0, theta);  // again: the stepper has said it once
  }
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].source, "implicit engine");
  EXPECT_NE(warnings[0].message.find(
                "esdirk43: step 40 at t = 0.300887 (h = 100): the stage equations failed"),
            std::string::npos)
      << warnings[0].message;
  EXPECT_NE(warnings[0].message.find("taken as 2 substeps of h/2"), std::string::npos)
      << warnings[0].message;
  EXPECT_EQ(held.implicit_counters().substepped_steps, 2);  // one in each run
  EXPECT_EQ(held.implicit_counters().newton_failures, 2);   // whole only: the halves converged
  EXPECT_EQ(held.counters().steps, 84);
  auto halves = esdirk43(problem, {50.0, 50.0, 100.0});
  EXPECT_TRUE(same_bits(y, run(halves, y0, theta)));
  EXPECT_EQ(halves.implicit_counters().newton_failures, 0);
  EXPECT_GT(y[0], 0.0);  // a physical state: concentrations that still sum to 1
  EXPECT_GT(y[1], 0.0);
  EXPECT_NEAR(y.sum(), 1.0, 1e-12);
}

TEST(ImplicitSubsteps, TheGradientIsTheHalvesGradientBitForBit) {
  const Robertson problem;
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  const auto objective = Objective<EigenBackend>::terminal_squared_norm();
  auto held = esdirk43(problem, {100.0, 100.0});
  auto halves = esdirk43(problem, {50.0, 50.0, 100.0});
  const auto a = StoreAllAdjoint(held, objective).run(y0, theta);
  const auto b = StoreAllAdjoint(halves, objective).run(y0, theta);
  testing::expect_same_gradient_bits<EigenBackend>(a, b);
}

TEST(ImplicitSubsteps, WithoutSubstepsTheRunStopsAtTheStepNamingIt) {
  const Robertson problem;
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  auto whole = esdirk43(problem, {100.0, 100.0}, /*max_substeps=*/1);
  try {
    run(whole, y0, theta);
    FAIL() << "a step of 100 converged whole";
  } catch (const SolverError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("step 40 at t = 0.3008"), std::string::npos) << message;
    EXPECT_NE(message.find("(h = 100)"), std::string::npos) << message;
    EXPECT_EQ(message.find("substeps"), std::string::npos) << message;
  }
  // A step too long for 64 substeps names the count it tried.
  auto too_long = esdirk43(problem, {1e4});
  try {
    run(too_long, y0, theta);
    FAIL() << "a step of 10^4 converged";
  } catch (const SolverError& e) {
    EXPECT_NE(std::string(e.what()).find("whole and in 64 substeps of h/64"), std::string::npos)
        << e.what();
  }
  for (int bad : {0, -2, (1 << 20) + 1}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(esdirk43(problem, {100.0}, bad), InvalidArgument);
  }
}

TEST(ImplicitSubsteps, TheGradientOfASubsteppedRunAgreesWithFiniteDifferences) {
  const Robertson problem;
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  const auto objective = Objective<EigenBackend>::terminal_squared_norm();
  auto stepper = esdirk43(problem, {100.0, 100.0});
  StoreAllAdjoint driver(stepper, objective);
  const auto result = driver.run(y0, theta);
  EXPECT_EQ(stepper.implicit_counters().substepped_steps, 2);  // forward, and replayed
  for (int j = 0; j < 3; ++j) {
    const double d = 1e-5 * theta[j];
    V plus = theta, minus = theta;
    plus[j] += d;
    minus[j] -= d;
    const double fd = (driver.run(y0, plus).loss - driver.run(y0, minus).loss) / (2.0 * d);
    EXPECT_NEAR(result.grad_theta[j], fd, 1e-8 * std::abs(fd) + 1e-17) << "p" << j + 1;
  }
  // dJ/dy0 through the same steps, against differences in y0's first component.
  const double d = 1e-6;
  V plus = y0, minus = y0;
  plus[0] += d;
  minus[0] -= d;
  const double fd = (driver.run(plus, theta).loss - driver.run(minus, theta).loss) / (2.0 * d);
  EXPECT_NEAR(result.grad_y0[0], fd, 1e-7 * std::abs(fd));
}

TEST(ImplicitSubsteps, EveryScheduleAndStoreGivesTheStoreAllBits) {
  const Robertson problem;
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  std::vector<Index> steps;
  std::vector<V> data;
  for (Index k : {20, 40, 41, 42}) {  // observed just before and after the substepped step
    steps.push_back(k);
    data.push_back(V::Constant(3, 0.3));
  }
  const auto objective = Objective<EigenBackend>::trajectory_misfit(steps, data);
  auto stepper = esdirk43(problem, {100.0, 100.0});
  const int s = stepper.stage_count();
  const auto reference = StoreAllAdjoint(stepper, objective).run(y0, theta);
  expect_every_planner_gives(stepper, objective, y0, theta,
                             {{"revolve c=3", revolve_schedule(3)},
                              {"uniform k=7", uniform_schedule(7)},
                              {"revolve c=4 on disk", on_disk(revolve_schedule(4))},
                              {"stage-aware 20 units", stage_aware_schedule(20, s)},
                              {"stage-aware 8 units on disk", on_disk(stage_aware_schedule(8, s))},
                              {"store-all stages", store_all_stages_schedule(s)}},
                             reference);
}

// Kept stages: a substepped step keeps y_n and a marker, and its reverse replays the substeps
// from y_n — the only Newton iterations of a stage-keeping reverse sweep.
TEST(ImplicitSubsteps, AStageKeepingReverseReplaysOnlyTheSubsteppedStep) {
  const Robertson problem;
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  const auto objective = Objective<EigenBackend>::terminal_squared_norm();
  auto stepper = esdirk43(problem, {100.0, 100.0});
  CheckpointedAdjoint driver(stepper, objective);
  stepper.reset_counters();
  driver.run(y0, theta, store_all_stages_schedule(stepper.stage_count()));
  EXPECT_EQ(stepper.implicit_counters().substepped_steps, 2);  // forward, and in the reverse
  EXPECT_EQ(stepper.counters().adjoint_steps, 42);             // one per step, cut or not
}

// y₁' = λ y₁ (a growing mode), y₂' = −y₂ + λ y₁ y₂: rodas4's I − hγJ is singular at a step
// with hγλ = 1, and not at its halves.
struct GrowingMode {
  static constexpr std::array<const char*, 2> state_names{"a", "b"};
  static constexpr std::array<const char*, 1> parameter_names{"lambda"};
  static constexpr bool autonomous = true;
  template <class T>
  void rhs(double, const T* y, const T* p, T* f) const {
    f[0] = p[0] * y[0];
    f[1] = -y[1] + p[0] * y[0] * y[1];
  }
};

TEST(ImplicitSubsteps, RosenbrockCutsAStepWhoseMatrixIsSingular) {
  const auto problem = auto_problem(GrowingMode{});
  const double h = 0.5, gamma = RosenbrockTableau::rodas4().gamma;
  const V theta{{1.0 / (h * gamma)}}, y0{{0.01, 1.0}};
  const auto objective = Objective<EigenBackend>::terminal_squared_norm();
  const auto rodas4 = [&](std::vector<double> sizes, int max_substeps = 64) {
    return RosenbrockStepper(problem, RosenbrockTableau::rodas4(),
                             StepControl::prescribed(0.0, std::move(sizes)),
                             ImplicitLinearSolver::dense, max_substeps);
  };
  auto whole = rodas4({0.1, h}, 1);
  try {
    StoreAllAdjoint(whole, objective).run(y0, theta);
    FAIL() << "I - h gamma J factored at h gamma lambda = 1";
  } catch (const SolverError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("step 1 at t = 0.1"), std::string::npos) << message;
    EXPECT_NE(message.find("(h = 0.5): the matrix I - h gamma J is singular"), std::string::npos)
        << message;
  }
  auto held = rodas4({0.1, h});
  auto halves = rodas4({0.1, h / 2, h / 2});
  const auto a = StoreAllAdjoint(held, objective).run(y0, theta);
  const auto b = StoreAllAdjoint(halves, objective).run(y0, theta);
  EXPECT_EQ(held.rosenbrock_counters().substepped_steps, 2);  // forward, and replayed
  testing::expect_same_gradient_bits<EigenBackend>(a, b);
  expect_every_planner_gives(held, objective, y0, theta,
                             {{"revolve c=2", revolve_schedule(2)},
                              {"store-all stages", store_all_stages_schedule(held.stage_count())}},
                             a);
  EXPECT_THROW(rodas4({h}, 0), InvalidArgument);
}

}  // namespace
}  // namespace rwd
