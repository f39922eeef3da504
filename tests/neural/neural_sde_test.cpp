// rwd::nn::NeuralSde: the drift's and the diffusion's VJPs against finite differences entry by
// entry; a window loss averaged over sample paths, its Euler–Maruyama pathwise gradient
// (StoreAllAdjoint) against central differences of the whole run with the same seed; revolve
// giving store-all's bits with zero drift; Milstein reproducing Euler–Maruyama's path bit for
// bit (additive noise); bad input refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/derivative_checker.hpp"
#include "rewind/integrators/stochastic_stepper.hpp"
#include "rewind/neural/neural_sde.hpp"
#include "rewind/neural/sampled_solution.hpp"
#include "rewind/neural/window_fit.hpp"
#include "rewind/problems/cubic_spiral.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/error_message.hpp"
#include "support/gradient_check.hpp"
#include "support/snapshot_data.hpp"

namespace rwd {
namespace {

using Vec = Eigen::VectorXd;
using nn::Activation;
using nn::InputFeatures;
using nn::Mlp;
using nn::NeuralSde;

// The diffusion g(t, y, θ) seen as a right-hand side, so that check_derivatives compares
// diffusion_vjp with finite differences of diffusion.
struct DiffusionAsRhs {
  using Backend = EigenBackend;
  using Vector = Vec;
  const NeuralSde& model;
  Index state_size() const { return model.state_size(); }
  Index parameter_size() const { return model.parameter_size(); }
  void rhs(double t, const Vec& y, const Vec& theta, Vec& g) const {
    model.diffusion(t, y, theta, g);
  }
  void vjp(double t, const Vec& y, const Vec& theta, const Vec& v, Vec& out_y,
           Vec& out_theta) const {
    model.diffusion_vjp(t, y, theta, v, out_y, out_theta);
  }
};

// θ with distinct noise levels per dimension (so a mixed-up index is seen).
Vec parameters(const NeuralSde& model, std::uint64_t seed) {
  Vec theta = model.initial_parameters(seed, 0.3);
  const Index p = model.network_parameter_size();
  for (Index i = 0; i < model.dimension(); ++i) theta[p + i] += 0.4 * static_cast<double>(i) - 0.3;
  return theta;
}

TEST(NeuralSde, DriftAndDiffusionVjpsMatchFiniteDifferencesEntryByEntry) {
  const NeuralSde model(Mlp({2, 6, 2}, Activation::tanh), /*batch=*/3, InputFeatures::cube);
  const Vec theta = parameters(model, 4);
  Vec y(model.state_size());
  y << 0.7, -0.4, 1.1, 0.2, -0.9, 0.5;
  const auto drift = check_derivatives(model, 0.0, y, theta);
  EXPECT_TRUE(drift.ok) << drift.report();
  EXPECT_EQ(drift.parameters.mode, JacobianCheckMode::kFull);
  const auto diffusion = check_derivatives(DiffusionAsRhs{model}, 0.0, y, theta);
  EXPECT_TRUE(diffusion.ok) << diffusion.report();
  EXPECT_EQ(diffusion.parameters.mode, JacobianCheckMode::kFull);
  // σ = exp(s), one per dimension, the same for every sample.
  const Vec sigma = model.noise_levels(theta);
  Vec g(model.state_size());
  model.diffusion(0.0, y, theta, g);
  for (Index b = 0; b < model.batch(); ++b)
    for (Index i = 0; i < model.dimension(); ++i) EXPECT_EQ(g[b * model.dimension() + i], sigma[i]);
}

// A few windows of the spiral, each repeated K times: the loss is each window's misfit averaged
// over its K sample paths (the K copies draw different noise: different components of the key).
struct WindowSetup {
  training::TimeSeries data;
  std::vector<Index> starts;  // K copies of every window start, adjacent
  Index window = 0;
  Objective<EigenBackend> objective;
  Vec y0;
};

WindowSetup window_setup(Index window, Index paths) {
  const CubicSpiral spiral;
  WindowSetup s{
      training::sample_solution(spiral, spiral.default_initial_state(), spiral.default_parameters(),
                                ButcherTableau::rk4(), 2.5, 101, 10),
      {},
      window,
      {},
      {}};
  for (Index start : {0, 17, 40})
    for (Index k = 0; k < paths; ++k) s.starts.push_back(start);
  s.objective = training::window_misfit(s.data, s.starts, window, 1);
  s.y0 = training::window_initial_states(s.data, s.starts);
  return s;
}

TEST(NeuralSde, WindowGradientMatchesCentralDifferencesWithCommonRandomNumbers) {
  const WindowSetup s = window_setup(/*window=*/10, /*paths=*/4);
  const NeuralSde model(Mlp({2, 8, 2}, Activation::tanh), static_cast<Index>(s.starts.size()),
                        InputFeatures::cube);
  const Vec theta = parameters(model, 2);
  const double dt = s.data.times[1] - s.data.times[0];
  for (std::uint64_t seed : {11u, 12u}) {
    SCOPED_TRACE("noise seed " + std::to_string(seed));
    StochasticStepper stepper(model, SdeScheme::euler_maruyama, StepControl::fixed(0.0, dt, 10),
                              seed);
    StoreAllAdjoint driver(stepper, s.objective);
    const auto r = driver.run(s.y0, theta);
    for (int which = 0; which < 2; ++which) {
      const auto check =
          testing::directional_fd(stepper, s.objective, s.y0, theta,
                                  which == 0 ? r.grad_y0 : r.grad_theta, which, 200 + seed, 1e-6);
      EXPECT_LT(check.rel_error(), 1e-6)
          << (which == 0 ? "dJ/dy0 " : "dJ/dtheta ") << check.adjoint << " vs fd " << check.fd;
    }
    // The log noise levels one by one: a random direction over ~100 parameters weighs them
    // little, so a wrong dJ/ds could hide in it.
    const Index p = model.network_parameter_size();
    for (Index i = 0; i < model.dimension(); ++i) {
      const double eps = 1e-6;
      Vec plus = theta, minus = theta;
      plus[p + i] += eps;
      minus[p + i] -= eps;
      const double fd = (forward_loss(stepper, s.objective, s.y0, plus) -
                         forward_loss(stepper, s.objective, s.y0, minus)) /
                        (2 * eps);
      const double adjoint = r.grad_theta[p + i];
      EXPECT_GT(std::abs(adjoint), 1e-6) << "dJ/ds_" << i << " should not vanish";
      EXPECT_NEAR(adjoint, fd, 1e-6 * std::max(std::abs(fd), 1e-8)) << "dJ/ds_" << i;
    }
  }
  // The noise matters: another seed, another loss.
  StochasticStepper a(model, SdeScheme::euler_maruyama, StepControl::fixed(0.0, dt, 10), 11);
  StochasticStepper b(model, SdeScheme::euler_maruyama, StepControl::fixed(0.0, dt, 10), 12);
  EXPECT_NE(forward_loss(a, s.objective, s.y0, theta), forward_loss(b, s.objective, s.y0, theta));
}

TEST(NeuralSde, RevolveGivesStoreAllBitsWithZeroDrift) {
  const WindowSetup s = window_setup(/*window=*/24, /*paths=*/3);
  const NeuralSde model(Mlp({2, 8, 2}, Activation::tanh), static_cast<Index>(s.starts.size()),
                        InputFeatures::cube);
  const Vec theta = parameters(model, 5);
  const double dt = s.data.times[1] - s.data.times[0];
  StochasticStepper stepper(model, SdeScheme::euler_maruyama, StepControl::fixed(0.0, dt, 24),
                            2024);
  const auto reference = StoreAllAdjoint(stepper, s.objective).run(s.y0, theta);
  CheckpointOptions options;
  options.drift_policy = DriftPolicy::fail;
  CheckpointedAdjoint driver(stepper, s.objective, options);
  const auto r = driver.run(s.y0, theta, revolve_schedule(3));
  EXPECT_EQ(std::memcmp(&r.loss, &reference.loss, sizeof(double)), 0);
  EXPECT_TRUE(testing::same_bits(r.grad_theta, reference.grad_theta));
  EXPECT_TRUE(testing::same_bits(r.grad_y0, reference.grad_y0));
  EXPECT_TRUE(testing::same_bits(r.y_final, reference.y_final));
  EXPECT_TRUE(r.drift.bitwise_identical());
  EXPECT_GT(r.drift.replayed_steps_checked, 0);
  EXPECT_GT(r.summary.recomputed_steps, 0);
}

// Additive noise: Milstein's correction (g(ŷ) − g(y)) is exactly zero, so the path is
// Euler–Maruyama's to the bit; the adjoints add the same terms in another grouping (round-off).
TEST(NeuralSde, MilsteinIsEulerMaruyamaForAdditiveNoise) {
  const WindowSetup s = window_setup(/*window=*/10, /*paths=*/2);
  const NeuralSde model(Mlp({2, 8, 2}, Activation::tanh), static_cast<Index>(s.starts.size()),
                        InputFeatures::cube);
  const Vec theta = parameters(model, 6);
  const double dt = s.data.times[1] - s.data.times[0];
  StochasticStepper em(model, SdeScheme::euler_maruyama, StepControl::fixed(0.0, dt, 10), 9);
  StochasticStepper milstein(model, SdeScheme::milstein, StepControl::fixed(0.0, dt, 10), 9);
  const auto a = StoreAllAdjoint(em, s.objective).run(s.y0, theta);
  const auto b = StoreAllAdjoint(milstein, s.objective).run(s.y0, theta);
  EXPECT_TRUE(testing::same_bits(a.y_final, b.y_final));
  EXPECT_EQ(a.loss, b.loss);
  EXPECT_LT((a.grad_theta - b.grad_theta).norm(), 1e-12 * a.grad_theta.norm());
}

TEST(NeuralSde, BadInputIsRefused) {
  const NeuralSde model(Mlp({2, 4, 2}, Activation::tanh), 2);
  Vec y = Vec::Zero(4), g(4), out_y(4);
  Vec short_theta = Vec::Zero(model.network_parameter_size());  // the log noise levels missing
  Vec out_theta(model.parameter_size());
  std::string m =
      testing::error_message<InvalidArgument>([&] { model.diffusion(0.0, y, short_theta, g); });
  EXPECT_NE(m.find("log noise levels"), std::string::npos) << m;
  m = testing::error_message<InvalidArgument>([&] { model.rhs(0.0, y, short_theta, g); });
  EXPECT_NE(m.find("parameter vector theta"), std::string::npos) << m;
  const Vec theta = model.initial_parameters(1, 0.1);
  Vec long_y = Vec::Zero(6);
  m = testing::error_message<InvalidArgument>(
      [&] { model.diffusion_vjp(0.0, long_y, theta, long_y, long_y, out_theta); });
  EXPECT_NE(m.find("state y"), std::string::npos) << m;
  m = testing::error_message<InvalidArgument>([&] { model.initial_parameters(1, 0.0); });
  EXPECT_NE(m.find("sigma"), std::string::npos) << m;
  m = testing::error_message<InvalidArgument>([&] { model.initial_parameters(1, NAN); });
  EXPECT_NE(m.find("sigma"), std::string::npos) << m;
  testing::error_message<InvalidArgument>([] { NeuralSde(Mlp({2, 4, 3}, Activation::tanh), 2); });
  testing::error_message<InvalidArgument>([] { NeuralSde(Mlp({2, 4, 2}, Activation::tanh), 0); });
}

}  // namespace
}  // namespace rwd
