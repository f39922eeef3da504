// The Rosenbrock methods (rewind/integrators/rosenbrock_tableau.hpp) and their engine
// (rewind/integrators/rosenbrock.hpp), forward, and the second derivatives their adjoint needs:
// every shipped tableau validates and none satisfies one order more than it claims; the
// classical and transformed forms convert into each other; broken tableaux and unfit problems
// are refused naming the rule; the observed order of convergence is the claimed one; the
// L-stable methods damp a very stiff mode in one step and ROS3P (A-stable) keeps it bounded;
// adaptive steps follow the tolerance; rwd::auto_problem's derived jvp_vjp agrees with finite
// differences of its jvp and with Robertson's hand-written one.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "rewind/integrators/rosenbrock.hpp"
#include "rewind/integrators/rosenbrock_tableau.hpp"
#include "rewind/model.hpp"
#include "rewind/problems/robertson.hpp"

namespace rwd {
namespace {

using V = Eigen::VectorXd;

// y' = λ y (λ = θ0, a real eigenvalue as stiff as one likes), with its second derivatives:
// wᵀ J u = λ w u, whose gradient is 0 in y and w u in λ.
struct LinearDecay {
  using Backend = EigenBackend;
  using Vector = Backend::Vector;
  static constexpr bool autonomous = true;
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
  void jvp_vjp(double, const Vector&, const Vector&, const Vector& u, const Vector& w,
               Vector& out_y, Vector& out_theta) const {
    out_y[0] = 0.0;
    out_theta[0] = w[0] * u[0];
  }
};

// The same problem without second derivatives, and one that does not declare its autonomy.
struct DecayWithoutExtras {
  using Backend = EigenBackend;
  using Vector = Backend::Vector;
  Index state_size() const { return 1; }
  Index parameter_size() const { return 1; }
  void rhs(double t, const Vector& y, const Vector& theta, Vector& f) const {
    LinearDecay{}.rhs(t, y, theta, f);
  }
  void vjp(double t, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    LinearDecay{}.vjp(t, y, theta, v, out_y, out_theta);
  }
};
struct LinearDecayWithoutSecondDerivatives : DecayWithoutExtras {
  static constexpr bool autonomous = true;
};
struct LinearDecayOfUnsaidAutonomy : DecayWithoutExtras {
  void jvp_vjp(double t, const Vector& y, const Vector& theta, const Vector& u, const Vector& w,
               Vector& out_y, Vector& out_theta) const {
    LinearDecay{}.jvp_vjp(t, y, theta, u, w, out_y, out_theta);
  }
};
struct NonAutonomousDecay : LinearDecayOfUnsaidAutonomy {
  static constexpr bool autonomous = false;
};

// The Brusselator, a smooth nonlinear autonomous test problem (rhs templated: auto_problem
// derives every derivative, the second ones included).
struct Brusselator {
  static constexpr std::array<const char*, 2> state_names{"x", "y"};
  static constexpr std::array<const char*, 2> parameter_names{"a", "b"};
  static constexpr bool autonomous = true;
  template <class T>
  void rhs(double, const T* y, const T* p, T* f) const {
    const T xxy = y[0] * y[0] * y[1];
    f[0] = p[0] + xxy - (p[1] + 1.0) * y[0];
    f[1] = p[1] * y[0] - xxy;
  }
};

// A model with the mathematical functions and constants a model uses (exp, pow, sqrt, a branch
// and T(0.0)): the nested forward-mode scalar of jvp_vjp must take them all.
struct Arrhenius {
  static constexpr std::array<const char*, 3> state_names{"c", "T", "q"};
  static constexpr std::array<const char*, 2> parameter_names{"k", "E"};
  static constexpr bool autonomous = true;
  template <class T>
  void rhs(double, const T* y, const T* p, T* f) const {
    using std::exp;
    using std::pow;
    using std::sqrt;
    const T rate = p[0] * exp(-p[1] / y[1]) * pow(y[0], 1.5);
    f[0] = -rate;
    f[1] = 2.0 * rate - 0.1 * (y[1] - 1.0);
    f[2] = y[2] > 0.0 ? sqrt(y[2]) * y[0] : T(0.0);
  }
};

// Robertson's kinetics written once, generic in the scalar type.
struct TemplatedRobertson {
  static constexpr std::array<const char*, 3> state_names{"y1", "y2", "y3"};
  static constexpr std::array<const char*, 3> parameter_names{"p1", "p2", "p3"};
  static constexpr bool autonomous = true;
  template <class T>
  void rhs(double, const T* y, const T* p, T* f) const {
    f[0] = -p[0] * y[0] + p[1] * y[1] * y[2];
    f[2] = p[2] * y[1] * y[1];
    f[1] = -f[0] - f[2];
  }
};

TEST(RosenbrockTableau, EveryShippedMethodValidatesAtItsOrderAndNoHigher) {
  for (const std::string& name : RosenbrockTableau::names()) {
    SCOPED_TRACE(name);
    const RosenbrockTableau t = RosenbrockTableau::by_name(name);
    EXPECT_EQ(t.name, name);
    EXPECT_NO_THROW(t.validate());
    for (int p = 1; p <= t.order; ++p) EXPECT_LT(t.order_condition_defect(p), 1e-14);
    EXPECT_GT(t.order_condition_defect(t.order + 1), 1e-3);
    ASSERT_TRUE(t.has_embedded());
    EXPECT_GT(t.order_condition_defect(t.embedded_order + 1, true), 1e-3);
  }
  EXPECT_FALSE(RosenbrockTableau::ros3p().stiffly_accurate);
  EXPECT_TRUE(RosenbrockTableau::ros34pw2().stiffly_accurate);
  EXPECT_TRUE(RosenbrockTableau::rodas4().stiffly_accurate);
  EXPECT_EQ(RosenbrockTableau::rodas4().order, 4);
  EXPECT_TRUE(RosenbrockTableau::known("ros34pw2"));
  EXPECT_FALSE(RosenbrockTableau::known("rodas5"));
}

TEST(RosenbrockTableau, ClassicalAndTransformedFormsAreOneMethod) {
  // ROS34PW2 is published in the classical form: converting back gives the published numbers.
  const RosenbrockTableau t = RosenbrockTableau::ros34pw2();
  const RosenbrockTableau::Classical k = t.classical();
  EXPECT_NEAR(k.alpha[2 * 4 + 1], -1.1299064236484185e-01, 1e-15);
  EXPECT_NEAR(k.gamma[3 * 4 + 1], -1.2232505839045147e+00, 1e-15);
  EXPECT_NEAR(k.gamma[3 * 4 + 3], t.gamma, 1e-16);
  EXPECT_NEAR(k.b[2], 1.5452602553351020e+00, 1e-15);
  EXPECT_NEAR(k.b_embedded[0], 3.7810903145819369e-01, 1e-15);
  // Rodas4 is published in the transformed form; its classical b is the last row of β
  // (stiffly accurate) and the embedded b̂ the fifth.
  const RosenbrockTableau r = RosenbrockTableau::rodas4();
  const RosenbrockTableau::Classical rk = r.classical();
  for (int j = 0; j < 6; ++j) {
    const auto e = static_cast<std::size_t>(4 * 6 + j);
    EXPECT_NEAR(rk.b_embedded[static_cast<std::size_t>(j)], rk.alpha[e] + rk.gamma[e], 1e-13);
  }
}

void expect_refused(const RosenbrockTableau& t, const std::string& words) {
  try {
    t.validate();
    FAIL() << "accepted: " << words;
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(RosenbrockTableau, RefusesBrokenTableauxNamingTheRule) {
  RosenbrockTableau upper = RosenbrockTableau::ros3p();
  upper.a[1] = 0.1;  // a_01
  expect_refused(upper, "strictly lower triangular");
  RosenbrockTableau diagonal = RosenbrockTableau::ros3p();
  diagonal.c[4] = 0.1;  // c_11
  expect_refused(diagonal, "strictly lower triangular");
  RosenbrockTableau negative = RosenbrockTableau::ros3p();
  negative.gamma = -0.5;
  expect_refused(negative, "must be > 0");
  RosenbrockTableau node = RosenbrockTableau::ros34pw2();
  node.alpha[2] += 1e-6;
  expect_refused(node, "alpha_i = sum_j alpha_ij");
  RosenbrockTableau time_node = RosenbrockTableau::rodas4();
  time_node.gamma_sum[1] += 1e-6;
  expect_refused(time_node, "gamma_i = sum_j gamma_ij");
  RosenbrockTableau over = RosenbrockTableau::ros34pw2();
  over.order = 4;
  expect_refused(over, "claim order 4");
  RosenbrockTableau digit = RosenbrockTableau::rodas4();
  digit.m[2] += 1e-9;  // one digit of m_3
  expect_refused(digit, "weights claim order 4 but violate the order-1");
  RosenbrockTableau c_digit = RosenbrockTableau::rodas4();
  c_digit.c[3 * 6 + 1] += 1e-9;  // one digit of c_42 moves the classical γ_4 off its sum
  expect_refused(c_digit, "gamma_i = sum_j gamma_ij");
  RosenbrockTableau embedded = RosenbrockTableau::ros34pw2();
  embedded.m_embedded[1] += 1e-9;
  expect_refused(embedded, "embedded weights claim order 2");
  RosenbrockTableau sa = RosenbrockTableau::ros3p();
  sa.stiffly_accurate = true;
  expect_refused(sa, "declared stiffly accurate");
  RosenbrockTableau unsized = RosenbrockTableau::ros3p();
  unsized.m.pop_back();
  expect_refused(unsized, "expected 9, 9, 3, 3 and 3");
  try {
    RosenbrockTableau::by_name("rodas5");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("ros34pw2"), std::string::npos) << e.what();
  }
}

TEST(RosenbrockEngine, RefusesUnfitProblemsAndOptionsBeforeAnyWork) {
  const auto fixed = StepControl::fixed(0.0, 0.1, 10);
  try {
    LinearDecayWithoutSecondDerivatives problem;
    RosenbrockStepper(problem, RosenbrockTableau::rodas4(), fixed);
    FAIL() << "a problem without jvp_vjp";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("jvp_vjp"), std::string::npos) << e.what();
  }
  for (bool said : {false, true}) {
    try {
      if (said) {
        NonAutonomousDecay problem;
        RosenbrockStepper(problem, RosenbrockTableau::rodas4(), fixed);
      } else {
        LinearDecayOfUnsaidAutonomy problem;
        RosenbrockStepper(problem, RosenbrockTableau::rodas4(), fixed);
      }
      FAIL() << "a problem not declared autonomous";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("autonomous = true"), std::string::npos) << e.what();
    }
  }
  LinearDecay problem;
  RosenbrockTableau no_estimate = RosenbrockTableau::ros3p();
  no_estimate.m_embedded.clear();
  no_estimate.embedded_order = 0;
  EXPECT_THROW(RosenbrockStepper(problem, no_estimate, StepControl::adaptive(0.0, 1.0, 1e-6, 1e-9)),
               InvalidArgument);
  // Stop times go through the step control's validation: landed on when they increase inside
  // (t0, t_final], refused otherwise (tests/adjoint/implicit_stop_times_test.cpp: the landing).
  auto stops = StepControl::adaptive(0.0, 1.0, 1e-6, 1e-9);
  stops.stop_times = {0.5};
  const RosenbrockStepper with_stops(problem, RosenbrockTableau::rodas4(), stops);
  EXPECT_TRUE(with_stops.lands_on(0.5));
  EXPECT_FALSE(with_stops.lands_on(0.25));
  stops.stop_times = {0.5, 1.5};
  EXPECT_THROW(RosenbrockStepper(problem, RosenbrockTableau::rodas4(), stops), InvalidArgument);
  // Kept stages: s + 1 vectors with fixed steps, s + 2 with adaptive ones (the accepted step
  // size last, which the carry does not hold), from which the reverse gives adjoint_step's bits.
  RosenbrockStepper adaptive(problem, RosenbrockTableau::rodas4(),
                             StepControl::adaptive(0.0, 1.0, 1e-6, 1e-9));
  V y = V::Constant(1, 1.0), theta = V::Constant(1, -1.0);
  Carry carry = adaptive.initial_carry(y, theta);
  EXPECT_EQ(adaptive.stage_count(), 8);
  std::vector<V> stages(7, V::Zero(1));
  EXPECT_THROW(adaptive.step_keeping_stages(y, carry, theta, stages), InvalidArgument);
  stages.assign(8, V::Zero(1));
  const V y_start = y;
  const Carry carry_start = carry;
  adaptive.step_keeping_stages(y, carry, theta, stages);
  EXPECT_EQ(stages.back()[0], carry.t - carry_start.t);  // t_0 = 0: the step's size exactly
  V lambda_kept = V::Constant(1, 1.0), mu_kept = V::Zero(1);
  V lambda_rerun = lambda_kept, mu_rerun = mu_kept;
  adaptive.adjoint_step_from_stages(stages, carry_start, theta, lambda_kept, mu_kept);
  adaptive.adjoint_step(y_start, carry_start, theta, lambda_rerun, mu_rerun);
  EXPECT_EQ(lambda_kept[0], lambda_rerun[0]);
  EXPECT_EQ(mu_kept[0], mu_rerun[0]);
  RosenbrockStepper stepper(problem, RosenbrockTableau::rodas4(), fixed);
  carry = stepper.initial_carry(y, theta);
  std::vector<V> too_few(6, V::Zero(1));
  EXPECT_THROW(stepper.step_keeping_stages(y, carry, theta, too_few), InvalidArgument);
  EXPECT_EQ(stepper.stage_count(), 7);
}

// y(1) of the Brusselator from (1.5, 3) with θ = (1, 3) in `steps` equal steps.
V brusselator_at_one(const RosenbrockTableau& t, Index steps) {
  const auto problem = auto_problem(Brusselator{});
  V y(2), theta(2);
  y << 1.5, 3.0;
  theta << 1.0, 3.0;
  RosenbrockStepper stepper(problem, t,
                            StepControl::fixed(0.0, 1.0 / static_cast<double>(steps), steps));
  Carry carry = stepper.initial_carry(y, theta);
  while (!stepper.finished(carry)) stepper.step(y, carry, theta);
  return y;
}

TEST(RosenbrockEngine, ConvergesAtTheClaimedOrder) {
  const V reference = brusselator_at_one(RosenbrockTableau::rodas4(), 4096);
  for (const std::string& name : RosenbrockTableau::names()) {
    SCOPED_TRACE(name);
    const RosenbrockTableau t = RosenbrockTableau::by_name(name);
    const double coarse = (brusselator_at_one(t, 40) - reference).norm();
    const double fine = (brusselator_at_one(t, 80) - reference).norm();
    const double observed = std::log2(coarse / fine);
    EXPECT_NEAR(observed, t.order, 0.3) << coarse << " → " << fine;
  }
}

TEST(RosenbrockEngine, LStableMethodsDampAVeryStiffModeInOneStep) {
  LinearDecay problem;
  const V theta = V::Constant(1, -1e8);
  for (const std::string& name : RosenbrockTableau::names()) {
    SCOPED_TRACE(name);
    const RosenbrockTableau t = RosenbrockTableau::by_name(name);
    RosenbrockStepper stepper(problem, t, StepControl::fixed(0.0, 1.0, 10));
    V y = V::Constant(1, 1.0);
    Carry carry = stepper.initial_carry(y, theta);
    stepper.step(y, carry, theta);
    const double one_step = std::abs(y[0]);
    while (!stepper.finished(carry)) stepper.step(y, carry, theta);
    if (t.stiffly_accurate) {
      EXPECT_LT(one_step, 1e-7);  // R(z) = O(1/z) with z = −1e8
    } else {
      // A-stable (|R| ≤ 1) but R(∞) ≈ −0.73: the mode survives, bounded, alternating in sign.
      EXPECT_GT(one_step, 0.5);
      EXPECT_LT(one_step, 1.0);
    }
    EXPECT_LE(std::abs(y[0]), 1.0);
  }
}

TEST(RosenbrockEngine, AdaptiveStepsFollowTheTolerance) {
  const auto problem = auto_problem(Brusselator{});
  V y0(2), theta(2);
  y0 << 1.5, 3.0;
  theta << 1.0, 3.0;
  const V reference = brusselator_at_one(RosenbrockTableau::rodas4(), 4096);
  for (const std::string& name : RosenbrockTableau::names()) {
    SCOPED_TRACE(name);
    double previous_error = 1.0;
    Index previous_steps = 0;
    for (double tol : {1e-4, 1e-6, 1e-8}) {
      RosenbrockStepper stepper(problem, RosenbrockTableau::by_name(name),
                                StepControl::adaptive(0.0, 1.0, tol, tol));
      V y = y0;
      Carry carry = stepper.initial_carry(y, theta);
      while (!stepper.finished(carry)) stepper.step(y, carry, theta);
      EXPECT_EQ(carry.t, 1.0);
      EXPECT_TRUE(stepper.lands_on(1.0));
      const double error = (y - reference).norm();
      EXPECT_LT(error, 200.0 * tol);
      EXPECT_LT(error, previous_error);
      EXPECT_GT(carry.step, previous_steps);
      previous_error = error;
      previous_steps = carry.step;
    }
  }
}

// gradient of wᵀ (∂f/∂y) u in (y, θ) by central differences of the problem's jvp.
template <class P>
std::pair<V, V> second_derivatives_by_differences(const P& problem, const V& y, const V& theta,
                                                  const V& u, const V& w) {
  auto form = [&](const V& yy, const V& th) {
    V out(y.size());
    problem.jvp(0.0, yy, th, u, out);
    return w.dot(out);
  };
  V dy(y.size()), dtheta(theta.size());
  for (Index k = 0; k < y.size(); ++k) {
    const double d = 1e-6 * std::max(1.0, std::abs(y[k]));
    V plus = y, minus = y;
    plus[k] += d;
    minus[k] -= d;
    dy[k] = (form(plus, theta) - form(minus, theta)) / (2.0 * d);
  }
  for (Index k = 0; k < theta.size(); ++k) {
    const double d = 1e-6 * std::max(1.0, std::abs(theta[k]));
    V plus = theta, minus = theta;
    plus[k] += d;
    minus[k] -= d;
    dtheta[k] = (form(y, plus) - form(y, minus)) / (2.0 * d);
  }
  return {dy, dtheta};
}

TEST(RosenbrockSecondDerivatives, DerivedOnesAgreeWithDifferencesOfTheJvp) {
  const auto problem = auto_problem(Brusselator{});
  V y(2), theta(2), u(2), w(2);
  y << 1.3, 2.1;
  theta << 1.0, 3.0;
  u << 0.7, -1.9;
  w << -0.4, 1.1;
  V out_y(2), out_theta(2);
  problem.jvp_vjp(0.0, y, theta, u, w, out_y, out_theta);
  const auto [dy, dtheta] = second_derivatives_by_differences(problem, y, theta, u, w);
  EXPECT_LT((out_y - dy).norm(), 1e-8 * dy.norm());
  EXPECT_LT((out_theta - dtheta).norm(), 1e-8 * dtheta.norm());
  // The Brusselator's wᵀ J u in closed form: J = [[2xy − b − 1, x²], [b − 2xy, −x²]].
  const double x = y[0], yy = y[1], d = w[0] - w[1];
  EXPECT_NEAR(out_y[0], d * (2.0 * yy * u[0] + 2.0 * x * u[1]), 1e-14);
  EXPECT_NEAR(out_y[1], d * 2.0 * x * u[0], 1e-14);
  EXPECT_NEAR(out_theta[0], 0.0, 1e-15);
  EXPECT_NEAR(out_theta[1], (w[1] - w[0]) * u[0], 1e-15);

  const auto arrhenius = auto_problem(Arrhenius{});
  V c(3), k(2), u3(3), w3(3), out_c(3), out_k(2);
  c << 0.8, 1.7, 0.3;
  k << 2.0, 1.2;
  u3 << 0.5, -0.3, 0.9;
  w3 << 1.0, 0.4, -0.7;
  arrhenius.jvp_vjp(0.0, c, k, u3, w3, out_c, out_k);
  const auto [dc, dk] = second_derivatives_by_differences(arrhenius, c, k, u3, w3);
  EXPECT_LT((out_c - dc).norm(), 1e-8 * dc.norm());
  EXPECT_LT((out_k - dk).norm(), 1e-8 * dk.norm());
}

TEST(RosenbrockSecondDerivatives, RobertsonsHandWrittenOnesAreTheDerivedOnes) {
  const Robertson hand;
  const auto derived = auto_problem(TemplatedRobertson{});
  V y(3), u(3), w(3);
  y << 0.7, 3e-5, 0.29;
  u << 0.3, -2e-5, 0.8;
  w << 1.5, -0.25, 0.75;
  const V theta = hand.default_parameters();
  V hand_y(3), hand_theta(3), derived_y(3), derived_theta(3);
  hand.jvp_vjp(0.0, y, theta, u, w, hand_y, hand_theta);
  derived.jvp_vjp(0.0, y, theta, u, w, derived_y, derived_theta);
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(hand_y[k], derived_y[k], 1e-13 * std::max(1.0, std::abs(derived_y[k])));
    EXPECT_NEAR(hand_theta[k], derived_theta[k], 1e-13 * std::max(1.0, std::abs(derived_theta[k])));
  }
  const auto [dy, dtheta] = second_derivatives_by_differences(derived, y, theta, u, w);
  EXPECT_LT((derived_y - dy).norm(), 1e-7 * dy.norm());
  EXPECT_LT((derived_theta - dtheta).norm(), 1e-7 * dtheta.norm());
  // With the integral component q' = y3 the fourth row of J is constant: nothing changes.
  const Robertson with_integral(true);
  V y4(4), u4(4), w4(4), out_y(4), out_theta(3);
  y4 << y, 0.1;
  u4 << u, -0.6;
  w4 << w, 2.0;
  with_integral.jvp_vjp(0.0, y4, theta, u4, w4, out_y, out_theta);
  EXPECT_EQ(out_y.head(3), hand_y);
  EXPECT_EQ(out_y[3], 0.0);
  EXPECT_EQ(out_theta, hand_theta);
}

}  // namespace
}  // namespace rwd
