// rwd::minimize_bounded, the adapter of NLopt's LD_LBFGS: it finds the minimum of a smooth
// function, stops on an active bound, never evaluates outside the box, passes an exception of the
// function through unchanged, and refuses bad input before the first evaluation.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/fit/minimize_bounded.hpp"
#include "support/error_message.hpp"

namespace rwd {
namespace {

using rwd::testing::error_message;
using rwd::testing::expect_message;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Rosenbrock's banana, the classic test of quasi-Newton methods: minimum 0 at (1, 1).
double rosenbrock(const std::vector<double>& x, std::vector<double>& g) {
  const double a = 1.0 - x[0], b = x[1] - x[0] * x[0];
  g = {-2.0 * a - 400.0 * x[0] * b, 200.0 * b};
  return a * a + 100.0 * b * b;
}

TEST(MinimizeBounded, FindsTheMinimumOfRosenbrocksFunction) {
  BoundedMinimizerOptions options;
  options.max_evaluations = 500;
  options.relative_tolerance = 0.0;
  const BoundedMinimum m =
      minimize_bounded(rosenbrock, {-1.2, 1.0}, {-kInf, -kInf}, {kInf, kInf}, options);
  EXPECT_NEAR(m.x[0], 1.0, 1e-6);
  EXPECT_NEAR(m.x[1], 1.0, 1e-6);
  EXPECT_LT(m.value, 1e-12);
  EXPECT_GT(m.evaluations, 10);
  EXPECT_LE(m.evaluations, 500);
  EXPECT_GT(m.code, 0) << m.stop_reason;
  EXPECT_FALSE(m.optimizer_failed);
  EXPECT_FALSE(m.stop_reason.empty());
}

TEST(MinimizeBounded, StopsOnAnActiveBoundAndNeverLeavesTheBox) {
  int outside = 0;
  auto f = [&](const std::vector<double>& x, std::vector<double>& g) {
    if (x[0] < -10 || x[0] > 10 || x[1] < 0 || x[1] > 10) ++outside;
    g = {2 * (x[0] - 3), 2 * (x[1] + 1)};
    return (x[0] - 3) * (x[0] - 3) + (x[1] + 1) * (x[1] + 1);
  };
  const BoundedMinimum m = minimize_bounded(f, {0.0, 5.0}, {-10, 0}, {10, 10}, {});
  EXPECT_NEAR(m.x[0], 3.0, 1e-7);
  EXPECT_EQ(m.x[1], 0.0) << "the bound x1 >= 0 is active";
  EXPECT_NEAR(m.value, 1.0, 1e-12);
  EXPECT_EQ(outside, 0);
}

TEST(MinimizeBounded, StopsAtTheEvaluationLimit) {
  BoundedMinimizerOptions options;
  options.max_evaluations = 5;
  const BoundedMinimum m =
      minimize_bounded(rosenbrock, {-1.2, 1.0}, {-kInf, -kInf}, {kInf, kInf}, options);
  EXPECT_EQ(m.evaluations, 5);
  expect_message(m.stop_reason, "the limit of 5 evaluations was reached");
  EXPECT_FALSE(m.optimizer_failed);
}

TEST(MinimizeBounded, PassesTheFunctionsExceptionThrough) {
  int calls = 0;
  auto f = [&](const std::vector<double>& x, std::vector<double>& g) {
    if (++calls == 3) throw NumericalError("state became non-finite at step 7");
    return rosenbrock(x, g);
  };
  expect_message(error_message<NumericalError>([&] {
                   minimize_bounded(f, {-1.2, 1.0}, {-kInf, -kInf}, {kInf, kInf}, {});
                 }),
                 "non-finite at step 7");
  EXPECT_EQ(calls, 3) << "no evaluation after the one that threw";
  // Not only rewind's errors: anything the function throws comes back as it was.
  auto g = [](const std::vector<double>&, std::vector<double>&) -> double {
    throw std::logic_error("mine");
  };
  expect_message(
      error_message<std::logic_error>([&] { minimize_bounded(g, {0.0}, {-1.0}, {1.0}, {}); }),
      "mine");
}

TEST(MinimizeBounded, RefusesBadInputBeforeAnyEvaluation) {
  int calls = 0;
  auto f = [&](const std::vector<double>& x, std::vector<double>& g) {
    ++calls;
    return rosenbrock(x, g);
  };
  auto refused = [&](std::vector<double> x0, std::vector<double> lower, std::vector<double> upper,
                     BoundedMinimizerOptions options = {}) {
    return error_message<InvalidArgument>([&] { minimize_bounded(f, x0, lower, upper, options); });
  };
  expect_message(refused({2.0, 0.0}, {-1, -1}, {1, 1}),
                 "x0[0] = 2 lies outside its bounds [-1, 1]");
  expect_message(refused({0.0, 0.0}, {1, -1}, {1, 1}),
                 "the bounds of variable 0, [1, 1], must satisfy lower < upper");
  expect_message(refused({0.0, 0.0}, {-1, std::nan("")}, {1, 1}), "the bounds of variable 1");
  expect_message(refused({0.0, std::nan("")}, {-1, -1}, {1, 1}), "x0[1] = nan is not finite");
  expect_message(refused({0.0, 0.0}, {-1}, {1, 1}), "2 variables but 1 lower and 2 upper bounds");
  expect_message(refused({}, {}, {}), "no variables");
  BoundedMinimizerOptions options;
  options.max_evaluations = 0;
  expect_message(refused({0.0, 0.0}, {-1, -1}, {1, 1}, options),
                 "max_evaluations = 0 must be >= 1");
  options = {};
  options.relative_tolerance = -1;
  expect_message(refused({0.0, 0.0}, {-1, -1}, {1, 1}, options), "relative_tolerance = -1");
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace rwd
