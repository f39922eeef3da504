// rewind/problems/brusselator2d.hpp — the 2D Brusselator reaction–diffusion system, a stiff
// semi-discretised PDE for implicit (BDF) solvers.
//
//   u' = A + u² v − (B + 1) u + α ∇²u
//   v' = B u − u² v + α ∇²v
//
// on the unit square, n × n cell-centred grid (h = 1/n), no-flux (Neumann) boundaries: the
// 5-point Laplacian with mirrored ghost cells. θ = (A, B, α), default (1, 3.4, 0.002): B > 1 + A²
// makes the homogeneous state unstable, so the system oscillates — its step count grows with the
// horizon, the regime where an adjoint's memory matters. Stiffness comes from diffusion:
// α ∇² has eigenvalues down to −8α n², e.g. −262 at n = 128, against O(1) reaction rates.
//
// Layout: the two species interleaved per cell, y[2(r·n + c)] = u, y[2(r·n + c) + 1] = v, so the
// Jacobian is banded with half-bandwidth 2n (band_width()): SUNDIALS' band solver factors it in
// O(N·(2n)²) instead of the dense O(N³). 2·n² unknowns: 8192 at n = 64, 32768 at n = 128.
//
// Default initial state: u = A + 0.1 sin(2πx)·cos(πy) + ½·(bump at (0.3, 0.3)), v = B/A + 0.1·…,
// smooth and deterministic.
//
// Hand-written derivatives for every solver: jvp and vjp, the band (band_width()), the sparse
// Jacobian (sparsity(), jacobian_values(): KLU), and the second derivatives jvp_vjp with
// `autonomous` (the Rosenbrock methods' exact adjoint).
#pragma once

#include <cmath>

#include <span>
#include <string>
#include <vector>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/host_device.hpp"
#include "rewind/parallel.hpp"
#include "rewind/problems/detail/problem_support.hpp"
#include "rewind/problems/problem_facts.hpp"
#include "rewind/problems/sparsity_pattern.hpp"
#include "rewind/types.hpp"

