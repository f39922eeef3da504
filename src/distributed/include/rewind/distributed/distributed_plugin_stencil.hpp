// rewind/distributed/distributed_plugin_stencil.hpp — a stencil model loaded from a plugin
// (rewind/plugin_stencil_model.hpp) on a grid split across MPI ranks: what
// rwd::DistributedStencilProblem is for a model compiled in, for one the command line loads
// (`mpirun -np 4 rewind run --model gray_scott.so --n 708`).
//
//   rwd::StencilPlugin plugin = rwd::load_stencil_plugin("build/gray_scott.so");
//   rwd::DistributedPluginStencilProblem problem(plugin, {708, 708}, rwd::Communicator::world());
//   auto theta = problem.default_parameters();   // replicated on every rank
//   auto y0 = problem.initial_state(theta);      // this rank's slabs of the model's initial_cell
//
// The split is rwd::DistributedStencilProblem's (rewind/distributed/distributed_stencil.hpp:
// slabs along dimension 0 split in order — on a 1-D grid, equal blocks of cells —, halos exchanged
// before every rhs, jvp and vjp, the vjp's parameter partials folded in order), with the cell
// updates run inside the plugin on this rank's window (the ABI's window_ functions:
// rwd::detail::StencilEngine on a grid that stores the window's slabs, in the plugin's build). So
// the rhs, jvp and vjp have the one-process rwd::PluginStencilProblem's bits — and the C++ model's
// — for any number of ranks and threads.
//
// The initial state and its vjp (the gradient through the initial state of a model whose
// initial_cell depends on θ) are the whole grid's, computed on every rank by the plugin's
// one-process functions: initial_state takes this rank's slabs of it, initial_state_vjp gathers
// the cotangent's slabs from every rank first (a collective). One whole-grid vector per rank at
// the start and at the end of a gradient — what a grid that fits no single process cannot pay;
// the steps in between hold this rank's slabs only.
//
// A refusal from inside the plugin during a product (a model's exception in a cell, a read outside
// the declared shape in a plugin built with read checks) is raised on the rank whose cells met it
// alone, while the others go on into the product's collectives: a caller that cannot end the job
// then (the tool does: MPI_Abort) would leave them waiting. Check a new model on one process.
//
// Refused (InvalidArgument, naming the plugin's path): a model built without window functions
// (a 1-D model built before 1-D grids split), sizes the plugin refuses, more ranks than the
// stencil's reach along dimension 0 allows (the largest count that works named) and, on a 1-D
// grid, more ranks than blocks or a cell count n with no equal cut (distributed_stencil.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "rewind/distributed/communicator.hpp"
#include "rewind/distributed/distributed_backend.hpp"
#include "rewind/distributed/slab_split.hpp"
#include "rewind/error.hpp"
#include "rewind/parallel.hpp"
#include "rewind/plugin_stencil_model.hpp"
#include "rewind/problems/stencil_shape.hpp"
#include "rewind/types.hpp"

namespace rwd {

class DistributedPluginStencilProblem {
 public:
  using Backend = DistributedBackend;
  using Vector = DistributedVector;
  // A cell update does not see t.
  static constexpr bool autonomous = true;

  // sizes: the grid's, one per dimension (as StencilPlugin::on_grid); comm: the ranks to split
  // dimension 0 over. Puts the split's layout in use on DistributedBackend.
  DistributedPluginStencilProblem(const StencilPlugin& plugin, const std::vector<Index>& sizes,
                                  const Communicator& comm)
      : whole_(plugin.on_grid(checked_dimension(plugin, sizes))),
        split_("model '" + plugin.path() + "' (" + plugin.name() + ")", comm,
               slab_stencil(plugin, sizes)) {
    const rwd_model_plugin& d = description();
    const std::vector<Index> stored = split_.storage();
    const std::vector<std::int64_t> storage(stored.begin(), stored.end());
    std::vector<std::int64_t> n(sizes.begin(), sizes.end());
    void* made = nullptr;
    d.grid_set_threads(thread_count());
    if (d.window_make(n.data(), storage.data(), split_.stored_slabs(), &made) != 0) refuse();
    window_ = std::shared_ptr<void>(
        made, [release = d.window_free, library = plugin.library_](void* w) { release(w); });
    const std::size_t values = static_cast<std::size_t>(split_.window_values());
    state_.assign(values, 0.0);
    cotangent_.assign(values, 0.0);
    output_.assign(values, 0.0);
    sum_width_ = std::max<Index>(1, parameter_size());
    partials_.assign(static_cast<std::size_t>(split_.local_partials() * sum_width_), 0.0);
    DistributedBackend::use_layout(split_.layout());
  }

