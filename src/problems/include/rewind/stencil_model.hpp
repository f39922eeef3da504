// rewind/stencil_model.hpp — a PDE on a structured grid written as one cell's update, made a
// problem whose vector–Jacobian products are derived exactly: no hand-written transposed stencil.
//
//   #include <rewind/stencil_model.hpp>
//   struct GrayScottModel {                       // u' = Du ∇²u − uv² + F(1 − u), v' = …
//     static constexpr std::array<const char*, 2> field_names{"u", "v"};
//     static constexpr std::array<const char*, 4> parameter_names{"Du", "Dv", "F", "k"};
//     enum Point { centre, up, down, left, right };          // indices into `stencil`
//     static constexpr std::array<rwd::Offset<2>, 5> stencil{
//         {{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0, 1}}};       // (row, column) offsets
//     static constexpr std::array<rwd::Boundary, 2> boundaries{rwd::Boundary::periodic,
//                                                               rwd::Boundary::periodic};
//     template <class T, class X>
//     void cell(const X& x, const T* p, const rwd::GridCell<2>&, T* f) const {
//       const T u = x(0, centre), v = x(1, centre);
//       const T lap_u = (((x(0, up) + x(0, down)) + x(0, left)) + x(0, right)) - 4.0 * u;
//       const T lap_v = (((x(1, up) + x(1, down)) + x(1, left)) + x(1, right)) - 4.0 * v;
//       const T uvv = u * v * v;
//       f[0] = p[0] * lap_u - uvv + p[2] * (1.0 - u);
//       f[1] = p[1] * lap_v + uvv - (p[2] + p[3]) * v;
//     }
//   };
//   auto problem = rwd::stencil_problem(GrayScottModel{}, 256, 256);   // an rwd::Problem
//
// The user's contract. A stencil model declares once, as static constexpr members:
// - `field_names`: std::array<const char*, F>, F ≥ 1 fields per cell (non-empty, distinct);
// - `parameter_names`: std::array<const char*, P> (P ≥ 0; non-empty, distinct);
// - `stencil`: std::array<rwd::Offset<D>, S>, the cell's neighbourhood — S ≥ 1 distinct offsets
//   (Δindex per dimension, the last dimension varying fastest in memory); the grid's dimension D
//   (1, 2 or 3) is the offsets' size. The kernel names a neighbour by its index in this list;
// - `boundaries`: std::array<rwd::Boundary, D>, one per dimension (both ends alike):
//     periodic   — indices wrap around (a torus);
//     fixed      — a wall held at a fixed value (Dirichlet): a neighbour beyond the wall reads
//                  the field's value in `wall_values` (std::array<double, F>, optional, zeros if
//                  absent). Those values are constants: nothing is differentiated through them;
//     reflecting — a zero-flux wall (Neumann, mirror): the neighbour k cells beyond the wall
//                  reads the cell k − 1 inside it (x₋₁ = x₀, x₋₂ = x₁, …), so a centred
//                  difference across the wall's face is 0. The derivative flows to that cell.
// and the update of one cell, a member template
//     template <class T, class Neighbourhood>
//     void cell(const Neighbourhood& x, const T* p, const rwd::GridCell<D>& at, T* f) const;
// which writes f[0 … F−1] = the time derivatives of the cell's fields from x(field, point) (the
// value of `field` at the neighbour stencil[point], a T) and the parameters p[0 … P−1]; `at`
// gives the cell's index and the grid's sizes (for coefficients that vary in space — the model
// object may hold tables of them). Units are the model's: unit grid spacing unless the model
// scales its differences itself; t is not passed (stencil models are autonomous). Optional:
// `default_parameters` (std::array<double, P>) and an initial state, one cell at a time,
//     template <class T>
//     void initial_cell(const T* p, const rwd::GridCell<D>& at, T* y0) const;
// writing y0[0 … F−1], the cell's fields at t = 0, from the parameters (initial_state(θ) runs it
// on every cell; its vjp is derived like the rhs's, so gradients include θ's effect through the
// initial state). Write them like rewind/model.hpp's rhs: name
// intermediate values with T, never `auto`; call mathematical functions unqualified after
// `using std::exp;` etc.; branches on values are allowed (the derivative is the branch taken).
//
// The grid: rwd::stencil_problem(Model{}, n_0, …, n_{D−1}) with one size per dimension, each
// at least the stencil's span in that dimension plus one (max offset − min offset + 1), so that
// the neighbours of a cell are distinct cells. State layout: field-major, then row-major — value
// (field k, cell (i_0, …, i_{D−1})) at k·cells + (…(i_0·n_1 + i_1)·n_2 + …) — the layout of the
// built-in Gray–Scott ([u; v]) and Heat2D.
//
// What is derived and how. rhs calls `cell` with T = double on every cell. The vjp
// (∂f/∂y)ᵀv, (∂f/∂θ)ᵀv calls it once per cell with Sacado's forward-mode scalar
// SFad<double, F·S + P> (rewind/model.hpp's library, measured in bench/results/ad_choice.md),
// the neighbourhood's values and the parameters seeded with unit vectors: that is the cell's whole
// local Jacobian. Its rows weighted by v at the cell, Σ_k v_k ∂f_k/∂x(field, point), are added
// into out_y at the cells the neighbourhood read (scattered; nothing for a fixed wall's values),
// and Σ_k v_k ∂f_k/∂θ into out_θ. jvp (∂f/∂y)w calls `cell` with one derivative component seeded
// with w (a gather: each cell writes only itself). jvp_vjp (∇_y and ∇_θ of wᵀ(∂f/∂y)u, for the
// Rosenbrock methods' adjoints) nests the two: the vjp's scalar over the jvp's, seeded with u,
// run and scattered like the vjp (the same chunks and lanes, below). sparsity() gives the
// Jacobian ∂f/∂y's pattern in compressed rows: row (k, c) has a column for every field at every
// cell the stencil of c reads (a superset of the true pattern where the kernel ignores a field at
// some point), and jacobian_values(t, y, θ, values) the Jacobian's entries in that order — one
// forward-mode evaluation per cell (the vjp's scalar), each cell writing its own rows, derivatives
// of points that read the same cell added in stencil order — for sparse direct solvers (CVODES's
// KLU: rwd::CvodesLinearSolver::sparse). Exact: the derivatives of the computed expressions, to
// round-off (the built-in problems' hand-written vjps agree to ~1e-16 relative; tests compare at
// 1e-13).
//
// Cost (bench/results/stencil_models.md). Cells whose neighbourhood stays inside the grid
// without wrapping — all but a border of the stencil's reach — run in chunks of kStencilChunk
// cells of one line: the cell update is inlined (flattened) into a loop over the chunk whose
// only writes are the chunk's local gradients, F·S + P rows of a small buffer, so the compiler
// vectorises it across cells (AVX2 or AVX-512 where the CPU has it, picked at run time, without
// fused multiply-adds: the same bits); then, for each field and each group of stencil points
// that read one line, the group's rows are added into that line of out_y in one loop (one load
// and one store per element), and each parameter row is summed in four interleaved lanes. Forward
// mode costs about F·S + P times a cell's arithmetic, so a derived vjp is slower than a
// hand-written transposed stencil by a factor that grows with the stencil and the fields
// (measured: 1.25× for Heat2D, 2.9× for Lorenz-96, 3.6–4.3× for Gray–Scott). The rhs runs the same
// way with T = double: as fast as a hand-written stencil where the cell update vectorises. A kernel
// that branches on values works the same (its loop may not vectorise).
//
// Determinism. rhs, vjp, jvp and jacobian_values run on rwd::thread_count() threads and give the
// same bits for any thread count (rewind/parallel.hpp's contract). The grid is cut along dimension
// 0 into blocks that depend only on the grid's sizes and the stencil; every block is at least the
// stencil's span in dimension 0, so blocks two apart never touch the same entry. (A 1-D grid's
// blocks are of one length where its n cells allow — a divisor of n from max(4096, span + 128) to
// four times that —, so that processes can own whole blocks.) The vjp's
// scatter runs colour by colour — even blocks (in parallel), then odd blocks, and a third colour
// for the last block of an odd number of blocks around a periodic dimension 0 — and inside a
// block in memory order: line by line, along a line the border cells one at a time and the
// chunks in order, a chunk's contributions to an entry in stencil order. So every entry of out_y
// receives its contributions in one fixed order (no atomics, no race), whatever the thread count.
// The parameter part is summed per slab (the cells of one index along dimension 0; per block on
// a 1-D grid) in that order (four lanes per chunk) and the partials are added in slab order by
// one thread. A gradient is therefore bitwise the same for every schedule, store and thread
// count — and, split across MPI ranks (rwd::DistributedStencilProblem,
// rewind/distributed/distributed_stencil.hpp), for every rank count: a rank visits the slabs that
// touch its own in this same order and folds the slab partials in slab order. (The read check
// below evaluates every cell one at a time: its vjp agrees with the unchecked one to round-off,
// not bit for bit.)
//
// A kernel that reads outside its declared shape — x(field, point) with field ≥ F or
// point ≥ S — reads memory that is not its neighbourhood. The read check catches it: with
// StencilOptions::check_reads (on by default in builds without NDEBUG) every read is checked
// and such a read stops the run with an rwd::InvalidArgument naming the field, the point, the
// declared shape and the cell; a kernel that leaves an output f[k] unwritten is refused the
// same way. Checked runs use one thread. Bad declarations (no fields, an empty stencil, repeated
// offsets, empty or repeated names) and grid sizes below the stencil's span are refused with an
// rwd::InvalidArgument naming the value and the rule when the problem is made.
// Runs on the CPU (rwd::EigenBackend).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/model.hpp"
#include "rewind/parallel.hpp"
#include "rewind/problems/detail/problem_support.hpp"
#include "rewind/problems/detail/stencil_engine.hpp"
#include "rewind/problems/sparsity_pattern.hpp"
#include "rewind/problems/stencil_shape.hpp"
#include "rewind/types.hpp"