namespace rwd {
namespace detail {

// --- the arithmetic, written once ---------------------------------------------------------------
// One cell or one grid row at a time: `row` is the row's 2n interleaved values (u, v per cell),
// `up` and `down` the rows above and below — the row itself at a wall (the mirrored ghost cell).
// The serial problem, rwd::DistributedBrusselator (halo rows from the neighbouring ranks) and the
// device kernels of rwd::DeviceBrusselator2D call these with the same operands, so they give the
// same bits (the device's parameter sums are added in another order; see its header).

// The 5-point Laplacian of species s at cell c, with mirrored ghost cells at the left and right
// walls: up + down + left + right − 4·centre, in that order.
REWIND_HOST_DEVICE inline double brusselator_laplacian(Index n, const double* row, const double* up,
                                                       const double* down, Index c, int s) {
  const Index i = 2 * c + s;
  const Index left = 2 * (c > 0 ? c - 1 : 0) + s, right = 2 * (c < n - 1 ? c + 1 : n - 1) + s;
  return up[i] + down[i] + row[left] + row[right] - 4.0 * row[i];
}

// f at cell c of a row; k = α / h² = α n².
REWIND_HOST_DEVICE inline void brusselator_rhs_cell(double a, double b, double k, Index n,
                                                    const double* row, const double* up,
                                                    const double* down, Index c, double* f) {
  const Index i = 2 * c;
  const double u = row[i], v = row[i + 1];
  f[i] = a + u * u * v - (b + 1.0) * u + k * brusselator_laplacian(n, row, up, down, c, 0);
  f[i + 1] = b * u - u * u * v + k * brusselator_laplacian(n, row, up, down, c, 1);
}

// f on one row.
inline void brusselator_rhs_row(double a, double b, double k, Index n, const double* row,
                                const double* up, const double* down, double* f) {
  for (Index c = 0; c < n; ++c) brusselator_rhs_cell(a, b, k, n, row, up, down, c, f);
}

// out = (∂f/∂y) v at cell c of a row: y's row, and v's row with its neighbours.
REWIND_HOST_DEVICE inline void brusselator_jvp_cell(double b, double k, Index n, const double* y,
                                                    const double* v, const double* v_up,
                                                    const double* v_down, Index c, double* out) {
  const Index i = 2 * c;
  const double u = y[i], w = y[i + 1], vu = v[i], vv = v[i + 1];
  out[i] = (2.0 * u * w - (b + 1.0)) * vu + u * u * vv +
           k * brusselator_laplacian(n, v, v_up, v_down, c, 0);
  out[i + 1] =
      (b - 2.0 * u * w) * vu - u * u * vv + k * brusselator_laplacian(n, v, v_up, v_down, c, 1);
}

// out = (∂f/∂y) v on one row.
inline void brusselator_jvp_row(double b, double k, Index n, const double* y, const double* v,
                                const double* v_up, const double* v_down, double* out) {
  for (Index c = 0; c < n; ++c) brusselator_jvp_cell(b, k, n, y, v, v_up, v_down, c, out);
}

// out_y = (∂f/∂y)ᵀ w at cell c of a row, and the cell's three terms of (∂f/∂θ)ᵀ w: w_u,
// (w_v − w_u) u and w_u ∇²u + w_v ∇²v (the last still to be multiplied by n²).
REWIND_HOST_DEVICE inline void brusselator_vjp_cell(double b, double k, Index n, const double* y,
                                                    const double* y_up, const double* y_down,
                                                    const double* w, const double* w_up,
                                                    const double* w_down, Index c, double* out_y,
                                                    double& d_a, double& d_b, double& d_alpha) {
  const Index i = 2 * c;
  const double u = y[i], v = y[i + 1], wu = w[i], wv = w[i + 1];
  // Reaction Jacobian at the cell: [[2uv − (B+1), u²], [B − 2uv, −u²]].
  out_y[i] = (2.0 * u * v - (b + 1.0)) * wu + (b - 2.0 * u * v) * wv +
             k * brusselator_laplacian(n, w, w_up, w_down, c, 0);
  out_y[i + 1] = u * u * wu - u * u * wv + k * brusselator_laplacian(n, w, w_up, w_down, c, 1);
  d_a = wu;
  d_b = (wv - wu) * u;
  d_alpha = wu * brusselator_laplacian(n, y, y_up, y_down, c, 0) +
            wv * brusselator_laplacian(n, y, y_up, y_down, c, 1);
}

// out_y = (∂f/∂y)ᵀ w on one row, and the row's three sums of (∂f/∂θ)ᵀ w, each from zero in cell
// order: (Σ w_u, Σ (w_v − w_u) u, Σ w_u ∇²u + w_v ∇²v) — the last still to be multiplied by n².
inline Sums<3> brusselator_vjp_row(double b, double k, Index n, const double* y, const double* y_up,
                                   const double* y_down, const double* w, const double* w_up,
                                   const double* w_down, double* out_y) {
  double d_a = 0.0, d_b = 0.0, d_alpha = 0.0;
  for (Index c = 0; c < n; ++c) {
    double t_a, t_b, t_alpha;
    brusselator_vjp_cell(b, k, n, y, y_up, y_down, w, w_up, w_down, c, out_y, t_a, t_b, t_alpha);
    d_a += t_a;
    d_b += t_b;
    d_alpha += t_alpha;
  }
  Sums<3> sums;
  sums.v[0] = d_a;
  sums.v[1] = d_b;
  sums.v[2] = d_alpha;
  return sums;
}

// The default initial state at cell (r, c) of an n × n grid (see the top).
inline void brusselator_initial_cell(Index n, Index r, Index c, double& u, double& v) {
  const double pi = 3.14159265358979323846;
  const double x = (static_cast<double>(c) + 0.5) / static_cast<double>(n);
  const double z = (static_cast<double>(r) + 0.5) / static_cast<double>(n);
  const double bump = std::exp(-((x - 0.3) * (x - 0.3) + (z - 0.3) * (z - 0.3)) / 0.01);
  const double wave = std::sin(2.0 * pi * x) * std::cos(pi * z);
  u = 1.0 + 0.1 * wave + 0.5 * bump;
  v = 3.4 - 0.1 * wave;
}

}  // namespace detail

class Brusselator2D {
 public:
  using Backend = EigenBackend;
  using Vector = EigenBackend::Vector;
  static constexpr const char* name = "brusselator";

  explicit Brusselator2D(Index n) : n_(n) {
    if (n < 2) detail::fail<InvalidArgument>("brusselator: grid n = ", n, " must be >= 2");
  }

  Index grid() const { return n_; }
  Index state_size() const { return 2 * n_ * n_; }
  Index parameter_size() const { return 3; }
  Index band_width() const { return 2 * n_; }  // upper and lower half-bandwidth of ∂f/∂y
  // f does not depend on t (the Rosenbrock methods need to be told).
  static constexpr bool autonomous = true;

  std::vector<std::string> parameter_names() const { return {"A", "B", "alpha"}; }

  Vector default_parameters() const {
    Vector theta(3);
    theta << 1.0, 3.4, 0.002;
    return theta;
  }

  Vector default_initial_state() const {
    Vector y(state_size());
    for (Index r = 0; r < n_; ++r)
      for (Index c = 0; c < n_; ++c)
        detail::brusselator_initial_cell(n_, r, c, y[2 * (r * n_ + c)], y[2 * (r * n_ + c) + 1]);
    return y;
  }

