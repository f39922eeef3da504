// Label "long" (minutes): the built-in problems at long horizons. Gray–Scott at the main
// demonstration's horizon (scripts/demo.sh: n = 71, 10^5 RK4 steps, revolve in 20 snapshots)
// and at n = 64 and 32: the pattern is still there (std of v ≈ 0.11) and still moving, and the
// gradient is finite and not negligible. Heat2D at its default n = 64 reaches its steady state
// near step 23 000, as its `rewind run --help` line says.
#include <gtest/gtest.h>

#include "problems_alive_support.hpp"

namespace rwd::cli {
namespace {

using testing::Outcome;
using testing::run_like_the_cli;

TEST(ProblemsAliveLong, GrayScottAtTheDemonstrationHorizon) {
  for (Index n : {71, 64, 32}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const Outcome r = run_like_the_cli("gray_scott", n, 100000);
    const GradientHealth& h = r.summary.health;
    EXPECT_TRUE(r.gradient_finite());
    EXPECT_FALSE(h.degenerate()) << h.describe();
    EXPECT_GT(h.sensitivity, 1.0);
    EXPECT_GT(h.final_step_change, 1e-6);  // measured 1.9e-5 (71), 1.6e-5 (64), 1.1e-4 (32)
    EXPECT_GT(r.std_of_v(), 0.09);         // measured 0.109, 0.109, 0.105
  }
}

TEST(ProblemsAliveLong, Heat2dAtItsDefaultSizeBecomesStationary) {
  // The last step's relative change falls like e^{-t/1070}: 1.3e-11 at step 20 000, below 1e-12
  // from about 22 800.
  const Outcome before = run_like_the_cli("heat2d", std::nullopt, 20000);
  EXPECT_FALSE(before.summary.health.state_stationary) << before.summary.health.final_step_change;
  const Outcome after = run_like_the_cli("heat2d", std::nullopt, 26000);
  EXPECT_TRUE(after.summary.health.state_stationary) << after.summary.health.final_step_change;
  EXPECT_FALSE(after.summary.health.gradient_negligible);
}

}  // namespace
}  // namespace rwd::cli