namespace rwd {

// A problem (rwd::Problem on rwd::EigenBackend) made from a stencil model (see the top of this
// file). Make one with rwd::stencil_problem(Model{}, sizes…).
template <class Model>
class StencilProblem {
  using Engine = detail::StencilEngine<Model>;

 public:
  using Backend = EigenBackend;
  using Vector = Backend::Vector;
  static constexpr int kDimension = Engine::kDimension;
  static constexpr int kFields = Engine::kFields;
  static constexpr int kParameters = Engine::kParameters;
  static constexpr int kPoints = Engine::kPoints;
  static constexpr int kComponents = Engine::kComponents;
  using Cell = GridCell<kDimension>;
  // A cell update does not see t (the Rosenbrock methods need the declaration).
  static constexpr bool autonomous = true;

  StencilProblem(Model model, const std::array<Index, kDimension>& sizes,
                 StencilOptions options = {})
      : engine_(std::move(model), sizes, options) {}

  Index state_size() const { return kFields * cell_count(); }
  Index parameter_size() const { return kParameters; }
  Index cell_count() const { return engine_.grid().cells(); }
  const std::array<Index, kDimension>& grid_sizes() const { return engine_.grid().sizes(); }
  const Model& model() const { return engine_.model(); }
  const StencilOptions& options() const { return engine_.options(); }
  // How the vjp's scatter is cut (see "Determinism" at the top of this file).
  Index block_count() const { return engine_.grid().blocks(); }
  int colour_count() const { return engine_.grid().colours(); }

