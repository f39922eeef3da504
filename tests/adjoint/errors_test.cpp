// Nothing silent: bad input is refused before any work with a message naming the value and the
// rule, and a NaN/Inf stops the run naming the step and the time.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/parameter_gradient_watch.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "support/error_message.hpp"

namespace rwd {
namespace {

using B = EigenBackend;

// y' = θ y, counting right-hand side calls so tests can prove that no work was done.
struct CountingGrowth {
  using Backend = B;
  using Vector = B::Vector;
  mutable Index rhs_calls = 0;
  Index state_size() const { return 1; }
  Index parameter_size() const { return 1; }
  void rhs(double, const Vector& y, const Vector& th, Vector& f) const {
    ++rhs_calls;
    f[0] = th[0] * y[0];
  }
  void vjp(double, const Vector& y, const Vector& th, const Vector& v, Vector& oy,
           Vector& ot) const {
    oy[0] = th[0] * v[0];
    ot[0] = y[0] * v[0];
  }
};

// The message of the E that `f` throws (a test failure if it throws nothing or something else).
template <class E, class F>
std::string message_of(F&& f) {
  return testing::error_message<E>(std::forward<F>(f));
}

B::Vector vec(std::initializer_list<double> v) {
  B::Vector x(static_cast<Eigen::Index>(v.size()));
  Index i = 0;
  for (double e : v) x[i++] = e;
  return x;
}

TEST(Errors, OverflowStopsTheRunNamingStepAndTime) {
  // Explicit Euler on y' = 1000 y with dt = 1: y_n = 1001^n overflows first at n = 103.
  CountingGrowth problem;
  ExplicitRungeKutta stepper(problem, ButcherTableau::euler(), StepControl::fixed(0.0, 1.0, 200));
  StoreAllAdjoint driver(stepper, Objective<B>::terminal_squared_norm());
  const std::string msg =
      message_of<NumericalError>([&] { driver.run(vec({1.0}), vec({1000.0})); });
  EXPECT_NE(msg.find("at step 103, t = 103"), std::string::npos) << msg;
}

// y' = −y with p parameters that do not enter the field — except that the parameter part of the
// VJP is +∞ at t = bad_t: a gradient that overflows in θ alone while λ stays finite.
struct ParameterOverflow {
  using Backend = B;
  using Vector = B::Vector;
  Index p = 1;
  double bad_t = 0.0;
  Index state_size() const { return 1; }
  Index parameter_size() const { return p; }
  void rhs(double, const Vector& y, const Vector&, Vector& f) const { f[0] = -y[0]; }
  void vjp(double t, const Vector&, const Vector&, const Vector& v, Vector& oy, Vector& ot) const {
    oy[0] = -v[0];
    ot.setZero();
    if (t == bad_t) ot[p - 1] = std::numeric_limits<double>::infinity();
  }
};

// The message of a run of 40 Euler steps of dt = 1 whose step at t = bad_t overflows in θ, by
// store-all and by revolve(5).
std::pair<std::string, std::string> overflow_messages(Index p, double bad_t) {
  ParameterOverflow problem{p, bad_t};
  ExplicitRungeKutta stepper(problem, ButcherTableau::euler(), StepControl::fixed(0.0, 1.0, 40));
  const B::Vector y0 = vec({1.0}), theta = B::Vector::Zero(p);
  StoreAllAdjoint store_all(stepper, Objective<B>::terminal_squared_norm());
  CheckpointedAdjoint checkpointed(stepper, Objective<B>::terminal_squared_norm());
  return {message_of<NumericalError>([&] { store_all.run(y0, theta); }),
          message_of<NumericalError>([&] { checkpointed.run(y0, theta, revolve_schedule(5)); })};
}

TEST(Errors, NonFiniteParameterGradientNamesItsStep) {
  // |μ| = |λ|: checked after every step.
  for (const std::string& msg :
       {overflow_messages(1, 17.0).first, overflow_messages(1, 17.0).second})
    EXPECT_NE(
        msg.find("parameter gradient became non-finite (NaN or Inf) while reversing step 17 "),
        std::string::npos)
        << msg;
}

TEST(Errors, NonFiniteLongParameterGradientNamesTheStepsSinceItsLastCheck) {
  // |μ| = 64 |λ|: checked every ⌈64 / 16⌉ = 4 steps — after reversing 36, 32, …, 16, …, 0 — and
  // never missed, the last steps included.
  for (const std::string& msg :
       {overflow_messages(64, 17.0).first, overflow_messages(64, 17.0).second})
    EXPECT_NE(msg.find("while reversing steps 19 down to 16 "), std::string::npos) << msg;
  for (const std::string& msg :
       {overflow_messages(64, 0.0).first, overflow_messages(64, 0.0).second})
    EXPECT_NE(msg.find("while reversing steps 3 down to 0 "), std::string::npos) << msg;
  // The cadence: ⌈|μ| / (16 |λ|)⌉ steps, every step up to |μ| = 16 |λ|.
  ParameterOverflow problem{40, 0.0};
  ExplicitRungeKutta stepper(problem, ButcherTableau::euler(), StepControl::fixed(0.0, 1.0, 40));
  EXPECT_EQ(
      (detail::ParameterGradientWatch<B, decltype(stepper)>(stepper, 1, 40, true).check_every()),
      3);
  EXPECT_EQ(
      (detail::ParameterGradientWatch<B, decltype(stepper)>(stepper, 1, 16, true).check_every()),
      1);
}

// A stepper that only counts what the watch asks of it.
struct DropCountingStepper {
  int drops = 0;
  void drop_held_parameter_terms() { ++drops; }
};

TEST(Errors, AnAbandonedSweepDropsTheTermsItsProblemHeldBack) {
  DropCountingStepper stepper;
  try {
    detail::ParameterGradientWatch<B, DropCountingStepper> watch(stepper, 1, 1, true);
    watch.after_reverse(vec({1.0}), vec({std::numeric_limits<double>::quiet_NaN()}), Carry{},
                        false);
    ADD_FAILURE() << "a NaN in mu was not refused";
  } catch (const NumericalError&) {
  }
  EXPECT_EQ(stepper.drops, 1);
}

TEST(Errors, ChaoticOverflowIsAClearError) {
  // Lorenz-96 with a step far beyond stability blows up; the error names where.
  Lorenz96<> problem(40);
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.5, 2000));
  StoreAllAdjoint driver(stepper, Objective<B>::terminal_squared_norm());
  const std::string msg = message_of<NumericalError>(
      [&] { driver.run(problem.default_initial_state(), problem.default_parameters()); });
  EXPECT_NE(msg.find("non-finite (NaN or Inf) at step"), std::string::npos) << msg;
}

