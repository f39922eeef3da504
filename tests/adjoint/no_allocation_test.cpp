// The step loop and the reverse loop do not touch the heap: this executable counts every call of
// malloc (which operator new and Eigen both end in) and checks the count across many steps and
// adjoint steps
// (after construction, where all work vectors are allocated), for fixed and adaptive stepping
// and for the store-all driver's loops with fixed steps.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>

#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/integrators/stochastic_stepper.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "rewind/problems/ornstein_uhlenbeck.hpp"
#include "rewind/problems/stochastic_lorenz63.hpp"

#include "support/malloc_counter.hpp"

namespace rwd {
namespace {

template <class P>
void check_stepper(const P& problem, const char* method, StepControl control) {
  ExplicitRungeKutta stepper(problem, ButcherTableau::by_name(method), control);
  const Eigen::VectorXd theta = problem.default_parameters();
  Eigen::VectorXd y = problem.default_initial_state();
  const Eigen::VectorXd y0 = y;
  Eigen::VectorXd lambda = Eigen::VectorXd::Ones(y.size());
  Eigen::VectorXd mu = Eigen::VectorXd::Zero(theta.size());
  Carry carry = stepper.initial_carry(y, theta);
  const Carry carry0 = carry;
  const long before = g_allocations.load();
  for (int i = 0; i < 50; ++i) stepper.step(y, carry, theta);
  for (int i = 0; i < 50; ++i) stepper.adjoint_step(y0, carry0, theta, lambda, mu);
  EXPECT_EQ(g_allocations.load() - before, 0) << method;
}

TEST(NoAllocation, CounterSeesEigenAndNewAllocations) {
  const long before = g_allocations.load();
  Eigen::VectorXd v(1000);
  auto p = std::make_unique<int>(3);
  EXPECT_GE(g_allocations.load() - before, 2) << "the counter must see the allocations it guards";
}

TEST(NoAllocation, StepAndAdjointStepFixed) {
  for (const auto& m : ButcherTableau::names())
    check_stepper(Lorenz96<>(40), m.c_str(), StepControl::fixed(0.0, 0.01, 100));
  check_stepper(GrayScott<>(16), "rk4", StepControl::fixed(0.0, 0.5, 100));
}

TEST(NoAllocation, StepAndAdjointStepAdaptive) {
  for (const char* m : {"heun", "bs3", "dopri5", "tsit5"})
    check_stepper(Lorenz96<>(40), m, StepControl::adaptive(0.0, 100.0, 1e-6, 1e-9));
}

// The stochastic steppers draw their noise into a vector allocated with the stepper.
template <class P>
void check_stochastic_stepper(const P& problem, SdeScheme scheme) {
  StochasticStepper stepper(problem, scheme, StepControl::fixed(0.0, 0.001, 100), 7);
  const Eigen::VectorXd theta = problem.default_parameters();
  Eigen::VectorXd y = problem.default_initial_state();
  const Eigen::VectorXd y0 = y;
  Eigen::VectorXd lambda = Eigen::VectorXd::Ones(y.size());
  Eigen::VectorXd mu = Eigen::VectorXd::Zero(theta.size());
  Carry carry = stepper.initial_carry(y, theta);
  const Carry carry0 = carry;
  // One step and one adjoint step first: OU's θ-sums over 1000 components run as a threaded fold
  // whose per-thread scratch grows once (rewind/parallel.hpp fold_scratch), never in the loop.
  {
    Eigen::VectorXd y1 = y0, l1 = lambda, m1 = mu;
    Carry c1 = carry0;
    stepper.step(y1, c1, theta);
    stepper.adjoint_step(y0, carry0, theta, l1, m1);
  }
  const long before = g_allocations.load();
  for (int i = 0; i < 50; ++i) stepper.step(y, carry, theta);
  for (int i = 0; i < 50; ++i) stepper.adjoint_step(y0, carry0, theta, lambda, mu);
  EXPECT_EQ(g_allocations.load() - before, 0) << scheme_name(scheme);
}

TEST(NoAllocation, StochasticStepAndAdjointStep) {
  for (SdeScheme scheme : {SdeScheme::euler_maruyama, SdeScheme::milstein}) {
    check_stochastic_stepper(StochasticLorenz63<>(), scheme);
    check_stochastic_stepper(OrnsteinUhlenbeck<>(1000), scheme);
  }
}

TEST(NoAllocation, StoreAllLoopsAllocateOnlyUpFront) {
  // Run twice with different horizons: the allocations of a run do not grow with its length
  // (they are the up-front storage, the result vectors and a fixed number of work vectors).
  Lorenz96<> problem(40);
  auto count = [&](Index steps) {
    ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(),
                               StepControl::fixed(0.0, 0.01, steps));
    StoreAllAdjoint driver(stepper, Objective<EigenBackend>::terminal_squared_norm());
    const Eigen::VectorXd y0 = problem.default_initial_state(),
                          theta = problem.default_parameters();
    const long before = g_allocations.load();
    driver.run(y0, theta);
    return g_allocations.load() - before;
  };
  const long short_run = count(100), long_run = count(400);
  // The only difference: one state vector per extra stored step, allocated before stepping.
  EXPECT_EQ(long_run - short_run, 300) << short_run << " vs " << long_run;
  EXPECT_LT(short_run, 100 + 40) << "a fixed number of work vectors besides the storage";
}

}  // namespace
}  // namespace rwd
