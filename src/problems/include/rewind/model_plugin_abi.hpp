// rewind/model_plugin_abi.hpp — the binary contract between a model plugin (a shared library
// built with rewind_add_model, its model exported by REWIND_MODEL) and the rewind that loads it
// (rwd::load_model_plugin, rewind/plugin_model.hpp; the `rewind` tool's --model PATH).
//
//   extern "C" const rwd_model_plugin* rewind_model_plugin(void);   // what REWIND_MODEL defines
//
// The library exports one C function, rewind_model_plugin (kModelPluginEntryPoint), returning a
// pointer to a description that lives as long as the library: plain C types only (sizes, names,
// default values, function pointers over double arrays), so that the loader needs neither the
// model's type nor the compiler that built it. abi_version comes first and never moves: a loader
// reads it before anything else and refuses a plugin of another version, saying both (a change to
// this struct's layout or to the meaning of a field increments REWIND_MODEL_ABI_VERSION).
//
// Every function is noexcept in effect (the derivatives are exact forward-mode evaluations of the
// model's rhs, rewind/model.hpp) and re-entrant: a plugin keeps its scratch buffers per thread.
// Arrays are contiguous doubles: y, f, g, v, w, out_y have state_size entries, p and out_p
// parameter_size, J state_size² (column-major: J[i + j·n] = ∂f_i/∂y_j), bands
// (band_upper + band_lower + 1)·state_size (LAPACK band storage, below).
//
// Versions: 1, the drift model; 2 adds the diffusion of a stochastic model (diagonal noise); 3
// adds the second derivatives (jvp_vjp) and the model's declared autonomy, which the Rosenbrock
// methods need; 4 adds the model's declared band Jacobian (band_upper, band_lower,
// band_jacobian), which the band linear solvers take; 5 adds stencil models (the grid_ members:
// a PDE on a structured grid whose size the loader chooses, with its sparse Jacobian); 6 adds a
// stencil model's second derivatives (grid_jvp_vjp), which the Rosenbrock methods need; 7 adds
// a stencil model's window functions (grid_slab_offsets, window_), with which a loader linked
// with MPI splits the grid across ranks (rwd::DistributedPluginStencilProblem), and a templated
// model's time derivatives (time_derivative, time_derivative_vjp), with which the Rosenbrock
// methods take a model whose f depends on t.
//
// A stencil model (rewind/stencil_model.hpp) has grid_dimension 1, 2 or 3. Its state_size is then
// the number of fields per cell and state_names the fields' names; the problem itself exists per
// grid: grid_make(sizes) makes it on a grid of sizes[0] × … × sizes[grid_dimension − 1] cells
// (state: fields · cells values, field-major, then row-major) and the other grid_ functions take
// that handle; rhs, vjp, jvp, jacobian, jvp_vjp, initial_state, initial_state_vjp, diffusion and
// band_jacobian are null. The grid_ functions return 0, or non-zero when the model refused
// (grid_make: a size below the stencil's span; the others: a kernel that read outside its
// declared shape, in a plugin built with read checks) with the reason in grid_error().
#pragma once

#include <cstddef>
#include <cstdint>

// The version of this contract. A build may define it (the tests build a plugin of another
// version that way); a plugin records the value it was built with, and a loader compares it with
// the one it was built with.
#ifndef REWIND_MODEL_ABI_VERSION
#define REWIND_MODEL_ABI_VERSION 7
#endif

