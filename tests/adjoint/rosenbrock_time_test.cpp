// The Rosenbrock methods on a problem whose f depends on t (rewind/integrators/rosenbrock.hpp:
// the stages' γ_i h ∂f/∂t term and its adjoint), with ∂f/∂t and its second derivatives derived
// for a templated model whose rhs takes t as its scalar type (rwd::AutoProblem::time_derivative,
// time_derivative_vjp): the derivatives against central differences; every method's steps and
// gradient are those of the same method on the system made autonomous by t' = 1 (to round-off);
// the gradient agrees with finite differences of the same map; revolve, uniform and stage-aware
// schedules give the store-all bits (revolve and uniform with adaptive steps too); the time term
// matters (leaving it out costs the method its order); and a non-autonomous model whose rhs takes t
// as a double is refused, naming what to write.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Dense>

#include "problems/models/forced_relaxation.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/rosenbrock.hpp"
#include "rewind/model.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/error_message.hpp"

namespace rwd {
namespace {

using V = Eigen::VectorXd;

bool same_bits(const V& a, const V& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(double)) == 0;
}

using testing::ForcedRelaxation;

// The same system made autonomous: the clock τ is a third state, τ' = 1.
struct ForcedRelaxationWithClock {
  static constexpr std::array<const char*, 3> state_names{"x", "z", "tau"};
  static constexpr std::array<const char*, 3> parameter_names{"lambda", "omega", "k"};
  static constexpr bool autonomous = true;

  template <class T>
  void rhs(double /*t*/, const T* y, const T* p, T* f) const {
    ForcedRelaxation{}.rhs(y[2], y, p, f);
    f[2] = 1.0;
  }
};

// The same f, but rhs takes t as a double: ∂f/∂t cannot be derived.
struct ForcedRelaxationDoubleTime {
  static constexpr std::array<const char*, 2> state_names{"x", "z"};
  static constexpr std::array<const char*, 3> parameter_names{"lambda", "omega", "k"};

