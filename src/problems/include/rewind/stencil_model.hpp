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
// `default_parameters` (std::array<double, P>). Write it like rewind/model.hpp's rhs: name
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
// with w (a gather: each cell writes only itself). sparsity() gives the Jacobian ∂f/∂y's pattern
// in compressed rows: row (k, c) has a column for every field at every cell the stencil of c
// reads (a superset of the true pattern where the kernel ignores a field at some point).
// Exact: the derivatives of the computed expressions, to round-off (the built-in problems'
// hand-written vjps agree to ~1e-16 relative; tests compare at 1e-13).
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
// Determinism. rhs, vjp and jvp run on rwd::thread_count() threads and give the same bits for
// any thread count (rewind/parallel.hpp's contract). The grid is cut along dimension 0 into
// blocks that depend only on the grid's sizes and the stencil; every block is at least the
// stencil's span in dimension 0, so blocks two apart never touch the same entry. The vjp's
// scatter runs colour by colour — even blocks (in parallel), then odd blocks, and a third colour
// for the last block of an odd number of blocks around a periodic dimension 0 — and inside a
// block in memory order: line by line, along a line the border cells one at a time and the
// chunks in order, a chunk's contributions to an entry in stencil order. So every entry of out_y
// receives its contributions in one fixed order (no atomics, no race), whatever the thread count.
// The parameter part is summed per block in that order (four lanes per chunk) and the blocks' sums
// are added in block order by one thread. A gradient is therefore bitwise the same for every
// schedule, store and thread count. (The read check below evaluates every cell one at a time:
// its vjp agrees with the unchecked one to round-off, not bit for bit.)
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
#include "rewind/problems/detail/stencil_grid.hpp"
#include "rewind/problems/detail/stencil_runs.hpp"
#include "rewind/problems/stencil_shape.hpp"
#include "rewind/types.hpp"

namespace rwd {

// Options of a stencil problem.
struct StencilOptions {
  // Check every read x(field, point) against the declared shape and that every output is
  // written, on one thread (a debug aid: several times slower). On by default without NDEBUG.
#ifdef NDEBUG
  bool check_reads = false;
#else
  bool check_reads = true;
#endif
};

// The Jacobian ∂f/∂y's sparsity in compressed rows: row r's columns are
// columns[row_starts[r] … row_starts[r + 1]), ascending and distinct; rows = columns = the
// state size (indices into the state layout above).
struct SparsityPattern {
  Index size = 0;
  std::vector<Index> row_starts;
  std::vector<Index> columns;
  Index nonzeros() const { return static_cast<Index>(columns.size()); }
};

namespace detail {

template <class M>
inline constexpr bool kIsOffsetArray = false;
template <int D, std::size_t S>
inline constexpr bool kIsOffsetArray<std::array<Offset<D>, S>> = true;

}  // namespace detail

// A problem (rwd::Problem on rwd::EigenBackend) made from a stencil model (see the top of this
// file). Make one with rwd::stencil_problem(Model{}, sizes…).
template <class Model>
class StencilProblem {
  static_assert(
      requires { Model::field_names; } && requires { Model::parameter_names; },
      "rwd::stencil_problem: the model needs `static constexpr std::array<const char*, F> "
      "field_names` and `… parameter_names` (an empty array for a model without parameters)");
  static_assert(detail::kIsNameArray<std::remove_cvref_t<decltype(Model::field_names)>> &&
                    detail::kIsNameArray<std::remove_cvref_t<decltype(Model::parameter_names)>>,
                "rwd::stencil_problem: field_names and parameter_names must be "
                "std::array<const char*, N>");
  static_assert(
      requires { Model::boundaries; },
      "rwd::stencil_problem: the model needs `static constexpr std::array<rwd::Boundary, D> "
      "boundaries`, one per dimension of the grid");
  static_assert(
      requires { Model::stencil; },
      "rwd::stencil_problem: the model needs `static constexpr std::array<rwd::Offset<D>, S> "
      "stencil`, the offsets of the neighbours its cell update reads");
  static_assert(detail::kIsOffsetArray<std::remove_cvref_t<decltype(Model::stencil)>>,
                "rwd::stencil_problem: `stencil` must be std::array<rwd::Offset<D>, S>");

