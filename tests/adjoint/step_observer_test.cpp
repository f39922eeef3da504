// The drivers' step observer and the stepper capabilities they state with concepts: an observer
// sees every forward step once, every recomputed step and every reverse step in order, and
// changes no bit of the result; a run that needs a capability the stepper lacks is refused with
// a message naming the missing concept.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "rewind/adjoint/backsolve_adjoint.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/forward_loss.hpp"
#include "rewind/adjoint/step_observer.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/cvodes_interval_stepper.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/integrators/stepper_concepts.hpp"
#include "rewind/integrators/stochastic_stepper.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/projectile.hpp"
#include "rewind/problems/robertson.hpp"
#include "rewind/problems/stochastic_lorenz63.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/error_message.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vec = B::Vector;
using RungeKutta = ExplicitRungeKutta<Lorenz63<>>;
using Stochastic = StochasticStepper<StochasticLorenz63<>>;
using Bdf = CvodesIntervalStepper<Robertson>;

// What each stepper family declares it can do.
static_assert(TimeStepper<RungeKutta> && TimeStepper<Stochastic> && TimeStepper<Bdf>);
static_assert(StageKeepingStepper<RungeKutta> && !StageKeepingStepper<Stochastic> &&
              !StageKeepingStepper<Bdf>);
static_assert(LastStepShorteningStepper<RungeKutta> && !LastStepShorteningStepper<Stochastic>);
static_assert(TimeLandingStepper<RungeKutta> && !TimeLandingStepper<Stochastic>);
static_assert(HeldTermsDroppingStepper<RungeKutta> && !HeldTermsDroppingStepper<Bdf>);
static_assert(ButcherTableauStepper<RungeKutta> && !ButcherTableauStepper<Stochastic>);
static_assert(SelfDescribingStepper<Stochastic> && SelfDescribingStepper<Bdf> &&
              !SelfDescribingStepper<RungeKutta>);

bool same_bits(const Vec& a, const Vec& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

template <class R>
void expect_same_result(const R& a, const R& b) {
  EXPECT_EQ(std::memcmp(&a.loss, &b.loss, sizeof(double)), 0);
  EXPECT_TRUE(same_bits(a.grad_y0, b.grad_y0));
  EXPECT_TRUE(same_bits(a.grad_theta, b.grad_theta));
  EXPECT_TRUE(same_bits(a.y_final, b.y_final));
}

// Everything an observer was told.
struct Log {
  std::vector<Index> starts, forward, recompute, reverse;
  StepObserver observer() {
    return [this](StepKind kind, Index step, double) {
      switch (kind) {
        case StepKind::start:
          starts.push_back(step);
          break;
        case StepKind::forward:
          forward.push_back(step);
          break;
        case StepKind::recompute:
          recompute.push_back(step);
          break;
        case StepKind::reverse:
          reverse.push_back(step);
          break;
      }
    };
  }
};

std::vector<Index> ascending(Index from, Index to) {
  std::vector<Index> out;
  for (Index k = from; k <= to; ++k) out.push_back(k);
  return out;
}

std::vector<Index> descending(Index from, Index to) {
  std::vector<Index> out;
  for (Index k = from; k >= to; --k) out.push_back(k);
  return out;
}

Objective<B> objective() {
  return Objective<B>(
      [](double, const Vec& y, Vec& g) {
        g = y;
        return 0.5 * y.squaredNorm();
      },
      {3, 40},
      [](Index, double, const Vec& y, Vec& g) {
        g = 0.5 * y;
        return 0.25 * y.squaredNorm();
      });
}

constexpr Index kSteps = 60;

TEST(StepObserver, StoreAllSeesEveryStepOnceEachWayAndChangesNoBit) {
  Lorenz63<> problem;
  const Vec y0 = problem.default_initial_state(), theta = problem.default_parameters();
  RungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, kSteps));
  StoreAllAdjoint bare(stepper, objective());
  const auto expected = bare.run(y0, theta);
  Log log;
  StoreAllOptions options;
  options.observer = log.observer();
  StoreAllAdjoint watched(stepper, objective(), options);
  expect_same_result(watched.run(y0, theta), expected);
  EXPECT_EQ(log.starts, std::vector<Index>{0});
  EXPECT_EQ(log.forward, ascending(1, kSteps));
  EXPECT_TRUE(log.recompute.empty());
  EXPECT_EQ(log.reverse, descending(kSteps - 1, 0));
}