  void rhs(double, const Vector& y, const Vector& theta, Vector& f) const {
    detail::require_rhs_sizes<Backend>(name, state_size(), 3, y, theta, f);
    const double a = theta[0], b = theta[1], k = theta[2] * static_cast<double>(n_ * n_);  // α / h²
    for_each_row([&](Index r) {
      detail::brusselator_rhs_row(a, b, k, n_, row(y, r), row(y, r - 1), row(y, r + 1),
                                  f.data() + 2 * r * n_);
    });
  }

  // out = (∂f/∂y) v: the Jacobian-vector product a matrix-free Newton solver (GMRES) uses.
  void jvp(double, const Vector& y, const Vector& theta, const Vector& v, Vector& out) const {
    detail::require_length(name, "state y", y.size(), state_size());
    detail::require_length(name, "parameter vector theta", theta.size(), 3);
    detail::require_length(name, "tangent v", v.size(), state_size());
    detail::require_length(name, "output out", out.size(), state_size());
    const double b = theta[1], k = theta[2] * static_cast<double>(n_ * n_);
    for_each_row([&](Index r) {
      detail::brusselator_jvp_row(b, k, n_, row(y, r), row(v, r), row(v, r - 1), row(v, r + 1),
                                  out.data() + 2 * r * n_);
    });
  }

  // ∂f/∂y's pattern for the sparse solvers: the row of species s at cell (r, c) holds, in
  // ascending order, s at the cell above, s at the cell to the left, u and v at the cell, s to
  // the right and s below — each neighbour only where the grid has one (at a wall the mirrored
  // ghost cell is the cell itself).
  SparsityPattern sparsity() const {
    SparsityPattern pattern;
    pattern.size = state_size();
    pattern.row_starts.reserve(static_cast<std::size_t>(state_size() + 1));
    pattern.columns.reserve(static_cast<std::size_t>(6 * state_size()));
    pattern.row_starts.push_back(0);
    for (Index r = 0; r < n_; ++r)
      for (Index c = 0; c < n_; ++c)
        for (Index s = 0; s < 2; ++s) {
          const Index cell = r * n_ + c;
          if (r > 0) pattern.columns.push_back(2 * (cell - n_) + s);
          if (c > 0) pattern.columns.push_back(2 * (cell - 1) + s);
          pattern.columns.push_back(2 * cell);
          pattern.columns.push_back(2 * cell + 1);
          if (c < n_ - 1) pattern.columns.push_back(2 * (cell + 1) + s);
          if (r < n_ - 1) pattern.columns.push_back(2 * (cell + n_) + s);
          pattern.row_starts.push_back(static_cast<Index>(pattern.columns.size()));
        }
    return pattern;
  }

  // ∂f/∂y's entries in sparsity()'s order: k = α n² for each neighbour, and at the cell the
  // reaction Jacobian [[2uv − (B+1), u²], [B − 2uv, −u²]] with −k·(number of neighbours) on the
  // diagonal (the 5-point Laplacian's −4k, plus k for each mirrored ghost cell).
  void jacobian_values(double, const Vector& y, const Vector& theta,
                       std::span<double> values) const {
    detail::require_length(name, "state y", y.size(), state_size());
    detail::require_length(name, "parameter vector theta", theta.size(), 3);
    const Index nonzeros = 2 * (6 * n_ * n_ - 4 * n_);  // 6 per row, less the walls' neighbours
    detail::require_length(name, "Jacobian values", static_cast<Index>(values.size()), nonzeros);
    const double b = theta[1], k = theta[2] * static_cast<double>(n_ * n_);
    std::size_t at = 0;
    for (Index r = 0; r < n_; ++r)
      for (Index c = 0; c < n_; ++c) {
        const Index cell = r * n_ + c;
        const double u = y[2 * cell], v = y[2 * cell + 1];
        const double neighbours =
            static_cast<double>((r > 0) + (c > 0) + (c < n_ - 1) + (r < n_ - 1));
        const double reaction[2][2] = {{2.0 * u * v - (b + 1.0), u * u}, {b - 2.0 * u * v, -u * u}};
        for (int s = 0; s < 2; ++s) {
          if (r > 0) values[at++] = k;
          if (c > 0) values[at++] = k;
          values[at++] = reaction[s][0] - (s == 0 ? k * neighbours : 0.0);
          values[at++] = reaction[s][1] - (s == 1 ? k * neighbours : 0.0);
          if (c < n_ - 1) values[at++] = k;
          if (r < n_ - 1) values[at++] = k;
        }
      }
  }

