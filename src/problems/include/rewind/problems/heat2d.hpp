// rewind/problems/heat2d.hpp — the 2D heat equation on an n × n grid: cold walls, a heater.
//
//   u' = κ ∇²u + s₀ g,    g_{r,c} = p_r p_c,    p_i = exp(−(i − (n−1)/2)² / (2σ²)),
//                                                σ = max(1, n/16)
//
// ∇² is the 5-point Laplacian with unit grid spacing and zero Dirichlet boundaries: the grid is
// the interior of a square whose walls are held at u = 0, so a neighbour outside [0, n)² counts
// as 0:  (∇²u)_{r,c} = u_{r−1,c} + u_{r+1,c} + u_{r,c−1} + u_{r,c+1} − 4 u_{r,c}.
// g is a fixed Gaussian heater in the centre (peak 1); heat leaves only through the walls, so
// the field tends to the steady state −κ∇²u = s₀ g (time scale n² / (2π²κ) steps of dt = 1).
// State: u, n² values, row-major (cell (r, c) at r·n + c). Parameters θ = (κ, s₀), the
// diffusivity and the heater's strength; defaults (0.2, 0.001). Unit spacing makes κ a rate
// per cell, so the stable step size does not depend on n and one dt serves every grid size;
// lengths are in cells (a physical spacing h only rescales κ by 1/h²).
// Sizes: 3 ≤ n ≤ 46340 (n² < 2^31, 32-bit cell indices); n = 1024 is 2^20 unknowns, 8 MiB.
//
// Explicit stability. ∇² (Dirichlet) is symmetric negative definite with eigenvalues
// −4 (sin²(jπ/(2(n+1))) + sin²(kπ/(2(n+1)))), j, k = 1 … n, so its spectral radius is
//   ρ = 8 cos²(π / (2(n+1)))  < 8                      (laplacian_spectral_radius())
// and a method whose stability region holds [−L, 0] of the real axis is stable for κ·dt·ρ ≤ L:
//   Euler (L = 2):        dt ≤ 2 / (κρ)               (max_stable_dt_euler(κ); 1/(4κ) < it)
//   RK4   (L = 2.7853):   dt ≤ 2.7853 / (κρ)          (max_stable_dt_rk4(κ);   0.348/κ < it)
// These limits are sharp (tests/problems/heat2d_test.cpp: 0.95× stays bounded, 1.05× blows up;
// the source only adds a bounded forcing). Euler with dt ≤ 1/(4κ) (max_principle_dt_euler) is
// moreover monotone: each new value is a combination of old ones with weights ≥ 0 summing to
// ≤ 1, so without the heater max |u| never grows. For the defaults (κ = 0.2) dt = 1 is stable
// and monotone for Euler and RK4 at every n.
//
// Default initial state (default_initial_state(seed, noise)): a smooth bump
// exp(−|x − x₀|² / (2w²)) centred at x₀ = (0.375, 0.625)·(n−1), w = max(1, n/8), plus
// noise·ξ with ξ ∈ [−1, 1) from a counter-based hash of (seed, cell) — deterministic, computed
// on the device, and rich in every Fourier mode (which the stability tests rely on).
//
//   rwd::Heat2D<> heat(1024);                          // 2^20 unknowns, 8 MiB per state
//   auto theta = heat.default_parameters();            // (κ, s₀) = (0.2, 0.001)
//   auto y = heat.default_initial_state();
//   double dt = 0.9 * heat.max_stable_dt_euler(0.2);   // ≈ 1.12
//   rwd::ExplicitRungeKutta stepper(heat, rwd::ButcherTableau::euler(),
//                                   rwd::StepControl::fixed(0.0, dt, 100000));
//
// Why this problem: it is the simplest PDE whose state is as large as you like (the long-horizon
// example, examples/long_horizon_offload.cpp, takes n = 1024), its adjoint is known in closed
// form (the Laplacian is symmetric, so for s₀ = 0 and Euler ∂(½|u_N|²)/∂u_0 = u_{2N}), and it
// is linear and well-conditioned, so finite differences of a whole run agree with the adjoint to
// many digits.
//
// Cost: rhs is one pass over memory (reads u and its neighbours, writes f); vjp is one pass too:
// (∂f/∂u)ᵀ a = κ∇²a and, from the same ∇²a, (∂f/∂θ)ᵀ a = (Σ a ∇²u, Σ a g) summed as
// (Σ u ∇²a, Σ a g) — equal because ∇² is symmetric. At n = 1024 on one core: rhs ≈ 1.2 ms,
// vjp ≈ 2.1 ms, an Euler step ≈ 1.8 ms. No allocation: the heater profile p (n values) and a
// row of n zeros (the wall, for the row kernels) are built in the constructor. Kernels come in
// two shapes with the same arithmetic: one thread per cell (Thrust/CUDA) and one row per index
// with a vectorisable interior loop (Eigen); compiled by the same compiler they give the same
// bits for f and (∂f/∂u)ᵀ a (as in gray_scott.hpp), and (∂f/∂θ)ᵀ a to round-off (the sums run in
// a different order).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/host_device.hpp"
#include "rewind/problems/detail/problem_support.hpp"
#include "rewind/problems/problem_facts.hpp"
#include "rewind/simd_clones.hpp"
#include "rewind/types.hpp"

