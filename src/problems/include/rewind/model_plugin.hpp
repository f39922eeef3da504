// rewind/model_plugin.hpp — REWIND_MODEL(Type): exports a templated model (rewind/model.hpp) from
// a shared library, so that the `rewind` tool (--model PATH) and rwd::load_model_plugin load it.
//
//   // sir_model.cpp, built by CMake's rewind_add_model(sir sir_model.cpp) into a plugin
//   #include <rewind/model_plugin.hpp>
//   struct Sir { /* state_names, parameter_names, rhs, … as in rewind/model.hpp */ };
//   REWIND_MODEL(Sir)
//
//   $ rewind run --model ./libsir.so --parameters beta=0.6 --steps 1000 --dt 0.1
//
// The plugin describes the model through the C structure of rewind/model_plugin_abi.hpp: its
// names and sizes, its default_parameters, its declared autonomy, and rhs, the vjp, the jvp, the
// Jacobian and the second derivatives (jvp_vjp) that rwd::AutoProblem derives (Sacado's forward
// mode; the model's own vjp and jacobian where it has them, rewind/model.hpp), initial_state and
// its vjp where the model has one, and the diffusion and its vjp where the model is stochastic (a
// templated `diffusion`), and the declared band of its Jacobian with band_jacobian where the model
// declares `jacobian_band` (rwd::JacobianBand). Every derivative is computed by rwd::AutoProblem
// itself, so a model loaded as a plugin gives the gradient bits it gives through rwd::auto_problem
// in C++. Two optional members are for the command line only: `static constexpr double default_dt`
// and `static constexpr Index default_steps` (the tool's defaults otherwise: 0.01 and 100 steps).
//
// A stencil model (rewind/stencil_model.hpp: field_names, stencil, boundaries and a templated
// `cell`) is exported the same way: the plugin then describes its grid (dimension, smallest
// sizes, the optional `static constexpr Index default_grid_size`) and makes the problem on the
// grid the loader asks for (rwd::load_stencil_plugin, rewind/plugin_model.hpp; --model PATH
// --n N), with its derived vjp, jvp, sparse Jacobian and, where the model has `initial_cell`, its
// initial state — so a PDE loaded as a plugin runs with the sparse and gmres-ilu linear solvers —
// and, on a 2-D or 3-D grid, the same on a window of slabs, with which a loader linked with MPI
// splits the grid across ranks (rwd::DistributedPluginStencilProblem).
//
// One REWIND_MODEL per library (the entry point has one fixed name). Empty or repeated names are
// not refused at compile time: the description carries the reason, and the loader reports it.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "rewind/model.hpp"
#include "rewind/model_plugin_abi.hpp"
#include "rewind/parallel.hpp"
#include "rewind/stencil_model.hpp"
#include "rewind/types.hpp"

namespace rwd::plugin_detail {

// The model's `default_dt` and `default_steps` for the command line, or 0 (the tool's defaults).
template <class Model>
double default_dt() {
  if constexpr (requires { Model::default_dt; })
    return static_cast<double>(Model::default_dt);
  else
    return 0.0;
}
template <class Model>
std::int64_t default_steps() {
  if constexpr (requires { Model::default_steps; })
    return static_cast<std::int64_t>(Model::default_steps);
  else
    return 0;
}

// A description with what every model has — the contract's version and size, the name, the
// names, sizes and defaults of `names` (state_names or field_names) and θ, the run lengths — and
// no band; or, when `refusal` is not empty, only the version, size, name and the reason (refusal
// must outlive the description).
template <class Model, class Names>
rwd_model_plugin description_head(const char* name, const std::string& refusal,
                                  const Names& names) {
  rwd_model_plugin d{};
  d.abi_version = REWIND_MODEL_ABI_VERSION;
  d.struct_size = sizeof(rwd_model_plugin);
  d.name = name;
  if (!refusal.empty()) {
    d.error = refusal.c_str();
    return d;
  }
  d.state_size = static_cast<std::int64_t>(names.size());
  d.parameter_size = static_cast<std::int64_t>(Model::parameter_names.size());
  d.state_names = names.data();
  d.parameter_names = Model::parameter_names.data();
  if constexpr (requires { Model::default_parameters; })
    d.default_parameters = Model::default_parameters.data();
  d.default_dt = default_dt<Model>();
  d.default_steps = default_steps<Model>();
  d.band_upper = d.band_lower = -1;
  return d;
}

// The description of Model and the C functions behind it; each function runs the problem
// rwd::auto_problem(Model{}) makes, on per-thread vectors (no allocation after a thread's first
// call).
template <class Model>
struct ModelExport {
  using Problem = AutoProblem<Model>;
  using Vector = Eigen::VectorXd;
  static constexpr Index n = Problem::kStates;
  static constexpr Index np = Problem::kParameters;