 public:
  using Backend = EigenBackend;
  using Vector = Backend::Vector;
  static constexpr int kDimension = detail::stencil_dimension<Model>;
  static_assert(kDimension >= 1 && kDimension <= 3,
                "rwd::stencil_problem: the grid has 1, 2 or 3 dimensions (`boundaries`' size)");
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(Model::stencil)>,
                               std::array<Offset<kDimension>, Model::stencil.size()>>,
                "rwd::stencil_problem: the stencil's offsets must have one entry per dimension "
                "(rwd::Offset<D> with D = the size of `boundaries`)");
  static constexpr int kFields = static_cast<int>(detail::name_count<decltype(Model::field_names)>);
  static constexpr int kParameters =
      static_cast<int>(detail::name_count<decltype(Model::parameter_names)>);
  static constexpr int kPoints = static_cast<int>(Model::stencil.size());
  // Derivative components of one cell's evaluation: every field at every point, then θ.
  static constexpr int kComponents = kFields * kPoints + kParameters;
  using Derivative = detail::ForwardScalar<std::max(1, kComponents)>;
  using Directional = detail::ForwardScalar<1>;
  using Cell = GridCell<kDimension>;

  template <class T, bool Checked>
  using Neighbourhood = detail::StencilNeighbourhood<T, kDimension, kFields, kPoints, Checked>;

  static_assert(
      requires(const Model& m, const Neighbourhood<double, false>& x, const double* p,
               const Cell& at, double* f) { m.cell(x, p, at, f); },
      "rwd::stencil_problem: the model needs `template <class T, class Neighbourhood> void "
      "cell(const Neighbourhood& x, const T* p, const rwd::GridCell<D>& at, T* f) const`");
  static constexpr bool kHasDefaultParameters = requires { Model::default_parameters; };
  static constexpr bool kHasWallValues = requires { Model::wall_values; };

  StencilProblem(Model model, const std::array<Index, kDimension>& sizes,
                 StencilOptions options = {})
      : model_(std::move(model)),
        grid_(checked_sizes(sizes), Model::stencil, Model::boundaries),
        options_(options) {
    if constexpr (kHasDefaultParameters)
      static_assert(std::tuple_size_v<std::remove_cvref_t<decltype(Model::default_parameters)>> ==
                        static_cast<std::size_t>(kParameters),
                    "rwd::stencil_problem: default_parameters must have one value per parameter");
    if constexpr (kHasWallValues) {
      static_assert(std::tuple_size_v<std::remove_cvref_t<decltype(Model::wall_values)>> ==
                        static_cast<std::size_t>(kFields),
                    "rwd::stencil_problem: wall_values must have one value per field");
      for (int k = 0; k < kFields; ++k) wall_[k] = Model::wall_values[k];
    }
  }

  Index state_size() const { return kFields * grid_.cells(); }
  Index parameter_size() const { return kParameters; }
  Index cell_count() const { return grid_.cells(); }
  const std::array<Index, kDimension>& grid_sizes() const { return grid_.sizes(); }
  const Model& model() const { return model_; }
  const StencilOptions& options() const { return options_; }
  // How the vjp's scatter is cut (see "Determinism" at the top of this file).
  Index block_count() const { return grid_.blocks(); }
  int colour_count() const { return grid_.colours(); }

  static std::vector<std::string> field_names() { return names(Model::field_names); }
  static std::vector<std::string> parameter_names() { return names(Model::parameter_names); }

  static Vector default_parameters() {
    static_assert(kHasDefaultParameters,
                  "rwd::StencilProblem::default_parameters: the model has no "
                  "`static constexpr std::array<double, P> default_parameters`");
    return detail::vector_from_host<Backend>(std::span<const double>(Model::default_parameters));
  }

  // f = the cell updates of every cell (overwritten).
  void rhs(double /*t*/, const Vector& y, const Vector& theta, Vector& f) const {
    detail::require_rhs_sizes<Backend>(kName, state_size(), kParameters, y, theta, f);
    if (options_.check_reads)
      rhs_blocks<true>(y.data(), theta.data(), f.data());
    else
      rhs_blocks<false>(y.data(), theta.data(), f.data());
  }

