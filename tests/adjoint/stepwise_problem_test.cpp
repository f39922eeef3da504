// A problem defined step by step (explicit_runge_kutta.hpp, "Problems defined step by step"): a
// control held constant over each step, y' = u_n y on step n, with the N controls as θ. The
// stepper tells the problem every step's index before that step's evaluations — forward,
// replayed from a snapshot or reversed — so the gradient is exact whatever the schedule:
//   - every schedule gives store-all's bits, and replays in any order see the right control;
//   - against the closed form: an RK step of y' = a y multiplies y by the stability polynomial
//     R(ah), so y_N = y_0 Π_n R(u_n h), and J = ½ y_N² has dJ/du_n = y_N² h R'(u_n h) / R(u_n h);
//   - the stage times alone could not tell the problem its step: the last stage of one step and
//     the first of the next share a time, and they see different controls here;
//   - the stochastic stepper tells it too (no noise: Euler–Maruyama is Euler, y_N = y_0 Π (1 +
//     u_n h)), and the backsolve adjoint, whose backward solve has steps of its own, refuses it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "rewind/adjoint/backsolve_adjoint.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/backend/eigen_backend.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/integrators/stochastic_stepper.hpp"
#include "rewind/schedule/schedules.hpp"

namespace rwd {
namespace {

// y' = u_n y during step n, θ = (u_0, …, u_{N−1}); it records the order of the steps it is told.
class StepwiseControl {
 public:
  using Backend = EigenBackend;
  using Vector = Backend::Vector;

  explicit StepwiseControl(Index steps) : steps_(steps) {}
  Index state_size() const { return 1; }
  Index parameter_size() const { return steps_; }

  void begin_step(Index step) const {
    step_ = step;
    told_.push_back(step);
  }
  void rhs(double, const Vector& y, const Vector& theta, Vector& f) const {
    f[0] = theta[control()] * y[0];
  }
  void vjp(double, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    out_y[0] = theta[control()] * v[0];
    out_theta.setZero();
    out_theta[control()] = y[0] * v[0];
  }

  // Noise of size 0: the stochastic stepper's Euler–Maruyama step is then Euler's.
  void diffusion(double, const Vector&, const Vector&, Vector& g) const { g.setZero(); }
  void diffusion_vjp(double, const Vector&, const Vector&, const Vector&, Vector& out_y,
                     Vector& out_theta) const {
    out_y.setZero();
    out_theta.setZero();
  }

  const std::vector<Index>& told() const { return told_; }
  void forget() const { told_.clear(); }