  static std::vector<std::string> field_names() { return names(Model::field_names); }
  static std::vector<std::string> parameter_names() { return names(Model::parameter_names); }

  static Vector default_parameters() {
    static_assert(Engine::kHasDefaultParameters,
                  "rwd::StencilProblem::default_parameters: the model has no "
                  "`static constexpr std::array<double, P> default_parameters`");
    return detail::vector_from_host<Backend>(std::span<const double>(Model::default_parameters));
  }

  // Whether the model declares `initial_cell` (see the top of this file).
  static constexpr bool kHasInitialState =
      requires(const Model& m, const double* p, const Cell& at, double* y0) {
    m.initial_cell(p, at, y0);
  };

  // y0 = the model's initial_cell on every cell, in the state's layout (a model without
  // initial_cell does not compile this).
  Vector initial_state(const Vector& theta) const {
    static_assert(kHasInitialState,
                  "rwd::StencilProblem::initial_state: the model has no `template <class T> void "
                  "initial_cell(const T* p, const rwd::GridCell<D>& at, T* y0) const`");
    detail::require_length(kName, "parameter vector theta", theta.size(), kParameters);
    Vector y0(state_size());
    initial_state(theta.data(), y0.data());
    return y0;
  }

  // out_theta = (∂y0/∂θ)ᵀ w for y0 = initial_state(θ) (overwritten): one forward-mode evaluation
  // of initial_cell per cell, seeded in θ, summed over the cells in order (one thread).
  void initial_state_vjp(const Vector& theta, const Vector& w, Vector& out_theta) const {
    static_assert(kHasInitialState,
                  "rwd::StencilProblem::initial_state_vjp: the model has no initial_cell");
    detail::require_length(kName, "parameter vector theta", theta.size(), kParameters);
    detail::require_length(kName, "cotangent w", w.size(), state_size());
    detail::require_length(kName, "output out_theta", out_theta.size(), kParameters);
    initial_state_vjp(theta.data(), w.data(), out_theta.data());
  }

