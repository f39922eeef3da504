// rewind/problems/gray_scott.hpp — Gray–Scott reaction–diffusion on a periodic n × n grid.
//
//   u' = D_u ∇²u − u v² + F (1 − u)
//   v' = D_v ∇²v + u v² − (F + k) v
//
// ∇² is the 5-point Laplacian with unit grid spacing and periodic boundaries:
// (∇²u)_{r,c} = u_{r−1,c} + u_{r+1,c} + u_{r,c−1} + u_{r,c+1} − 4 u_{r,c} (indices mod n).
// State layout: y = [u (n² values, row-major: cell (r, c) at r·n + c); v (n² values, same order)],
// 2n² unknowns. Parameters θ = (D_u, D_v, F, k); defaults (0.16, 0.08, 0.037, 0.06), a regime
// of Pearson's map ("Complex patterns in a simple system", Science 261, 1993; his D_u = 2·10⁻⁵,
// D_v = 10⁻⁵ on a spacing of 2.5/256 are D_u = 0.21, D_v = 0.105 per cell, the same ratio 2).
// Here the default seed grows into a labyrinth of stripes (period ≈ 11 cells) that stays.
// Measured with RK4, dt = 1 (this stepper, and an independent implementation of the same
// discretisation that agrees to the digits shown): at n = 64 the spatial standard deviation of v
// is 0.126 at step 10^3, 0.109 at 10^4, 10^5 and 10^6, and the pattern still moves
// (‖y_N − y_{N−1}‖ / ‖y_N‖ = 1.6·10⁻⁵ at 10^6; at n = 71: 0.109 and 1.9·10⁻⁵). At 10^5 steps
// std(v) is 0.105–0.110 for every side tried from 32 to 256, and for seeds 1–3 at n = 32 and 64.
// Some sides settle into a steady labyrinth, which keeps its pattern (n = 40, 48: 8·10⁻¹⁰ per
// step at 10^6). The neighbouring regimes (F, k) = (0.04, 0.06) and (0.0545, 0.062) behave
// alike. The former default (0.035, 0.065) is on the edge of extinction: it survives at n = 32,
// 71 or 128 but dies at n = 64, where by step 1000 the field is the homogeneous u = 1, v = 0 and
// the gradient ~10⁻⁴⁰ (tests/cli/problems_alive_test.cpp, tests/adjoint/gradient_health_test.cpp).
// Sizes: n ≥ 3 (so the four neighbours are distinct) and n ≤ 46340 (so n² fits 32-bit indices);
// n = 8 is 128 unknowns, n = 708 is ≈ 10^6; a pattern needs n ≥ 32 (a few stripes).
//
// Explicit stability: the Laplacian's eigenvalues lie in [−8, 0] (unit spacing), and RK4's
// stability interval on the negative real axis is [−2.785, 0], so RK4 needs
//   dt ≤ 2.785 / (8 · max(D_u, D_v))      (max_stable_dt_rk4)
// i.e. dt ≤ 2.18 for the defaults; the reaction terms (rates ≲ F + k + v²) shrink this a little
// (tests/problems/gray_scott_test.cpp: 0.95× the limit is stable, 1.1× blows up), and dt = 1 is
// stable and grows the seed into a pattern that fills an n = 64 grid within about 3000 steps.
//
// Default initial state (default_initial_state(seed)): u = 1, v = 0 everywhere except a centred
// square of side 2·max(1, n/10) where u = 0.5 + 0.01·ξ and v = 0.25 + 0.01·ξ', with ξ, ξ' in
// [−1, 1) from a counter-based hash of (seed, cell) — deterministic, computed on the device.
//
//   rwd::GrayScott<> gs(256);                       // 131072 unknowns
//   auto theta = gs.default_parameters();           // (0.16, 0.08, 0.037, 0.06)
//   auto y = gs.default_initial_state(/*seed=*/1);
//   double dt = 0.5 * gs.max_stable_dt_rk4(0.16, 0.08);
//
// Cost: rhs is one fused pass over memory (reads u, v and their neighbours, writes u', v');
// vjp on the Eigen backend is one pass too (reads u, v, a and a's neighbours; writes (∂f/∂y)ᵀ a
// and sums (∂f/∂θ)ᵀ a on the way); on devices one pass too (a 4-sum reduction that writes
// (∂f/∂y)ᵀ a as it visits each cell). No allocation.
// Kernels come in two shapes with the same arithmetic:
// one thread per cell (Thrust/CUDA) and one row per index with a vectorisable interior loop
// (Eigen); compiled by the same compiler they give the same bits (nvcc's FMA contraction makes
// CUDA differ in the last bits).
#pragma once

