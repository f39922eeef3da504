// Gray–Scott: rhs and vjp against an independent modulo implementation (corners and edges
// included), the two kernel shapes (rows on Eigen, cells on devices) giving the same bits, the
// seeded initial state, the RK4 stability limit, pattern formation with the defaults, and the
// 10^6-unknown size. The contract every problem keeps (finite differences by random directions
// and entry by entry, outputs overwritten, sizes refused) is checked in problem_contract_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

#include "rewind/problems/gray_scott.hpp"
#include "support/random_data.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vector = B::Vector;

using testing::random_vector;

// Textbook implementation with (r, c) indexing and modulo wrap-around.
struct Reference {
  Index n;
  Index at(Index r, Index c) const { return ((r + n) % n) * n + ((c + n) % n); }
  double lap(const double* x, Index r, Index c) const {
    return x[at(r - 1, c)] + x[at(r + 1, c)] + x[at(r, c - 1)] + x[at(r, c + 1)] -
           4.0 * x[at(r, c)];
  }
  Vector rhs(const Vector& y, const Vector& th) const {
    const Index cells = n * n;
    const double *u = y.data(), *v = y.data() + cells;
    Vector f(2 * cells);
    for (Index r = 0; r < n; ++r)
      for (Index c = 0; c < n; ++c) {
        const Index k = at(r, c);
        const double uvv = u[k] * v[k] * v[k];
        f[k] = th[0] * lap(u, r, c) - uvv + th[2] * (1 - u[k]);
        f[cells + k] = th[1] * lap(v, r, c) + uvv - (th[2] + th[3]) * v[k];
      }
    return f;
  }
  // (∂f/∂θ)ᵀ a.
  Vector theta_vjp(const Vector& y, const Vector& a) const {
    const Index cells = n * n;
    const double *u = y.data(), *v = y.data() + cells;
    Vector g = Vector::Zero(4);
    for (Index r = 0; r < n; ++r)
      for (Index c = 0; c < n; ++c) {
        const Index k = at(r, c);
        g[0] += a[k] * lap(u, r, c);
        g[1] += a[cells + k] * lap(v, r, c);
        g[2] += a[k] * (1 - u[k]) - a[cells + k] * v[k];
        g[3] -= a[cells + k] * v[k];
      }
    return g;
  }
};

// A random state in the physically meaningful range u, v ∈ [0, 1].
Vector random_state(Index n, std::mt19937_64& rng) {
  return random_vector(2 * n * n, rng, 0, 1);
}

TEST(GrayScott, RhsMatchesTheModuloFormula) {
  std::mt19937_64 rng(11);
  for (Index n : {3, 4, 5, 8, 31}) {
    GrayScott<> p(n);
    const Vector y = random_state(n, rng);
    const Vector theta = p.default_parameters() + random_vector(4, rng, 0.0, 0.01);
    Vector f(p.state_size());
    p.rhs(0.0, y, theta, f);
    const Vector expected = Reference{n}.rhs(y, theta);
    EXPECT_LT((f - expected).cwiseAbs().maxCoeff(), 1e-15) << "n = " << n;
  }
}

TEST(GrayScott, RhsAtUniformStatesIsTheReactionAlone) {
  GrayScott<> p(5);
  const Vector theta = p.default_parameters();
  Vector f(50);
  // (u, v) = (1, 0) is the trivial equilibrium.
  Vector y(50);
  y << Vector::Ones(25), Vector::Zero(25);
  p.rhs(0.0, y, theta, f);
  EXPECT_EQ(f, Vector::Zero(50));
  // Uniform (0.5, 0.25): ∇² = 0, u' = −0.5·0.0625 + 0.037·0.5, v' = 0.5·0.0625 − 0.097·0.25.
  y << Vector::Constant(25, 0.5), Vector::Constant(25, 0.25);
  p.rhs(0.0, y, theta, f);
  for (Index k = 0; k < 25; ++k) {
    EXPECT_DOUBLE_EQ(f[k], -0.03125 + 0.0185);
    EXPECT_DOUBLE_EQ(f[25 + k], 0.03125 - 0.02425);
  }
}