 private:
  Index control() const {
    if (step_ < 0 || step_ >= steps_) ADD_FAILURE() << "evaluated at step " << step_;
    return step_;
  }
  Index steps_;
  mutable Index step_ = -1;
  mutable std::vector<Index> told_;
};

// R(z) = Σ_k γ_k z^k, γ_0 = 1, γ_k = bᵀ 𝒜^{k−1} 𝟙, and its derivative.
std::pair<double, double> stability_polynomial(const ButcherTableau& t, double z) {
  const int s = t.stages;
  std::vector<double> v(static_cast<std::size_t>(s), 1.0);  // 𝒜^{k−1} 𝟙
  double r = 1.0, dr = 0.0;
  for (int k = 1; k <= s; ++k) {
    double gamma = 0.0;
    for (int i = 0; i < s; ++i) gamma += t.b[i] * v[i];
    r += gamma * std::pow(z, k);
    dr += gamma * k * std::pow(z, k - 1);
    std::vector<double> next(v.size(), 0.0);
    for (int i = 0; i < s; ++i)
      for (int j = 0; j < s; ++j) next[i] += t.a_at(i, j) * v[j];
    v = next;
  }
  return {r, dr};
}

Eigen::VectorXd controls(Index steps) {
  Eigen::VectorXd theta(steps);
  for (Index n = 0; n < steps; ++n) theta[n] = std::sin(1.0 + 0.7 * static_cast<double>(n)) * 3.0;
  return theta;
}

class StepwiseProblem : public ::testing::TestWithParam<std::string> {};

TEST_P(StepwiseProblem, EveryScheduleGivesTheClosedFormGradient) {
  const ButcherTableau tableau = ButcherTableau::by_name(GetParam());
  const Index steps = 17;
  const double h = 0.05;
  StepwiseControl problem(steps);
  const Eigen::VectorXd theta = controls(steps);
  const Eigen::VectorXd y0 = Eigen::VectorXd::Constant(1, 1.3);

  ExplicitRungeKutta stepper(problem, tableau, StepControl::fixed(0.0, h, steps));
  StoreAllAdjoint store_all(stepper, Objective<EigenBackend>::terminal_squared_norm());
  const auto reference = store_all.run(y0, theta);

  // The closed form.
  double y_n = y0[0];
  std::vector<double> ratio(static_cast<std::size_t>(steps));
  for (Index n = 0; n < steps; ++n) {
    const auto [r, dr] = stability_polynomial(tableau, theta[n] * h);
    y_n *= r;
    ratio[static_cast<std::size_t>(n)] = h * dr / r;
  }
  EXPECT_NEAR(reference.loss, 0.5 * y_n * y_n, 1e-14 * y_n * y_n);
  for (Index n = 0; n < steps; ++n)
    EXPECT_NEAR(reference.grad_theta[n], y_n * y_n * ratio[static_cast<std::size_t>(n)],
                1e-13 * y_n * y_n)
        << "control " << n;

  // Every schedule, the same bits; the problem is told every step before it is evaluated.
  for (const Planner& schedule :
       {revolve_schedule(1), revolve_schedule(2), revolve_schedule(5), store_all_schedule()}) {
    problem.forget();
    CheckpointedAdjoint driver(stepper, Objective<EigenBackend>::terminal_squared_norm());
    const auto r = driver.run(y0, theta, schedule);
    EXPECT_EQ(0, std::memcmp(&r.loss, &reference.loss, sizeof(double)));
    EXPECT_EQ(0, std::memcmp(r.grad_theta.data(), reference.grad_theta.data(),
                             sizeof(double) * static_cast<std::size_t>(steps)));
    // Forward sweep in order first, then the reversal visits the last step first.
    ASSERT_GE(problem.told().size(), static_cast<std::size_t>(2 * steps));
    for (Index n = 0; n < steps; ++n) EXPECT_EQ(problem.told()[static_cast<std::size_t>(n)], n);
    EXPECT_EQ(problem.told().back(), 0);
  }
}

TEST(StepwiseProblemDrivers, TheStochasticStepperTellsTheStepToo) {
  const Index steps = 13;
  const double h = 0.05;
  StepwiseControl problem(steps);
  const Eigen::VectorXd theta = controls(steps);
  const Eigen::VectorXd y0 = Eigen::VectorXd::Constant(1, 0.8);
  StochasticStepper stepper(problem, SdeScheme::euler_maruyama, StepControl::fixed(0.0, h, steps),
                            /*seed=*/3);
  StoreAllAdjoint store_all(stepper, Objective<EigenBackend>::terminal_squared_norm());
  const auto reference = store_all.run(y0, theta);
  double y_n = y0[0];
  for (Index n = 0; n < steps; ++n) y_n *= 1.0 + theta[n] * h;
  EXPECT_NEAR(reference.loss, 0.5 * y_n * y_n, 1e-14 * y_n * y_n);
  for (Index n = 0; n < steps; ++n)
    EXPECT_NEAR(reference.grad_theta[n], y_n * y_n * h / (1.0 + theta[n] * h), 1e-13 * y_n * y_n)
        << "control " << n;
  CheckpointedAdjoint driver(stepper, Objective<EigenBackend>::terminal_squared_norm());
  const auto r = driver.run(y0, theta, revolve_schedule(2));
  EXPECT_EQ(0, std::memcmp(r.grad_theta.data(), reference.grad_theta.data(),
                           sizeof(double) * static_cast<std::size_t>(steps)));
}

TEST(StepwiseProblemDrivers, TheBacksolveAdjointRefusesIt) {
  const Index steps = 5;
  StepwiseControl problem(steps);
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.1, steps));
  BacksolveAdjoint driver(stepper, Objective<EigenBackend>::terminal_squared_norm());
  try {
    driver.run(Eigen::VectorXd::Constant(1, 1.0), controls(steps));
    ADD_FAILURE() << "the backsolve adjoint ran a problem defined step by step";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("step by step"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Tableaux, StepwiseProblem,
                         ::testing::Values("euler", "heun", "rk4", "rk38", "dopri5"));

}  // namespace
}  // namespace rwd
