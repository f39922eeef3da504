// The stochastic steppers: the seed in the carry decides the path (same seed, same bits; another
// seed, another path; a restart from any carry reproduces the rest), each step's adjoint is the
// exact transpose of its derivative (central differences of one step, both schemes, both
// problems), the Milstein correction is what the formula says, and bad setups are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include <Eigen/Core>

#include "rewind/integrators/stochastic_stepper.hpp"
#include "rewind/problems/ornstein_uhlenbeck.hpp"
#include "rewind/problems/stochastic_lorenz63.hpp"
#include "support/error_message.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vec = Eigen::VectorXd;

bool same_bits(const Vec& a, const Vec& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(double)) == 0;
}

template <class P>
Vec run(const P& problem, SdeScheme scheme, std::uint64_t seed, Index steps, double dt,
        const Vec& theta) {
  StochasticStepper stepper(problem, scheme, StepControl::fixed(0.0, dt, steps), seed);
  Vec y = problem.default_initial_state();
  Carry carry = stepper.initial_carry(y, theta);
  while (!stepper.finished(carry)) stepper.step(y, carry, theta);
  return y;
}

constexpr SdeScheme kSchemes[] = {SdeScheme::euler_maruyama, SdeScheme::milstein};

TEST(StochasticStepper, SameSeedSameBitsOtherSeedOtherPath) {
  StochasticLorenz63<> lorenz;
  const Vec theta = lorenz.default_parameters();
  for (SdeScheme s : kSchemes) {
    const Vec a = run(lorenz, s, 7, 500, 0.001, theta);
    EXPECT_TRUE(same_bits(a, run(lorenz, s, 7, 500, 0.001, theta))) << scheme_name(s);
    const Vec b = run(lorenz, s, 8, 500, 0.001, theta);
    EXPECT_GT((a - b).norm(), 1e-3 * a.norm()) << scheme_name(s);
  }
  OrnsteinUhlenbeck<> ou(5);
  const Vec ou_theta = ou.default_parameters();
  const Vec a = run(ou, SdeScheme::euler_maruyama, 1, 100, 0.01, ou_theta);
  EXPECT_TRUE(same_bits(a, run(ou, SdeScheme::euler_maruyama, 1, 100, 0.01, ou_theta)));
  EXPECT_FALSE(same_bits(a, run(ou, SdeScheme::euler_maruyama, 2, 100, 0.01, ou_theta)));
  // Independent components: no two share a path.
  for (Index i = 1; i < 5; ++i) EXPECT_NE(a[0], a[i]);
}

TEST(StochasticStepper, SeedIsInTheCarryAndARestartReproducesTheRest) {
  StochasticLorenz63<> lorenz;
  const Vec theta = lorenz.default_parameters();
  for (SdeScheme s : kSchemes) {
    StochasticStepper stepper(lorenz, s, StepControl::fixed(0.0, 0.001, 300), 0xDEADBEEFCAFEull);
    Vec y = lorenz.default_initial_state();
    Carry carry = stepper.initial_carry(y, theta);
    EXPECT_EQ(carry.noise_seed, 0xDEADBEEFCAFEull);
    Vec y_mid;
    Carry carry_mid;
    while (!stepper.finished(carry)) {
      if (carry.step == 137) {
        y_mid = y;
        carry_mid = carry;
      }
      stepper.step(y, carry, theta);
    }
    EXPECT_EQ(carry.noise_seed, 0xDEADBEEFCAFEull) << "the key travels with the carry";
    EXPECT_EQ(carry.step, 300);
    // Another stepper object with another seed: the carry's seed decides the draws.
    StochasticStepper other(lorenz, s, StepControl::fixed(0.0, 0.001, 300), 99);
    Vec y2 = y_mid;
    Carry c2 = carry_mid;
    while (!other.finished(c2)) other.step(y2, c2, theta);
    EXPECT_TRUE(same_bits(y, y2)) << scheme_name(s);
    EXPECT_TRUE(bitwise_equal(carry, c2)) << scheme_name(s);
    // A carry with another key replays another path.
    Vec y3 = y_mid;
    Carry c3 = carry_mid;
    c3.noise_seed ^= 1;
    while (!other.finished(c3)) other.step(y3, c3, theta);
    EXPECT_FALSE(same_bits(y, y3)) << scheme_name(s);
  }
}