TEST(GrayScott, LaplacianWrapsAroundCornersAndEdges) {
  // A single unit of u at one corner, D_u = 1, no reaction: u' is the stencil itself.
  const Index n = 4;
  GrayScott<> p(n);
  Vector y = Vector::Zero(32), f(32);
  y[0] = 1.0;  // (0, 0)
  p.rhs(0.0, y, Vector{{1.0, 0.0, 0.0, 0.0}}, f);
  Vector expected = Vector::Zero(32);
  expected[0] = -4.0;
  expected[1] = 1.0;   // (0, 1)
  expected[3] = 1.0;   // (0, 3): left neighbour across the edge
  expected[4] = 1.0;   // (1, 0)
  expected[12] = 1.0;  // (3, 0): upper neighbour across the edge
  EXPECT_EQ(f, expected);
}

TEST(GrayScott, DotProductTestForTheDiffusionPart) {
  // With F = k = 0 and v = 0 the model is linear in u (u' = D_u ∇²u), so the transposition test
  // ⟨a, f(w)⟩ = ⟨Jᵀa, w⟩ holds to round-off without finite differences; with the symmetric
  // Laplacian, Jᵀ = J there.
  std::mt19937_64 rng(13);
  const Index n = 9, cells = 81;
  GrayScott<> p(n);
  const Vector theta{{0.3, 0.2, 0.0, 0.0}};
  Vector w = Vector::Zero(2 * cells), a = Vector::Zero(2 * cells);
  w.head(cells) = random_vector(cells, rng, -1, 1);
  a.head(cells) = random_vector(cells, rng, -1, 1);
  Vector f(2 * cells), out_y(2 * cells), out_theta(4);
  p.rhs(0.0, w, theta, f);
  p.vjp(0.0, w, theta, a, out_y, out_theta);
  EXPECT_NEAR(a.dot(f), out_y.dot(w), 1e-14 * std::abs(a.dot(f)) + 1e-15);
}

TEST(GrayScott, ParameterGradientMatchesTheModuloFormula) {
  std::mt19937_64 rng(14);
  for (Index n : {3, 6, 20}) {
    GrayScott<> p(n);
    const Vector y = random_state(n, rng), a = random_vector(2 * n * n, rng, -1, 1);
    Vector out_y(2 * n * n), out_theta(4);
    p.vjp(0.0, y, p.default_parameters(), a, out_y, out_theta);
    const Vector expected = Reference{n}.theta_vjp(y, a);
    EXPECT_LT((out_theta - expected).cwiseAbs().maxCoeff(), 1e-12) << "n = " << n;
  }
}

TEST(GrayScott, RowAndCellKernelsGiveTheSameBits) {
  // Eigen runs the row kernels; the cell kernels are what Thrust/CUDA run. Run both on the CPU.
  std::mt19937_64 rng(15);
  for (Index n : {3, 4, 17}) {
    GrayScott<> p(n);
    const auto un = static_cast<std::uint32_t>(n), cells = static_cast<std::uint32_t>(n * n);
    const Vector y = random_state(n, rng), a = random_vector(2 * n * n, rng, -1, 1);
    const Vector theta = p.default_parameters();
    Vector f_rows(2 * n * n), f_cells(2 * n * n), out_rows(2 * n * n), out_cells(2 * n * n);
    Vector g_rows(4);
    p.rhs(0.0, y, theta, f_rows);
    p.vjp(0.0, y, theta, a, out_rows, g_rows);
    B::for_each_index(
        n * n, detail::GrayScottRhsCellKernel{y.data(), theta.data(), f_cells.data(), un, cells});
    B::for_each_index(n * n, detail::GrayScottVjpStateCellKernel{y.data(), theta.data(), a.data(),
                                                                 out_cells.data(), un, cells});
    const Sums<4> g = B::sum_index<4>(
        n * n, detail::GrayScottVjpParameterCellKernel{y.data(), a.data(), un, cells});
    EXPECT_EQ(f_rows, f_cells) << "n = " << n;
    EXPECT_EQ(out_rows, out_cells) << "n = " << n;
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(g_rows[k], g[k], 1e-13) << "n = " << n;
  }
}