namespace rwd {
namespace detail {

// --- the arithmetic, written once --------------------------------------------------------------
// Both kernel shapes call these functions with the same operands in the same order.

struct Heat2DParameters {
  double kappa, source;
  REWIND_HOST_DEVICE static Heat2DParameters load(const double* theta) {
    return {theta[0], theta[1]};
  }
};

// 5-point Laplacian from the centre value and the four neighbours (0 beyond a wall).
REWIND_HOST_DEVICE inline double heat2d_laplacian(double centre, double up, double down,
                                                  double left, double right) {
  return (((up + down) + left) + right) - 4.0 * centre;
}

// f = κ ∇²u + (s₀ p_r) p_c; s₀ p_r = heat2d_source_row(p, p_r) is formed once per row.
REWIND_HOST_DEVICE inline double heat2d_source_row(const Heat2DParameters& p, double p_row) {
  return p.source * p_row;
}
REWIND_HOST_DEVICE inline double heat2d_rhs_cell(const Heat2DParameters& p, double lap_u,
                                                 double source_row, double p_col) {
  return p.kappa * lap_u + source_row * p_col;
}

// (∂f/∂u)ᵀ a = κ ∇²a: the Dirichlet Laplacian is symmetric.
REWIND_HOST_DEVICE inline double heat2d_vjp_cell(const Heat2DParameters& p, double lap_a) {
  return p.kappa * lap_a;
}

// One cell's terms of (∂f/∂θ)ᵀ a = (Σ a ∇²u, Σ a g), the first one summed as Σ u ∇²a (equal,
// ∇² being symmetric): ∇²a is what (∂f/∂u)ᵀ a needs anyway, so one pass over a serves both.
REWIND_HOST_DEVICE inline Sums<2> heat2d_parameter_terms(double u, double lap_a, double a,
                                                         double p_row, double p_col) {
  Sums<2> s;
  s.v[0] = u * lap_a;
  s.v[1] = a * (p_row * p_col);
  return s;
}

// --- one cell per index (any backend; the shape a GPU wants) -----------------------------------

// Cell k = row·n + col and the values of its four neighbours, 0 beyond a wall (32-bit indices:
// the constructor of Heat2D guarantees n² < 2^31).
struct Heat2DStencil {
  std::uint32_t c, row, col, n;

  REWIND_HOST_DEVICE Heat2DStencil(Index k, std::uint32_t side) : n(side) {
    c = static_cast<std::uint32_t>(k);
    row = c / n;
    col = c - row * n;
  }