TEST(StepObserver, CheckpointedSeesRecomputationsAsTheSummaryCountsThem) {
  Lorenz63<> problem;
  const Vec y0 = problem.default_initial_state(), theta = problem.default_parameters();
  RungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, kSteps));
  for (const Planner& planner :
       {revolve_schedule(4), uniform_schedule(7), stage_aware_schedule(10, 4)}) {
    CheckpointedAdjoint bare(stepper, objective());
    const auto expected = bare.run(y0, theta, planner);
    Log log;
    CheckpointOptions options;
    options.observer = log.observer();
    CheckpointedAdjoint watched(stepper, objective(), options);
    const auto result = watched.run(y0, theta, planner);
    const Summary& summary = result.summary;
    expect_same_result(result, expected);
    EXPECT_EQ(log.starts, std::vector<Index>{0}) << summary.schedule;
    EXPECT_EQ(log.forward, ascending(1, kSteps)) << summary.schedule;
    EXPECT_EQ(log.reverse, descending(kSteps - 1, 0)) << summary.schedule;
    // Without kept stages the steps taken are the schedule's advances (the summary's
    // recomputed_steps: the first sweep's l − 1 and the replays) and the step to y_l for the
    // terminal cost.
    if (summary.schedule.find("stage") == std::string::npos)
      EXPECT_EQ(static_cast<Index>(log.forward.size() + log.recompute.size()),
                summary.recomputed_steps + 1)
          << summary.schedule;
    else
      EXPECT_FALSE(log.recompute.empty()) << summary.schedule;  // c = 10 < l: some replays
  }
}

TEST(StepObserver, AnAdaptiveRunReportsItsCountingSweepAndItsOnlineRun) {
  Lorenz63<> problem;
  const Vec y0 = problem.default_initial_state(), theta = problem.default_parameters();
  RungeKutta stepper(problem, ButcherTableau::dormand_prince(),
                     StepControl::adaptive(0.0, 0.5, 1e-7, 1e-9));
  for (const bool online : {true, false}) {
    Log log;
    CheckpointOptions options;
    options.observer = log.observer();
    CheckpointedAdjoint driver(stepper, Objective<B>::terminal_squared_norm(), options);
    const auto result = driver.run(y0, theta, online ? revolve_schedule(5) : uniform_schedule(9));
    const Index l = result.summary.steps;
    // A counted planner sweeps once to find l (a start and l forward steps), then runs.
    EXPECT_EQ(log.starts.size(), online ? 1u : 2u);
    std::vector<Index> forward = ascending(1, l);
    if (!online) {
      const std::vector<Index> sweep = forward;
      forward.insert(forward.end(), sweep.begin(), sweep.end());
    }
    EXPECT_EQ(log.forward, forward);
    EXPECT_EQ(log.reverse, descending(l - 1, 0));
  }
}

TEST(StepObserver, BacksolveAndForwardLossReportTheirSteps) {
  Lorenz63<> problem;
  const Vec y0 = problem.default_initial_state(), theta = problem.default_parameters();
  RungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, kSteps));
  Log log;
  BacksolveOptions options;
  options.observer = log.observer();
  BacksolveAdjoint watched(stepper, objective(), options);
  BacksolveAdjoint bare(stepper, objective());
  expect_same_result(watched.run(y0, theta), bare.run(y0, theta));
  EXPECT_EQ(log.forward, ascending(1, kSteps));
  EXPECT_EQ(log.reverse, descending(kSteps - 1, 0));

  Log loss_log;
  const double loss = forward_loss(stepper, objective(), y0, theta, nullptr, loss_log.observer());
  const double bare_loss = forward_loss(stepper, objective(), y0, theta);
  EXPECT_EQ(std::memcmp(&loss, &bare_loss, sizeof(double)), 0);
  EXPECT_EQ(loss_log.starts, std::vector<Index>{0});
  EXPECT_EQ(loss_log.forward, ascending(1, kSteps));
}

// A run that needs what the stepper cannot do is refused naming the missing capability.
TEST(StepperCapabilities, RefusalsNameTheMissingConcept) {
  StochasticLorenz63<> lorenz;
  const Vec y0 = lorenz.default_initial_state(), theta = lorenz.default_parameters();
  Stochastic stepper(lorenz, SdeScheme::euler_maruyama, StepControl::fixed(0.0, 0.01, 20), 3);
  CheckpointedAdjoint stages(stepper, Objective<B>::terminal_squared_norm());
  testing::expect_message(testing::error_message<InvalidArgument>(
                              [&] { stages.run(y0, theta, stage_aware_schedule(6, 2)); }),
                          "rwd::StageKeepingStepper");
  const auto at_times = Objective<B>::at_times(
      [](double, const Vec& y, Vec& g) {
        g = y;
        return 0.5 * y.squaredNorm();
      },
      {0.05},
      [](Index, double, const Vec& y, Vec& g) {
        g = y;
        return 0.5 * y.squaredNorm();
      });
  StoreAllAdjoint times(stepper, at_times);
  testing::expect_message(testing::error_message<InvalidArgument>([&] { times.run(y0, theta); }),
                          "rwd::TimeLandingStepper");
  StopCondition<B> landing = Projectile<>::landing();
  testing::expect_message(testing::error_message<InvalidArgument>([&] {
                            StoreAllAdjoint event(stepper, Objective<B>::terminal_squared_norm(),
                                                  {}, landing);
                          }),
                          "rwd::LastStepShorteningStepper");
}

}  // namespace
}  // namespace rwd