extern "C" {

// A model as the plugin describes it. Optional members are null where the model has none.
struct rwd_model_plugin {
  std::uint32_t abi_version;  // REWIND_MODEL_ABI_VERSION of the plugin's build; always first
  std::uint32_t struct_size;  // sizeof(rwd_model_plugin) in the plugin's build
  // Non-null when the model was refused while being described (empty or repeated names): the
  // reason. Nothing below is then valid.
  const char* error;
  const char* name;  // the model's type name, as given to REWIND_MODEL
  std::int64_t state_size;
  std::int64_t parameter_size;
  const char* const* state_names;      // state_size names
  const char* const* parameter_names;  // parameter_size names
  const double* default_parameters;    // parameter_size values, or null
  double default_dt;                   // the model's `default_dt`, or 0 (the tool's default)
  std::int64_t default_steps;          // the model's `default_steps`, or 0 (the tool's default)
  // 1 when the model declares `static constexpr bool autonomous = true` (f does not depend on t),
  // else 0.
  std::uint32_t autonomous;
  // f = rhs(t, y, p).
  void (*rhs)(double t, const double* y, const double* p, double* f);
  // out_y = (∂f/∂y)ᵀ v, out_p = (∂f/∂p)ᵀ v.
  void (*vjp)(double t, const double* y, const double* p, const double* v, double* out_y,
              double* out_p);
  // out = (∂f/∂y) w.
  void (*jvp)(double t, const double* y, const double* p, const double* w, double* out);
  // J = ∂f/∂y, column-major.
  void (*jacobian)(double t, const double* y, const double* p, double* J);
  // out_y, out_p = the gradients in y and p of wᵀ (∂f/∂y) u (u and w: state_size values).
  void (*jvp_vjp)(double t, const double* y, const double* p, const double* u, const double* w,
                  double* out_y, double* out_p);
  // y0 = initial_state(p), or null.
  void (*initial_state)(const double* p, double* y0);
  // out_p = (∂y0/∂p)ᵀ w, or null (null exactly when initial_state is).
  void (*initial_state_vjp)(const double* p, const double* w, double* out_p);
  // g = diffusion(t, y, p) of a stochastic model, dy_i = f_i dt + g_i dW_i; or null.
  void (*diffusion)(double t, const double* y, const double* p, double* g);
  // out_y = (∂g/∂y)ᵀ v, out_p = (∂g/∂p)ᵀ v; or null (null exactly when diffusion is).
  void (*diffusion_vjp)(double t, const double* y, const double* p, const double* v, double* out_y,
                        double* out_p);
  // The half-bandwidths of ∂f/∂y a model declares with `static constexpr rwd::JacobianBand
  // jacobian_band{upper, lower}` (∂f_i/∂y_j = 0 unless j − band_upper ≤ i ≤ j + band_lower), each
  // in 0 … state_size − 1; both −1 when the model declares no band.
  std::int64_t band_upper;
  std::int64_t band_lower;
  // ∂f/∂y in LAPACK band storage, column-major with band_upper + band_lower + 1 rows:
  // bands[(band_upper + i − j) + (band_upper + band_lower + 1)·j] = ∂f_i/∂y_j for every i, j with
  // max(0, j − band_upper) ≤ i ≤ min(state_size − 1, j + band_lower), every other entry 0 (all
  // overwritten). Null exactly when the model declares no band.
  void (*band_jacobian)(double t, const double* y, const double* p, double* bands);
  // out = ∂f/∂t, and out_y, out_p = the gradients in y and p of wᵀ ∂f/∂t (version 7), for a model
  // whose rhs takes t as its scalar type (rwd::AutoProblem::kTimeDifferentiable); both null
  // otherwise.
  void (*time_derivative)(double t, const double* y, const double* p, double* out);
  void (*time_derivative_vjp)(double t, const double* y, const double* p, const double* w,
                              double* out_y, double* out_p);

  // A stencil model's grid (version 5; see the top of this file): its dimension (0: not a stencil
  // model, every grid_ member below then 0 or null), the smallest size of each dimension (the
  // stencil's span + 1; entries past the dimension 0) and the model's `default_grid_size` (cells
  // per dimension of the command line's default grid, or 0: the tool's default).
  std::uint32_t grid_dimension;
  std::int64_t grid_min_sizes[3];
  std::int64_t grid_default_size;
  // 1 when the model has initial_cell (grid_initial_state and grid_initial_state_vjp work), else 0.
  std::uint32_t grid_has_initial_state;
  // The reason the last grid_ call on this thread returned non-zero.
  const char* (*grid_error)(void);
  // The threads the grid_ functions run on (rwd::set_thread_count inside the plugin; the bits do
  // not depend on it). Values above what the plugin's build can run are clamped.
  void (*grid_set_threads)(int threads);
  // *grid = the model on a grid of these sizes (grid_dimension entries); released by grid_free.
  int (*grid_make)(const std::int64_t* sizes, void** grid);
  void (*grid_free)(void* grid);
  // f = rhs(y, p) on the grid; out_y = (∂f/∂y)ᵀ v, out_p = (∂f/∂p)ᵀ v; out = (∂f/∂y) w.
  int (*grid_rhs)(const void* grid, double t, const double* y, const double* p, double* f);
  int (*grid_vjp)(const void* grid, double t, const double* y, const double* p, const double* v,
                  double* out_y, double* out_p);
  int (*grid_jvp)(const void* grid, double t, const double* y, const double* p, const double* w,
                  double* out);
  // The number of entries of ∂f/∂y's sparsity pattern, and the pattern in compressed rows:
  // row_starts (state size + 1 offsets from 0) and columns (nonzeros entries, each row's
  // ascending), as rwd::StencilProblem::sparsity.
  int (*grid_nonzeros)(const void* grid, std::int64_t* nonzeros);
  int (*grid_sparsity)(const void* grid, std::int64_t* row_starts, std::int64_t* columns);
  // values = ∂f/∂y's entries in the pattern's order (nonzeros of them).
  int (*grid_jacobian_values)(const void* grid, double t, const double* y, const double* p,
                              double* values);
  // y0 = the initial state on the grid for p; out_p = (∂y0/∂p)ᵀ w.
  int (*grid_initial_state)(const void* grid, const double* p, double* y0);
  int (*grid_initial_state_vjp)(const void* grid, const double* p, const double* w, double* out_p);
  // out_y, out_p = the gradients in y and p of wᵀ (∂f/∂y) u on the grid (version 6; a stencil
  // model is autonomous: t is ignored).
  int (*grid_jvp_vjp)(const void* grid, double t, const double* y, const double* p, const double* u,
                      const double* w, double* out_y, double* out_p);

  // A stencil model on a window of its grid (version 7): the slabs (cells of one index along
  // dimension 0) one process holds, its own and copies of its neighbours', which the loader fills
  // and exchanges (rewind/distributed/slab_split.hpp). What the loader needs to place the window:
  // the stencil's points, each point's offset along dimension 0 (grid_points values), and
  // dimension 0's boundary (0 periodic, 1 fixed, 2 reflecting: rwd::Boundary's order).
  std::int64_t grid_points;
  const std::int64_t* grid_slab_offsets;
  std::uint32_t grid_slab_boundary;
  // *window = the model on a grid of these sizes (grid_dimension entries) that stores
  // `stored_slabs` slabs: global slab i at position storage[i] (sizes[0] entries), or not at all
  // (−1). Arrays given to the window_ functions are field-major over the stored cells
  // (state_size · stored_slabs · cells per slab values). Released by window_free. On a 1-D grid
  // the slabs are the cells, and the window holds consecutive cells (around a periodic grid:
  // rwd::detail::StencilGrid::store_slabs); plugins of this version built before 1-D grids split
  // leave the window_ members null there.
  int (*window_make)(const std::int64_t* sizes, const std::int64_t* storage,
                     std::int64_t stored_slabs, void** window);
  void (*window_free)(void* window);
  // f = rhs (out = (∂f/∂y) w) at the cells of the global slabs [first, end) (1-D: the cells
  // [first, end)), read from the window.
  int (*window_rhs)(const void* window, double t, const double* y, const double* p, double* f,
                    std::int64_t first, std::int64_t end);
  int (*window_jvp)(const void* window, double t, const double* y, const double* p, const double* w,
                    double* out, std::int64_t first, std::int64_t end);
  // out = (∂f/∂y)ᵀ v over the window (zeroed first) from the cells of the slabs `slots` visits,
  // in the whole grid's order of contributions, with their parameter parts into `partials`:
  // slots[i] (one per global slab; on a 1-D grid one per block of the grid's equal cut,
  // rwd::detail::StencilGrid::line_block_cells) is −2 (not visited), −1 (visited, its parameter
  // part dropped) or the slot s whose max(1, parameter_size) partials start at partials[s · max(1,
  // parameter_size)].
  int (*window_vjp)(const void* window, double t, const double* y, const double* p, const double* v,
                    double* out, double* partials, const std::int64_t* slots);
};

// The type of the exported entry point.
typedef const rwd_model_plugin* (*rwd_model_plugin_entry)(void);

}  // extern "C"

namespace rwd {

// The model ABI version this build of rewind speaks.
inline constexpr std::uint32_t kModelAbiVersion = REWIND_MODEL_ABI_VERSION;

// The symbol a model plugin exports (REWIND_MODEL defines it).
inline constexpr const char* kModelPluginEntryPoint = "rewind_model_plugin";

}  // namespace rwd
