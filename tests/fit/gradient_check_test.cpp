// rwd::check_gradient, a user's whole-gradient check: it passes on a correct model (a templated
// one, its vjp derived, and a hand-written one) through the checkpointed driver, and fails —
// naming the parameter — on a hand-written model whose vjp has a sign flipped.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "problems/models/sir_model.hpp"
#include "rewind/fit/gradient_check.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/model.hpp"
#include "rewind/schedule/checkpoint_plan.hpp"
#include "support/error_message.hpp"

namespace rwd {
namespace {

using Sir = ::SirFromTenInfected;

// Logistic growth y' = r y (1 − y / K), written by hand; `flip` flips the sign of ∂f/∂K in its
// vjp — the kind of slip a hand-derived vjp has.
struct HandWrittenLogistic {
  using Backend = EigenBackend;
  using Vector = Eigen::VectorXd;
  bool flip = false;
  Index state_size() const { return 1; }
  Index parameter_size() const { return 2; }
  std::vector<std::string> parameter_names() const { return {"r", "K"}; }
  Vector default_parameters() const { return Vector{{0.8, 50.0}}; }
  Vector default_initial_state() const { return Vector::Constant(1, 2.0); }
  void rhs(double, const Vector& y, const Vector& p, Vector& f) const {
    f[0] = p[0] * y[0] * (1.0 - y[0] / p[1]);
  }
  void vjp(double, const Vector& y, const Vector& p, const Vector& v, Vector& out_y,
           Vector& out_p) const {
    const double r = p[0], K = p[1], x = y[0];
    out_y[0] = v[0] * r * (1.0 - 2.0 * x / K);
    out_p[0] = v[0] * x * (1.0 - x / K);
    const double d_dK = r * x * x / (K * K);
    out_p[1] = v[0] * (flip ? -d_dK : d_dK);
  }
};

TimeSeries series(std::vector<double> times, std::string column, Eigen::MatrixXd values) {
  TimeSeries data;
  data.times = std::move(times);
  data.columns = {std::move(column)};
  data.values = std::move(values);
  return data;
}

TEST(GradientCheck, PassesOnATemplatedModelThroughItsInitialState) {
  const auto problem = auto_problem(Sir{});
  const TimeSeries data = series({1.0, 3.5, 7.0, 12.0, 20.0}, "I",
                                 Eigen::MatrixXd{{15.0}, {30.0}, {60.0}, {110.0}, {90.0}});
  FitSpec spec;
  spec.max_step = 0.5;
  spec.checkpoints = PlanRequest::revolve(4);  // a checkpointed gradient, not only store-all
  Eigen::VectorXd theta{{0.45, 0.2, 900.0}};
  const GradientCheck check = check_gradient(problem, data, theta, spec);
  EXPECT_TRUE(check.passed) << check.report();
  EXPECT_EQ(check.names, (std::vector<std::string>{"beta", "gamma", "N"}));
  EXPECT_LT(check.relative_error.maxCoeff(), 1e-7) << check.report();
  EXPECT_GT(check.adjoint.cwiseAbs().minCoeff(), 0.0);  // every parameter matters here
}

TEST(GradientCheck, PassesOnACorrectHandWrittenVjpAndFailsOnAFlippedSign) {
  const std::vector<double> times{1.0, 2.0, 4.0, 6.0, 9.0};
  const TimeSeries data = series(times, "y", Eigen::MatrixXd{{4.0}, {8.0}, {20.0}, {35.0}, {45.0}});
  TimeSeries by_index = data;
  by_index.columns.clear();
  by_index.column_indices = {0};
  FitSpec spec;
  spec.max_step = 0.1;
  const Eigen::VectorXd theta{{0.7, 45.0}};

  const HandWrittenLogistic right;
  const GradientCheck good = check_gradient(right, by_index, theta, spec);
  EXPECT_TRUE(good.passed) << good.report();
  EXPECT_EQ(good.names, (std::vector<std::string>{"r", "K"}));

  HandWrittenLogistic wrong;
  wrong.flip = true;
  const GradientCheck bad = check_gradient(wrong, by_index, theta, spec);
  EXPECT_FALSE(bad.passed) << bad.report();
  EXPECT_EQ(bad.worst, 1);                 // K
  EXPECT_LT(bad.relative_error[0], 1e-6);  // r's derivative is still right
  EXPECT_GT(bad.relative_error[1], 0.5);
  EXPECT_NE(bad.report().find("FAILED"), std::string::npos);

  // The same through a stepper and objective of one's own (y0 fixed).
  ExplicitRungeKutta stepper(wrong, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.1, 90));
  const auto objective = Objective<EigenBackend>::terminal_squared_norm();
  const auto plan = plan_checkpoints(PlanRequest::revolve(5), 90);
  EXPECT_FALSE(
      check_gradient(stepper, objective, wrong.default_initial_state(), theta, plan).passed);
  ExplicitRungeKutta right_stepper(right, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.1, 90));
  EXPECT_TRUE(
      check_gradient(right_stepper, objective, right.default_initial_state(), theta, plan).passed);
}

TEST(GradientCheck, RefusesBadOptions) {
  const HandWrittenLogistic model;
  ExplicitRungeKutta stepper(model, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.1, 10));
  const auto objective = Objective<EigenBackend>::terminal_squared_norm();
  const auto plan = plan_checkpoints(PlanRequest::store_all(), 10);
  GradientCheckOptions options;
  options.tolerance = 0.0;
  rwd::testing::expect_message(rwd::testing::error_message<InvalidArgument>([&] {
                                 check_gradient(stepper, objective, model.default_initial_state(),
                                                model.default_parameters(), plan, options);
                               }),
                               "tolerance = 0 must lie in (0, 1)");
}

}  // namespace
}  // namespace rwd