TEST(GrayScott, DefaultsAndSeededInitialState) {
  EXPECT_EQ(GrayScott<>::default_parameters(), (Vector{{0.16, 0.08, 0.037, 0.06}}));
  EXPECT_EQ(GrayScott<>::parameter_names().size(), 4u);
  const Index n = 40, cells = 1600;
  GrayScott<> p(n);
  EXPECT_EQ(p.grid_size(), 40);
  EXPECT_EQ(p.cell_count(), 1600);
  EXPECT_EQ(p.state_size(), 3200);
  const Vector y = p.default_initial_state(7);
  EXPECT_EQ(y, p.default_initial_state(7));  // deterministic
  EXPECT_NE(y, p.default_initial_state(8));  // the seed matters
  // Square of half-width max(1, n/10) = 4 around the centre 20: rows and columns [16, 24).
  Index seeded = 0;
  for (Index r = 0; r < n; ++r)
    for (Index c = 0; c < n; ++c) {
      const double u = y[r * n + c], v = y[cells + r * n + c];
      const bool inside = r >= 16 && r < 24 && c >= 16 && c < 24;
      if (inside) {
        ++seeded;
        EXPECT_GE(u, 0.49);
        EXPECT_LE(u, 0.51);
        EXPECT_GE(v, 0.24);
        EXPECT_LE(v, 0.26);
        EXPECT_NE(u, 0.5);  // the noise is there
      } else {
        EXPECT_EQ(u, 1.0);
        EXPECT_EQ(v, 0.0);
      }
    }
  EXPECT_EQ(seeded, 64);
  // Small grids still get a seeded square.
  const Vector small = GrayScott<>(3).default_initial_state();
  EXPECT_LT(small.head(9).minCoeff(), 0.6);
}

TEST(GrayScott, Rk4StabilityLimitIsSharp) {
  const double limit = GrayScott<>::max_stable_dt_rk4(0.16, 0.08);
  EXPECT_NEAR(limit, 2.785293563405282 / 1.28, 1e-15);
  EXPECT_GT(limit, 1.0);  // dt = 1 is stable for the defaults
  EXPECT_THROW(GrayScott<>::max_stable_dt_rk4(0.0, 0.0), InvalidArgument);
  // Hand-written RK4 on n = 32 (even n: the checkerboard mode reaches eigenvalue −8).
  GrayScott<> p(32);
  const Vector theta = p.default_parameters();
  auto run = [&](double dt, int steps) {
    Vector y = p.default_initial_state(1), k1(y.size()), k2(y.size()), k3(y.size()), k4(y.size()),
           t(y.size());
    for (int s = 0; s < steps; ++s) {
      p.rhs(0, y, theta, k1);
      t = y + 0.5 * dt * k1;
      p.rhs(0, t, theta, k2);
      t = y + 0.5 * dt * k2;
      p.rhs(0, t, theta, k3);
      t = y + dt * k3;
      p.rhs(0, t, theta, k4);
      y += dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
    }
    return y;
  };
  const Vector stable = run(0.95 * limit, 300);
  EXPECT_TRUE(stable.allFinite());
  EXPECT_LE(stable.cwiseAbs().maxCoeff(), 1.01);
  const Vector unstable = run(1.1 * limit, 300);
  EXPECT_FALSE(unstable.allFinite() && unstable.cwiseAbs().maxCoeff() < 10.0);

  // With the defaults and dt = 1 the seeded square grows into a pattern and stays bounded.
  const Vector y = run(1.0, 4000);
  const auto v = y.tail(32 * 32);
  ASSERT_TRUE(y.allFinite());
  EXPECT_GE(y.minCoeff(), 0.0);
  EXPECT_LE(y.maxCoeff(), 1.0);
  const double area = (v.array() > 0.1).cast<double>().mean();
  EXPECT_GT(area, 3.0 * 36.0 / 1024.0) << "v > 0.1 covers " << area;  // seeded: 6 × 6 cells
}

TEST(GrayScott, RunsAtAMillionUnknowns) {
  GrayScott<> p(708);
  EXPECT_EQ(p.state_size(), 1002528);
  const Vector y = p.default_initial_state(), theta = p.default_parameters();
  Vector f(p.state_size()), out_y(p.state_size()), out_theta(4);
  p.rhs(0.0, y, theta, f);
  p.vjp(0.0, y, theta, f, out_y, out_theta);
  EXPECT_TRUE(f.allFinite());
  EXPECT_TRUE(out_y.allFinite());
  EXPECT_TRUE(out_theta.allFinite());
  // Far from the seeded square (u, v) = (1, 0) is an equilibrium.
  EXPECT_EQ(f[0], 0.0);
  EXPECT_EQ(f[p.cell_count()], 0.0);
}

}  // namespace
}  // namespace rwd