TEST(Errors, NonFiniteInputsRefusedBeforeWork) {
  CountingGrowth problem;
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.1, 10));
  StoreAllAdjoint driver(stepper, Objective<B>::terminal_squared_norm());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(message_of<InvalidArgument>([&] {
              driver.run(vec({nan}), vec({1.0}));
            }).find("y0 contains NaN"),
            std::string::npos);
  EXPECT_NE(message_of<InvalidArgument>([&] {
              driver.run(vec({1.0}), vec({INFINITY}));
            }).find("theta contains NaN or Inf"),
            std::string::npos);
  EXPECT_EQ(problem.rhs_calls, 0);
}

TEST(Errors, WrongSizesRefusedBeforeWork) {
  CountingGrowth problem;
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.1, 10));
  StoreAllAdjoint driver(stepper, Objective<B>::terminal_squared_norm());
  EXPECT_NE(message_of<InvalidArgument>([&] {
              driver.run(vec({1.0, 2.0}), vec({1.0}));
            }).find("initial state y0 has 2 components; expected 1"),
            std::string::npos);
  EXPECT_NE(message_of<InvalidArgument>([&] {
              driver.run(vec({1.0}), vec({}));
            }).find("parameter vector theta has 0 components; expected 1"),
            std::string::npos);
  EXPECT_EQ(problem.rhs_calls, 0);
}

TEST(Errors, StepControlRefusals) {
  CountingGrowth problem;
  auto refuse = [&](StepControl c, const ButcherTableau& t, const char* expected) {
    const std::string msg =
        message_of<InvalidArgument>([&] { ExplicitRungeKutta stepper(problem, t, c); });
    EXPECT_NE(msg.find(expected), std::string::npos) << msg;
  };
  const auto rk4 = ButcherTableau::rk4(), dp5 = ButcherTableau::dormand_prince();
  refuse(StepControl::fixed(0.0, 0.0, 10), rk4, "dt = 0 must be a finite step size > 0");
  refuse(StepControl::fixed(0.0, -0.1, 10), rk4, "dt = -0.1");
  refuse(StepControl::fixed(0.0, std::numeric_limits<double>::infinity(), 10), rk4, "dt = inf");
  refuse(StepControl::fixed(0.0, 0.1, 0), rk4, "steps = 0 must be >= 1");
  refuse(StepControl::adaptive(0.0, 1.0, 0.0, 1e-9), dp5, "rtol = 0 must be finite and > 0");
  refuse(StepControl::adaptive(0.0, 1.0, 1e-20, 1e-9), dp5, "below double-precision round-off");
  refuse(StepControl::adaptive(0.0, 1.0, 1e-6, -1.0), dp5, "atol = -1 must be finite and > 0");
  refuse(StepControl::adaptive(1.0, 1.0, 1e-6, 1e-9), dp5,
         "t_final = 1 must be finite and > t0 = 1");
  refuse(StepControl::adaptive(0.0, 1.0, 1e-6, 1e-9), rk4, "no embedded error estimate");
  StepControl bad_safety = StepControl::adaptive(0.0, 1.0, 1e-6, 1e-9);
  bad_safety.safety = 1.5;
  refuse(bad_safety, dp5, "safety = 1.5 must be in (0, 1]");
  EXPECT_EQ(problem.rhs_calls, 0);
}