  REWIND_HOST_DEVICE double laplacian(const double* x) const {
    const double up = row == 0 ? 0.0 : x[c - n];
    const double down = row + 1 == n ? 0.0 : x[c + n];
    const double left = col == 0 ? 0.0 : x[c - 1];
    const double right = col + 1 == n ? 0.0 : x[c + 1];
    return heat2d_laplacian(x[c], up, down, left, right);
  }
};

struct Heat2DRhsCellKernel {
  const double* y;
  const double* theta;
  const double* profile;  // p, n values
  double* f;
  std::uint32_t n;

  REWIND_HOST_DEVICE void operator()(Index k) const {
    const Heat2DParameters p = Heat2DParameters::load(theta);
    const Heat2DStencil s(k, n);
    f[s.c] =
        heat2d_rhs_cell(p, s.laplacian(y), heat2d_source_row(p, profile[s.row]), profile[s.col]);
  }
};

struct Heat2DVjpStateCellKernel {
  const double* theta;
  const double* a;
  double* out;
  std::uint32_t n;

  REWIND_HOST_DEVICE void operator()(Index k) const {
    const Heat2DParameters p = Heat2DParameters::load(theta);
    const Heat2DStencil s(k, n);
    out[s.c] = heat2d_vjp_cell(p, s.laplacian(a));
  }
};

struct Heat2DVjpParameterCellKernel {
  const double* y;
  const double* a;
  const double* profile;
  std::uint32_t n;

  REWIND_HOST_DEVICE Sums<2> operator()(Index k) const {
    const Heat2DStencil s(k, n);
    return heat2d_parameter_terms(y[s.c], s.laplacian(a), a[s.c], profile[s.row], profile[s.col]);
  }
};

// --- one row per index (host backends: no division, interior loop vectorises) ----------------
// The row functions take explicit pointers to a row and to the rows above and below it (the row
// of zeros beyond a wall), so the row kernels below and the distributed problem
// (rewind/distributed/distributed_heat2d.hpp, whose neighbour rows may be halos received from
// another rank) run the same arithmetic and give the same bits.

// The Laplacian at column c of a row, with 0 beyond the left and right walls.
inline double heat2d_edge_laplacian(const double* row, const double* up, const double* down,
                                    Index c, Index n) {
  return heat2d_laplacian(row[c], up[c], down[c], c == 0 ? 0.0 : row[c - 1],
                          c + 1 == n ? 0.0 : row[c + 1]);
}

// Row r of x and its upper and lower neighbours; beyond a wall, the row of zeros.
struct Heat2DRows {
  const double *row, *up, *down;
  Heat2DRows(const double* x, const double* zero_row, Index r, Index n)
      : row(x + r * n),
        up(r == 0 ? zero_row : x + (r - 1) * n),
        down(r + 1 == n ? zero_row : x + (r + 1) * n) {}
};

// The interior columns 1 … n−2 of one row as loops over __restrict pointers, so that they
// vectorise wherever they are inlined (see gray_scott.hpp for the measurement behind this).
// Outputs never overlap inputs; input rows may overlap each other (the zero row, or u itself),
// which __restrict allows because they are only read.
REWIND_SIMD_CLONES inline void heat2d_rhs_interior(Heat2DParameters p, Index n,
                                                   const double* __restrict u,
                                                   const double* __restrict uu,
                                                   const double* __restrict ud, double source_row,
                                                   const double* __restrict p_col,
                                                   double* __restrict f) {
  for (Index c = 1; c < n - 1; ++c)
    f[c] = heat2d_rhs_cell(p, heat2d_laplacian(u[c], uu[c], ud[c], u[c - 1], u[c + 1]), source_row,
                           p_col[c]);
}

// f on one row from the row u, the rows above (uu) and below (ud), the row's heater value p_row
// and the heater profile p_col (n values).
inline void heat2d_rhs_row(Heat2DParameters p, Index n, const double* u, const double* uu,
                           const double* ud, double p_row, const double* p_col, double* f) {
  const double source_row = heat2d_source_row(p, p_row);
  f[0] = heat2d_rhs_cell(p, heat2d_edge_laplacian(u, uu, ud, 0, n), source_row, p_col[0]);
  heat2d_rhs_interior(p, n, u, uu, ud, source_row, p_col, f);
  f[n - 1] =
      heat2d_rhs_cell(p, heat2d_edge_laplacian(u, uu, ud, n - 1, n), source_row, p_col[n - 1]);
}

struct Heat2DRhsRowKernel {
  const double* y;
  const double* theta;
  const double* profile;   // p, n values
  const double* zero_row;  // n zeros
  double* f;
  Index n;
  Index elements_per_index() const { return n; }  // one row of the grid

