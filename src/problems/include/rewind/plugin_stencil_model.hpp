// rewind/plugin_stencil_model.hpp — a stencil model (rewind/stencil_model.hpp) loaded from a
// plugin (rewind_add_model; REWIND_MODEL exports a stencil model like a templated one), made a
// problem on a grid of the caller's sizes.
//
//   rwd::StencilPlugin plugin = rwd::load_stencil_plugin("build/gray_scott.so");
//   rwd::PluginStencilProblem problem = plugin.on_grid({128, 128});   // or InvalidArgument
//   const auto theta = plugin.default_parameters();
//   const auto y0 = problem.initial_state(theta);                     // the model's initial_cell
//   rwd::DiagonallyImplicitRungeKutta stepper(problem, …, rwd::ImplicitLinearSolver::sparse);
//
// A PluginStencilProblem is an rwd::Problem on the Eigen backend with what rwd::StencilProblem
// has — rhs, the derived vjp, jvp and second derivatives (jvp_vjp: the Rosenbrock methods),
// sparsity() and jacobian_values() (so the sparse and
// gmres-ilu linear solvers and CVODES's KLU take it), initial_state and its vjp where the model
// has initial_cell — each calling the plugin, which runs rwd::stencil_problem(Model{}, sizes…)
// on the caller's arrays: the same bits as that problem in C++, at any thread count. Before
// each call it tells the plugin rwd::thread_count() (a plugin keeps its own copy of rewind's
// inline code, thread setting included).
//
// load_stencil_plugin refuses what rwd::load_model_plugin refuses (a missing file, not a shared
// library, not a rewind model, another ABI version, refused names, a malformed description) and
// a plugin whose model is not a stencil model; on_grid refuses sizes of the wrong count or below
// the stencil's span (the plugin's reason, naming the dimension and the smallest size). Every
// refusal is an rwd::InvalidArgument naming the path. Copies share the grid and keep the library
// loaded.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/model_plugin_abi.hpp"
#include "rewind/parallel.hpp"
#include "rewind/plugin_model.hpp"
#include "rewind/problems/detail/problem_support.hpp"
#include "rewind/problems/sparsity_pattern.hpp"
#include "rewind/types.hpp"

namespace rwd {

class PluginStencilProblem;
class DistributedPluginStencilProblem;  // rewind/distributed/distributed_plugin_stencil.hpp

// A loaded stencil-model plugin: what the model declares, and problems on grids of any size.
class StencilPlugin {
 public:
  using Vector = Eigen::VectorXd;

  StencilPlugin(std::shared_ptr<void> library, const rwd_model_plugin* description,
                std::string path)
      : library_(std::move(library)), d_(description), path_(std::move(path)) {}

  std::string name() const { return d_->name; }
  const std::string& path() const { return path_; }
  // The grid's dimension (1, 2 or 3) and the smallest size of each dimension.
  int dimension() const { return static_cast<int>(d_->grid_dimension); }
  std::vector<Index> min_sizes() const {
    return std::vector<Index>(d_->grid_min_sizes, d_->grid_min_sizes + dimension());
  }
  // The model's default_grid_size (cells per dimension), or 0 when it declares none.
  Index default_grid_size() const { return d_->grid_default_size; }
  Index field_count() const { return d_->state_size; }
  Index parameter_size() const { return d_->parameter_size; }
  std::vector<std::string> field_names() const {
    return {d_->state_names, d_->state_names + field_count()};
  }
  std::vector<std::string> parameter_names() const {
    return {d_->parameter_names, d_->parameter_names + parameter_size()};
  }
  double default_dt() const { return d_->default_dt; }
  Index default_steps() const { return d_->default_steps; }
  bool has_default_parameters() const { return d_->default_parameters != nullptr; }
  bool has_initial_state() const { return d_->grid_has_initial_state != 0; }

  // The model's default_parameters; InvalidArgument when it has none.
  Vector default_parameters() const {
    if (!has_default_parameters())
      detail::fail<InvalidArgument>(path_, ": the model ", name(),
                                    " declares no default_parameters");
    return Eigen::Map<const Vector>(d_->default_parameters, parameter_size());
  }

  // The model on a grid of these sizes (one per dimension).
  PluginStencilProblem on_grid(const std::vector<Index>& sizes) const;