  // The problem, built once; nullptr with `refusal` set when the model's names are refused.
  static const Problem* problem(std::string* refusal = nullptr) {
    static std::string reason;
    static const Problem* made = []() -> const Problem* {
      try {
        static const Problem instance{Model{}};
        return &instance;
      } catch (const std::exception& e) {
        reason = e.what();
        return nullptr;
      }
    }();
    if (refusal) *refusal = reason;
    return made;
  }

  struct Buffers {
    Vector y = Vector::Zero(n), p = Vector::Zero(np), v = Vector::Zero(n), w = Vector::Zero(n);
    Vector out_y = Vector::Zero(n), out_p = Vector::Zero(np);
    Eigen::MatrixXd J, bands;
  };
  static Buffers& buffers() {
    thread_local Buffers b;
    return b;
  }
  static void load(Vector& to, const double* from) { std::copy(from, from + to.size(), to.data()); }
  static void store(double* to, const Vector& from) { std::copy(from.begin(), from.end(), to); }

  static void rhs(double t, const double* y, const double* p, double* f) {
    problem()->model().rhs(t, y, p, f);
  }
  static void vjp(double t, const double* y, const double* p, const double* v, double* out_y,
                  double* out_p) {
    Buffers& b = buffers();
    load(b.y, y);
    load(b.p, p);
    load(b.v, v);
    problem()->vjp(t, b.y, b.p, b.v, b.out_y, b.out_p);
    store(out_y, b.out_y);
    store(out_p, b.out_p);
  }
  static void jvp(double t, const double* y, const double* p, const double* w, double* out) {
    Buffers& b = buffers();
    load(b.y, y);
    load(b.p, p);
    load(b.v, w);
    problem()->jvp(t, b.y, b.p, b.v, b.out_y);
    store(out, b.out_y);
  }
  static void jacobian(double t, const double* y, const double* p, double* J) {
    Buffers& b = buffers();
    load(b.y, y);
    load(b.p, p);
    problem()->jacobian(t, b.y, b.p, b.J);
    std::copy(b.J.data(), b.J.data() + n * n, J);  // Eigen's default: column-major
  }
  static void jvp_vjp(double t, const double* y, const double* p, const double* u, const double* w,
                      double* out_y, double* out_p) {
    Buffers& b = buffers();
    load(b.y, y);
    load(b.p, p);
    load(b.v, u);
    load(b.w, w);
    problem()->jvp_vjp(t, b.y, b.p, b.v, b.w, b.out_y, b.out_p);
    store(out_y, b.out_y);
    store(out_p, b.out_p);
  }
  // ∂f/∂t and the gradients of wᵀ ∂f/∂t (instantiated only for a model whose rhs takes t as its
  // scalar type).
  static void time_derivative(double t, const double* y, const double* p, double* out) {
    Buffers& b = buffers();
    load(b.y, y);
    load(b.p, p);
    problem()->time_derivative(t, b.y, b.p, b.out_y);
    store(out, b.out_y);
  }
  static void time_derivative_vjp(double t, const double* y, const double* p, const double* w,
                                  double* out_y, double* out_p) {
    Buffers& b = buffers();
    load(b.y, y);
    load(b.p, p);
    load(b.w, w);
    problem()->time_derivative_vjp(t, b.y, b.p, b.w, b.out_y, b.out_p);
    store(out_y, b.out_y);
    store(out_p, b.out_p);
  }
  // LAPACK band storage, (upper + lower + 1) × n column-major (Eigen's default), as
  // AutoProblem::band_jacobian (instantiated only for a model that declares jacobian_band).
  static void band_jacobian(double t, const double* y, const double* p, double* bands) {
    Buffers& b = buffers();
    load(b.y, y);
    load(b.p, p);
    problem()->band_jacobian(t, b.y, b.p, b.bands);
    std::copy(b.bands.data(), b.bands.data() + b.bands.size(), bands);
  }
  static void initial_state(const double* p, double* y0) {
    problem()->model().initial_state(p, y0);
  }
  static void initial_state_vjp(const double* p, const double* w, double* out_p) {
    Buffers& b = buffers();
    load(b.p, p);
    load(b.v, w);
    problem()->initial_state_vjp(b.p, b.v, b.out_p);
    store(out_p, b.out_p);
  }