  // initial_state and its vjp on plain arrays (theta, out_theta: parameter_size() values; y0, w:
  // state_size()), unchecked.
  void initial_state(const double* theta, double* y0) const {
    const Index cells = cell_count();
    std::array<double, kFields> values;
    for (Index c = 0; c < cells; ++c) {
      model().initial_cell(theta, cell_at(c), values.data());
      for (int k = 0; k < kFields; ++k) y0[k * cells + c] = values[k];
    }
  }
  void initial_state_vjp(const double* theta, const double* w, double* out_theta) const {
    std::fill(out_theta, out_theta + kParameters, 0.0);
    if constexpr (kParameters > 0) {
      using Seeded = detail::ForwardScalar<kParameters>;
      std::array<Seeded, kParameters> p;
      for (int j = 0; j < kParameters; ++j) p[j] = Seeded(kParameters, j, theta[j]);
      std::array<Seeded, kFields> values;
      const Index cells = cell_count();
      for (Index c = 0; c < cells; ++c) {
        model().initial_cell(p.data(), cell_at(c), values.data());
        for (int j = 0; j < kParameters; ++j) {
          double sum = 0.0;
          for (int k = 0; k < kFields; ++k) sum += w[k * cells + c] * values[k].dx(j);
          out_theta[j] += sum;
        }
      }
    }
  }

  // dJ/dθ through the initial state too: grad_theta + (∂y0/∂θ)ᵀ grad_y0, for a run started from
  // initial_state(θ) (grad_y0, grad_theta: a driver's result).
  Vector total_parameter_gradient(const Vector& theta, const Vector& grad_y0,
                                  const Vector& grad_theta) const {
    detail::require_length(kName, "gradient grad_theta", grad_theta.size(), kParameters);
    Vector through_y0(kParameters);
    initial_state_vjp(theta, grad_y0, through_y0);
    return grad_theta + through_y0;
  }

  // f = the cell updates of every cell (overwritten).
  void rhs(double /*t*/, const Vector& y, const Vector& theta, Vector& f) const {
    detail::require_rhs_sizes<Backend>(kName, state_size(), kParameters, y, theta, f);
    rhs(y.data(), theta.data(), f.data());
  }

  // out_y = (∂f/∂y)ᵀ v, out_theta = (∂f/∂θ)ᵀ v (both overwritten): one forward-mode evaluation
  // per cell, scattered colour by colour; the parameter part summed per slab (per block on a
  // 1-D grid) and the partials added in order (see the top of this file).
  void vjp(double /*t*/, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    detail::require_vjp_sizes<Backend>(kName, state_size(), kParameters, y, theta, v, out_y,
                                       out_theta);
    vjp(y.data(), theta.data(), v.data(), out_y.data(), out_theta.data());
  }

  // out = (∂f/∂y) w (overwritten): one directional derivative per cell.
  void jvp(double /*t*/, const Vector& y, const Vector& theta, const Vector& w, Vector& out) const {
    detail::require_length(kName, "state y", y.size(), state_size());
    detail::require_length(kName, "parameter vector theta", theta.size(), kParameters);
    detail::require_length(kName, "direction w", w.size(), state_size());
    detail::require_length(kName, "output out", out.size(), state_size());
    jvp(y.data(), theta.data(), w.data(), out.data());
  }

