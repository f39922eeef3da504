// The diagonally implicit methods (rewind/integrators/implicit_tableau.hpp) and their engine
// (rewind/integrators/diagonally_implicit_runge_kutta.hpp), forward only: every shipped tableau
// validates and none satisfies one order more than it claims; bad tableaux and options are
// refused naming the rule; the observed order of convergence is the claimed one; the L-stable
// methods damp a very stiff mode in one step and the trapezoid rule does not; adaptive steps
// follow the tolerance; a Newton iteration that cannot converge stops a fixed-step run with the
// step and the time, and makes an adaptive run take smaller steps.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "rewind/integrators/diagonally_implicit_runge_kutta.hpp"
#include "rewind/integrators/implicit_tableau.hpp"
#include "support/test_problems.hpp"

namespace rwd {
namespace {

using V = Eigen::VectorXd;

// y0' = −2a t y0², y1' = y0 (tests/support/test_problems.hpp) with its Jacobian.
struct RationalDecayWithJacobian : testing::RationalDecay {
  void jacobian(double t, const Vector& y, const Vector& theta, Eigen::MatrixXd& J) const {
    J.setZero(2, 2);
    J(0, 0) = -4.0 * theta[0] * t * y[0];
    J(1, 0) = 1.0;
  }
};

// y' = λ y (λ = θ0, a real eigenvalue as stiff as one likes).
struct LinearDecay {
  using Backend = EigenBackend;
  using Vector = Backend::Vector;
  Index state_size() const { return 1; }
  Index parameter_size() const { return 1; }
  void rhs(double, const Vector& y, const Vector& theta, Vector& f) const {
    f[0] = theta[0] * y[0];
  }
  void vjp(double, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    out_y[0] = theta[0] * v[0];
    out_theta[0] = y[0] * v[0];
  }
  void jacobian(double, const Vector&, const Vector& theta, Eigen::MatrixXd& J) const {
    J.setConstant(1, 1, theta[0]);
  }
};

// y' = y² from y(0) = 1 blows up at t = 1: no Newton iteration converges for a step past it.
struct BlowUp {
  using Backend = EigenBackend;
  using Vector = Backend::Vector;
  Index state_size() const { return 1; }
  Index parameter_size() const { return 0; }
  void rhs(double, const Vector& y, const Vector&, Vector& f) const { f[0] = y[0] * y[0]; }
  void vjp(double, const Vector& y, const Vector&, const Vector& v, Vector& out_y, Vector&) const {
    out_y[0] = 2.0 * y[0] * v[0];
  }
  void jacobian(double, const Vector& y, const Vector&, Eigen::MatrixXd& J) const {
    J.setConstant(1, 1, 2.0 * y[0]);
  }
};

TEST(ImplicitTableau, EveryShippedMethodValidatesAtItsOrderAndNoHigher) {
  for (const std::string& name : ImplicitTableau::names()) {
    SCOPED_TRACE(name);
    const ImplicitTableau t = ImplicitTableau::by_name(name);
    EXPECT_EQ(t.name, name);
    EXPECT_NO_THROW(t.validate());
    // The claimed order is the highest: the next order's conditions fail.
    EXPECT_GT(order_condition_defect(t.as_butcher(), t.b, t.order + 1), 1e-6);
    if (t.has_embedded()) {
      EXPECT_GT(order_condition_defect(t.as_butcher(), t.b_embedded, t.embedded_order + 1), 1e-6);
    }
    EXPECT_TRUE(t.stiffly_accurate);
  }
  EXPECT_EQ(ImplicitTableau::by_name("crank_nicolson").name, "trapezoid");
  EXPECT_EQ(ImplicitTableau::esdirk43().stages, 6);
  EXPECT_EQ(ImplicitTableau::esdirk32().order, 3);
}

void expect_refused(const ImplicitTableau& t, const std::string& words) {
  try {
    t.validate();
    FAIL() << "accepted: " << words;
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(ImplicitTableau, RefusesBrokenTableauxNamingTheRule) {
  ImplicitTableau upper = ImplicitTableau::sdirk2();
  upper.a[1] = 0.1;  // a_01
  expect_refused(upper, "a_ij = 0 for j > i");
  ImplicitTableau negative = ImplicitTableau::backward_euler();
  negative.a[0] = -1.0;
  negative.c[0] = -1.0;
  expect_refused(negative, "must be >= 0");
  ImplicitTableau explicit_only = ImplicitTableau::trapezoid();
  explicit_only.a[3] = 0.0;
  explicit_only.a[2] = 1.0;
  expect_refused(explicit_only, "no stage is implicit");
  ImplicitTableau rows = ImplicitTableau::esdirk32();
  rows.c[2] += 1e-6;
  expect_refused(rows, "row-sum condition");
  ImplicitTableau over = ImplicitTableau::esdirk32();
  over.order = 4;
  expect_refused(over, "claim order 4");
  ImplicitTableau digit = ImplicitTableau::esdirk43();
  digit.b_embedded[2] += 1e-9;
  expect_refused(digit, "embedded weights claim order 3");
  // The implicit midpoint rule (order 2) is not stiffly accurate: a_11 = 1/2, b_1 = 1.
  ImplicitTableau midpoint{"midpoint", 1, {0.5}, {1.0}, {0.5}, {}, 2, 0, true};
  expect_refused(midpoint, "stiffly accurate");
  midpoint.stiffly_accurate = false;
  EXPECT_NO_THROW(midpoint.validate());
  try {
    ImplicitTableau::by_name("radau5");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("esdirk43"), std::string::npos) << e.what();
  }
}

TEST(ImplicitEngine, RefusesBadOptionsBeforeAnyWork) {
  RationalDecayWithJacobian problem;
  const auto fixed = StepControl::fixed(0.0, 0.1, 10);
  NewtonOptions zero;
  zero.rtol = 0.0;
  EXPECT_THROW(DiagonallyImplicitRungeKutta(problem, ImplicitTableau::sdirk2(), fixed, zero),
               InvalidArgument);
  NewtonOptions no_iterations;
  no_iterations.max_iterations = 0;
  EXPECT_THROW(
      DiagonallyImplicitRungeKutta(problem, ImplicitTableau::sdirk2(), fixed, no_iterations),
      InvalidArgument);
  try {
    DiagonallyImplicitRungeKutta(problem, ImplicitTableau::backward_euler(),
                                 StepControl::adaptive(0.0, 1.0, 1e-6, 1e-9));
    FAIL() << "adaptive steps without an error estimate";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("no embedded error estimate"), std::string::npos);
  }
  // Stop times go through the step control's validation: landed on when they increase inside
  // (t0, t_final], refused otherwise (tests/adjoint/implicit_stop_times_test.cpp: the landing).
  auto stops = StepControl::adaptive(0.0, 1.0, 1e-6, 1e-9);
  stops.stop_times = {0.5};
  const DiagonallyImplicitRungeKutta with_stops(problem, ImplicitTableau::sdirk2(), stops);
  EXPECT_TRUE(with_stops.lands_on(0.5));
  EXPECT_FALSE(with_stops.lands_on(0.25));
  stops.stop_times = {0.5, 0.5};
  EXPECT_THROW(DiagonallyImplicitRungeKutta(problem, ImplicitTableau::sdirk2(), stops),
               InvalidArgument);
}

double final_error(const ImplicitTableau& tableau, Index steps) {
  RationalDecayWithJacobian problem;
  const double T = 2.0, a = 1.5;
  NewtonOptions tight;
  tight.rtol = 1e-14;
  tight.atol = 1e-16;
  // The iteration matrix is the Jacobian at (t_n, y_n), here 0 in ∂f0/∂y0 at t = 0: the
  // simplified Newton iteration contracts by about h|∂f/∂y| per update, slowly at this tolerance.
  tight.max_iterations = 40;
  DiagonallyImplicitRungeKutta stepper(
      problem, tableau, StepControl::fixed(0.0, T / static_cast<double>(steps), steps), tight);
  V y(2), theta(1);
  y << 1.0, 0.0;
  theta << a;
  Carry carry = stepper.initial_carry(y, theta);
  while (!stepper.finished(carry)) stepper.step(y, carry, theta);
  EXPECT_DOUBLE_EQ(carry.t, T);
  return (y - testing::RationalDecay::exact(T, a)).norm();
}

TEST(ImplicitEngine, ObservedOrderIsTheClaimedOrder) {
  for (const std::string& name : ImplicitTableau::names()) {
    SCOPED_TRACE(name);
    const ImplicitTableau tableau = ImplicitTableau::by_name(name);
    std::vector<double> errors;
    for (Index steps : {20, 40, 80, 160}) errors.push_back(final_error(tableau, steps));
    const double slope = std::log2(errors[2] / errors[3]);
    EXPECT_NEAR(slope, tableau.order, 0.3)
        << errors[0] << " " << errors[1] << " " << errors[2] << " " << errors[3];
  }
}

TEST(ImplicitEngine, LStableMethodsDampAVeryStiffModeAndTheTrapezoidDoesNot) {
  LinearDecay problem;
  V theta(1);
  theta << -1e8;
  for (const std::string& name : ImplicitTableau::names()) {
    SCOPED_TRACE(name);
    DiagonallyImplicitRungeKutta stepper(problem, ImplicitTableau::by_name(name),
                                         StepControl::fixed(0.0, 1.0, 1));
    V y(1);
    y << 1.0;
    Carry carry = stepper.initial_carry(y, theta);
    stepper.step(y, carry, theta);
    if (name == "trapezoid")
      EXPECT_NEAR(y[0], -1.0, 1e-6);  // R(∞) = −1: the mode flips sign and persists
    else
      EXPECT_LT(std::abs(y[0]), 1e-6);
  }
}

TEST(ImplicitEngine, AdaptiveStepsFollowTheTolerance) {
  RationalDecayWithJacobian problem;
  V theta(1);
  theta << 1.5;
  for (const char* name : {"trapezoid", "sdirk2", "esdirk32", "esdirk43"}) {
    SCOPED_TRACE(name);
    std::vector<double> errors;
    std::vector<Index> steps;
    for (double rtol : {1e-4, 1e-7}) {
      DiagonallyImplicitRungeKutta stepper(problem, ImplicitTableau::by_name(name),
                                           StepControl::adaptive(0.0, 2.0, rtol, rtol * 1e-2));
      V y(2);
      y << 1.0, 0.0;
      Carry carry = stepper.initial_carry(y, theta);
      while (!stepper.finished(carry)) stepper.step(y, carry, theta);
      EXPECT_EQ(carry.t, 2.0);
      errors.push_back((y - testing::RationalDecay::exact(2.0, 1.5)).norm());
      steps.push_back(carry.step);
    }
    EXPECT_LT(errors[1], errors[0] / 30.0);
    EXPECT_GT(steps[1], steps[0]);
  }
}

TEST(ImplicitEngine, AProblemWithoutAJacobianRunsOnOneAssembledFromVjpsWithTheSameBits) {
  // RationalDecay's vjp rows are its Jacobian's exactly: the same iteration matrices, the same
  // steps, bit for bit.
  const testing::RationalDecay plain;
  const RationalDecayWithJacobian with_jacobian;
  V theta(1), y0(2);
  theta << 1.5;
  y0 << 1.0, 0.0;
  const auto control = StepControl::adaptive(0.0, 2.0, 1e-6, 1e-9);
  DiagonallyImplicitRungeKutta own(with_jacobian, ImplicitTableau::esdirk43(), control);
  DiagonallyImplicitRungeKutta assembled(plain, ImplicitTableau::esdirk43(), control);
  static_assert(DenseJacobianProblem<RationalDecayWithJacobian>);
  static_assert(!DenseJacobianProblem<testing::RationalDecay>);
  V a = y0, b = y0;
  Carry ca = own.initial_carry(a, theta), cb = assembled.initial_carry(b, theta);
  while (!own.finished(ca)) own.step(a, ca, theta);
  while (!assembled.finished(cb)) assembled.step(b, cb, theta);
  EXPECT_EQ(ca.step, cb.step);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), 2 * sizeof(double)), 0);
  EXPECT_EQ(own.counters().vjp_evaluations, 0);
  EXPECT_EQ(assembled.counters().vjp_evaluations,
            2 * assembled.implicit_counters().jacobian_evaluations);
}