  static void diffusion(double t, const double* y, const double* p, double* g) {
    Buffers& b = buffers();
    load(b.y, y);
    load(b.p, p);
    problem()->diffusion(t, b.y, b.p, b.out_y);
    store(g, b.out_y);
  }
  static void diffusion_vjp(double t, const double* y, const double* p, const double* v,
                            double* out_y, double* out_p) {
    Buffers& b = buffers();
    load(b.y, y);
    load(b.p, p);
    load(b.v, v);
    problem()->diffusion_vjp(t, b.y, b.p, b.v, b.out_y, b.out_p);
    store(out_y, b.out_y);
    store(out_p, b.out_p);
  }

  static const rwd_model_plugin* describe(const char* name) {
    static const rwd_model_plugin description = [name] {
      static std::string refusal;
      if (problem(&refusal) == nullptr && refusal.empty()) refusal = "the model was refused";
      rwd_model_plugin d = description_head<Model>(name, refusal, Model::state_names);
      if (d.error != nullptr) return d;
      d.autonomous = Problem::autonomous ? 1 : 0;
      if constexpr (Problem::kHasJacobianBand) {
        d.band_upper = Problem::band_upper();
        d.band_lower = Problem::band_lower();
        d.band_jacobian = &band_jacobian;
      }
      d.rhs = &rhs;
      d.vjp = &vjp;
      d.jvp = &jvp;
      d.jacobian = &jacobian;
      d.jvp_vjp = &jvp_vjp;
      if constexpr (Problem::kTimeDifferentiable) {
        d.time_derivative = &time_derivative;
        d.time_derivative_vjp = &time_derivative_vjp;
      }
      if constexpr (Problem::kHasInitialState) {
        d.initial_state = &initial_state;
        d.initial_state_vjp = &initial_state_vjp;
      }
      if constexpr (Problem::kHasDiffusion) {
        d.diffusion = &diffusion;
        d.diffusion_vjp = &diffusion_vjp;
      }
      return d;
    }();
    return &description;
  }
};

// A stencil model (rewind/stencil_model.hpp) rather than a templated one (rewind/model.hpp).
template <class Model>
concept StencilModelType = requires {
  Model::field_names;
  Model::stencil;
  Model::boundaries;
};

// The description of a stencil model and the C functions behind it: grid_make builds
// rwd::stencil_problem(Model{}, sizes…) in the plugin, and every grid_ function runs that
// problem on the caller's arrays (no copies). Exceptions (a refused size, a kernel's read outside
// its declared shape) become a non-zero return and the thread's grid_error().
template <class Model>
struct StencilExport {
  using Problem = StencilProblem<Model>;
  static constexpr int kDimension = Problem::kDimension;
  static_assert(kDimension >= 1 && kDimension <= 3,
                "REWIND_MODEL: a stencil model's grid has 1, 2 or 3 dimensions");

  static std::string& error() {
    thread_local std::string message;
    return message;
  }
  static const char* grid_error() { return error().c_str(); }