  void operator()(Index r) const {
    const Heat2DRows u(y, zero_row, r, n);
    heat2d_rhs_row(Heat2DParameters::load(theta), n, u.row, u.up, u.down, profile[r], profile,
                   f + r * n);
  }
};

// One row of the vjp in one pass over a: out = κ ∇²a, and the row's (Σ u ∇²a, p_r Σ_c a p_c).
// The sums run in four interleaved partial sums each — independent addition chains, so the loop
// still vectorises and is not bound by the latency of one addition per column. Measured at 2^20
// unknowns (one core, SSE2): vjp 4.0 ms as a state pass plus a column-by-column parameter pass,
// 2.8 ms with the partial sums, 2.1 ms fused like this (rhs: 1.1–1.4 ms). The order is
// fixed, so the bits are reproducible; out has the cell kernels' bits, the sums differ from the
// cell kernels' order in the last bits only (tests compare them to 1e-13).
REWIND_SIMD_CLONES inline void heat2d_vjp_interior(
    Heat2DParameters p, Index n, const double* __restrict u, const double* __restrict a,
    const double* __restrict au, const double* __restrict ad, const double* __restrict p_col,
    double* __restrict out, double& lap_sum, double& source_sum) {
  double l[4] = {0.0, 0.0, 0.0, 0.0}, g[4] = {0.0, 0.0, 0.0, 0.0};
  Index c = 1;
  for (; c + 4 <= n - 1; c += 4)
    for (int k = 0; k < 4; ++k) {
      const Index j = c + k;
      const double lap = heat2d_laplacian(a[j], au[j], ad[j], a[j - 1], a[j + 1]);
      out[j] = heat2d_vjp_cell(p, lap);
      l[k] += u[j] * lap;
      g[k] += a[j] * p_col[j];
    }
  for (; c < n - 1; ++c) {
    const double lap = heat2d_laplacian(a[c], au[c], ad[c], a[c - 1], a[c + 1]);
    out[c] = heat2d_vjp_cell(p, lap);
    l[0] += u[c] * lap;
    g[0] += a[c] * p_col[c];
  }
  lap_sum = (l[0] + l[1]) + (l[2] + l[3]);
  source_sum = (g[0] + g[1]) + (g[2] + g[3]);
}

// The vjp on one row, fused: writes the row out = (∂f/∂u)ᵀ a from a's row and the rows above
// (au) and below (ad), and returns the row's part of (∂f/∂θ)ᵀ a (u: y's row). The state part and
// the parameter part share ∇²a, so they are one function, not two passes (the timing above).
inline Sums<2> heat2d_vjp_row(Heat2DParameters p, Index n, const double* u, const double* a,
                              const double* au, const double* ad, double p_row, const double* p_col,
                              double* out) {
  double lap_sum = 0.0, source_sum = 0.0;
  heat2d_vjp_interior(p, n, u, a, au, ad, p_col, out, lap_sum, source_sum);
  const double lap_first = heat2d_edge_laplacian(a, au, ad, 0, n);
  const double lap_last = heat2d_edge_laplacian(a, au, ad, n - 1, n);
  out[0] = heat2d_vjp_cell(p, lap_first);
  out[n - 1] = heat2d_vjp_cell(p, lap_last);
  Sums<2> s;
  s.v[0] = (u[0] * lap_first + lap_sum) + u[n - 1] * lap_last;
  s.v[1] = p_row * ((a[0] * p_col[0] + source_sum) + a[n - 1] * p_col[n - 1]);
  return s;
}

// Writes row r of out = (∂f/∂u)ᵀ a and returns the row's part of (∂f/∂θ)ᵀ a. Called through
// EigenBackend::sum_index, which calls it once per row (the side effect on out relies on that;
// only the sequential Eigen backend runs row kernels). For n ≤ kIndexSumDirectLimit — every
// allowed n — sum_index adds one partial per row in row order: the decomposition that
// DistributedHeat2D's fold reproduces across ranks.
struct Heat2DVjpRowKernel {
  const double* y;
  const double* theta;
  const double* a;
  const double* profile;
  const double* zero_row;
  double* out;
  Index n;
  Index elements_per_index() const { return n; }  // one row of the grid