TEST(ImplicitEngine, ANewtonIterationThatCannotConvergeNamesTheStepAndTime) {
  BlowUp problem;
  const V theta(0);
  // Steps of 0.3 from y = 1: the third step's stage equation Z = y + hγZ² has no real root.
  DiagonallyImplicitRungeKutta stepper(problem, ImplicitTableau::backward_euler(),
                                       StepControl::fixed(0.0, 0.3, 5));
  V y(1);
  y << 1.0;
  Carry carry = stepper.initial_carry(y, theta);
  try {
    while (!stepper.finished(carry)) stepper.step(y, carry, theta);
    FAIL() << "a run past the blow-up converged: y = " << y[0];
  } catch (const SolverError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("step "), std::string::npos) << message;
    EXPECT_NE(message.find("at t = "), std::string::npos) << message;
  }
  // Adaptive steps shrink instead (until the blow-up stops them for good).
  DiagonallyImplicitRungeKutta adaptive(problem, ImplicitTableau::sdirk2(),
                                        StepControl::adaptive(0.0, 0.9, 1e-6, 1e-9, 0.3));
  V z(1);
  z << 1.0;
  Carry c = adaptive.initial_carry(z, theta);
  while (!adaptive.finished(c)) adaptive.step(z, c, theta);
  EXPECT_NEAR(z[0], 10.0, 1e-2);  // y(0.9) = 1 / (1 − 0.9)
  EXPECT_GT(adaptive.counters().rejected_attempts, 0);
}

}  // namespace
}  // namespace rwd
