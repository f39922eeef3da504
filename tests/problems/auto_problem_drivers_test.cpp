// rwd::auto_problem (rewind/model.hpp) with the drivers that its own test does not run: the
// continuous backsolve adjoint — the loss of the same forward sweep bit for bit, the gradient the
// built-in problem's backsolve gives (its bits where the vjp is the same code), close to the
// discrete gradient — and resumable runs stopped or crashed anywhere in either sweep, which
// continue from their snapshot file to the store-all run's gradient bits.
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "problems/models/templated_builtins.hpp"
#include "rewind/adjoint/backsolve_adjoint.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/differentiate.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/interrupt.hpp"
#include "rewind/model.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/lotka_volterra.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/same_gradient_bits.hpp"
#include "support/scratch_directory.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vector = B::Vector;

double relative_difference(const Vector& a, const Vector& b) {
  return (a - b).cwiseAbs().maxCoeff() / b.cwiseAbs().maxCoeff();
}

// Backsolve on the derived problem against backsolve on the built-in Lotka–Volterra: the same
// loss bits (the same forward arithmetic), gradients equal to round-off (the vjps differ in
// their last bits only), and both within the discretisation error of the discrete gradient.
TEST(AutoProblemDrivers, BacksolveMatchesTheBuiltInProblem) {
  const auto derived = auto_problem(test_models::LotkaVolterra{});
  const LotkaVolterra<> builtin;
  const Vector y0{{1.0, 1.0}};
  const Vector theta = derived.default_parameters();
  const auto objective = Objective<B>::terminal_squared_norm();
  const StepControl control = StepControl::fixed(0.0, 0.005, 400);
  ExplicitRungeKutta derived_stepper(derived, ButcherTableau::rk4(), control);
  ExplicitRungeKutta builtin_stepper(builtin, ButcherTableau::rk4(), control);
  const auto a = BacksolveAdjoint(derived_stepper, objective).run(y0, theta);
  const auto b = BacksolveAdjoint(builtin_stepper, objective).run(y0, theta);
  const auto exact = differentiate(derived_stepper, objective, y0, theta, StoreAllStrategy{});
  EXPECT_EQ(a.loss, b.loss);
  EXPECT_EQ(a.loss, exact.loss);
  EXPECT_LE(relative_difference(a.grad_theta, b.grad_theta), 1e-12);
  EXPECT_LE(relative_difference(a.grad_y0, b.grad_y0), 1e-12);
  EXPECT_LE(relative_difference(a.grad_theta, exact.grad_theta), 1e-6);
  EXPECT_LE(relative_difference(a.grad_y0, exact.grad_y0), 1e-6);
}

// A model with the built-in Lorenz-63's rhs and vjp written the same way: backsolve gives the
// built-in's bits, re-anchored at the checkpoints too.
TEST(AutoProblemDrivers, BacksolveWithTheModelsOwnVjpGivesTheBuiltInsBits) {
  const auto mine = auto_problem(test_models::Lorenz63WithOwnVjp{});
  const Lorenz63<> builtin;
  const Vector y0{{1.0, 1.0, 1.0}}, theta{{10.0, 28.0, 8.0 / 3.0}};
  const auto objective = Objective<B>::terminal_squared_norm();
  const StepControl control = StepControl::fixed(0.0, 0.002, 500);
  ExplicitRungeKutta mine_stepper(mine, ButcherTableau::rk4(), control);
  ExplicitRungeKutta builtin_stepper(builtin, ButcherTableau::rk4(), control);
  BacksolveOptions anchored;
  anchored.reanchor = true;
  anchored.anchor_interval = 50;
  for (const BacksolveOptions& options : {BacksolveOptions{}, anchored}) {
    SCOPED_TRACE(options.reanchor ? "re-anchored" : "plain");
    const auto a = BacksolveAdjoint(mine_stepper, objective, options).run(y0, theta);
    const auto b = BacksolveAdjoint(builtin_stepper, objective, options).run(y0, theta);
    EXPECT_EQ(a.loss, b.loss);
    EXPECT_TRUE(a.grad_theta == b.grad_theta) << a.grad_theta.transpose();
    EXPECT_TRUE(a.grad_y0 == b.grad_y0) << a.grad_y0.transpose();
  }
}