  Sums<2> operator()(Index r) const {
    const Heat2DRows ar(a, zero_row, r, n);
    return heat2d_vjp_row(Heat2DParameters::load(theta), n, y + r * n, ar.row, ar.up, ar.down,
                          profile[r], profile, out + r * n);
  }
};

// Which kernel shape a backend gets: rows for the sequential CPU backend, cells elsewhere.
template <class B>
inline constexpr bool kHeat2DRowKernels = std::is_same_v<B, EigenBackend>;

// The default initial state's bump: centre (row0, col0) and 1/(2w²) (see the header comment).
struct Heat2DBump {
  double row0, col0, inv_two_w2;
  static Heat2DBump for_grid(Index n) {
    const double w = std::max(1.0, static_cast<double>(n) / 8.0);
    const double last = static_cast<double>(n - 1);
    return {0.375 * last, 0.625 * last, 1.0 / (2.0 * w * w)};
  }
};

// Cell c = row·n + col of the default initial state: the bump plus hashed noise.
REWIND_HOST_DEVICE inline double heat2d_initial_cell(const Heat2DBump& bump, std::uint64_t seed,
                                                     double noise, std::uint32_t c,
                                                     std::uint32_t n) {
  const std::uint32_t row = c / n;
  const std::uint32_t col = c - row * n;
  const double dr = static_cast<double>(row) - bump.row0;
  const double dc = static_cast<double>(col) - bump.col0;
  return ::exp(-(dr * dr + dc * dc) * bump.inv_two_w2) + noise * hash_uniform(seed, c);
}

struct Heat2DInitialStateKernel {
  double* y;
  Heat2DBump bump;
  std::uint64_t seed;
  double noise;
  std::uint32_t n;

  REWIND_HOST_DEVICE void operator()(Index k) const {
    const std::uint32_t c = static_cast<std::uint32_t>(k);
    y[c] = heat2d_initial_cell(bump, seed, noise, c, n);
  }
};

// The heater's 1D profile p_i = exp(−(i − (n−1)/2)² / (2σ²)), σ = max(1, n/16), i = 0 … n−1, on
// the host (g_{r,c} = p_r p_c).
inline std::vector<double> heat2d_heater_profile(Index n) {
  const double sigma = std::max(1.0, static_cast<double>(n) / 16.0);
  const double middle = 0.5 * static_cast<double>(n - 1);
  std::vector<double> p(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) {
    const double d = static_cast<double>(i) - middle;
    p[static_cast<std::size_t>(i)] = std::exp(-d * d / (2.0 * sigma * sigma));
  }
  return p;
}

}  // namespace detail

template <class B = EigenBackend>
class Heat2D {
 public:
  using Backend = B;
  using Vector = typename B::Vector;
  static constexpr const char* name = "heat2d";
  static constexpr Index kMinGridSize = 3;
  static constexpr Index kMaxGridSize = 46340;  // n² < 2^31
  static constexpr double kDefaultDiffusivity = 0.2;
  static constexpr double kDefaultSource = 0.001;
  // RK4's stability boundary on the negative real axis: |R(z)| ≤ 1 for z ∈ [−2.7852…, 0].
  static constexpr double kRk4RealStabilityLimit = 2.785293563405282;