#include <algorithm>
#include <cstdint>
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
// Both kernel shapes below (one cell per index for devices, one row per index for the Eigen
// backend) call these functions with the same operands in the same order, so they give the same
// bits.

struct GrayScottParameters {
  double du, dv, feed, kill;
  REWIND_HOST_DEVICE static GrayScottParameters load(const double* theta) {
    return {theta[0], theta[1], theta[2], theta[3]};
  }
};

// 5-point Laplacian from the centre value and the four neighbours, in a fixed order.
REWIND_HOST_DEVICE inline double gray_scott_laplacian(double centre, double up, double down,
                                                      double left, double right) {
  return (((up + down) + left) + right) - 4.0 * centre;
}

REWIND_HOST_DEVICE inline void gray_scott_rhs_cell(const GrayScottParameters& p, double u,
                                                   double lap_u, double v, double lap_v, double& fu,
                                                   double& fv) {
  const double uvv = u * v * v;
  fu = p.du * lap_u - uvv + p.feed * (1.0 - u);
  fv = p.dv * lap_v + uvv - (p.feed + p.kill) * v;
}

// With cotangent a = [a_u; a_v] and the Laplacian symmetric (periodic 5-point stencil):
//   (∂f/∂u)ᵀ a = D_u ∇²a_u − (v² + F) a_u + v² a_v
//   (∂f/∂v)ᵀ a = D_v ∇²a_v − 2uv a_u + (2uv − F − k) a_v
REWIND_HOST_DEVICE inline void gray_scott_vjp_cell(const GrayScottParameters& p, double u, double v,
                                                   double au, double lap_au, double av,
                                                   double lap_av, double& out_u, double& out_v) {
  const double vv = v * v, uv2 = 2.0 * u * v;
  out_u = p.du * lap_au - (vv + p.feed) * au + vv * av;
  out_v = p.dv * lap_av - uv2 * au + (uv2 - p.feed - p.kill) * av;
}

// One cell's terms of (∂f/∂θ)ᵀ a = (Σ a_u ∇²u, Σ a_v ∇²v, Σ a_u (1 − u) − a_v v, −Σ a_v v). The
// first two are summed as Σ u ∇²a_u and Σ v ∇²a_v — equal because the periodic 5-point Laplacian
// is symmetric — so that they reuse the Laplacians of a that (∂f/∂y)ᵀ a computes anyway: one
// pass over memory for the whole vjp, and no Laplacian of the state at all.
REWIND_HOST_DEVICE inline Sums<4> gray_scott_parameter_terms(double u, double v, double au,
                                                             double lap_au, double av,
                                                             double lap_av) {
  Sums<4> r;
  r.v[0] = u * lap_au;
  r.v[1] = v * lap_av;
  r.v[2] = au * (1.0 - u) - av * v;
  r.v[3] = -av * v;
  return r;
}

// --- one cell per index (any backend; the shape a GPU wants) -----------------------------------

// Cell c = r·n + col and its four periodic neighbours, in 32-bit arithmetic (cheaper divisions;
// the constructor of GrayScott guarantees 2n² < 2^32).
struct GrayScottStencil {
  std::uint32_t c, up, down, left, right;

  REWIND_HOST_DEVICE GrayScottStencil(Index k, std::uint32_t n, std::uint32_t cells) {
    c = static_cast<std::uint32_t>(k);
    const std::uint32_t row = c / n;
    const std::uint32_t col = c - row * n;
    up = row == 0 ? c + (cells - n) : c - n;
    down = row + 1 == n ? c - (cells - n) : c + n;
    left = col == 0 ? c + (n - 1) : c - 1;
    right = col + 1 == n ? c - (n - 1) : c + 1;
  }

  REWIND_HOST_DEVICE double laplacian(const double* x) const {
    return gray_scott_laplacian(x[c], x[up], x[down], x[left], x[right]);
  }
};

struct GrayScottRhsCellKernel {
  const double* y;  // [u; v]
  const double* theta;
  double* f;  // [u'; v']
  std::uint32_t n, cells;

  REWIND_HOST_DEVICE void operator()(Index k) const {
    const GrayScottParameters p = GrayScottParameters::load(theta);
    const double* u = y;
    const double* v = y + cells;
    const GrayScottStencil s(k, n, cells);
    gray_scott_rhs_cell(p, u[s.c], s.laplacian(u), v[s.c], s.laplacian(v), f[s.c], f[cells + s.c]);
  }
};