 private:
  friend class PluginStencilProblem;
  friend class DistributedPluginStencilProblem;
  std::shared_ptr<void> library_;
  const rwd_model_plugin* d_;
  std::string path_;
};

// The model on one grid, from StencilPlugin::on_grid: an rwd::Problem (see the top of this file).
class PluginStencilProblem {
 public:
  using Backend = EigenBackend;
  using Vector = Backend::Vector;
  // A cell update does not see t (the Rosenbrock methods need the declaration).
  static constexpr bool autonomous = true;

  Index state_size() const { return state_size_; }
  Index parameter_size() const { return plugin_.parameter_size(); }
  Index cell_count() const { return state_size_ / plugin_.field_count(); }
  const std::vector<Index>& grid_sizes() const { return sizes_; }
  const StencilPlugin& plugin() const { return plugin_; }
  std::vector<std::string> field_names() const { return plugin_.field_names(); }
  std::vector<std::string> parameter_names() const { return plugin_.parameter_names(); }
  Vector default_parameters() const { return plugin_.default_parameters(); }
  bool has_initial_state() const { return plugin_.has_initial_state(); }

  void rhs(double t, const Vector& y, const Vector& theta, Vector& f) const {
    detail::require_rhs_sizes<Backend>(kName, state_size(), parameter_size(), y, theta, f);
    check(call().grid_rhs(grid(), t, y.data(), theta.data(), f.data()));
  }
  void vjp(double t, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    detail::require_vjp_sizes<Backend>(kName, state_size(), parameter_size(), y, theta, v, out_y,
                                       out_theta);
    check(call().grid_vjp(grid(), t, y.data(), theta.data(), v.data(), out_y.data(),
                          out_theta.data()));
  }
  void jvp(double t, const Vector& y, const Vector& theta, const Vector& w, Vector& out) const {
    detail::require_length(kName, "state y", y.size(), state_size());
    detail::require_length(kName, "parameter vector theta", theta.size(), parameter_size());
    detail::require_length(kName, "direction w", w.size(), state_size());
    detail::require_length(kName, "output out", out.size(), state_size());
    check(call().grid_jvp(grid(), t, y.data(), theta.data(), w.data(), out.data()));
  }
  // The second derivatives of the Rosenbrock methods' adjoints (rwd::StencilProblem::jvp_vjp).
  void jvp_vjp(double t, const Vector& y, const Vector& theta, const Vector& u, const Vector& w,
               Vector& out_y, Vector& out_theta) const {
    detail::require_vjp_sizes<Backend>(kName, state_size(), parameter_size(), y, theta, w, out_y,
                                       out_theta);
    detail::require_length(kName, "direction u", u.size(), state_size());
    check(call().grid_jvp_vjp(grid(), t, y.data(), theta.data(), u.data(), w.data(), out_y.data(),
                              out_theta.data()));
  }

  // ∂f/∂y's pattern (rwd::StencilProblem::sparsity). Allocates; call it once.
  SparsityPattern sparsity() const {
    static_assert(std::is_same_v<Index, std::int64_t>, "the ABI's indices are rwd::Index");
    SparsityPattern pattern;
    pattern.size = state_size();
    pattern.row_starts.resize(static_cast<std::size_t>(state_size() + 1));
    pattern.columns.resize(static_cast<std::size_t>(nonzeros_));
    check(call().grid_sparsity(grid(), pattern.row_starts.data(), pattern.columns.data()));
    return pattern;
  }
  // values = ∂f/∂y's entries in sparsity()'s order; values.size() must be its nonzeros.
  void jacobian_values(double t, const Vector& y, const Vector& theta,
                       std::span<double> values) const {
    detail::require_length(kName, "state y", y.size(), state_size());
    detail::require_length(kName, "parameter vector theta", theta.size(), parameter_size());
    if (static_cast<std::int64_t>(values.size()) != nonzeros_)
      detail::fail<InvalidArgument>(kName, ": jacobian_values got room for ", values.size(),
                                    " values; the Jacobian's pattern (sparsity()) has ", nonzeros_,
                                    " nonzeros, give exactly that many");
    check(call().grid_jacobian_values(grid(), t, y.data(), theta.data(), values.data()));
  }