// One Milstein step by hand from the keyed normals: the formula of Kloeden & Platen §11.1.
TEST(StochasticStepper, OneStepIsTheFormula) {
  StochasticLorenz63<> lorenz;
  const Vec theta = lorenz.default_parameters();
  const double h = 0.01, sqrt_h = std::sqrt(h);
  const Vec y0 = lorenz.default_initial_state(1.5, -2.0, 20.0);
  Vec f(3), g(3), g_hat(3);
  lorenz.rhs(0.0, y0, theta, f);
  lorenz.diffusion(0.0, y0, theta, g);
  const NoiseKey key{.seed = 5, .step = 0};
  Vec dw(3);
  for (Index i = 0; i < 3; ++i) dw[i] = sqrt_h * keyed_normal(key, i);
  const Vec y_hat = y0 + h * f + sqrt_h * g;
  lorenz.diffusion(0.0, y_hat, theta, g_hat);
  Vec em(3), mil(3);
  for (Index i = 0; i < 3; ++i) {
    em[i] = y0[i] + h * f[i] + g[i] * dw[i];
    mil[i] = em[i] + (g_hat[i] - g[i]) * ((dw[i] * dw[i] - h) / (2.0 * sqrt_h));
  }
  for (SdeScheme s : kSchemes) {
    StochasticStepper stepper(lorenz, s, StepControl::fixed(0.0, h, 1), 5);
    Vec y = y0;
    Carry c = stepper.initial_carry(y, theta);
    stepper.step(y, c, theta);
    const Vec& expected = s == SdeScheme::milstein ? mil : em;
    EXPECT_LT((y - expected).norm(), 1e-14 * expected.norm()) << scheme_name(s);
    EXPECT_EQ(c.step, 1);
    EXPECT_EQ(c.t, h);
  }
  EXPECT_GT((mil - em).norm(), 1e-6) << "the test must see the Milstein correction";
}

// ⟨λ, (y_{n+1}(x + εd) − y_{n+1}(x − εd)) / 2ε⟩ against ⟨adjoint, d⟩ for one step, with the
// draws fixed (the same carry), for the state and for the parameters.
template <class P>
void check_one_step_adjoint(const P& problem, SdeScheme scheme, const Vec& y_n, Index step) {
  const double h = 0.005;
  StochasticStepper stepper(problem, scheme, StepControl::fixed(0.0, h, step + 1), 11);
  const Vec theta = problem.default_parameters();
  Carry carry = stepper.initial_carry(y_n, theta);
  carry.step = step;
  carry.t = step * h;
  const Index n = y_n.size(), p = theta.size();
  Vec lambda(n);
  for (Index i = 0; i < n; ++i) lambda[i] = std::cos(1.0 + 2.0 * double(i));
  auto step_from = [&](const Vec& y, const Vec& th) {
    Vec out = y;
    Carry c = carry;
    stepper.step(out, c, th);
    return out;
  };
  Vec adj_y = lambda, adj_theta = Vec::Zero(p);
  stepper.adjoint_step(y_n, carry, theta, adj_y, adj_theta);
  for (int which = 0; which < 2; ++which) {
    const Index m = which == 0 ? n : p;
    Vec d(m);
    for (Index i = 0; i < m; ++i) d[i] = std::sin(3.0 + 1.7 * double(i));
    const double eps = 1e-6 * std::max(1.0, which == 0 ? y_n.norm() : theta.norm());
    const Vec plus = which == 0 ? step_from(y_n + eps * d, theta) : step_from(y_n, theta + eps * d);
    const Vec minus =
        which == 0 ? step_from(y_n - eps * d, theta) : step_from(y_n, theta - eps * d);
    const double fd = lambda.dot(plus - minus) / (2 * eps);
    const double adjoint = (which == 0 ? adj_y : adj_theta).dot(d);
    EXPECT_NEAR(adjoint, fd, 1e-7 * std::max(1.0, std::abs(fd)))
        << scheme_name(scheme) << (which == 0 ? " dy_n" : " dtheta") << " at step " << step;
  }
}