struct GrayScottVjpStateCellKernel {
  const double* y;
  const double* theta;
  const double* a;
  double* out;
  std::uint32_t n, cells;

  REWIND_HOST_DEVICE void operator()(Index k) const {
    const GrayScottParameters p = GrayScottParameters::load(theta);
    const double* au = a;
    const double* av = a + cells;
    const GrayScottStencil s(k, n, cells);
    gray_scott_vjp_cell(p, y[s.c], y[cells + s.c], au[s.c], s.laplacian(au), av[s.c],
                        s.laplacian(av), out[s.c], out[cells + s.c]);
  }
};

struct GrayScottVjpParameterCellKernel {
  const double* y;
  const double* a;
  std::uint32_t n, cells;

  REWIND_HOST_DEVICE Sums<4> operator()(Index k) const {
    const double* au = a;
    const double* av = a + cells;
    const GrayScottStencil s(k, n, cells);
    return gray_scott_parameter_terms(y[s.c], y[cells + s.c], au[s.c], s.laplacian(au), av[s.c],
                                      s.laplacian(av));
  }
};

// --- one row per index (host backends: no division, interior loop vectorises) ----------------

// The row r, its upper and lower periodic neighbours, as offsets into one n² block.
struct GrayScottRow {
  Index row, up, down;
  GrayScottRow(Index r, Index n)
      : row(r * n), up((r == 0 ? n - 1 : r - 1) * n), down((r + 1 == n ? 0 : r + 1) * n) {}
};

// The interior columns 1 … n−2 of one row, as loops over raw pointers: functions with __restrict
// parameters so that they vectorise wherever they are inlined. Without it the compiler has to
// check at run time that the outputs do not overlap any of the input rows, and whether it emits
// that check depends on the calling context (measured: the same rhs loop vectorised in one
// program and scalar, 1.6× slower, in another). Outputs never overlap inputs; input rows may
// overlap each other, which __restrict allows because they are only read. The arithmetic is the
// cell functions', column by column, so the bits are those of the cell kernels.
REWIND_SIMD_CLONES inline void gray_scott_rhs_interior(
    GrayScottParameters p, Index n, const double* __restrict u, const double* __restrict uu,
    const double* __restrict ud, const double* __restrict v, const double* __restrict vu,
    const double* __restrict vd, double* __restrict fu, double* __restrict fv) {
  for (Index c = 1; c < n - 1; ++c)
    gray_scott_rhs_cell(p, u[c], gray_scott_laplacian(u[c], uu[c], ud[c], u[c - 1], u[c + 1]), v[c],
                        gray_scott_laplacian(v[c], vu[c], vd[c], v[c - 1], v[c + 1]), fu[c], fv[c]);
}

// One row from explicit pointers to it (u, v), the rows above (uu, vu) and below (ud, vd), and its
// outputs: the two wrapping columns by the cell functions, the interior vectorised. The row
// kernels below and the distributed problem (whose rows above and below may be halos received
// from another rank) share it, so both give the same bits.
inline void gray_scott_rhs_row(GrayScottParameters p, Index n, const double* u, const double* uu,
                               const double* ud, const double* v, const double* vu,
                               const double* vd, double* fu, double* fv) {
  auto cell = [&](Index c, Index l, Index rt) {
    gray_scott_rhs_cell(p, u[c], gray_scott_laplacian(u[c], uu[c], ud[c], u[l], u[rt]), v[c],
                        gray_scott_laplacian(v[c], vu[c], vd[c], v[l], v[rt]), fu[c], fv[c]);
  };
  cell(0, n - 1, 1);
  gray_scott_rhs_interior(p, n, u, uu, ud, v, vu, vd, fu, fv);
  cell(n - 1, n - 2, 0);
}