  // Second derivatives (the Rosenbrock adjoint's): out_y = ∇_y [wᵀ (∂f/∂y) u], out_theta =
  // ∇_θ [wᵀ (∂f/∂y) u] (overwritten). Per cell, with u's components (a, b) there and d = w_u − w_v,
  // wᵀ J u = d·((2uv) a + u² b) − (B + 1) w_u a + B w_v a + k (w_u ∇²a + w_v ∇²b), so
  // ∂/∂u = 2d (v a + u b), ∂/∂v = 2d u a, ∂/∂A = 0, ∂/∂B = −d a, ∂/∂α = n² (w_u ∇²a + w_v ∇²b).
  // Cell by cell in row-major order (one thread: it is called once per reversed stage).
  void jvp_vjp(double, const Vector& y, const Vector& theta, const Vector& u, const Vector& w,
               Vector& out_y, Vector& out_theta) const {
    detail::require_vjp_sizes<Backend>(name, state_size(), 3, y, theta, w, out_y, out_theta);
    detail::require_length(name, "direction u", u.size(), state_size());
    double d_b = 0.0, d_alpha = 0.0;
    for (Index r = 0; r < n_; ++r)
      for (Index c = 0; c < n_; ++c) {
        const Index i = 2 * (r * n_ + c);
        const double yu = y[i], yv = y[i + 1], a = u[i], b = u[i + 1];
        const double d = w[i] - w[i + 1];
        out_y[i] = 2.0 * d * (yv * a + yu * b);
        out_y[i + 1] = 2.0 * d * yu * a;
        d_b -= d * a;
        d_alpha += w[i] * detail::brusselator_laplacian(n_, row(u, r), row(u, r - 1), row(u, r + 1),
                                                        c, 0) +
                   w[i + 1] * detail::brusselator_laplacian(n_, row(u, r), row(u, r - 1),
                                                            row(u, r + 1), c, 1);
      }
    out_theta[0] = 0.0;
    out_theta[1] = d_b;
    out_theta[2] = d_alpha * static_cast<double>(n_ * n_);
  }

  // out_y = (∂f/∂y)ᵀ w, out_theta = (∂f/∂θ)ᵀ w. The Laplacian with mirrored ghost cells is
  // symmetric (a missing neighbour adds +1 to the diagonal; neighbour pairs are symmetric), so
  // its transpose is itself.
  void vjp(double, const Vector& y, const Vector& theta, const Vector& w, Vector& out_y,
           Vector& out_theta) const {
    detail::require_vjp_sizes<Backend>(name, state_size(), 3, y, theta, w, out_y, out_theta);
    const double b = theta[1], k = theta[2] * static_cast<double>(n_ * n_);
    // Each row's three sums from zero, the rows' sums added in row order: the bits do not depend
    // on the thread count (rewind/parallel.hpp).
    const Sums<3> sums = detail::ordered_fold<3>(n_, row_threads(), [&](Index r) {
      return detail::brusselator_vjp_row(b, k, n_, row(y, r), row(y, r - 1), row(y, r + 1),
                                         row(w, r), row(w, r - 1), row(w, r + 1),
                                         out_y.data() + 2 * r * n_);
    });
    out_theta[0] = sums.v[0];
    out_theta[1] = sums.v[1];
    out_theta[2] = sums.v[2] * static_cast<double>(n_ * n_);
  }

 private:
  // Rows run on several threads for grids of detail::kParallelMinElements values and more; each
  // row writes only its own cells (both species: 2n values).
  int row_threads() const { return detail::threads_for_rows(n_, 2 * n_); }
  template <class RowOp>
  void for_each_row(RowOp&& op) const {
    detail::parallel_indices(n_, row_threads(), op);
  }

  // Row r's 2n values; a row outside the grid is the wall row itself (mirrored ghost cells).
  const double* row(const Vector& y, Index r) const {
    return y.data() + 2 * (r < 0 ? 0 : (r >= n_ ? n_ - 1 : r)) * n_;
  }

  Index n_;
};

template <class B>
class DeviceBrusselator2D;  // rewind/problems/device_brusselator2d.hpp

// What the tools that run problems by name know about Brusselator2D
// (rewind/problems/problem_facts.hpp). Its species are interleaved per cell, so the state has no
// named block but "all". Device form: DeviceBrusselator2D<B>; split across ranks:
// rwd::DistributedBrusselator.
struct BrusselatorDeclaration {
  static ProblemFacts facts() {
    return {.name = "brusselator",
            .description =
                "2D Brusselator on an n x n grid, no-flux, stiff (use --method bdf); "
                "theta = (A, B, alpha)",
            .size_meaning = "grid side n",
            .default_n = 16,
            .default_dt = 0.5,
            .default_steps = 20,
            .stiff = true,
            .parameters = {{"A", ParameterDomain::positive},
                           {"B", ParameterDomain::positive},
                           {"alpha", ParameterDomain::positive}},
            .device_form = true,
            .distributed_form = true};
  }
  static Brusselator2D make(Index n) { return Brusselator2D(n); }
  template <class B>
  using DeviceModel = DeviceBrusselator2D<B>;
};

}  // namespace rwd
