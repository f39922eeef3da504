// Heat2D: rhs and vjp against an independent (r, c)-indexed implementation (walls, corners), the
// two kernel shapes giving the same bits, the heat balance (heat leaves only through the walls),
// the max principle and energy decay, the sharp Euler and RK4 stability limits, the closed-form
// adjoint of the linear problem, store-all gradients against finite differences of whole runs,
// checkpointed and on-disk runs giving the store-all bits, the example's 2^20-unknown size, and
// (with Thrust) the cell kernels on the Thrust backend. The contract every problem keeps (the
// derivative checker, outputs overwritten, sizes refused) is checked in problem_contract_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <numbers>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <unistd.h>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/problems/heat2d.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/gradient_check.hpp"
#include "support/random_data.hpp"

#if defined(THRUST_DEVICE_SYSTEM) && __has_include(<thrust/device_vector.h>)
#include "rewind/backend/thrust_backend.hpp"
#define REWIND_TEST_HAS_THRUST 1
#endif

namespace rwd {
namespace {

using B = EigenBackend;
using Vector = B::Vector;

using testing::random_vector;

// Textbook implementation: (r, c) indexing with an explicit bounds test for the walls.
struct Reference {
  Index n;
  double at(const Vector& x, Index r, Index c) const {
    return r < 0 || r >= n || c < 0 || c >= n ? 0.0 : x[r * n + c];
  }
  double lap(const Vector& x, Index r, Index c) const {
    return at(x, r - 1, c) + at(x, r + 1, c) + at(x, r, c - 1) + at(x, r, c + 1) -
           4.0 * at(x, r, c);
  }
  double g(Index r, Index c) const {
    const double sigma = std::max(1.0, static_cast<double>(n) / 16.0);
    const double m = 0.5 * static_cast<double>(n - 1);
    const double dr = static_cast<double>(r) - m, dc = static_cast<double>(c) - m;
    return std::exp(-dr * dr / (2 * sigma * sigma)) * std::exp(-dc * dc / (2 * sigma * sigma));
  }
  Vector rhs(const Vector& y, const Vector& th) const {
    Vector f(n * n);
    for (Index r = 0; r < n; ++r)
      for (Index c = 0; c < n; ++c) f[r * n + c] = th[0] * lap(y, r, c) + th[1] * g(r, c);
    return f;
  }
  Vector theta_vjp(const Vector& y, const Vector& a) const {
    Vector out = Vector::Zero(2);
    for (Index r = 0; r < n; ++r)
      for (Index c = 0; c < n; ++c) {
        out[0] += a[r * n + c] * lap(y, r, c);
        out[1] += a[r * n + c] * g(r, c);
      }
    return out;
  }
};

// Explicit Euler or RK4 by hand (no driver), for the stability and decay tests.
Vector run_by_hand(const Heat2D<>& p, Vector y, const Vector& theta, double dt, int steps,
                   bool rk4) {
  Vector k1(y.size()), k2(y.size()), k3(y.size()), k4(y.size()), t(y.size());
  for (int s = 0; s < steps; ++s) {
    p.rhs(0, y, theta, k1);
    if (!rk4) {
      y += dt * k1;
      continue;
    }
    t = y + 0.5 * dt * k1;
    p.rhs(0, t, theta, k2);
    t = y + 0.5 * dt * k2;
    p.rhs(0, t, theta, k3);
    t = y + dt * k3;
    p.rhs(0, t, theta, k4);
    y += dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
  }
  return y;
}

TEST(Heat2D, RhsAndParameterGradientMatchTheReference) {
  std::mt19937_64 rng(21);
  for (Index n : {3, 4, 5, 8, 31}) {
    Heat2D<> p(n);
    const Vector y = random_vector(n * n, rng, -1, 1), a = random_vector(n * n, rng, -1, 1);
    const Vector theta = random_vector(2, rng, 0.05, 0.5);
    Vector f(n * n), out_y(n * n), out_theta(2);
    p.rhs(0.0, y, theta, f);
    EXPECT_LT((f - Reference{n}.rhs(y, theta)).cwiseAbs().maxCoeff(), 1e-15) << "n = " << n;
    p.vjp(0.0, y, theta, a, out_y, out_theta);
    EXPECT_LT((out_theta - Reference{n}.theta_vjp(y, a)).cwiseAbs().maxCoeff(), 1e-12)
        << "n = " << n;
    for (Index r = 0; r < n; ++r)
      for (Index c = 0; c < n; ++c) EXPECT_NEAR(p.source_shape(r, c), Reference{n}.g(r, c), 1e-15);
  }
}

TEST(Heat2D, WallsAreColdAndDoNotWrapAround) {
  // A single unit of heat in a corner, κ = 1, no heater: f is the stencil, cut by the walls.
  const Index n = 4;
  Heat2D<> p(n);
  Vector y = Vector::Zero(16), f(16);
  y[0] = 1.0;
  p.rhs(0.0, y, Vector{{1.0, 0.0}}, f);
  Vector expected = Vector::Zero(16);
  expected[0] = -4.0;
  expected[1] = 1.0;  // (0, 1)
  expected[4] = 1.0;  // (1, 0); nothing at (0, 3) or (3, 0): no wrap-around
  EXPECT_EQ(f, expected);
  // The heater alone: s₀ g, peaking in the centre.
  p.rhs(0.0, Vector::Zero(16), Vector{{1.0, 2.0}}, f);
  for (Index k = 0; k < 16; ++k) EXPECT_EQ(f[k], 2.0 * p.source_shape(k / n, k % n));
  Heat2D<> odd(9);
  EXPECT_EQ(odd.source_shape(4, 4), 1.0);
  EXPECT_LT(odd.source_shape(0, 0), odd.source_shape(2, 3));
}

TEST(Heat2D, StateJacobianIsSymmetric) {
  // f is affine in u, so ⟨a, f(w) − f(0)⟩ = ⟨Jᵀa, w⟩ and, J being symmetric, ⟨Ja, w⟩ — exact
  // transposition checks without finite differences.
  std::mt19937_64 rng(23);
  const Index n = 11;
  Heat2D<> p(n);
  const Vector theta{{0.3, 0.7}};
  const Vector w = random_vector(n * n, rng, -1, 1), a = random_vector(n * n, rng, -1, 1);
  Vector fw(n * n), f0(n * n), fa(n * n), out_y(n * n), out_theta(2);
  p.rhs(0.0, w, theta, fw);
  p.rhs(0.0, Vector::Zero(n * n), theta, f0);
  p.rhs(0.0, a, theta, fa);
  p.vjp(0.0, w, theta, a, out_y, out_theta);
  const double lhs = a.dot(fw - f0);
  EXPECT_NEAR(lhs, out_y.dot(w), 1e-13 * std::abs(lhs) + 1e-15);
  EXPECT_NEAR(lhs, (fa - f0).dot(w), 1e-13 * std::abs(lhs) + 1e-15);
}

TEST(Heat2D, RowAndCellKernelsGiveTheSameBits) {
  // Eigen runs the row kernels; the cell kernels are what Thrust/CUDA run. Run both on the CPU.
  std::mt19937_64 rng(24);
  for (Index n : {3, 4, 17}) {
    Heat2D<> p(n);
    const auto un = static_cast<std::uint32_t>(n);
    const Vector y = random_vector(n * n, rng, -1, 1), a = random_vector(n * n, rng, -1, 1);
    const Vector theta = p.default_parameters();
    const std::vector<double>& profile = p.source_profile();
    Vector f_rows(n * n), f_cells(n * n), out_rows(n * n), out_cells(n * n), g_rows(2);
    p.rhs(0.0, y, theta, f_rows);
    p.vjp(0.0, y, theta, a, out_rows, g_rows);
    B::for_each_index(n * n, detail::Heat2DRhsCellKernel{y.data(), theta.data(), profile.data(),
                                                         f_cells.data(), un});
    B::for_each_index(
        n * n, detail::Heat2DVjpStateCellKernel{theta.data(), a.data(), out_cells.data(), un});
    const Sums<2> g = B::sum_index<2>(
        n * n, detail::Heat2DVjpParameterCellKernel{y.data(), a.data(), profile.data(), un});
    EXPECT_EQ(f_rows, f_cells) << "n = " << n;
    EXPECT_EQ(out_rows, out_cells) << "n = " << n;
    for (int k = 0; k < 2; ++k) EXPECT_NEAR(g_rows[k], g[k], 1e-13) << "n = " << n;
  }
}

TEST(Heat2D, DefaultsAndInitialState) {
  EXPECT_EQ(Heat2D<>::default_parameters(), (Vector{{0.2, 0.001}}));
  EXPECT_EQ(Heat2D<>::parameter_names(), (std::vector<std::string>{"kappa", "s0"}));
  const Index n = 40;
  Heat2D<> p(n);
  EXPECT_EQ(p.grid_size(), 40);
  EXPECT_EQ(p.cell_count(), 1600);
  EXPECT_EQ(p.state_size(), 1600);
  EXPECT_EQ(p.parameter_size(), 2);
  const Vector y = p.default_initial_state(7);
  EXPECT_EQ(y, p.default_initial_state(7));  // deterministic
  EXPECT_NE(y, p.default_initial_state(8));  // the seed matters
  // Without noise: the bump, peak near (0.375, 0.625)·39 = (14.6, 24.4), width 5.
  const Vector smooth = p.default_initial_state(7, 0.0);
  Index argmax = 0;
  smooth.maxCoeff(&argmax);
  EXPECT_EQ(argmax / n, 15);
  EXPECT_EQ(argmax % n, 24);
  EXPECT_GT(smooth.maxCoeff(), 0.95);
  EXPECT_GT(smooth.minCoeff(), 0.0);
  EXPECT_LT((y - smooth).cwiseAbs().maxCoeff(), 0.05);
  EXPECT_GT((y - smooth).cwiseAbs().maxCoeff(), 0.04);
}

TEST(Heat2D, HeatLeavesOnlyThroughTheWalls) {
  // Σ f = −κ Σ_cells m_cell u_cell + s₀ Σ g, with m the number of wall neighbours of a cell
  // (2 at corners, 1 along edges, 0 inside): the interior stencil moves heat, never makes any.
  std::mt19937_64 rng(26);
  for (Index n : {3, 7, 32}) {
    Heat2D<> p(n);
    const Vector y = random_vector(n * n, rng, 0, 1), theta{{0.25, 0.3}};
    Vector f(n * n);
    p.rhs(0.0, y, theta, f);
    double wall = 0.0, heater = 0.0;
    for (Index r = 0; r < n; ++r)
      for (Index c = 0; c < n; ++c) {
        const int m = (r == 0) + (r == n - 1) + (c == 0) + (c == n - 1);
        wall += m * y[r * n + c];
        heater += p.source_shape(r, c);
      }
    EXPECT_NEAR(f.sum(), -0.25 * wall + 0.3 * heater, 1e-12 * (wall + heater)) << "n = " << n;
  }
}

TEST(Heat2D, MaxPrincipleAndDecayWithoutTheHeater) {
  // Euler with dt = 1/(4κ) is monotone: max |u| never grows, and with u ≥ 0 the total heat and
  // the energy ½|u|² fall every step.
  Heat2D<> p(24);
  const Vector theta = Heat2D<>::default_parameters(0.2, 0.0);
  EXPECT_DOUBLE_EQ(Heat2D<>::max_principle_dt_euler(0.2), 1.25);
  EXPECT_LT(Heat2D<>::max_principle_dt_euler(0.2), p.max_stable_dt_euler(0.2));
  // A hair below the bound, so that the centre's weight 1 − 4κdt is not rounded below zero.
  const double dt = 0.95 * Heat2D<>::max_principle_dt_euler(0.2);
  Vector y = p.default_initial_state(3, 0.05).cwiseAbs();
  double max_before = y.maxCoeff(), heat_before = y.sum(), energy_before = y.squaredNorm();
  for (int s = 0; s < 200; ++s) {
    y = run_by_hand(p, y, theta, dt, 1, false);
    ASSERT_LE(y.maxCoeff(), max_before) << "step " << s;
    ASSERT_GE(y.minCoeff(), 0.0) << "step " << s;
    ASSERT_LT(y.sum(), heat_before) << "step " << s;
    ASSERT_LT(y.squaredNorm(), energy_before) << "step " << s;
    max_before = y.maxCoeff();
    heat_before = y.sum();
    energy_before = y.squaredNorm();
  }
  // With the heater the field settles at −κ∇²u = s₀ g: f → 0.
  const Vector heated = Heat2D<>::default_parameters(0.2, 0.01);
  Vector f(y.size());
  const Vector settled = run_by_hand(p, Vector::Zero(y.size()), heated, 1.0, 3000, false);
  p.rhs(0.0, settled, heated, f);
  EXPECT_LT(f.cwiseAbs().maxCoeff(), 1e-6 * 0.01);
  EXPECT_GT(settled.minCoeff(), 0.0);
}

TEST(Heat2D, EulerAndRk4StabilityLimitsAreSharp) {
  Heat2D<> p(16);
  const double rho = p.laplacian_spectral_radius();
  EXPECT_NEAR(rho, 8.0 * std::pow(std::cos(std::numbers::pi / 34.0), 2), 1e-14);
  EXPECT_NEAR(p.max_stable_dt_euler(0.2), 2.0 / (0.2 * rho), 1e-14);
  EXPECT_NEAR(p.max_stable_dt_rk4(0.5), 2.785293563405282 / (0.5 * rho), 1e-14);
  // The n-independent bounds in the header hold for every n.
  for (Index n : {3, 16, 1024, 46340}) {
    EXPECT_GT(Heat2D<>(n).max_stable_dt_euler(0.2), 1.25) << n;
    EXPECT_GT(Heat2D<>(n).max_stable_dt_rk4(0.2), 0.348 / 0.2) << n;
  }
  EXPECT_THROW(p.max_stable_dt_euler(0.0), InvalidArgument);
  EXPECT_THROW(p.max_stable_dt_rk4(-1.0), InvalidArgument);
  EXPECT_THROW(Heat2D<>::max_principle_dt_euler(std::nan("")), InvalidArgument);

  const Vector theta = p.default_parameters();
  const Vector y0 = p.default_initial_state(5);
  const double bound = y0.cwiseAbs().maxCoeff() + 1.0;
  for (bool rk4 : {false, true}) {
    const double limit = rk4 ? p.max_stable_dt_rk4(0.2) : p.max_stable_dt_euler(0.2);
    const Vector stable = run_by_hand(p, y0, theta, 0.95 * limit, 400, rk4);
    EXPECT_TRUE(stable.allFinite()) << (rk4 ? "rk4" : "euler");
    EXPECT_LT(stable.cwiseAbs().maxCoeff(), bound) << (rk4 ? "rk4" : "euler");
    const Vector unstable = run_by_hand(p, y0, theta, 1.05 * limit, 400, rk4);
    EXPECT_FALSE(unstable.allFinite() && unstable.cwiseAbs().maxCoeff() < 1e3)
        << (rk4 ? "rk4" : "euler") << ": max |u| = " << unstable.cwiseAbs().maxCoeff();
  }
}

Objective<B> squared_misfit(Vector target) {
  return Objective<B>([d = std::move(target)](double, const Vector& y, Vector& grad) {
    grad = y - d;
    return 0.5 * grad.squaredNorm();
  });
}

TEST(Heat2D, AdjointOfTheLinearProblemIsTheForwardRunDoubled) {
  // Without the heater an Euler step is the symmetric matrix M = I + dt κ ∇², so for
  // J = ½|u_N|² = ½|M^N u_0|²,  dJ/du_0 = M^N M^N u_0 = u_{2N}.
  Heat2D<> p(12);
  const Vector theta = Heat2D<>::default_parameters(0.2, 0.0);
  const Vector y0 = p.default_initial_state(9);
  const Index steps = 40;
  ExplicitRungeKutta stepper(p, ButcherTableau::euler(), StepControl::fixed(0.0, 1.0, steps));
  StoreAllAdjoint driver(stepper, Objective<B>::terminal_squared_norm());
  const auto result = driver.run(y0, theta);
  const Vector y2n = run_by_hand(p, y0, theta, 1.0, 2 * steps, false);
  EXPECT_LT((result.grad_y0 - y2n).cwiseAbs().maxCoeff(), 1e-13 * y2n.cwiseAbs().maxCoeff());
}

TEST(Heat2D, StoreAllGradientMatchesFiniteDifferencesOfTheRun) {
  Heat2D<> p(10);
  const Vector y0 = p.default_initial_state(4);
  const Vector theta = Heat2D<>::default_parameters(0.2, 0.05);
  const Vector target = p.default_initial_state(11, 0.0) * 0.3;
  const auto objective = squared_misfit(target);
  for (const char* method : {"euler", "rk4"}) {
    ExplicitRungeKutta stepper(p, ButcherTableau::by_name(method),
                               StepControl::fixed(0.0, 1.0, 60));
    StoreAllAdjoint driver(stepper, objective);
    const auto result = driver.run(y0, theta);
    EXPECT_EQ(result.summary.reversed_steps, 60);
    for (int which : {0, 1}) {
      const auto check = testing::directional_fd(
          stepper, objective, y0, theta, which == 0 ? result.grad_y0 : result.grad_theta, which,
          31 + static_cast<std::uint64_t>(which), 1e-6);
      EXPECT_LT(check.rel_error(), 1e-7) << method << (which == 0 ? " dJ/dy0" : " dJ/dtheta")
                                         << ": adjoint " << check.adjoint << ", fd " << check.fd;
    }
    // Each parameter on its own (the directional check mixes them).
    for (int k = 0; k < 2; ++k) {
      const double eps = 1e-6 * std::abs(theta[k]);
      Vector plus = theta, minus = theta;
      plus[k] += eps;
      minus[k] -= eps;
      const double fd = (forward_loss(stepper, objective, y0, plus) -
                         forward_loss(stepper, objective, y0, minus)) /
                        (2 * eps);
      EXPECT_NEAR(result.grad_theta[k], fd, 1e-7 * std::abs(fd)) << method << " theta_" << k;
    }
  }
}

TEST(Heat2D, CheckpointedAndOnDiskRunsGiveTheStoreAllBits) {
  Heat2D<> p(9);
  const Vector y0 = p.default_initial_state(2), theta = p.default_parameters();
  const auto objective = squared_misfit(Vector::Constant(81, 0.1));
  ExplicitRungeKutta stepper(p, ButcherTableau::euler(), StepControl::fixed(0.0, 1.0, 100));
  StoreAllAdjoint store_all(stepper, objective);
  const auto reference = store_all.run(y0, theta);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("rewind-heat2d-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  CheckpointOptions options;
  options.disk.directory = dir;
  options.drift_policy = DriftPolicy::fail;
  CheckpointedAdjoint driver(stepper, objective, options);
  for (const auto& factory : {revolve_schedule(4), on_disk(revolve_schedule(5))}) {
    const auto result = driver.run(y0, theta, factory);
    EXPECT_EQ(result.loss, reference.loss) << result.summary.schedule;
    EXPECT_EQ(result.grad_y0, reference.grad_y0) << result.summary.schedule;
    EXPECT_EQ(result.grad_theta, reference.grad_theta) << result.summary.schedule;
    EXPECT_GT(result.summary.recomputed_steps, 0);
  }
  std::filesystem::remove_all(dir);
}

TEST(Heat2D, RunsAtTheExampleSize) {
  // n = 1024: 2^20 unknowns, 8 MiB per state (examples/long_horizon_offload.cpp).
  Heat2D<> p(1024);
  EXPECT_EQ(p.state_size(), Index{1} << 20);
  const Vector y = p.default_initial_state(), theta = p.default_parameters();
  Vector f(p.state_size()), out_y(p.state_size()), out_theta(2);
  p.rhs(0.0, y, theta, f);
  p.vjp(0.0, y, theta, f, out_y, out_theta);
  EXPECT_TRUE(f.allFinite());
  EXPECT_TRUE(out_y.allFinite());
  EXPECT_TRUE(out_theta.allFinite());
  EXPECT_GT(p.max_stable_dt_euler(), 1.25);
}

#ifdef REWIND_TEST_HAS_THRUST
// The cell kernels through the Thrust backend (CPP device system on CPU builds: the functors
// CUDA runs), against the row kernels of the Eigen backend.
TEST(Heat2D, ThrustBackendAgreesWithEigen) {
  using T = ThrustBackend;
  std::mt19937_64 rng(27);
  auto to_host = [](const T::Vector& x) {
    std::vector<double> h(static_cast<std::size_t>(T::size(x)));
    T::copy_to_host(x, h);
    return Vector(Eigen::Map<const Vector>(h.data(), static_cast<Eigen::Index>(h.size())));
  };
  auto to_thrust = [](const Vector& x) {
    T::Vector t = T::zeros(static_cast<Index>(x.size()));
    T::copy_from_host(std::span<const double>(x.data(), static_cast<std::size_t>(x.size())), t);
    return t;
  };
  for (Index n : {3, 5, 33}) {
    Heat2D<B> pe(n);
    Heat2D<T> pt(n);
    EXPECT_EQ(to_host(pt.default_initial_state(3)), pe.default_initial_state(3));
    EXPECT_EQ(to_host(pt.default_parameters()), pe.default_parameters());
    const Vector y = random_vector(n * n, rng, -1, 1), a = random_vector(n * n, rng, -1, 1);
    const Vector theta{{0.3, 0.2}};
    Vector fe(n * n), oye(n * n), ote(2);
    T::Vector ft = T::zeros(n * n), oyt = T::zeros(n * n), ott = T::zeros(2);
    pe.rhs(0.0, y, theta, fe);
    pt.rhs(0.0, to_thrust(y), to_thrust(theta), ft);
    EXPECT_EQ(to_host(ft), fe) << "n = " << n;
    pe.vjp(0.0, y, theta, a, oye, ote);
    pt.vjp(0.0, to_thrust(y), to_thrust(theta), to_thrust(a), oyt, ott);
    EXPECT_EQ(to_host(oyt), oye) << "n = " << n;
    const Vector gt = to_host(ott);
    for (int k = 0; k < 2; ++k) EXPECT_NEAR(gt[k], ote[k], 1e-13) << "n = " << n;
  }
}
#endif

}  // namespace
}  // namespace rwd
