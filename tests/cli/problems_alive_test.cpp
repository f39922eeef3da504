// Every built-in problem is alive at its `rewind run` defaults: the gradient is finite and not
// negligible, and the state still changes at the last step (rwd::GradientHealth). Gray–Scott's
// pattern forms and stays on the default grid, where the former default (F, k) = (0.035, 0.065)
// had died by step 1000. Where a model's nature limits the horizon, the limit the `rewind run
// --help` line states is checked: Heat2D reaches its steady state (reported stationary), the
// Lorenz systems' gradients overflow double. The demonstration's horizon (10^5 steps) is in
// problems_alive_long_test.cpp.
#include <gtest/gtest.h>

#include "problems_alive_support.hpp"

namespace rwd::cli {
namespace {

using testing::Outcome;
using testing::run_like_the_cli;

// Whether the problem's `rewind run --help` line states this about its horizon.
bool stated(const char* problem, const std::string& text) {
  const std::string& horizon = require_problem(problem).horizon;
  return horizon.find(text) != std::string::npos;
}

void expect_alive(const Outcome& r, const std::string& what) {
  SCOPED_TRACE(what);
  const GradientHealth& h = r.summary.health;
  ASSERT_TRUE(h.assessed);
  EXPECT_TRUE(r.gradient_finite());
  EXPECT_FALSE(h.degenerate()) << h.describe();
  // Far from the thresholds, not just past them.
  EXPECT_GT(h.sensitivity, 1e4 * GradientHealth::kNegligibleSensitivity);
  EXPECT_GT(h.final_step_change, 1e4 * GradientHealth::kStationaryChange);
}

TEST(ProblemsAlive, EveryProblemAtItsCommandLineDefaults) {
  for (const ProblemInfo& info : problem_table()) {
    const Outcome r = run_like_the_cli(info.name);
    EXPECT_EQ(r.summary.steps, info.default_steps) << info.name;
    expect_alive(r, info.name);
    if (info.name == "gray_scott") {
      // 200 steps: the seed has grown (std of v 0.085; the former default: 3e-4, dying).
      EXPECT_GT(r.std_of_v(), 0.05);
    }
  }
}

// The pattern fills the grid by step 3000 and the state still moves (n = 64: std of v 0.109,
// the former default 4e-127); the smallest side the defaults are meant for, 32, too.
TEST(ProblemsAlive, GrayScottPatternFormsAndStays) {
  for (Index n : {64, 32}) {
    const Outcome r = run_like_the_cli("gray_scott", n, 3000);
    expect_alive(r, "n = " + std::to_string(n));
    EXPECT_GT(r.std_of_v(), 0.09) << "n = " << n;
  }
}

// Heat2D decays to its steady state in a few n²/(2π²κ) steps (n = 16: 65) and is then reported
// stationary; dJ/dθ still means something (the steady state depends on κ and s₀).
TEST(ProblemsAlive, Heat2dReachesItsSteadyStateAndSaysSo) {
  EXPECT_TRUE(stated("heat2d", "near step 23 000, reported stationary"));  // the long test
  const Outcome r = run_like_the_cli("heat2d", 16, 3000);
  const GradientHealth& h = r.summary.health;
  EXPECT_TRUE(r.gradient_finite());
  EXPECT_TRUE(h.state_stationary) << h.final_step_change;
  EXPECT_FALSE(h.gradient_negligible) << h.sensitivity;
}

// The Lorenz systems are chaotic: dJ/dy0 grows like e^{λt} until it overflows double. Measured at
// the defaults (dt = 0.01, RK4; N = 40 for Lorenz-96): Lorenz-63 overflows at step 78 910
// (t ≈ 789, λ ≈ 0.9), Lorenz-96 at step 41 780 (t ≈ 418, λ ≈ 1.7); the help says so. Checked
// with a margin, as a chaotic trajectory's bits depend on the compiler.
TEST(ProblemsAlive, LorenzGradientsOverflowNearTheStatedHorizon) {
  struct Case {
    const char* name;
    Index alive, overflowed;
    const char* help;
  };
  for (const Case& c : {Case{"lorenz63", 70000, 86000, "near t = 789 (78 900 steps)"},
                        Case{"lorenz96", 37000, 46000, "near t = 418 (41 800 steps)"}}) {
    EXPECT_TRUE(stated(c.name, c.help)) << c.name;
    const Outcome r = run_like_the_cli(c.name, std::nullopt, c.alive);
    expect_alive(r, c.name);
    EXPECT_GT(r.grad_y0.cwiseAbs().maxCoeff(), 1e200) << c.name;  // close to overflow
    EXPECT_THROW(run_like_the_cli(c.name, std::nullopt, c.overflowed), NumericalError) << c.name;
  }
}

}  // namespace
}  // namespace rwd::cli