  template <class T>
  void rhs(double t, const T* y, const T* p, T* f) const {
    using std::cos;
    using std::sin;
    f[0] = p[0] * (y[0] - sin(p[1] * t)) + p[1] * cos(p[1] * t);
    f[1] = -p[2] * y[1] + y[0] * y[0] * sin(p[1] * t);
  }
};

const V kTheta = (V(3) << -200.0, 3.0, 0.8).finished();
const V kY0 = (V(2) << 0.0, 1.0).finished();
constexpr double kT0 = 0.3;

V with_clock(const V& y, double t) {
  V out(3);
  out << y[0], y[1], t;
  return out;
}

TEST(RosenbrockTime, DerivedTimeDerivativesAgreeWithCentralDifferences) {
  const auto problem = auto_problem(ForcedRelaxation{});
  static_assert(decltype(problem)::kTimeDifferentiable);
  static_assert(!AutoProblem<ForcedRelaxationDoubleTime>::kTimeDifferentiable);
  const V y = (V(2) << 0.4, 1.3).finished(), w = (V(2) << 0.7, -1.1).finished();
  const double t = 0.9;
  V rate(2), f_plus(2), f_minus(2);
  problem.time_derivative(t, y, kTheta, rate);
  const double d = 1e-5;
  problem.rhs(t + d, y, kTheta, f_plus);
  problem.rhs(t - d, y, kTheta, f_minus);
  const V fd = (f_plus - f_minus) / (2.0 * d);
  for (int i = 0; i < 2; ++i) EXPECT_NEAR(rate[i], fd[i], 1e-8 * std::abs(fd[i])) << i;
  EXPECT_NEAR(problem.vjp_time(t, y, kTheta, w), w.dot(rate), 1e-15 * std::abs(w.dot(rate)));

  // ∇ [wᵀ ∂f/∂t] against differences of wᵀ time_derivative.
  V out_y(2), out_theta(3);
  problem.time_derivative_vjp(t, y, kTheta, w, out_y, out_theta);
  auto weighted_rate = [&](const V& at_y, const V& at_theta) {
    V r(2);
    problem.time_derivative(t, at_y, at_theta, r);
    return w.dot(r);
  };
  for (int j = 0; j < 2; ++j) {
    V plus = y, minus = y;
    plus[j] += d;
    minus[j] -= d;
    const double expected = (weighted_rate(plus, kTheta) - weighted_rate(minus, kTheta)) / (2 * d);
    EXPECT_NEAR(out_y[j], expected, 1e-7 * std::abs(expected) + 1e-9) << "y" << j;
  }
  for (int j = 0; j < 3; ++j) {
    V plus = kTheta, minus = kTheta;
    const double dj = d * std::abs(kTheta[j]);
    plus[j] += dj;
    minus[j] -= dj;
    const double expected = (weighted_rate(y, plus) - weighted_rate(y, minus)) / (2 * dj);
    EXPECT_NEAR(out_theta[j], expected, 1e-7 * std::abs(expected) + 1e-9) << "theta" << j;
  }
}

// Every method, fixed steps: the non-autonomous run and the run of the system with a clock take
// the same steps — y_N, dJ/dy0 (x, z) and dJ/dθ agree to round-off.
TEST(RosenbrockTime, IsTheMethodOnTheSystemMadeAutonomous) {
  const auto problem = auto_problem(ForcedRelaxation{});
  const auto clocked = auto_problem(ForcedRelaxationWithClock{});
  const StepControl control = StepControl::fixed(kT0, 0.02, 60);
  for (const std::string& method : RosenbrockTableau::names()) {
    SCOPED_TRACE(method);
    RosenbrockStepper stepper(problem, RosenbrockTableau::by_name(method), control);
    RosenbrockStepper clocked_stepper(clocked, RosenbrockTableau::by_name(method), control);
    StoreAllAdjoint driver(stepper, Objective<EigenBackend>::terminal_squared_norm());
    StoreAllAdjoint clocked_driver(clocked_stepper,
                                   Objective<EigenBackend>::terminal_squared_norm());
    const auto r = driver.run(kY0, kTheta);
    const auto c = clocked_driver.run(with_clock(kY0, kT0), kTheta);
    EXPECT_NEAR(c.y_final[2], kT0 + 60 * 0.02, 1e-13);
    for (int i = 0; i < 2; ++i) {
      EXPECT_NEAR(r.y_final[i], c.y_final[i], 1e-12 * std::abs(c.y_final[i])) << "y" << i;
      EXPECT_NEAR(r.grad_y0[i], c.grad_y0[i], 1e-11 * std::abs(c.grad_y0[i])) << "dJ/dy0_" << i;
    }
    for (int j = 0; j < 3; ++j)
      EXPECT_NEAR(r.grad_theta[j], c.grad_theta[j], 1e-11 * std::abs(c.grad_theta[j])) << j;
    // The clock's τ² in the clocked J adds nothing to dJ/dθ: checked by the agreement above.
    EXPECT_EQ(stepper.rosenbrock_counters().time_derivative_evaluations, 3 * 60)
        << "one ∂f/∂t per step forward, one per step the store-all reverse re-runs, and one "
           "time_derivative_vjp per reversed step";
  }
}

// Without the time term a Rosenbrock step is not the method: rodas4's error at t = 1.5 must fall
// as h⁴ (ratio ~16 per halving) only with it. x's exact solution is sin(ωt).
TEST(RosenbrockTime, KeepsTheMethodsOrder) {
  const auto problem = auto_problem(ForcedRelaxation{});
  V theta = kTheta;
  theta[0] = -5.0;  // mildly stiff: the classical order shows
  auto error_at = [&](Index steps) {
    RosenbrockStepper stepper(problem, RosenbrockTableau::rodas4(),
                              StepControl::fixed(0.0, 1.5 / static_cast<double>(steps), steps));
    V y = kY0;
    Carry carry = stepper.initial_carry(y, theta);
    while (!stepper.finished(carry)) stepper.step(y, carry, theta);
    return std::abs(y[0] - std::sin(theta[1] * 1.5));
  };
  const double coarse = error_at(20), fine = error_at(40);
  EXPECT_GT(coarse / fine, 12.0) << coarse << " then " << fine;
  EXPECT_LT(fine, 1e-6);
}

TEST(RosenbrockTime, GradientAgreesWithFiniteDifferencesOfTheSameMap) {
  const auto problem = auto_problem(ForcedRelaxation{});
  for (const std::string& method : RosenbrockTableau::names()) {
    SCOPED_TRACE(method);
    RosenbrockStepper stepper(problem, RosenbrockTableau::by_name(method),
                              StepControl::fixed(kT0, 0.025, 40));
    StoreAllAdjoint driver(stepper, Objective<EigenBackend>::terminal_squared_norm());
    const auto result = driver.run(kY0, kTheta);
    auto derivative = [](const auto& loss) {
      return (-loss(2.0) + 8.0 * loss(1.0) - 8.0 * loss(-1.0) + loss(-2.0)) / 12.0;
    };
    for (int j = 0; j < 3; ++j) {
      const double d = 1e-4 * std::abs(kTheta[j]);
      const double fd = derivative([&](double k) {
                          V shifted = kTheta;
                          shifted[j] += k * d;
                          return driver.run(kY0, shifted).loss;
                        }) /
                        d;
      EXPECT_NEAR(result.grad_theta[j], fd, 1e-8 * std::abs(fd) + 1e-14) << "theta" << j;
    }
    for (int j = 0; j < 2; ++j) {
      const double d = 1e-4;
      const double fd = derivative([&](double k) {
                          V shifted = kY0;
                          shifted[j] += k * d;
                          return driver.run(shifted, kTheta).loss;
                        }) /
                        d;
      EXPECT_NEAR(result.grad_y0[j], fd, 1e-8 * std::abs(fd) + 1e-14) << "y0_" << j;
    }
  }
}

TEST(RosenbrockTime, EveryScheduleAndStoreGivesTheStoreAllBits) {
  const auto problem = auto_problem(ForcedRelaxation{});
  const auto objective = Objective<EigenBackend>::terminal_squared_norm();
  for (const StepControl& control :
       {StepControl::fixed(kT0, 0.02, 50), StepControl::adaptive(kT0, 2.0, 1e-6, 1e-9)}) {
    SCOPED_TRACE(control.is_adaptive() ? "adaptive" : "fixed");
    RosenbrockStepper stepper(problem, RosenbrockTableau::rodas4(), control);
    const int kept = stepper.stage_count();
    StoreAllAdjoint reference_driver(stepper, objective);
    const auto reference = reference_driver.run(kY0, kTheta);
    EXPECT_GT(reference.summary.steps, 10);
    std::vector<std::pair<std::string, Planner>> planners{{"revolve c=3", revolve_schedule(3)},
                                                          {"uniform k=4", uniform_schedule(4)}};
    if (!control.is_adaptive()) {  // stage values are kept for fixed steps
      planners.emplace_back("stage-aware 20 units", stage_aware_schedule(20, kept));
      planners.emplace_back("store-all stages", store_all_stages_schedule(kept));
    }
    for (const auto& [name, planner] : planners) {
      SCOPED_TRACE(name);
      CheckpointOptions options;
      options.drift_policy = DriftPolicy::fail;
      CheckpointedAdjoint driver(stepper, objective, options);
      const auto r = driver.run(kY0, kTheta, planner);
      EXPECT_TRUE(same_bits(r.grad_y0, reference.grad_y0));
      EXPECT_TRUE(same_bits(r.grad_theta, reference.grad_theta));
      EXPECT_TRUE(same_bits(r.y_final, reference.y_final));
      EXPECT_TRUE(r.drift.bitwise_identical());
    }
  }
}

TEST(RosenbrockTime, RefusesANonAutonomousModelWhoseRhsTakesTimeAsADouble) {
  const auto problem = auto_problem(ForcedRelaxationDoubleTime{});
  const std::string message = testing::error_message<InvalidArgument>([&] {
    RosenbrockStepper stepper(problem, RosenbrockTableau::rodas4(),
                              StepControl::fixed(0.0, 0.01, 10));
  });
  EXPECT_NE(message.find("needs df/dt"), std::string::npos) << message;
  EXPECT_NE(message.find("template <class T> void rhs(T t"), std::string::npos) << message;
}

}  // namespace
}  // namespace rwd