  // y0 = the model's initial_cell on every cell; InvalidArgument when the model has none.
  Vector initial_state(const Vector& theta) const {
    require_initial_state();
    detail::require_length(kName, "parameter vector theta", theta.size(), parameter_size());
    Vector y0(state_size());
    check(call().grid_initial_state(grid(), theta.data(), y0.data()));
    return y0;
  }
  // out_theta = (∂y0/∂θ)ᵀ w (overwritten).
  void initial_state_vjp(const Vector& theta, const Vector& w, Vector& out_theta) const {
    require_initial_state();
    detail::require_length(kName, "parameter vector theta", theta.size(), parameter_size());
    detail::require_length(kName, "cotangent w", w.size(), state_size());
    detail::require_length(kName, "output out_theta", out_theta.size(), parameter_size());
    check(call().grid_initial_state_vjp(grid(), theta.data(), w.data(), out_theta.data()));
  }
  // dJ/dθ through the initial state too: grad_theta + (∂y0/∂θ)ᵀ grad_y0.
  Vector total_parameter_gradient(const Vector& theta, const Vector& grad_y0,
                                  const Vector& grad_theta) const {
    detail::require_length(kName, "gradient grad_theta", grad_theta.size(), parameter_size());
    Vector through_y0(parameter_size());
    initial_state_vjp(theta, grad_y0, through_y0);
    return grad_theta + through_y0;
  }

 private:
  friend class StencilPlugin;
  static constexpr const char* kName = "rwd::PluginStencilProblem";

  PluginStencilProblem(StencilPlugin plugin, std::shared_ptr<void> grid, std::vector<Index> sizes)
      : plugin_(std::move(plugin)), grid_(std::move(grid)), sizes_(std::move(sizes)) {
    state_size_ = plugin_.field_count();
    for (Index n : sizes_) state_size_ *= n;
    check(call().grid_nonzeros(grid_.get(), &nonzeros_));
  }

  const void* grid() const { return grid_.get(); }
  // The plugin's functions, told this process's thread count first.
  const rwd_model_plugin& call() const {
    plugin_.d_->grid_set_threads(thread_count());
    return *plugin_.d_;
  }
  void check(int status) const {
    if (status != 0)
      detail::fail<InvalidArgument>("model '", plugin_.path(), "' (", plugin_.name(),
                                    "): ", plugin_.d_->grid_error());
  }
  void require_initial_state() const {
    if (!has_initial_state())
      detail::fail<InvalidArgument>(plugin_.path(), ": the stencil model ", plugin_.name(),
                                    " declares no initial_cell(p, at, y0)");
  }

  StencilPlugin plugin_;
  std::shared_ptr<void> grid_;  // the plugin's problem, released by its grid_free
  std::vector<Index> sizes_;
  Index state_size_ = 0;
  std::int64_t nonzeros_ = 0;  // the Jacobian pattern's entries, asked when made
};

inline PluginStencilProblem StencilPlugin::on_grid(const std::vector<Index>& sizes) const {
  if (static_cast<int>(sizes.size()) != dimension())
    detail::fail<InvalidArgument>("model '", path_, "' (", name(), ") is a stencil model on a ",
                                  dimension(), "-D grid: give ", dimension(), " grid sizes, not ",
                                  sizes.size());
  std::array<std::int64_t, 3> n{};
  std::copy(sizes.begin(), sizes.end(), n.begin());
  void* made = nullptr;
  d_->grid_set_threads(thread_count());
  if (d_->grid_make(n.data(), &made) != 0)
    detail::fail<InvalidArgument>("model '", path_, "' (", name(), "): ", d_->grid_error());
  // The deleter keeps the library loaded until the grid is freed.
  std::shared_ptr<void> grid(
      made, [release = d_->grid_free, library = library_](void* g) { release(g); });
  return PluginStencilProblem(*this, std::move(grid), sizes);
}

// Loads the stencil-model plugin at `path` (see the top of this file for what is refused).
inline StencilPlugin load_stencil_plugin(const std::string& path) {
  auto [library, description] = detail::open_model_plugin(path);
  if (description->grid_dimension == 0)
    detail::fail<InvalidArgument>("model '", path, "' (", description->name,
                                  ") is not a stencil model (it has a fixed state of ",
                                  description->state_size,
                                  " values): load it with rwd::load_model_plugin");
  return StencilPlugin(std::move(library), description, path);
}

}  // namespace rwd