TEST(StochasticStepper, OneStepAdjointIsTheTransposedDerivative) {
  StochasticLorenz63<> lorenz;
  OrnsteinUhlenbeck<> ou(4);
  for (SdeScheme s : kSchemes) {
    for (Index step : {Index{0}, Index{3}, Index{41}}) {
      check_one_step_adjoint(lorenz, s, lorenz.default_initial_state(1.5, -2.0, 20.0), step);
      Vec y(4);
      y << 0.3, -1.2, 2.0, 0.7;
      check_one_step_adjoint(ou, s, y, step);
    }
  }
}

// OU has additive noise: Milstein's correction vanishes and both schemes give the same bits.
TEST(StochasticStepper, MilsteinIsEulerMaruyamaForAdditiveNoise) {
  OrnsteinUhlenbeck<> ou(3);
  const Vec theta = ou.default_parameters();
  const Vec em = run(ou, SdeScheme::euler_maruyama, 3, 50, 0.01, theta);
  const Vec mil = run(ou, SdeScheme::milstein, 3, 50, 0.01, theta);
  EXPECT_LT((em - mil).norm(), 1e-13 * em.norm());
}

// A diagonal diffusion declared with the wrong number of Wiener processes.
struct TwoNoisesForThreeStates : StochasticLorenz63<> {
  Index noise_size() const { return 2; }
};

// A diffusion that hands back a vector of the wrong size.
struct ShortDiffusion : OrnsteinUhlenbeck<> {
  ShortDiffusion() : OrnsteinUhlenbeck<>(3) {}
  void diffusion(double, const Vec&, const Vec& theta, Vec& g) const {
    g = Vec::Constant(2, theta[2]);
  }
};

TEST(StochasticStepper, BadSetupsAreRefusedBeforeAnyWork) {
  const std::string noise = testing::error_message<InvalidArgument>([] {
    TwoNoisesForThreeStates model;
    StochasticStepper stepper(model, SdeScheme::euler_maruyama, StepControl::fixed(0, 0.01, 10), 1);
  });
  EXPECT_NE(noise.find("2 Wiener processes for 3 state components"), std::string::npos) << noise;

  const std::string adaptive = testing::error_message<InvalidArgument>([] {
    OrnsteinUhlenbeck<> ou;
    StochasticStepper stepper(ou, SdeScheme::milstein, StepControl::adaptive(0.0, 1.0, 1e-6, 1e-9),
                              1);
  });
  EXPECT_NE(adaptive.find("fixed steps only"), std::string::npos) << adaptive;

  const std::string bad_dt = testing::error_message<InvalidArgument>([] {
    OrnsteinUhlenbeck<> ou;
    StochasticStepper stepper(ou, SdeScheme::milstein, StepControl::fixed(0.0, -0.1, 10), 1);
  });
  EXPECT_FALSE(bad_dt.empty());

  ShortDiffusion model;
  StochasticStepper stepper(model, SdeScheme::euler_maruyama, StepControl::fixed(0, 0.01, 10), 1);
  const Vec theta = model.default_parameters();
  Vec y = model.default_initial_state();
  Carry c = stepper.initial_carry(y, theta);
  const Vec before = y;
  const std::string shape =
      testing::error_message<InvalidArgument>([&] { stepper.step(y, c, theta); });
  EXPECT_NE(shape.find("diffusion returned 2 values for 3 state components"), std::string::npos)
      << shape;
  EXPECT_TRUE(same_bits(y, before)) << "no update after a refused diffusion";

  OrnsteinUhlenbeck<> ou(2);
  StochasticStepper ou_stepper(ou, SdeScheme::euler_maruyama, StepControl::fixed(0, 0.01, 10), 1);
  Vec wrong(3);
  const std::string size =
      testing::error_message<InvalidArgument>([&] { ou_stepper.initial_carry(wrong, theta); });
  EXPECT_NE(size.find("state has 3 components"), std::string::npos) << size;
}

TEST(StochasticStepper, DescribesItself) {
  OrnsteinUhlenbeck<> ou;
  StochasticStepper stepper(ou, SdeScheme::milstein, StepControl::fixed(0, 0.01, 10), 42);
  EXPECT_EQ(stepper.describe(), "milstein, fixed dt = 0.01, noise seed = 42");
}

}  // namespace
}  // namespace rwd