  // Runs f, turning an exception into 1 and its message.
  template <class F>
  static int guarded(F&& f) noexcept {
    try {
      f();
      return 0;
    } catch (const std::exception& e) {
      error() = e.what();
    } catch (...) {
      error() = "an exception that is not a std::exception";
    }
    return 1;
  }
  static const Problem& problem(const void* grid) { return *static_cast<const Problem*>(grid); }

  static void grid_set_threads(int threads) {
    const int wanted = kThreadsAvailable ? std::max(1, threads) : 1;
    if (wanted != thread_count()) set_thread_count(wanted);
  }
  static int grid_make(const std::int64_t* sizes, void** grid) {
    *grid = nullptr;
    return guarded([&] {
      std::array<Index, kDimension> n;
      for (int d = 0; d < kDimension; ++d) n[d] = sizes[d];
      *grid = new Problem(Model{}, n);
    });
  }
  static void grid_free(void* grid) { delete static_cast<Problem*>(grid); }
  static int grid_rhs(const void* grid, double, const double* y, const double* p, double* f) {
    return guarded([&] { problem(grid).rhs(y, p, f); });
  }
  static int grid_vjp(const void* grid, double, const double* y, const double* p, const double* v,
                      double* out_y, double* out_p) {
    return guarded([&] { problem(grid).vjp(y, p, v, out_y, out_p); });
  }
  static int grid_jvp(const void* grid, double, const double* y, const double* p, const double* w,
                      double* out) {
    return guarded([&] { problem(grid).jvp(y, p, w, out); });
  }
  static int grid_jvp_vjp(const void* grid, double, const double* y, const double* p,
                          const double* u, const double* w, double* out_y, double* out_p) {
    return guarded([&] { problem(grid).jvp_vjp(y, p, u, w, out_y, out_p); });
  }
  static int grid_nonzeros(const void* grid, std::int64_t* nonzeros) {
    return guarded([&] { *nonzeros = problem(grid).jacobian_nonzeros(); });
  }
  static int grid_sparsity(const void* grid, std::int64_t* row_starts, std::int64_t* columns) {
    return guarded([&] {
      const SparsityPattern pattern = problem(grid).sparsity();
      std::copy(pattern.row_starts.begin(), pattern.row_starts.end(), row_starts);
      std::copy(pattern.columns.begin(), pattern.columns.end(), columns);
    });
  }
  static int grid_jacobian_values(const void* grid, double, const double* y, const double* p,
                                  double* values) {
    // The loader sized `values` from grid_nonzeros once (rwd::PluginStencilProblem).
    return guarded([&] { problem(grid).jacobian_values(y, p, values); });
  }
  static int grid_initial_state(const void* grid, const double* p, double* y0) {
    return guarded([&] { problem(grid).initial_state(p, y0); });
  }
  static int grid_initial_state_vjp(const void* grid, const double* p, const double* w,
                                    double* out_p) {
    return guarded([&] { problem(grid).initial_state_vjp(p, w, out_p); });
  }

  // The model on a window of its grid (the ABI's window_ functions).
  using Engine = detail::StencilEngine<Model>;
  static const Engine& engine(const void* window) { return *static_cast<const Engine*>(window); }
  static int window_make(const std::int64_t* sizes, const std::int64_t* storage,
                         std::int64_t stored_slabs, void** window) {
    *window = nullptr;
    return guarded([&] {
      std::array<Index, kDimension> n;
      for (int d = 0; d < kDimension; ++d) n[d] = sizes[d];
      auto made = std::make_unique<Engine>(Model{}, n, StencilOptions{});
      made->grid().store_slabs(std::vector<Index>(storage, storage + n[0]), stored_slabs);
      *window = made.release();
    });
  }
  static void window_free(void* window) { delete static_cast<Engine*>(window); }
  static int window_rhs(const void* window, double, const double* y, const double* p, double* f,
                        std::int64_t first, std::int64_t end) {
    return guarded([&] { engine(window).rhs(y, p, f, first, end); });
  }
  static int window_jvp(const void* window, double, const double* y, const double* p,
                        const double* w, double* out, std::int64_t first, std::int64_t end) {
    return guarded([&] { engine(window).jvp(y, p, w, out, first, end); });
  }
  static int window_vjp(const void* window, double, const double* y, const double* p,
                        const double* v, double* out, double* partials, const std::int64_t* slots) {
    return guarded([&] { engine(window).vjp(y, p, v, out, partials, slots); });
  }
  // Each stencil point's offset along dimension 0.
  static constexpr std::array<std::int64_t, Engine::kPoints> kSlabOffsets = [] {
    std::array<std::int64_t, Engine::kPoints> offsets{};
    for (int s = 0; s < Engine::kPoints; ++s) offsets[s] = Model::stencil[s][0];
    return offsets;
  }();