  // n: grid points per side, 3 ≤ n ≤ 46340; the state has n² unknowns.
  explicit Heat2D(Index n) : n_(checked_size(n)), profile_host_(detail::heat2d_heater_profile(n_)) {
    std::vector<double> host(profile_host_);  // [p; zero row]
    host.resize(static_cast<std::size_t>(2 * n_), 0.0);
    aux_ = detail::vector_from_host<B>(std::span<const double>(host));
  }

  Index grid_size() const { return n_; }
  Index cell_count() const { return n_ * n_; }
  Index state_size() const { return n_ * n_; }
  Index parameter_size() const { return 2; }

  // θ = (κ, s₀); defaults (0.2, 0.001).
  static Vector default_parameters(double diffusivity = kDefaultDiffusivity,
                                   double source = kDefaultSource) {
    return detail::vector_from_host<B>({diffusivity, source});
  }
  static std::vector<std::string> parameter_names() { return {"kappa", "s0"}; }

  // The heater's 1D profile p (n values, on the host): g_{r,c} = p_r p_c.
  const std::vector<double>& source_profile() const { return profile_host_; }
  // The heater's shape g_{r,c} = p_r p_c (peak 1 in the centre for odd n), on the host.
  double source_shape(Index row, Index col) const {
    return profile_host_[static_cast<std::size_t>(row)] *
           profile_host_[static_cast<std::size_t>(col)];
  }

  // ρ = 8 cos²(π / (2(n+1))), the largest |eigenvalue| of the Dirichlet 5-point Laplacian.
  double laplacian_spectral_radius() const {
    const double c = std::cos(3.14159265358979323846 / (2.0 * static_cast<double>(n_ + 1)));
    return 8.0 * c * c;
  }
  // The largest explicit-Euler step that is stable: 2 / (κρ) (> 1/(4κ) for every n).
  double max_stable_dt_euler(double diffusivity = kDefaultDiffusivity) const {
    return 2.0 / (checked_kappa(diffusivity, "max_stable_dt_euler") * laplacian_spectral_radius());
  }
  // The largest RK4 step that is stable: 2.7853 / (κρ) (> 0.348/κ for every n).
  double max_stable_dt_rk4(double diffusivity = kDefaultDiffusivity) const {
    return kRk4RealStabilityLimit /
           (checked_kappa(diffusivity, "max_stable_dt_rk4") * laplacian_spectral_radius());
  }
  // The largest Euler step that keeps the update monotone (max principle): 1 / (4κ).
  static double max_principle_dt_euler(double diffusivity = kDefaultDiffusivity) {
    return 0.25 / checked_kappa(diffusivity, "max_principle_dt_euler");
  }

  // A bump at (0.375, 0.625)·(n−1) of width max(1, n/8) plus noise·ξ (see the header comment).
  Vector default_initial_state(std::uint64_t seed = 0, double noise = 0.05) const {
    Vector y = B::zeros(state_size());
    B::for_each_index(cell_count(),
                      detail::Heat2DInitialStateKernel{B::data(y), detail::Heat2DBump::for_grid(n_),
                                                       seed, noise, u32(n_)});
    return y;
  }

  void rhs(double /*t*/, const Vector& y, const Vector& theta, Vector& f) const {
    detail::require_rhs_sizes<B>(name, state_size(), 2, y, theta, f);
    if constexpr (detail::kHeat2DRowKernels<B>) {
      B::for_each_index(n_, detail::Heat2DRhsRowKernel{B::data(y), B::data(theta), profile(),
                                                       zero_row(), B::data(f), n_});
    } else {
      B::for_each_index(cell_count(), detail::Heat2DRhsCellKernel{B::data(y), B::data(theta),
                                                                  profile(), B::data(f), u32(n_)});
    }
  }