  Index state_size() const { return whole_.state_size(); }
  Index parameter_size() const { return whole_.parameter_size(); }
  const std::vector<Index>& grid_sizes() const { return whole_.grid_sizes(); }
  const StencilPlugin& plugin() const { return whole_.plugin(); }
  const RowLayout& layout() const { return *split_.layout(); }
  // This rank's slabs: [first_slab(), first_slab() + local_slabs()) along dimension 0.
  Index first_slab() const { return split_.first_slab(); }
  Index local_slabs() const { return split_.local_slabs(); }
  Index halo_slabs() const { return split_.halo_slabs(); }
  std::vector<std::string> field_names() const { return whole_.field_names(); }
  std::vector<std::string> parameter_names() const { return whole_.parameter_names(); }
  bool has_initial_state() const { return whole_.has_initial_state(); }

  // The model's default_parameters, replicated on every rank.
  Vector default_parameters() const { return replicated(whole_.default_parameters()); }

  // This rank's slabs of the model's initial state for θ (replicated).
  Vector initial_state(const Vector& theta) const {
    require_replicated(theta, "initial_state");
    return local_part(whole_.initial_state(theta.local));
  }
  // out_theta = (∂y0/∂θ)ᵀ w (replicated, overwritten). A collective.
  void initial_state_vjp(const Vector& theta, const Vector& w, Vector& out_theta) const {
    require_split(w, theta, w, "initial_state_vjp");
    require_replicated(out_theta, "initial_state_vjp");
    Eigen::VectorXd whole_w(state_size());
    layout().gather_whole(
        std::span<const double>(w.local.data(), w.local.size()),
        std::span<double>(whole_w.data(), static_cast<std::size_t>(whole_w.size())));
    whole_.initial_state_vjp(theta.local, whole_w, out_theta.local);
  }
  // dJ/dθ through the initial state too: grad_theta + (∂y0/∂θ)ᵀ grad_y0 (a collective).
  Vector total_parameter_gradient(const Vector& theta, const Vector& grad_y0,
                                  const Vector& grad_theta) const {
    require_replicated(grad_theta, "total_parameter_gradient");
    Vector through_y0 = DistributedBackend::zeros(parameter_size());
    initial_state_vjp(theta, grad_y0, through_y0);
    through_y0.local += grad_theta.local;
    return through_y0;
  }

  void rhs(double t, const Vector& y, const Vector& theta, Vector& f) const {
    require_split(y, theta, f, "rhs");
    split_.fill_window(y, state_);
    check(call().window_rhs(window_.get(), t, state_.data(), theta.local.data(), output_.data(),
                            first_slab(), first_slab() + local_slabs()));
    split_.take_own_slabs(output_, f);
  }

  // out = (∂f/∂y) w.
  void jvp(double t, const Vector& y, const Vector& theta, const Vector& w, Vector& out) const {
    require_split(y, theta, out, "jvp");
    require_split(w, theta, out, "jvp");
    split_.fill_window(y, state_);
    split_.fill_window(w, cotangent_);
    check(call().window_jvp(window_.get(), t, state_.data(), theta.local.data(), cotangent_.data(),
                            output_.data(), first_slab(), first_slab() + local_slabs()));
    split_.take_own_slabs(output_, out);
  }

  // out_y = (∂f/∂y)ᵀ v (this rank's slabs), out_theta = (∂f/∂θ)ᵀ v (replicated).
  void vjp(double t, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    require_split(y, theta, out_y, "vjp");
    require_split(v, theta, out_y, "vjp");
    require_replicated(out_theta, "vjp");
    split_.fill_window(y, state_);
    split_.fill_window(v, cotangent_);
    check(call().window_vjp(window_.get(), t, state_.data(), theta.local.data(), cotangent_.data(),
                            output_.data(), partials_.data(), split_.slots().data()));
    split_.take_own_slabs(output_, out_y);
    split_.fold_slab_partials(
        partials_, sum_width_,
        std::span<double>(out_theta.local.data(), static_cast<std::size_t>(parameter_size())));
  }