  static std::int64_t default_grid_size() {
    if constexpr (requires { Model::default_grid_size; })
      return static_cast<std::int64_t>(Model::default_grid_size);
    else
      return 0;
  }

  static const rwd_model_plugin* describe(const char* name) {
    static const rwd_model_plugin description = [name] {
      static std::string refusal;
      // The declarations are checked on the smallest grid the stencil allows.
      std::array<Index, kDimension> smallest;
      for (int dim = 0; dim < kDimension; ++dim)
        smallest[dim] = detail::StencilEngine<Model>::highest_offset(dim) -
                        detail::StencilEngine<Model>::lowest_offset(dim) + 1;
      try {
        const Problem checked(Model{}, smallest);
      } catch (const std::exception& e) {
        refusal = *e.what() ? e.what() : "the model was refused";
      }
      rwd_model_plugin d = description_head<Model>(name, refusal, Model::field_names);
      if (d.error != nullptr) return d;
      d.autonomous = 1;  // a cell's update does not see t
      d.grid_dimension = kDimension;
      for (int dim = 0; dim < kDimension; ++dim) d.grid_min_sizes[dim] = smallest[dim];
      d.grid_default_size = default_grid_size();
      d.grid_has_initial_state = Problem::kHasInitialState ? 1 : 0;
      d.grid_error = &grid_error;
      d.grid_set_threads = &grid_set_threads;
      d.grid_make = &grid_make;
      d.grid_free = &grid_free;
      d.grid_rhs = &grid_rhs;
      d.grid_vjp = &grid_vjp;
      d.grid_jvp = &grid_jvp;
      d.grid_jvp_vjp = &grid_jvp_vjp;
      d.grid_nonzeros = &grid_nonzeros;
      d.grid_sparsity = &grid_sparsity;
      d.grid_jacobian_values = &grid_jacobian_values;
      d.grid_points = Engine::kPoints;
      d.grid_slab_offsets = kSlabOffsets.data();
      d.grid_slab_boundary = static_cast<std::uint32_t>(Model::boundaries[0]);
      d.window_make = &window_make;
      d.window_free = &window_free;
      d.window_rhs = &window_rhs;
      d.window_jvp = &window_jvp;
      d.window_vjp = &window_vjp;
      if constexpr (Problem::kHasInitialState) {
        d.grid_initial_state = &grid_initial_state;
        d.grid_initial_state_vjp = &grid_initial_state_vjp;
      }
      return d;
    }();
    return &description;
  }
};

// The description of Model, a templated model or a stencil model.
template <class Model>
const rwd_model_plugin* describe_model(const char* name) {
  if constexpr (StencilModelType<Model>)
    return StencilExport<Model>::describe(name);
  else
    return ModelExport<Model>::describe(name);
}

}  // namespace rwd::plugin_detail

// Exports Type (a templated model, rewind/model.hpp) as the library's model: defines the entry
// point rewind_model_plugin (rewind/model_plugin_abi.hpp), visible from outside the library.
#define REWIND_MODEL(Type)                                                                       \
  extern "C" __attribute__((visibility("default"))) const rwd_model_plugin* rewind_model_plugin( \
      void) {                                                                                    \
    return ::rwd::plugin_detail::describe_model<Type>(#Type);                                    \
  }