  // out_y = (∂f/∂y)ᵀ v, out_theta = (∂f/∂θ)ᵀ v (both overwritten): one forward-mode evaluation
  // per cell, scattered colour by colour (see the top of this file).
  void vjp(double /*t*/, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    detail::require_vjp_sizes<Backend>(kName, state_size(), kParameters, y, theta, v, out_y,
                                       out_theta);
    if (options_.check_reads)
      vjp_blocks<true>(y.data(), theta.data(), v.data(), out_y, out_theta);
    else
      vjp_blocks<false>(y.data(), theta.data(), v.data(), out_y, out_theta);
  }

  // out = (∂f/∂y) w (overwritten): one directional derivative per cell.
  void jvp(double /*t*/, const Vector& y, const Vector& theta, const Vector& w, Vector& out) const {
    detail::require_length(kName, "state y", y.size(), state_size());
    detail::require_length(kName, "parameter vector theta", theta.size(), kParameters);
    detail::require_length(kName, "direction w", w.size(), state_size());
    detail::require_length(kName, "output out", out.size(), state_size());
    if (options_.check_reads)
      jvp_blocks<true>(y.data(), theta.data(), w.data(), out.data());
    else
      jvp_blocks<false>(y.data(), theta.data(), w.data(), out.data());
  }

