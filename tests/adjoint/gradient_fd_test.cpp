// Store-all gradients against central finite differences of the whole run, for every built-in
// problem × every tableau, fixed steps and (for the embedded pairs) adaptive steps, with a
// terminal cost and observation terms.
#include <gtest/gtest.h>

#include <functional>

#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/linear.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "rewind/problems/lotka_volterra.hpp"
#include "rewind/problems/van_der_pol.hpp"
#include "support/gradient_check.hpp"

namespace rwd {
namespace {

using B = EigenBackend;

// J = ½|y_N|² + Σ_k ½|y_k − 0.5|² over the observed steps.
Objective<B> test_objective(std::vector<Index> steps) {
  return Objective<B>(
      [](double, const B::Vector& y, B::Vector& g) {
        g = y;
        return 0.5 * y.squaredNorm();
      },
      std::move(steps),
      [](Index, double, const B::Vector& y, B::Vector& g) {
        g = y.array() - 0.5;
        return 0.5 * g.squaredNorm();
      });
}

struct Case {
  std::string problem;
  std::string method;
  bool adaptive;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return info.param.problem + "_" + info.param.method +
         (info.param.adaptive ? "_adaptive" : "_fixed");
}

template <class P>
void check(const P& problem, const Case& c, double dt, Index steps, double t_final) {
  const Eigen::VectorXd y0 = problem.default_initial_state();
  const Eigen::VectorXd theta = problem.default_parameters();
  const StepControl control = c.adaptive ? StepControl::adaptive(0.0, t_final, 1e-10, 1e-10)
                                         : StepControl::fixed(0.0, dt, steps);
  ExplicitRungeKutta stepper(problem, ButcherTableau::by_name(c.method), control);
  const auto objective = test_objective({1, 2});
  StoreAllAdjoint driver(stepper, objective);
  const auto result = driver.run(y0, theta);
  EXPECT_EQ(result.summary.reversed_steps, result.summary.steps);

  // Adaptive runs: the gradient treats the accepted steps as constants, so it is compared with
  // finite differences of the run with those steps prescribed. (Differences of the adaptive
  // run itself also move the steps, which changes J by up to ~1e-2 relative here.)
  std::vector<double> sizes;
  if (c.adaptive) {
    Eigen::VectorXd y = y0;
    ExplicitRungeKutta probe(problem, ButcherTableau::by_name(c.method), control);
    Carry carry = probe.initial_carry(y, theta);
    while (!probe.finished(carry)) {
      probe.step(y, carry, theta);
      sizes.push_back(probe.last_step_size());
    }
    EXPECT_EQ(static_cast<Index>(sizes.size()), result.summary.steps);
  }
  ExplicitRungeKutta frozen(problem, ButcherTableau::by_name(c.method),
                            c.adaptive ? StepControl::prescribed(0.0, sizes) : control);
  // The prescribed run reproduces the adaptive one's loss.
  EXPECT_NEAR(forward_loss(frozen, objective, y0, theta), result.loss,
              1e-12 * std::abs(result.loss));
  const double tol = 2e-6;
  for (int which : {0, 1}) {
    const auto chk = testing::directional_fd(frozen, objective, y0, theta,
                                             which == 0 ? result.grad_y0 : result.grad_theta, which,
                                             17 + static_cast<std::uint64_t>(which), 1e-6);
    EXPECT_LT(chk.rel_error(), tol)
        << (which == 0 ? "dJ/dy0" : "dJ/dtheta") << ": adjoint " << chk.adjoint << " fd " << chk.fd;
  }
}

class GradientVsFiniteDifferences : public ::testing::TestWithParam<Case> {};

TEST_P(GradientVsFiniteDifferences, AgreesAlongRandomDirections) {
  const Case& c = GetParam();
  if (c.problem == "linear") check(LinearOde<>(4), c, 0.05, 40, 2.0);
  if (c.problem == "lorenz63") check(Lorenz63<>(), c, 0.005, 100, 0.5);
  if (c.problem == "lorenz96") check(Lorenz96<>(10), c, 0.01, 50, 0.5);
  if (c.problem == "lotka_volterra") check(LotkaVolterra<>(), c, 0.01, 100, 1.0);
  if (c.problem == "van_der_pol") check(VanDerPol<>(), c, 0.01, 150, 1.5);
  if (c.problem == "gray_scott") check(GrayScott<>(6), c, 0.5, 20, 10.0);
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const char* p :
       {"linear", "lorenz63", "lorenz96", "lotka_volterra", "van_der_pol", "gray_scott"}) {
    for (const auto& m : ButcherTableau::names()) {
      cases.push_back({p, m, false});
      if (ButcherTableau::by_name(m).has_embedded()) cases.push_back({p, m, true});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(ProblemsTimesTableaux, GradientVsFiniteDifferences,
                         ::testing::ValuesIn(all_cases()), case_name);

}  // namespace
}  // namespace rwd