 private:
  static constexpr const char* kName = "rwd::DistributedPluginStencilProblem";

  const rwd_model_plugin& description() const { return *whole_.plugin().d_; }
  // The plugin's functions, told this process's thread count first.
  const rwd_model_plugin& call() const {
    description().grid_set_threads(thread_count());
    return description();
  }
  [[noreturn]] void refuse() const {
    detail::fail<InvalidArgument>("model '", plugin().path(), "' (", plugin().name(),
                                  "): ", description().grid_error());
  }
  void check(int status) const {
    if (status != 0) refuse();
  }

  // sizes, once the model is known to have window functions.
  static const std::vector<Index>& checked_dimension(const StencilPlugin& plugin,
                                                     const std::vector<Index>& sizes) {
    if (plugin.d_->window_make == nullptr)
      detail::fail<InvalidArgument>("model '", plugin.path(), "' (", plugin.name(),
                                    ") has no window functions: rebuild it against this rewind");
    return sizes;
  }

  // What the split needs of the model on this grid (sizes already accepted by on_grid).
  static detail::SlabStencil slab_stencil(const StencilPlugin& plugin,
                                          const std::vector<Index>& sizes) {
    const rwd_model_plugin& d = *plugin.d_;
    detail::SlabStencil stencil;
    stencil.slabs = sizes[0];
    stencil.slab_cells = 1;
    for (std::size_t dim = 1; dim < sizes.size(); ++dim) stencil.slab_cells *= sizes[dim];
    stencil.fields = plugin.field_count();
    stencil.offsets.assign(d.grid_slab_offsets, d.grid_slab_offsets + d.grid_points);
    if (d.grid_slab_boundary > static_cast<std::uint32_t>(Boundary::reflecting))
      detail::fail<InvalidArgument>("model '", plugin.path(), "' (", plugin.name(),
                                    ") declares boundary ", d.grid_slab_boundary,
                                    " along dimension 0; the kinds are 0, 1 and 2");
    stencil.boundary = static_cast<Boundary>(d.grid_slab_boundary);
    if (sizes.size() == 1) {  // the grid's equal cut, as the plugin's engine makes it
      stencil.block_cells = detail::StencilGrid<1, 1>::line_block_cells(sizes[0], stencil.span());
      if (stencil.block_cells == 0)
        detail::refuse_unequal_line("model '" + plugin.path() + "' (" + plugin.name() + ")",
                                    sizes[0], stencil.span());
    }
    return stencil;
  }

  Vector replicated(const Eigen::VectorXd& values) const {
    Vector x = DistributedBackend::zeros(static_cast<Index>(values.size()));
    x.local = values;
    return x;
  }
  // This rank's part of a whole-grid state in the serial layout.
  Vector local_part(const Eigen::VectorXd& whole) const {
    Vector y = DistributedBackend::zeros(state_size());
    const Index fields = plugin().field_count(), cells = state_size() / fields;
    const Index slab = cells / grid_sizes()[0], local = local_slabs() * slab;
    for (Index k = 0; k < fields; ++k)
      std::copy_n(whole.data() + k * cells + first_slab() * slab, local,
                  y.local.data() + k * local);
    return y;
  }

  void require_split(const Vector& y, const Vector& theta, const Vector& out,
                     const char* what) const {
    detail::require_split_arguments(kName, what, split_.layout().get(), y, theta, out,
                                    parameter_size());
  }
  void require_replicated(const Vector& x, const char* what) const {
    if (x.layout || static_cast<Index>(x.local.size()) != parameter_size())
      detail::fail<InvalidArgument>(kName, " ", what, ": the parameter vectors must be replicated ",
                                    "vectors of ", parameter_size());
  }

  PluginStencilProblem whole_;  // the whole grid: sizes, checks, the initial state and its vjp
  detail::SlabSplit split_;
  std::shared_ptr<void> window_;  // the plugin's model on this rank's window, window_free'd
  Index sum_width_ = 1;
  mutable std::vector<double> state_, cotangent_, output_;  // windows (field-major)
  mutable std::vector<double> partials_;                    // per own slab, sum_width_ values
};

}  // namespace rwd