TEST(Errors, ObservationBeyondTheRunIsRefused) {
  CountingGrowth problem;
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.1, 10));
  Objective<B> objective({}, {5, 11}, [](Index, double, const B::Vector& y, B::Vector& g) {
    g = y;
    return 0.5 * y.squaredNorm();
  });
  StoreAllAdjoint driver(stepper, objective);
  EXPECT_NE(message_of<InvalidArgument>([&] {
              driver.run(vec({1.0}), vec({1.0}));
            }).find("observes step 11 but the run has only 10 steps"),
            std::string::npos);
  EXPECT_EQ(problem.rhs_calls, 0);
}

TEST(Errors, StoreAllBeyondMemoryLimitRefusedBeforeWork) {
  CountingGrowth problem;
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(),
                             StepControl::fixed(0.0, 1e-6, 1000000));
  StoreAllOptions options;
  options.memory_limit_bytes = 1 << 20;
  StoreAllAdjoint driver(stepper, Objective<B>::terminal_squared_norm(), options);
  EXPECT_NE(message_of<InvalidArgument>([&] {
              driver.run(vec({1.0}), vec({1.0}));
            }).find("above the memory limit"),
            std::string::npos);
  EXPECT_EQ(problem.rhs_calls, 0);
}

// An explicit Runge–Kutta stepper that offers only what every driver needs (rwd::TimeStepper):
// it cannot hand out stage values.
struct PlainStepper {
  using Backend = B;
  ExplicitRungeKutta<CountingGrowth>& inner;
  Index state_size() const { return inner.state_size(); }
  Index parameter_size() const { return inner.parameter_size(); }
  Index planned_steps() const { return inner.planned_steps(); }
  bool finished(const Carry& c) const { return inner.finished(c); }
  Carry initial_carry(const B::Vector& y, const B::Vector& theta) {
    return inner.initial_carry(y, theta);
  }
  void step(B::Vector& y, Carry& c, const B::Vector& theta) { inner.step(y, c, theta); }
  void adjoint_step(const B::Vector& y, const Carry& c, const B::Vector& theta, B::Vector& lambda,
                    B::Vector& mu) {
    inner.adjoint_step(y, c, theta, lambda, mu);
  }
  const auto& counters() const { return inner.counters(); }
  void reset_counters() { inner.reset_counters(); }
  std::string describe() const { return "plain rk4"; }
};

TEST(Errors, StoreAllKeepingStagesRefusesAStepperWithoutThemBeforeWork) {
  CountingGrowth problem;
  ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), StepControl::fixed(0.0, 0.1, 10));
  static_assert(TimeStepper<PlainStepper> && !StageKeepingStepper<PlainStepper>);
  PlainStepper plain{stepper};
  StoreAllOptions options;
  options.keep_stages = true;
  const std::string msg = message_of<InvalidArgument>(
      [&] { StoreAllAdjoint driver(plain, Objective<B>::terminal_squared_norm(), options); });
  EXPECT_NE(msg.find("keep_stages: plain rk4 cannot"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no rwd::StageKeepingStepper"), std::string::npos) << msg;
  EXPECT_EQ(problem.rhs_calls, 0);
}

TEST(Errors, ObjectiveRefusesBadDefinitions) {
  auto obs = [](Index, double, const B::Vector&, B::Vector&) { return 0.0; };
  EXPECT_THROW(Objective<B>({}, {3, 3}, obs), InvalidArgument);
  EXPECT_THROW(Objective<B>({}, {-1}, obs), InvalidArgument);
  EXPECT_THROW(Objective<B>({}, {2}, {}), InvalidArgument);
  EXPECT_THROW(Objective<B>(Objective<B>::TerminalFn{}), InvalidArgument);
}

TEST(Errors, AdaptiveStepSizeUnderflowIsASolverError) {
  // y' = θ y with θ = 1e300 cannot be resolved: rejections shrink h until it underflows.
  CountingGrowth problem;
  StepControl c = StepControl::adaptive(0.0, 1.0, 1e-6, 1e-9, 0.1);
  c.max_rejections = 10000;
  ExplicitRungeKutta stepper(problem, ButcherTableau::dormand_prince(), c);
  StoreAllAdjoint driver(stepper, Objective<B>::terminal_squared_norm());
  const std::string msg = message_of<SolverError>([&] { driver.run(vec({1.0}), vec({1e300})); });
  EXPECT_NE(msg.find("step size underflow at step 0, t = 0"), std::string::npos) << msg;
}

}  // namespace
}  // namespace rwd