// The interior columns 1 … n−2 of one row's whole vjp, in one pass over memory: (∂f/∂y)ᵀ a
// into (ou, ov) and the parameter terms into four interleaved partial sums per parameter (column
// 1 + i into lane i mod 4), so that the loop vectorises instead of waiting on one addition per
// column. lanes[q][k] receives parameter q's lane k. Inputs: the row of u and v, and the rows of
// a_u and a_v with those above (auu, avu) and below (aud, avd). AVX-512 where the CPU has it
// (REWIND_SIMD_CLONES_AVX512: this loop needs more than AVX2's 16 vector registers).
REWIND_SIMD_CLONES_AVX512 inline void gray_scott_vjp_interior(
    GrayScottParameters p, Index n, const double* __restrict u, const double* __restrict v,
    const double* __restrict au, const double* __restrict auu, const double* __restrict aud,
    const double* __restrict av, const double* __restrict avu, const double* __restrict avd,
    double* __restrict ou, double* __restrict ov, double (&lanes)[4][4]) {
  double s0[4] = {0.0, 0.0, 0.0, 0.0}, s1[4] = {0.0, 0.0, 0.0, 0.0};
  double s2[4] = {0.0, 0.0, 0.0, 0.0}, s3[4] = {0.0, 0.0, 0.0, 0.0};
  // The column body is written out twice (no lambda): through a lambda GCC 12 does not vectorise
  // the blocked loop.
  Index c = 1;
  for (; c + 4 <= n - 1; c += 4) {
    for (int k = 0; k < 4; ++k) {
      const Index i = c + k;
      const double lap_au = gray_scott_laplacian(au[i], auu[i], aud[i], au[i - 1], au[i + 1]);
      const double lap_av = gray_scott_laplacian(av[i], avu[i], avd[i], av[i - 1], av[i + 1]);
      gray_scott_vjp_cell(p, u[i], v[i], au[i], lap_au, av[i], lap_av, ou[i], ov[i]);
      const Sums<4> t = gray_scott_parameter_terms(u[i], v[i], au[i], lap_au, av[i], lap_av);
      s0[k] += t.v[0];
      s1[k] += t.v[1];
      s2[k] += t.v[2];
      s3[k] += t.v[3];
    }
  }
  for (int k = 0; c < n - 1; ++c, ++k) {
    const double lap_au = gray_scott_laplacian(au[c], auu[c], aud[c], au[c - 1], au[c + 1]);
    const double lap_av = gray_scott_laplacian(av[c], avu[c], avd[c], av[c - 1], av[c + 1]);
    gray_scott_vjp_cell(p, u[c], v[c], au[c], lap_au, av[c], lap_av, ou[c], ov[c]);
    const Sums<4> t = gray_scott_parameter_terms(u[c], v[c], au[c], lap_au, av[c], lap_av);
    s0[k] += t.v[0];
    s1[k] += t.v[1];
    s2[k] += t.v[2];
    s3[k] += t.v[3];
  }
  for (int k = 0; k < 4; ++k) {
    lanes[0][k] = s0[k];
    lanes[1][k] = s1[k];
    lanes[2][k] = s2[k];
    lanes[3][k] = s3[k];
  }
}

// The whole vjp of one row in one pass, from pointers as in gray_scott_rhs_row (a's rows above
// and below, which the distributed problem may have received from another rank): (∂f/∂y)ᵀ a into
// (ou, ov), and the row's part of (∂f/∂θ)ᵀ a returned — the interior's four lanes combined as
// (l0 + l1) + (l2 + l3), then column 0, then column n − 1. The bits depend on n only: not on
// threads, ranks, or how a caller groups the rows.
inline Sums<4> gray_scott_vjp_row(GrayScottParameters p, Index n, const double* u, const double* v,
                                  const double* au, const double* auu, const double* aud,
                                  const double* av, const double* avu, const double* avd,
                                  double* ou, double* ov) {
  double lanes[4][4];
  gray_scott_vjp_interior(p, n, u, v, au, auu, aud, av, avu, avd, ou, ov, lanes);
  Sums<4> s;
  for (int q = 0; q < 4; ++q) s.v[q] = (lanes[q][0] + lanes[q][1]) + (lanes[q][2] + lanes[q][3]);
  auto edge = [&](Index c, Index left, Index right) {
    const double lap_au = gray_scott_laplacian(au[c], auu[c], aud[c], au[left], au[right]);
    const double lap_av = gray_scott_laplacian(av[c], avu[c], avd[c], av[left], av[right]);
    gray_scott_vjp_cell(p, u[c], v[c], au[c], lap_au, av[c], lap_av, ou[c], ov[c]);
    s = s + gray_scott_parameter_terms(u[c], v[c], au[c], lap_au, av[c], lap_av);
  };
  edge(0, n - 1, 1);
  edge(n - 1, n - 2, 0);
  return s;
}

struct GrayScottRhsRowKernel {
  const double* y;
  const double* theta;
  double* f;
  Index n, cells;
  Index elements_per_index() const { return 2 * n; }  // a row of u and one of v

