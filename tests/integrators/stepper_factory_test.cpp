// The method value and its stepper factory (rewind/integrators/stepper_factory.hpp): every name
// gives its method and back, the factory's stepper is bit for bit the one built by hand (explicit
// Runge–Kutta, stochastic, BDF with the linear solver chosen for the problem), and what cannot
// run is refused before any step.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <variant>

#include <Eigen/Core>

#include "rewind/integrators/stepper_factory.hpp"
#include "rewind/problems/brusselator2d.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/ornstein_uhlenbeck.hpp"
#include "rewind/problems/robertson.hpp"
#include "support/error_message.hpp"

namespace rwd {
namespace {

using Vec = Eigen::VectorXd;

bool same_bits(const Vec& a, const Vec& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(double)) == 0;
}

// The final state of a run of `stepper` from y0.
template <class Stepper>
Vec final_state(Stepper& stepper, const Vec& y0, const Vec& theta) {
  Vec y = y0;
  Carry carry = stepper.initial_carry(y, theta);
  while (!stepper.finished(carry)) stepper.step(y, carry, theta);
  return y;
}

TEST(MethodByName, EveryTableauAndTheOtherMethodsRoundTrip) {
  for (const std::string& name : ButcherTableau::names()) {
    const Method method = method_by_name(name);
    ASSERT_TRUE(std::holds_alternative<ExplicitRungeKuttaMethod>(method)) << name;
    EXPECT_EQ(method_name(method), name);
  }
  EXPECT_TRUE(std::holds_alternative<BdfMethod>(method_by_name("bdf")));
  EXPECT_EQ(method_name(method_by_name("bdf")), "bdf");
  for (const SdeScheme scheme : {SdeScheme::euler_maruyama, SdeScheme::milstein}) {
    const Method method = method_by_name(scheme_name(scheme));
    ASSERT_TRUE(std::holds_alternative<StochasticMethod>(method));
    EXPECT_EQ(std::get<StochasticMethod>(method).scheme, scheme);
    EXPECT_EQ(method_name(method), scheme_name(scheme));
  }
}

TEST(MethodByName, ImplicitTableauxAreImplicitMethods) {
  for (const std::string& name : ImplicitTableau::names()) {
    const Method method = method_by_name(name);
    ASSERT_TRUE(std::holds_alternative<ImplicitRungeKuttaMethod>(method)) << name;
    EXPECT_EQ(method_name(method), name);
  }
  EXPECT_EQ(method_name(method_by_name("crank_nicolson")), "trapezoid");
  // An unknown name lists both families.
  try {
    method_by_name("radau5");
    FAIL();
  } catch (const InvalidArgument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("esdirk43"), std::string::npos) << message;
    EXPECT_NE(message.find("dopri5"), std::string::npos) << message;
  }
}

TEST(WithStepper, ImplicitMethodIsTheHandBuiltStepper) {
  const Robertson problem;
  const Vec y0 = problem.default_initial_state();
  const Vec theta = problem.default_parameters();
  const StepControl control = StepControl::adaptive(0.0, 10.0, 1e-6, 1e-10);
  DiagonallyImplicitRungeKutta by_hand(problem, ImplicitTableau::esdirk32(), control);
  const Vec expected = final_state(by_hand, y0, theta);
  const Vec got = with_stepper(problem, method_by_name("esdirk32"), control,
                               [&](auto& stepper) { return final_state(stepper, y0, theta); });
  EXPECT_TRUE(same_bits(got, expected));
  // The Newton settings travel with the method.
  ImplicitRungeKuttaMethod loose{ImplicitTableau::esdirk32(), {}};
  loose.newton.rtol = 1e-4;
  with_stepper(problem, Method{loose}, control, [&](auto& stepper) {
    if constexpr (requires { stepper.newton(); })
      EXPECT_EQ(stepper.newton().rtol, 1e-4);
    else
      ADD_FAILURE() << "not the implicit engine";
  });
}

TEST(MethodByName, RosenbrockTableauxAreRosenbrockMethods) {
  for (const std::string& name : RosenbrockTableau::names()) {
    const Method method = method_by_name(name);
    ASSERT_TRUE(std::holds_alternative<RosenbrockMethod>(method)) << name;
    EXPECT_EQ(method_name(method), name);
  }
  try {
    method_by_name("rodas5");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("rodas4"), std::string::npos) << e.what();
  }
}

TEST(WithStepper, RosenbrockMethodIsTheHandBuiltStepper) {
  const Robertson problem;
  const Vec y0 = problem.default_initial_state();
  const Vec theta = problem.default_parameters();
  const StepControl control = StepControl::adaptive(0.0, 10.0, 1e-6, 1e-10);
  RosenbrockStepper by_hand(problem, RosenbrockTableau::rodas4(), control);
  const Vec expected = final_state(by_hand, y0, theta);
  const Vec got = with_stepper(problem, method_by_name("rodas4"), control,
                               [&](auto& stepper) { return final_state(stepper, y0, theta); });
  EXPECT_TRUE(same_bits(got, expected));
}

TEST(MethodByName, RefusesAnUnknownName) {
  EXPECT_THROW(method_by_name("rk5"), InvalidArgument);
  EXPECT_THROW(method_by_name(""), InvalidArgument);
  EXPECT_THROW(method_by_name("BDF"), InvalidArgument);  // names are exact
}