  // out_y = (∂f/∂y)ᵀ v = κ∇²v, out_theta = (∂f/∂θ)ᵀ v = (Σ v ∇²u, Σ v g) (both overwritten).
  void vjp(double /*t*/, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    detail::require_vjp_sizes<B>(name, state_size(), 2, y, theta, v, out_y, out_theta);
    Sums<2> s;
    if constexpr (detail::kHeat2DRowKernels<B>) {
      s = B::template sum_index<2>(
          n_, detail::Heat2DVjpRowKernel{B::data(y), B::data(theta), B::data(v), profile(),
                                         zero_row(), B::data(out_y), n_});
    } else {
      using Kernel = detail::OnePassVjpKernel<2, detail::Heat2DVjpStateCellKernel,
                                              detail::Heat2DVjpParameterCellKernel>;
      s = B::template sum_index<2>(cell_count(),
                                   Kernel{{B::data(theta), B::data(v), B::data(out_y), u32(n_)},
                                          {B::data(y), B::data(v), profile(), u32(n_)}});
    }
    const double host[2] = {s.v[0], s.v[1]};
    B::copy_from_host(std::span<const double>(host, 2), out_theta);
  }

 private:
  static Index checked_size(Index n) {
    if (n < kMinGridSize || n > kMaxGridSize)
      detail::fail<InvalidArgument>("Heat2D: grid size n = ", n, " must be in [", kMinGridSize,
                                    ", ", kMaxGridSize,
                                    "] (n >= 3 for a 5-point stencil with an interior, n² < 2^31 "
                                    "for 32-bit cell indices)");
    return n;
  }
  static double checked_kappa(double kappa, const char* what) {
    if (!(kappa > 0.0) || !std::isfinite(kappa))
      detail::fail<InvalidArgument>("Heat2D::", what, ": diffusivity kappa = ", kappa,
                                    " must be finite and > 0");
    return kappa;
  }
  static std::uint32_t u32(Index x) { return static_cast<std::uint32_t>(x); }
  const double* profile() const { return B::data(aux_); }
  const double* zero_row() const { return B::data(aux_) + n_; }

  Index n_;
  Vector aux_;                        // [p (n values); n zeros], on the backend
  std::vector<double> profile_host_;  // p on the host, for source_shape()
};

// What the tools that run problems by name know about Heat2D (rewind/problems/problem_facts.hpp).
// Device form: Heat2D<B> itself; split across ranks: rwd::DistributedHeat2D.
struct Heat2DDeclaration {
  static ProblemFacts facts() {
    // dt = 1 is stable (and monotone) for Euler and RK4 at every n with kappa = 0.2: the limits
    // are 2/(8 kappa) and 2.785/(8 kappa) or more (see the top of this file).
    return {.name = "heat2d",
            .alias = "heat",
            .description =
                "2D heat equation u' = kappa Lap(u) + s0 g on an n x n grid, cold "
                "walls; theta = (kappa, s0)",
            .size_meaning = "grid side n",
            .default_n = 64,
            .default_dt = 1.0,
            .default_steps = 1000,
            .horizon =
                "decays to a steady state (time scale n^2/(2 pi^2 kappa) steps): at n = 64 "
                "it stops changing near step 23 000, reported stationary",
            // A source may heat or cool; the diffusivity must be > 0.
            .parameters = {{"kappa", ParameterDomain::positive}, {"s0", ParameterDomain::any}},
            .fields = {{"u", 0, 1}},
            .grid_fields = true,
            .device_form = true,
            .distributed_form = true};
  }
  static Heat2D<> make(Index n) { return Heat2D<>(n); }
  template <class B>
  using DeviceModel = Heat2D<B>;
};

}  // namespace rwd