  void operator()(Index r) const {
    const GrayScottRow row(r, n);
    const double *u = y + row.row, *uu = y + row.up, *ud = y + row.down;
    double* fu = f + row.row;
    gray_scott_rhs_row(GrayScottParameters::load(theta), n, u, uu, ud, u + cells, uu + cells,
                       ud + cells, fu, fu + cells);
  }
};

// The whole vjp of row r (its part of (∂f/∂θ)ᵀ a returned), through sum_index, which evaluates
// every row exactly once. Measured at 10^4 and 10^6 unknowns (bench/gradient_cost_bench), one
// pass is faster than the former two (a vectorised (∂f/∂y)ᵀ a, then the parameter sums column by
// column, which could not vectorise): see bench/results/gradient_cost.md.
struct GrayScottVjpRowKernel {
  const double* y;
  const double* theta;
  const double* a;
  double* out;
  Index n, cells;
  Index elements_per_index() const { return 2 * n; }  // a row of u and one of v

  Sums<4> operator()(Index r) const {
    const GrayScottRow row(r, n);
    const double *u = y + row.row, *au = a + row.row, *auu = a + row.up, *aud = a + row.down;
    double* ou = out + row.row;
    return gray_scott_vjp_row(GrayScottParameters::load(theta), n, u, u + cells, au, auu, aud,
                              au + cells, auu + cells, aud + cells, ou, ou + cells);
  }
};

// Which kernel shape a backend gets: rows for the sequential CPU backend, cells elsewhere.
template <class B>
inline constexpr bool kGrayScottRowKernels = std::is_same_v<B, EigenBackend>;

// (u, v) of cell c of the default initial state: the seeded square is rows and columns [lo, hi).
REWIND_HOST_DEVICE inline void gray_scott_initial_cell(std::uint64_t seed, std::uint32_t c,
                                                       std::uint32_t n, std::uint32_t lo,
                                                       std::uint32_t hi, double& u, double& v) {
  const std::uint32_t row = c / n;
  const std::uint32_t col = c - row * n;
  if (row >= lo && row < hi && col >= lo && col < hi) {
    u = 0.5 + 0.01 * hash_uniform(seed, 2 * static_cast<std::uint64_t>(c));
    v = 0.25 + 0.01 * hash_uniform(seed, 2 * static_cast<std::uint64_t>(c) + 1);
  } else {
    u = 1.0;
    v = 0.0;
  }
}

struct GrayScottInitialStateKernel {
  double* y;
  std::uint64_t seed;
  std::uint32_t n, cells, lo, hi;

  REWIND_HOST_DEVICE void operator()(Index k) const {
    const std::uint32_t c = static_cast<std::uint32_t>(k);
    gray_scott_initial_cell(seed, c, n, lo, hi, y[c], y[cells + c]);
  }
};

}  // namespace detail

template <class B = EigenBackend>
class GrayScott {
 public:
  using Backend = B;
  using Vector = typename B::Vector;
  static constexpr const char* name = "gray-scott";
  static constexpr Index kMinGridSize = 3;
  static constexpr Index kMaxGridSize = 46340;  // n² < 2^31
  // RK4's stability boundary on the negative real axis: |R(z)| ≤ 1 for z ∈ [−2.7852…, 0].
  static constexpr double kRk4RealStabilityLimit = 2.785293563405282;

  // n: grid points per side, 3 ≤ n ≤ 46340; the state has 2n² unknowns.
  explicit GrayScott(Index n) : n_(n) {
    if (n < kMinGridSize || n > kMaxGridSize)
      detail::fail<InvalidArgument>("GrayScott: grid size n = ", n, " must be in [", kMinGridSize,
                                    ", ", kMaxGridSize,
                                    "] (n >= 3 for a periodic 5-point stencil with distinct "
                                    "neighbours, n² < 2^31 for 32-bit cell indices)");
  }

  Index grid_size() const { return n_; }
  Index cell_count() const { return n_ * n_; }
  Index state_size() const { return 2 * n_ * n_; }
  Index parameter_size() const { return 4; }

  // θ = (D_u, D_v, F, k); defaults (0.16, 0.08, 0.037, 0.06), a pattern that stays (see the top).
  static Vector default_parameters(double diffusion_u = 0.16, double diffusion_v = 0.08,
                                   double feed = 0.037, double kill = 0.06) {
    return detail::vector_from_host<B>({diffusion_u, diffusion_v, feed, kill});
  }
  static std::vector<std::string> parameter_names() { return {"Du", "Dv", "F", "k"}; }