TEST(WithStepper, ExplicitRungeKuttaIsTheHandBuiltStepper) {
  const Lorenz63<> problem;
  const Vec y0 = problem.default_initial_state();
  const Vec theta = problem.default_parameters();
  for (const char* name : {"rk4", "dopri5"}) {
    const StepControl control = std::string(name) == "dopri5"
                                    ? StepControl::adaptive(0.0, 1.0, 1e-6, 1e-9)
                                    : StepControl::fixed(0.0, 0.01, 100);
    ExplicitRungeKutta by_hand(problem, ButcherTableau::by_name(name), control);
    const Vec expected = final_state(by_hand, y0, theta);
    const Vec got = with_stepper(problem, method_by_name(name), control,
                                 [&](auto& stepper) { return final_state(stepper, y0, theta); });
    EXPECT_TRUE(same_bits(got, expected)) << name;
  }
}

TEST(WithStepper, StochasticSchemeKeepsItsKey) {
  const OrnsteinUhlenbeck<> problem(3);
  const Vec y0 = problem.default_initial_state();
  const Vec theta = problem.default_parameters();
  const StepControl control = StepControl::fixed(0.0, 0.01, 50);
  StochasticStepper by_hand(problem, SdeScheme::milstein, control, 42);
  const Vec expected = final_state(by_hand, y0, theta);
  const Method method = StochasticMethod{SdeScheme::milstein, 42};
  with_stepper(problem, method, control, [&](auto& stepper) {
    Vec y = y0;
    const Carry carry = stepper.initial_carry(y, theta);
    EXPECT_EQ(carry.noise_seed, 42u);
    EXPECT_TRUE(same_bits(final_state(stepper, y0, theta), expected));
  });
  // Another key, another path.
  const Vec other = with_stepper(problem, Method{StochasticMethod{SdeScheme::milstein, 43}},
                                 control, [&](auto& s) { return final_state(s, y0, theta); });
  EXPECT_FALSE(same_bits(other, expected));
}

TEST(WithStepper, BdfStepsTheControlsIntervalsWithTheChosenSolver) {
  const Robertson problem;
  const Vec y0 = problem.default_initial_state();
  const Vec theta = problem.default_parameters();
  BdfMethod bdf;
  bdf.options.atol = {1e-10};
  const StepControl control = StepControl::fixed(0.0, 1e3, 4);
  CvodesOptions options = bdf.options;
  options.linear_solver = CvodesLinearSolver::dense;  // Robertson states no band
  CvodesIntervalStepper by_hand(problem, options, IntervalGrid{0.0, 4e3, 4});
  const Vec expected = final_state(by_hand, y0, theta);
  with_stepper(problem, Method{bdf}, control, [&](auto& stepper) {
    if constexpr (requires { stepper.options(); }) {  // the CVODES stepper
      EXPECT_EQ(stepper.options().linear_solver, CvodesLinearSolver::dense);
      EXPECT_TRUE(same_bits(final_state(stepper, y0, theta), expected));
    } else {
      ADD_FAILURE() << "BDF did not give the CVODES stepper";
    }
  });
}

TEST(BdfLinearSolver, BandForAProblemWithABandUnlessOneIsNamed) {
  BdfMethod bdf;
  EXPECT_EQ(bdf_linear_solver<Brusselator2D>(bdf), CvodesLinearSolver::band);
  EXPECT_EQ(bdf_linear_solver<Robertson>(bdf), CvodesLinearSolver::dense);
  bdf.linear_solver = CvodesLinearSolver::gmres;
  EXPECT_EQ(bdf_linear_solver<Brusselator2D>(bdf), CvodesLinearSolver::gmres);
  EXPECT_EQ(bdf_linear_solver<Robertson>(bdf), CvodesLinearSolver::gmres);
}

TEST(BdfIntervalGrid, OneIntervalPerFixedStep) {
  const IntervalGrid grid = bdf_interval_grid(StepControl::fixed(0.0, 0.5, 4));
  EXPECT_EQ(grid.t0, 0.0);
  EXPECT_EQ(grid.t_final, 2.0);
  EXPECT_EQ(grid.intervals, 4);
}

TEST(WithStepper, RefusesWhatCannotRun) {
  const Lorenz63<> lorenz;
  const auto nothing = [](auto&) {};
  testing::expect_message(testing::error_message<InvalidArgument>([&] {
                            with_stepper(lorenz, Method{StochasticMethod{}},
                                         StepControl::fixed(0.0, 0.01, 10), nothing);
                          }),
                          "needs a problem with noise");
  const Robertson robertson;
  testing::expect_message(testing::error_message<InvalidArgument>([&] {
                            with_stepper(robertson, Method{BdfMethod{}},
                                         StepControl::adaptive(0.0, 1.0, 1e-6, 1e-9), nothing);
                          }),
                          "fixed length");
  // Lorenz-63 has no second derivatives (jvp_vjp) for a Rosenbrock adjoint.
  testing::expect_message(testing::error_message<InvalidArgument>([&] {
                            with_stepper(lorenz, method_by_name("ros34pw2"),
                                         StepControl::fixed(0.0, 0.01, 10), nothing);
                          }),
                          "jvp_vjp");
}

}  // namespace
}  // namespace rwd