  // rhs, vjp and jvp on plain arrays of state_size() (y, f, v, w, out, out_y) and
  // parameter_size() (theta, out_theta) values, unchecked: for callers without Eigen vectors (a
  // model plugin's C functions, rewind/model_plugin.hpp). The same bits as the Vector forms.
  void rhs(const double* y, const double* theta, double* f) const {
    engine_.rhs(y, theta, f, 0, slabs());
  }
  void vjp(const double* y, const double* theta, const double* v, double* out_y,
           double* out_theta) const {
    double* sums = detail::stencil_scratch(partial_count() * Engine::kSumWidth);
    engine_.vjp(y, theta, v, out_y, sums, nullptr);
    fold_partials(sums, out_theta);
  }
  void jvp(const double* y, const double* theta, const double* w, double* out) const {
    engine_.jvp(y, theta, w, out, 0, slabs());
  }
  void jvp_vjp(const double* y, const double* theta, const double* u, const double* w,
               double* out_y, double* out_theta) const {
    double* sums = detail::stencil_scratch(partial_count() * Engine::kSumWidth);
    engine_.jvp_vjp(y, theta, u, w, out_y, sums, nullptr);
    fold_partials(sums, out_theta);
  }

  // out_y = ∇_y [wᵀ (∂f/∂y) u], out_theta = ∇_θ [wᵀ (∂f/∂y) u] (both overwritten): the second
  // derivatives the Rosenbrock methods' exact adjoints need (rewind/integrators/rosenbrock.hpp).
  // One nested forward-mode evaluation per cell, one cell at a time — without the vjp's
  // vectorised chunks, so several times its cost (bench/results/stencil_models.md) — scattered
  // and summed as the vjp is: the same bits for any thread count.
  void jvp_vjp(double /*t*/, const Vector& y, const Vector& theta, const Vector& u, const Vector& w,
               Vector& out_y, Vector& out_theta) const {
    detail::require_vjp_sizes<Backend>(kName, state_size(), kParameters, y, theta, w, out_y,
                                       out_theta);
    detail::require_length(kName, "direction u", u.size(), state_size());
    jvp_vjp(y.data(), theta.data(), u.data(), w.data(), out_y.data(), out_theta.data());
  }

  // The pattern of ∂f/∂y (see SparsityPattern): row k·cells + c has the columns
  // k'·cells + (each cell the stencil of c reads), for every field k'. Allocates; call it once.
  SparsityPattern sparsity() const {
    const auto& grid = engine_.grid();
    const Index cells = grid.cells();
    SparsityPattern pattern;
    pattern.size = state_size();
    pattern.row_starts.reserve(static_cast<std::size_t>(state_size() + 1));
    std::vector<Index> cell_starts{0}, cell_columns;
    for (Index b = 0; b < grid.blocks(); ++b)
      grid.for_each_cell(b, [&](const Cell&, Index, const std::array<Index, kPoints>& nb) {
        std::array<Index, kPoints> read;
        std::array<int, kPoints> position;
        const int count = Engine::distinct_reads(nb, read, position);
        cell_columns.insert(cell_columns.end(), read.begin(), read.begin() + count);
        cell_starts.push_back(static_cast<Index>(cell_columns.size()));
      });
    pattern.row_starts.push_back(0);
    for (int k = 0; k < kFields; ++k)
      for (Index c = 0; c < cells; ++c) {
        for (int field = 0; field < kFields; ++field)
          for (Index i = cell_starts[c]; i < cell_starts[c + 1]; ++i)
            pattern.columns.push_back(field * cells + cell_columns[static_cast<std::size_t>(i)]);
        pattern.row_starts.push_back(static_cast<Index>(pattern.columns.size()));
      }
    return pattern;
  }