  // The largest RK4 step for which the diffusion part is stable: 2.785 / (8 · max(D_u, D_v)).
  // The reaction terms shrink the true limit slightly; use a margin (e.g. half of it).
  static double max_stable_dt_rk4(double diffusion_u, double diffusion_v) {
    const double d = std::max(diffusion_u, diffusion_v);
    if (!(d > 0.0))
      detail::fail<InvalidArgument>("GrayScott::max_stable_dt_rk4: max(Du, Dv) = ", d,
                                    " must be > 0");
    return kRk4RealStabilityLimit / (8.0 * d);
  }

  // u = 1, v = 0 with a noisy seeded square in the centre (see the header comment).
  Vector default_initial_state(std::uint64_t seed = 0) const {
    Vector y = B::zeros(state_size());
    const Index half = std::max<Index>(1, n_ / 10);
    const Index centre = n_ / 2;
    B::for_each_index(cell_count(), detail::GrayScottInitialStateKernel{
                                        B::data(y), seed, u32(n_), u32(cell_count()),
                                        u32(centre - half), u32(std::min(n_, centre + half))});
    return y;
  }

  void rhs(double /*t*/, const Vector& y, const Vector& theta, Vector& f) const {
    detail::require_rhs_sizes<B>(name, state_size(), 4, y, theta, f);
    if constexpr (detail::kGrayScottRowKernels<B>) {
      B::for_each_index(n_, detail::GrayScottRhsRowKernel{B::data(y), B::data(theta), B::data(f),
                                                          n_, cell_count()});
    } else {
      B::for_each_index(cell_count(),
                        detail::GrayScottRhsCellKernel{B::data(y), B::data(theta), B::data(f),
                                                       u32(n_), u32(cell_count())});
    }
  }

  // out_y = (∂f/∂y)ᵀ v, out_theta = (∂f/∂θ)ᵀ v (both overwritten): on the Eigen backend one
  // pass over rows for both; elsewhere one pass over cells for out_y and one 4-sum reduction.
  void vjp(double /*t*/, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    detail::require_vjp_sizes<B>(name, state_size(), 4, y, theta, v, out_y, out_theta);
    Sums<4> s;
    if constexpr (detail::kGrayScottRowKernels<B>) {
      s = B::template sum_index<4>(
          n_, detail::GrayScottVjpRowKernel{B::data(y), B::data(theta), B::data(v), B::data(out_y),
                                            n_, cell_count()});
    } else {
      const std::uint32_t n = u32(n_), cells = u32(cell_count());
      using Kernel = detail::OnePassVjpKernel<4, detail::GrayScottVjpStateCellKernel,
                                              detail::GrayScottVjpParameterCellKernel>;
      s = B::template sum_index<4>(
          cell_count(), Kernel{{B::data(y), B::data(theta), B::data(v), B::data(out_y), n, cells},
                               {B::data(y), B::data(v), n, cells}});
    }
    const double host[4] = {s.v[0], s.v[1], s.v[2], s.v[3]};
    B::copy_from_host(std::span<const double>(host, 4), out_theta);
  }

 private:
  static std::uint32_t u32(Index x) { return static_cast<std::uint32_t>(x); }

  Index n_;
};

// What the tools that run problems by name know about GrayScott
// (rewind/problems/problem_facts.hpp). Device form: GrayScott<B> itself; split across ranks:
// rwd::DistributedGrayScott.
struct GrayScottDeclaration {
  static ProblemFacts facts() {
    return {.name = "gray_scott",
            .description =
                "Gray-Scott reaction-diffusion on a periodic n x n grid; theta = (Du, "
                "Dv, F, k) = (0.16, 0.08, 0.037, 0.06)",
            .size_meaning = "grid side n",
            .default_n = 64,
            .default_dt = 1.0,
            .default_steps = 200,
            .horizon =
                "a labyrinth that fills the grid by ~3000 steps and stays (checked to 10^6 "
                "steps, n >= 32)",
            // Feed F and kill k may vanish; diffusion may not.
            .parameters = {{"Du", ParameterDomain::positive},
                           {"Dv", ParameterDomain::positive},
                           {"F", ParameterDomain::nonnegative},
                           {"k", ParameterDomain::nonnegative}},
            .fields = {{"u", 0, 2}, {"v", 1, 2}},  // y = [u; v], n² each
            .grid_fields = true,
            .device_form = true,
            .distributed_form = true};
  }
  static GrayScott<> make(Index n) { return GrayScott<>(n); }
  template <class B>
  using DeviceModel = GrayScott<B>;
};

}  // namespace rwd
