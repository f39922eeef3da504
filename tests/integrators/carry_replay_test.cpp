// Restarting a stepper from a saved (y_n, carry_n) reproduces the original run bit for bit —
// with adaptive steps too, since the controller's memory lives in the carry. This is what
// replaying from snapshots rests on.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/van_der_pol.hpp"

namespace rwd {
namespace {

bool bitwise_equal(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(double) * a.size()) == 0;
}

template <class P>
void check_replay(const P& problem, const char* method, StepControl control) {
  ExplicitRungeKutta stepper(problem, ButcherTableau::by_name(method), control);
  const Eigen::VectorXd theta = problem.default_parameters();
  Eigen::VectorXd y = problem.default_initial_state();
  Carry carry = stepper.initial_carry(y, theta);
  std::vector<Eigen::VectorXd> states;
  std::vector<Carry> carries;
  while (!stepper.finished(carry)) {
    states.push_back(y);
    carries.push_back(carry);
    stepper.step(y, carry, theta);
  }
  ASSERT_GT(states.size(), 10u);
  const Eigen::VectorXd y_final = y;
  const Carry carry_final = carry;
  // A second stepper, as after a restart from snapshots taken at a few points.
  ExplicitRungeKutta other(problem, ButcherTableau::by_name(method), control);
  for (std::size_t start : {std::size_t{0}, states.size() / 3, states.size() - 1}) {
    Eigen::VectorXd z = states[start];
    Carry c = carries[start];
    for (std::size_t k = start; k + 1 < states.size(); ++k) {
      other.step(z, c, theta);
      ASSERT_TRUE(bitwise_equal(z, states[k + 1]))
          << "replay from " << start << " differs at " << k + 1;
      ASSERT_TRUE(bitwise_equal(c, carries[k + 1]));
    }
    other.step(z, c, theta);
    EXPECT_TRUE(bitwise_equal(z, y_final));
    EXPECT_TRUE(bitwise_equal(c, carry_final));
  }
}

TEST(CarryReplay, AdaptiveDormandPrinceVanDerPol) {
  check_replay(VanDerPol<>(), "dopri5", StepControl::adaptive(0.0, 10.0, 1e-6, 1e-8));
}
TEST(CarryReplay, AdaptiveTsitourasLorenz63) {
  check_replay(Lorenz63<>(), "tsit5", StepControl::adaptive(0.0, 5.0, 1e-7, 1e-9));
}
TEST(CarryReplay, AdaptiveBogackiShampineWithRejections) {
  // A large first step forces rejections, which must replay identically.
  check_replay(Lorenz63<>(), "bs3", StepControl::adaptive(0.0, 2.0, 1e-5, 1e-8, 0.5));
}
TEST(CarryReplay, FixedRk4) {
  check_replay(Lorenz63<>(), "rk4", StepControl::fixed(0.0, 0.01, 300));
}

}  // namespace
}  // namespace rwd