// Stops the run at a chosen right-hand-side call: by a stop request (what SIGINT and SIGTERM do)
// or by an exception thrown inside the step (a crash).
struct RhsHook {
  Index calls = 0;
  Index stop_at = -1;
  bool crash = false;
  void before_rhs() {
    if (calls++ != stop_at) return;
    if (crash) throw std::runtime_error("the process dies here");
    request_stop(0);
  }
};

// Lotka–Volterra that calls the hook before every evaluation, derived ones included. The model
// holds a pointer: rwd::auto_problem keeps a copy of the model.
struct HookedLotkaVolterra : test_models::LotkaVolterra {
  RhsHook* hook = nullptr;
  template <class T>
  void rhs(double t, const T* y, const T* p, T* f) const {
    if (hook) hook->before_rhs();
    test_models::LotkaVolterra::rhs(t, y, p, f);
  }
};

std::vector<std::pair<std::string, Planner>> resumable_plans() {
  CostModel slow_disk;
  slow_disk.adjoint_cost_factor = 1.5;
  slow_disk.disk_write_time = 3.0;
  slow_disk.disk_read_time = 2.0;
  return {{"revolve(6) on disk", on_disk(revolve_schedule(6))},
          {"two-level 2 memory + 4 disk", two_level_schedule(2, 4, slow_disk)}};
}

// Interrupted anywhere in either sweep — stopped or crashed, once or several times in a row —
// a resumable run on disk continues to the bits of the store-all run.
TEST(AutoProblemDrivers, ResumedRunsGiveTheStoreAllBits) {
  RhsHook hook;
  HookedLotkaVolterra model;
  model.hook = &hook;
  const auto problem = auto_problem(model);
  const Vector y0{{1.0, 1.0}};
  const Vector theta = problem.default_parameters();
  const auto objective = Objective<B>::terminal_squared_norm();
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.01, 300));
  const auto reference = differentiate(stepper, objective, y0, theta, StoreAllStrategy{});
  const test::ScratchDirectory scratch("rewind-auto-problem-resume");
  CheckpointOptions options;
  options.disk.directory = scratch.path();
  options.disk.resume = true;
  options.drift_policy = DriftPolicy::fail;
  options.progress_interval_seconds = 0.0;  // a progress record at every disk store and restore
  for (const auto& [name, planner] : resumable_plans()) {
    SCOPED_TRACE(name);
    hook = RhsHook{};
    CheckpointOptions counting = options;  // the same run, not resumable: its rhs calls
    counting.disk.resume = false;
    CheckpointedAdjoint(stepper, objective, counting).run(y0, theta, planner);
    const Index total_calls = hook.calls;
    // Each list: the rhs calls (counted per attempt) where one attempt after another stops.
    const std::vector<std::vector<Index>> attempts = {
        {total_calls / 7}, {total_calls / 2}, {6 * total_calls / 7}, {150, 400, 900, 1700}};
    for (std::size_t k = 0; k < attempts.size(); ++k) {
      for (std::size_t s = 0; s < attempts[k].size(); ++s) {
        SCOPED_TRACE("stopped at rhs call " + std::to_string(attempts[k][s]));
        clear_stop_request();
        hook = RhsHook{0, attempts[k][s], (k + s) % 2 == 1};
        bool stopped = false;
        try {
          CheckpointedAdjoint(stepper, objective, options).run(y0, theta, planner);
        } catch (const Interrupted&) {
          stopped = !hook.crash;
        } catch (const std::runtime_error&) {
          stopped = hook.crash;
        }
        EXPECT_TRUE(stopped);
      }
      clear_stop_request();
      hook = RhsHook{};
      const auto resumed = CheckpointedAdjoint(stepper, objective, options).run(y0, theta, planner);
      EXPECT_GT(resumed.resumed_at_action, 0) << "attempt list " << k;
      EXPECT_EQ(resumed.drift.mismatched_steps, 0);
      testing::expect_same_gradient_bits<B>(resumed, reference);
    }
  }
}

}  // namespace
}  // namespace rwd