  // values = ∂f/∂y's entries in exactly sparsity()'s order (row by row, each row's columns
  // ascending), values.size() == sparsity().nonzeros() (else rwd::InvalidArgument): one
  // forward-mode evaluation per cell, the vjp's derivative scalar, on rwd::thread_count()
  // threads, each cell writing only its own rows — the same bits for any thread count. Where
  // two points of a cell's stencil read the same cell (a reflecting wall mirrors a neighbour
  // onto a cell inside; periodic wraps never coincide, the grid being wider than the stencil's
  // span), their derivatives are added into the one entry in stencil order; a fixed wall's
  // neighbour contributes nothing (its value is a constant). A kernel that ignores a field at a
  // point gives exact zeros there. Allocates the pattern's per-cell counts (one index per cell) on
  // every call.
  void jacobian_values(double /*t*/, const Vector& y, const Vector& theta,
                       std::span<double> values) const {
    detail::require_length(kName, "state y", y.size(), state_size());
    detail::require_length(kName, "parameter vector theta", theta.size(), kParameters);
    jacobian_values(y.data(), theta.data(), values);
  }
  // sparsity().nonzeros() without building the pattern (one index per cell).
  Index jacobian_nonzeros() const {
    return Index{kFields} * kFields * engine_.jacobian_cell_starts().back();
  }
  // The same on plain arrays (y: state_size() values, theta: parameter_size()).
  void jacobian_values(const double* y, const double* theta, std::span<double> values) const {
    const std::vector<Index> starts = engine_.jacobian_cell_starts();
    const Index nonzeros = Index{kFields} * kFields * starts.back();
    if (static_cast<Index>(values.size()) != nonzeros)
      detail::fail<InvalidArgument>(kName, ": jacobian_values got room for ", values.size(),
                                    " values; the Jacobian's pattern (sparsity()) has ", nonzeros,
                                    " nonzeros, give exactly that many");
    engine_.jacobian_values(y, theta, starts.data(), values.data());
  }
  // The same unchecked: `values` has room for exactly jacobian_nonzeros() entries (a caller that
  // counted them once, like a model plugin's loader).
  void jacobian_values(const double* y, const double* theta, double* values) const {
    const std::vector<Index> starts = engine_.jacobian_cell_starts();
    engine_.jacobian_values(y, theta, starts.data(), values);
  }

 private:
  static constexpr const char* kName = Engine::kName;

  Index slabs() const { return grid_sizes()[0]; }

  // The vjp's parameter partials: one per slab (per block on a 1-D grid).
  Index partial_count() const { return kDimension == 1 ? block_count() : slabs(); }

  // out_theta[j] = the partials' j-th entries summed in slab (block) order.
  void fold_partials(const double* sums, double* out_theta) const {
    const Index partials = partial_count();
    for (int j = 0; j < kParameters; ++j) {
      double total = 0.0;
      for (Index i = 0; i < partials; ++i) total += sums[i * Engine::kSumWidth + j];
      out_theta[j] = total;
    }
  }

  // Cell c (in memory order: the last dimension fastest) as the kernel sees it.
  Cell cell_at(Index c) const {
    Cell at;
    at.size = grid_sizes();
    for (int d = kDimension - 1; d >= 0; --d) {
      at.index[d] = c % at.size[d];
      c /= at.size[d];
    }
    return at;
  }

  template <std::size_t N>
  static std::vector<std::string> names(const std::array<const char*, N>& list) {
    return std::vector<std::string>(list.begin(), list.end());
  }

  Engine engine_;
};

// The problem of a stencil model on a grid of the given sizes, one per dimension (see the top of
// this file): rwd::stencil_problem(Model{}, 256, 256).
template <class Model, class... Sizes>
requires(sizeof...(Sizes) >= 1 &&
         (std::is_integral_v<Sizes> && ...)) StencilProblem<Model> stencil_problem(Model model,
                                                                                   Sizes... sizes) {
  static_assert(sizeof...(Sizes) == StencilProblem<Model>::kDimension,
                "rwd::stencil_problem: give one grid size per dimension of the model's grid");
  return StencilProblem<Model>(std::move(model), {static_cast<Index>(sizes)...});
}

// The same with options (e.g. {.check_reads = true}) and the sizes as an array.
template <class Model>
StencilProblem<Model> stencil_problem(
    Model model, const std::array<Index, StencilProblem<Model>::kDimension>& sizes,
    StencilOptions options) {
  return StencilProblem<Model>(std::move(model), sizes, options);
}

}  // namespace rwd