  // The pattern of ∂f/∂y (see SparsityPattern): row k·cells + c has the columns
  // k'·cells + (each cell the stencil of c reads), for every field k'. Allocates; call it once.
  SparsityPattern sparsity() const {
    const Index cells = grid_.cells();
    SparsityPattern pattern;
    pattern.size = state_size();
    pattern.row_starts.reserve(static_cast<std::size_t>(state_size() + 1));
    std::vector<Index> cell_starts{0}, cell_columns;
    for (Index b = 0; b < grid_.blocks(); ++b)
      grid_.for_each_cell(b, [&](const Cell&, Index, const std::array<Index, kPoints>& nb) {
        std::array<Index, kPoints> read = nb;
        std::sort(read.begin(), read.end());
        const auto end = std::unique(read.begin(), read.end());
        for (auto it = read.begin(); it != end; ++it)
          if (*it != detail::kStencilWall) cell_columns.push_back(*it);
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

 private:
  static constexpr const char* kName = "rwd::stencil_problem";

  // A value no cell update computes: an output still holding it was not written.
  static double unwritten() {
    return std::bit_cast<double>(std::uint64_t{0x7ff8'5e7c'11ed'0badULL});
  }
  static bool is_unwritten(double x) {
    return std::bit_cast<std::uint64_t>(x) == std::bit_cast<std::uint64_t>(unwritten());
  }

  std::array<Index, kDimension> checked_sizes(const std::array<Index, kDimension>& sizes) const {
    detail::require_valid_names(kName, "field_names", Model::field_names);
    detail::require_valid_names(kName, "parameter_names", Model::parameter_names);
    if (kFields < 1)
      detail::fail<InvalidArgument>(kName,
                                    ": the model declares no fields (field_names is "
                                    "empty); a cell needs at least one");
    if (kPoints < 1)
      detail::fail<InvalidArgument>(kName,
                                    ": the model's stencil is empty; declare at least "
                                    "one offset (e.g. {0, …, 0} for the cell itself)");
    for (int s = 0; s < kPoints; ++s)
      for (int r = 0; r < s; ++r)
        if (Model::stencil[s].delta == Model::stencil[r].delta)
          detail::fail<InvalidArgument>(kName, ": stencil[", s,
                                        "] = ", offset_text(Model::stencil[s]), " repeats stencil[",
                                        r, "]; the offsets must be distinct");
    Index cells = 1;
    for (int d = 0; d < kDimension; ++d) {
      Index lo = 0, hi = 0;
      for (int s = 0; s < kPoints; ++s) {
        lo = std::min<Index>(lo, Model::stencil[s][d]);
        hi = std::max<Index>(hi, Model::stencil[s][d]);
      }
      if (sizes[d] < hi - lo + 1)
        detail::fail<InvalidArgument>(kName, ": grid size n_", d, " = ", sizes[d],
                                      " must be >= ", hi - lo + 1, " (the stencil spans offsets ",
                                      lo, " … ", hi, " in dimension ", d, ", ",
                                      detail::boundary_name(Model::boundaries[d]),
                                      " boundary; a cell's neighbours must be distinct cells)");
      if (cells > (Index{1} << 40) / sizes[d])
        detail::fail<InvalidArgument>(kName, ": the grid has more than 2^40 cells");
      cells *= sizes[d];
    }
    return sizes;
  }

  static std::string offset_text(const Offset<kDimension>& o) {
    std::string s = "{";
    for (int d = 0; d < kDimension; ++d) s += (d > 0 ? ", " : "") + std::to_string(o[d]);
    return s + "}";
  }

  template <std::size_t N>
  static std::vector<std::string> names(const std::array<const char*, N>& list) {
    return std::vector<std::string>(list.begin(), list.end());
  }

  // Threads for a loop over every cell: one in checked mode (its refusal is an exception, which
  // must not leave a parallel region).
  int threads() const {
    if (options_.check_reads) return 1;
    return detail::threads_for(state_size(), detail::kParallelMinElements);
  }

  // The value field k reads at neighbour index `at` (a cell, or the wall).
  double read(const double* y, int k, Index at) const {
    return at == detail::kStencilWall ? wall_[k] : y[k * grid_.cells() + at];
  }

  template <bool Checked, class T>
  void call_cell(const T* x, const T* p, const Cell& at, T* f) const {
    if constexpr (Checked) {
      for (int k = 0; k < kFields; ++k) f[k] = unwritten();
    }
    model_.cell(Neighbourhood<T, Checked>(x, at), p, at, f);
    if constexpr (Checked) {
      for (int k = 0; k < kFields; ++k) {
        double value;
        if constexpr (std::is_same_v<T, double>)
          value = f[k];
        else
          value = f[k].val();
        if (is_unwritten(value))
          detail::fail<InvalidArgument>(kName, ": the cell update left f[", k, "] (field '",
                                        Model::field_names[k], "') unwritten; it must write all ",
                                        kFields, " outputs");
      }
    }
  }

  template <bool Checked>
  void rhs_blocks(const double* y, const double* theta, double* f) const {
    const Index cells = grid_.cells();
    auto cell = [&](const Cell& at, Index c, const std::array<Index, kPoints>& nb) {
      std::array<double, std::size_t{kFields} * kPoints> x;
      std::array<double, kFields> out{};
      for (int k = 0; k < kFields; ++k)
        for (int s = 0; s < kPoints; ++s) x[k * kPoints + s] = read(y, k, nb[s]);
      call_cell<Checked>(x.data(), theta, at, out.data());
      for (int k = 0; k < kFields; ++k) f[k * cells + c] = out[k];
    };
    auto run = [&](const Cell& at, Index first, Index lo, Index hi,
                   const std::array<Index, kPoints>& shift) {
      std::array<const double*, std::size_t{kFields} * kPoints> rows;
      for (int k = 0; k < kFields; ++k)
        for (int s = 0; s < kPoints; ++s) rows[k * kPoints + s] = y + k * cells + shift[s];
      detail::stencil_rhs_run<kDimension, kFields, kPoints>(model_, rows, f + first, cells, theta,
                                                            at, lo, hi);
    };
    detail::parallel_indices(grid_.blocks(), threads(), [&](Index b) {
      if constexpr (Checked)
        grid_.for_each_cell(b, cell);
      else
        grid_.for_each_cell(b, cell, run);
    });
  }

  // One cell's part of the vjp: its weighted local gradient scattered into out_y, its parameter
  // part added into sums (in this order of the outputs k).
  template <bool Checked>
  void vjp_cell(const Cell& at, Index c, const std::array<Index, kPoints>& nb, const double* y,
                const double* theta, const double* v, double* out_y, double* sums) const {
    const Index cells = grid_.cells();
    std::array<Derivative, std::size_t{kFields} * kPoints> x;
    std::array<Derivative, std::max(1, kParameters)> p;
    std::array<Derivative, kFields> f;
    for (int k = 0; k < kFields; ++k)
      for (int s = 0; s < kPoints; ++s)
        detail::seed_component(x[k * kPoints + s], read(y, k, nb[s]), k * kPoints + s);
    for (int j = 0; j < kParameters; ++j)
      detail::seed_component(p[j], theta[j], kFields * kPoints + j);
    call_cell<Checked>(x.data(), p.data(), at, f.data());
    std::array<double, kFields> w;
    for (int k = 0; k < kFields; ++k) w[k] = v[k * cells + c];
    for (int k = 0; k < kFields; ++k)
      for (int s = 0; s < kPoints; ++s) {
        if (nb[s] == detail::kStencilWall) continue;
        out_y[k * cells + nb[s]] += detail::weighted_component(f, w, k * kPoints + s);
      }
    for (int j = 0; j < kParameters; ++j)
      sums[j] += detail::weighted_component(f, w, kFields * kPoints + j);
  }

  template <bool Checked>
  void vjp_blocks(const double* y, const double* theta, const double* v, Vector& out_y,
                  Vector& out_theta) const {
    Backend::fill(out_y, 0.0);
    double* out = out_y.data();
    const Index blocks = grid_.blocks();
    double* sums = detail::stencil_scratch(blocks * std::max(1, kParameters));
    for (int colour = 0; colour < grid_.colours(); ++colour) {
      // The blocks of this colour: colour, colour + 2, … (colour 2: the last block alone).
      const Index first = colour == 2 ? blocks - 1 : colour;
      const Index step = 2;
      Index count = colour == 2 ? 1 : (blocks - first + step - 1) / step;
      if (grid_.colours() == 3 && colour == 0) count -= 1;  // the last block is colour 2
      detail::parallel_indices(count, threads(), [&](Index i) {
        const Index b = first + i * step;
        double* block_sums = sums + b * std::max(1, kParameters);
        for (int j = 0; j < kParameters; ++j) block_sums[j] = 0.0;
        auto cell = [&](const Cell& at, Index c, const std::array<Index, kPoints>& nb) {
          vjp_cell<Checked>(at, c, nb, y, theta, v, out, block_sums);
        };
        auto run = [&](const Cell& at, Index first_cell, Index lo, Index hi,
                       const std::array<Index, kPoints>& shift) {
          const Index cells = grid_.cells();
          std::array<const double*, std::size_t{kFields} * kPoints> rows;
          std::array<double*, std::size_t{kFields} * kPoints> lines;
          std::array<const double*, kFields> weights;
          for (int k = 0; k < kFields; ++k) {
            for (int s = 0; s < kPoints; ++s) {
              rows[k * kPoints + s] = y + k * cells + shift[s];
              lines[k * kPoints + s] =
                  out + k * cells + shift[s] - Model::stencil[s][kDimension - 1];
            }
            weights[k] = v + k * cells + first_cell;
          }
          detail::stencil_vjp_run<kDimension, kFields, kPoints, kParameters, Derivative>(
              model_, rows.data(), lines.data(), weights.data(), theta, at, lo, hi, block_sums);
        };
        if constexpr (Checked)
          grid_.for_each_cell(b, cell);
        else
          grid_.for_each_cell(b, cell, run);
      });
    }
    for (int j = 0; j < kParameters; ++j) {
      double total = 0.0;
      for (Index b = 0; b < blocks; ++b) total += sums[b * std::max(1, kParameters) + j];
      out_theta[j] = total;
    }
  }

  template <bool Checked>
  void jvp_blocks(const double* y, const double* theta, const double* w, double* out) const {
    const Index cells = grid_.cells();
    detail::parallel_indices(grid_.blocks(), threads(), [&](Index b) {
      grid_.for_each_cell(b, [&](const Cell& at, Index c, const std::array<Index, kPoints>& nb) {
        std::array<Directional, std::size_t{kFields} * kPoints> x;
        std::array<Directional, std::max(1, kParameters)> p;
        std::array<Directional, kFields> f;
        for (int k = 0; k < kFields; ++k)
          for (int s = 0; s < kPoints; ++s) {
            Directional& a = x[k * kPoints + s];
            a.val() = read(y, k, nb[s]);
            a.fastAccessDx(0) = nb[s] == detail::kStencilWall ? 0.0 : w[k * cells + nb[s]];
          }
        for (int j = 0; j < kParameters; ++j) {
          p[j].val() = theta[j];
          p[j].fastAccessDx(0) = 0.0;
        }
        call_cell<Checked>(x.data(), p.data(), at, f.data());
        for (int k = 0; k < kFields; ++k) out[k * cells + c] = f[k].fastAccessDx(0);
      });
    });
  }

  Model model_;
  detail::StencilGrid<kDimension, kPoints> grid_;
  StencilOptions options_;
  std::array<double, kFields> wall_{};
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
