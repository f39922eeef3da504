// rewind/plugin_model.hpp — a model loaded from a plugin (a shared library built with
// rewind_add_model, its model exported by REWIND_MODEL; rewind/model_plugin.hpp), as a problem.
//
//   rwd::PluginModel model = rwd::load_model_plugin("build/libsir.so");   // or InvalidArgument
//   const auto theta = model.default_parameters();
//   rwd::ExplicitRungeKutta stepper(model, rwd::ButcherTableau::rk4(),
//                                   rwd::StepControl::fixed(0.0, 0.1, 1000));
//   auto result = rwd::differentiate(stepper, objective, model.initial_state(theta), theta,
//                                    rwd::StoreAllStrategy{});
//   auto dJ_dtheta = model.total_parameter_gradient(theta, result.grad_y0, result.grad_theta);
//
// A PluginModel is an rwd::Problem on the Eigen backend with the members rwd::AutoProblem has
// (rhs, vjp, jvp, jacobian, jvp_vjp, names, default_parameters, initial_state and its vjp, the
// diffusion and its vjp, the declared autonomy as declares_autonomous(), and the declared band
// Jacobian as declares_band(), band_upper(), band_lower() and band_jacobian()): each calls the
// plugin's function, which runs rwd::AutoProblem inside the plugin, so the gradient bits are
// those of rwd::auto_problem(Model{}) in C++.
//
// The band is known when the plugin is loaded, not when rewind is compiled: a PluginModel is a
// detail::RuntimeBandProblem (rewind/integrators/declared_jacobian.hpp), and the band solvers (the
// implicit and Rosenbrock engines' band LU, CVODES's band solver for BDF) ask declares_band() when
// they are made — taking the model's band where it declares one, as for rwd::auto_problem, and
// refusing the band solver, naming the model and how to declare a band, where it does not.
//
// load_model_plugin refuses, before any work and naming the path (rwd::InvalidArgument): a path
// that does not exist, a file that is not a shared library, a library that cannot be loaded (the
// loader's reason), a library without the entry point ("not a rewind model"), a model built for
// another model ABI version (both versions named), a model whose names the plugin refused, and a
// description whose band is malformed (half-bandwidths outside −1 … state_size − 1, or a
// band_jacobian without widths or widths without it).
// The library stays loaded while any copy of the PluginModel lives.
#pragma once

#include <dlfcn.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/model_plugin_abi.hpp"
#include "rewind/problems/detail/problem_support.hpp"
#include "rewind/types.hpp"

namespace rwd {

class PluginModel {
 public:
  using Backend = EigenBackend;
  using Vector = Backend::Vector;

  // The model `description` of the library `library` (kept loaded), loaded from `path`.
  PluginModel(std::shared_ptr<void> library, const rwd_model_plugin* description, std::string path)
      : library_(std::move(library)), d_(description), path_(std::move(path)) {}

  Index state_size() const { return d_->state_size; }
  Index parameter_size() const { return d_->parameter_size; }
  // The model's type name, as given to REWIND_MODEL.
  std::string name() const { return d_->name; }
  const std::string& path() const { return path_; }
  std::vector<std::string> state_names() const { return names(d_->state_names, state_size()); }
  std::vector<std::string> parameter_names() const {
    return names(d_->parameter_names, parameter_size());
  }
  // The model's default_dt and default_steps (0 when it declares none).
  double default_dt() const { return d_->default_dt; }
  Index default_steps() const { return d_->default_steps; }

  bool has_default_parameters() const { return d_->default_parameters != nullptr; }
  // Whether the model declares `static constexpr bool autonomous = true` (known when the plugin is
  // loaded, not when rewind is compiled: the Rosenbrock methods check it when they are made).
  bool declares_autonomous() const { return d_->autonomous != 0; }
  // Whether the model gives ∂f/∂t (its rhs takes t as its scalar type): then the Rosenbrock
  // methods take it even when it is not autonomous. time_derivative and time_derivative_vjp
  // refuse a model without it.
  bool has_time_derivative() const { return d_->time_derivative != nullptr; }
  // Whether the model declares `static constexpr rwd::JacobianBand jacobian_band{upper, lower}`
  // (known when the plugin is loaded: the band solvers check it when they are made). Without it,
  // band_upper(), band_lower() and band_jacobian() refuse, saying band_refusal().
  bool declares_band() const { return d_->band_jacobian != nullptr; }
  // Why the model has no band, and how a model declares one.
  std::string band_refusal() const {
    return "model '" + path_ + "' (" + name() +
           ") declares no band Jacobian; a model whose ∂f/∂y is banded declares "
           "`static constexpr rwd::JacobianBand jacobian_band{upper, lower};` and is rebuilt "
           "(rewind_add_model)";
  }
  bool has_initial_state() const { return d_->initial_state != nullptr; }
  // Whether the model is stochastic (a diffusion): then it is an rwd::SdeProblem for the
  // stochastic steppers. diffusion and diffusion_vjp refuse a model without one.
  bool has_diffusion() const { return d_->diffusion != nullptr; }

  // The model's default_parameters; InvalidArgument when it has none.
  Vector default_parameters() const {
    if (!has_default_parameters())
      detail::fail<InvalidArgument>(path_, ": the model ", name(),
                                    " declares no default_parameters");
    return detail::vector_from_host<Backend>(std::span<const double>(
        d_->default_parameters, static_cast<std::size_t>(parameter_size())));
  }

  // y0 = initial_state(θ); InvalidArgument when the model has no initial_state.
  Vector initial_state(const Vector& theta) const {
    require_initial_state();
    detail::require_length(kName, "parameter vector theta", theta.size(), parameter_size());
    Vector y0(state_size());
    d_->initial_state(theta.data(), y0.data());
    return y0;
  }

  // out_theta = (∂y0/∂θ)ᵀ w (overwritten).
  void initial_state_vjp(const Vector& theta, const Vector& w, Vector& out_theta) const {
    require_initial_state();
    detail::require_length(kName, "parameter vector theta", theta.size(), parameter_size());
    detail::require_length(kName, "cotangent w", w.size(), state_size());
    detail::require_length(kName, "output out_theta", out_theta.size(), parameter_size());
    d_->initial_state_vjp(theta.data(), w.data(), out_theta.data());
  }

  // dJ/dθ through the initial state too: grad_theta + (∂y0/∂θ)ᵀ grad_y0 (as rwd::AutoProblem).
  Vector total_parameter_gradient(const Vector& theta, const Vector& grad_y0,
                                  const Vector& grad_theta) const {
    detail::require_length(kName, "gradient grad_theta", grad_theta.size(), parameter_size());
    Vector through_y0(parameter_size());
    initial_state_vjp(theta, grad_y0, through_y0);
    return grad_theta + through_y0;
  }

  void rhs(double t, const Vector& y, const Vector& theta, Vector& f) const {
    detail::require_rhs_sizes<Backend>(kName, state_size(), parameter_size(), y, theta, f);
    d_->rhs(t, y.data(), theta.data(), f.data());
  }

  void vjp(double t, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    detail::require_vjp_sizes<Backend>(kName, state_size(), parameter_size(), y, theta, v, out_y,
                                       out_theta);
    d_->vjp(t, y.data(), theta.data(), v.data(), out_y.data(), out_theta.data());
  }

  void jvp(double t, const Vector& y, const Vector& theta, const Vector& w, Vector& out) const {
    detail::require_length(kName, "state y", y.size(), state_size());
    detail::require_length(kName, "parameter vector theta", theta.size(), parameter_size());
    detail::require_length(kName, "direction w", w.size(), state_size());
    detail::require_length(kName, "output out", out.size(), state_size());
    d_->jvp(t, y.data(), theta.data(), w.data(), out.data());
  }

  // g = diffusion(t, y, θ) (diagonal noise); InvalidArgument when the model has none.
  void diffusion(double t, const Vector& y, const Vector& theta, Vector& g) const {
    require_diffusion();
    detail::require_rhs_sizes<Backend>(kName, state_size(), parameter_size(), y, theta, g);
    d_->diffusion(t, y.data(), theta.data(), g.data());
  }

  // out_y = (∂g/∂y)ᵀ v, out_theta = (∂g/∂θ)ᵀ v (overwritten); InvalidArgument without diffusion.
  void diffusion_vjp(double t, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
                     Vector& out_theta) const {
    require_diffusion();
    detail::require_vjp_sizes<Backend>(kName, state_size(), parameter_size(), y, theta, v, out_y,
                                       out_theta);
    d_->diffusion_vjp(t, y.data(), theta.data(), v.data(), out_y.data(), out_theta.data());
  }

  // out_y, out_theta = the gradients in y and θ of wᵀ (∂f/∂y) u (overwritten).
  void jvp_vjp(double t, const Vector& y, const Vector& theta, const Vector& u, const Vector& w,
               Vector& out_y, Vector& out_theta) const {
    detail::require_vjp_sizes<Backend>(kName, state_size(), parameter_size(), y, theta, u, out_y,
                                       out_theta);
    detail::require_length(kName, "weights w", w.size(), state_size());
    d_->jvp_vjp(t, y.data(), theta.data(), u.data(), w.data(), out_y.data(), out_theta.data());
  }
  // out = ∂f/∂t (overwritten).
  void time_derivative(double t, const Vector& y, const Vector& theta, Vector& out) const {
    require_time_derivative();
    detail::require_rhs_sizes<Backend>(kName, state_size(), parameter_size(), y, theta, out);
    d_->time_derivative(t, y.data(), theta.data(), out.data());
  }
  // out_y, out_theta = the gradients in y and θ of wᵀ ∂f/∂t (overwritten).
  void time_derivative_vjp(double t, const Vector& y, const Vector& theta, const Vector& w,
                           Vector& out_y, Vector& out_theta) const {
    require_time_derivative();
    detail::require_vjp_sizes<Backend>(kName, state_size(), parameter_size(), y, theta, w, out_y,
                                       out_theta);
    d_->time_derivative_vjp(t, y.data(), theta.data(), w.data(), out_y.data(), out_theta.data());
  }
  void jacobian(double t, const Vector& y, const Vector& theta, Eigen::MatrixXd& J) const {
    detail::require_length(kName, "state y", y.size(), state_size());
    detail::require_length(kName, "parameter vector theta", theta.size(), parameter_size());
    J.resize(state_size(), state_size());
    d_->jacobian(t, y.data(), theta.data(), J.data());
  }

  // The half-bandwidths of ∂f/∂y the model declares (∂f_i/∂y_j = 0 unless j − upper ≤ i ≤
  // j + lower); InvalidArgument when it declares no band.
  Index band_upper() const {
    require_band();
    return d_->band_upper;
  }
  Index band_lower() const {
    require_band();
    return d_->band_lower;
  }
  // ∂f/∂y in LAPACK band storage, as rwd::AutoProblem::band_jacobian: bands is resized to
  // (upper + lower + 1) × n and bands(upper + i − j, j) = ∂f_i/∂y_j inside the band, 0 elsewhere;
  // InvalidArgument when the model declares no band.
  void band_jacobian(double t, const Vector& y, const Vector& theta, Eigen::MatrixXd& bands) const {
    require_band();
    detail::require_length(kName, "state y", y.size(), state_size());
    detail::require_length(kName, "parameter vector theta", theta.size(), parameter_size());
    bands.resize(d_->band_upper + d_->band_lower + 1, state_size());
    d_->band_jacobian(t, y.data(), theta.data(), bands.data());
  }

 private:
  static constexpr const char* kName = "rwd::PluginModel";

  void require_diffusion() const {
    if (!has_diffusion())
      detail::fail<InvalidArgument>(path_, ": the model ", name(),
                                    " declares no diffusion(t, y, p, g): it is not stochastic");
  }

  void require_time_derivative() const {
    if (!has_time_derivative())
      detail::fail<InvalidArgument>(
          path_, ": the model ", name(),
          " gives no df/dt: its rhs takes t as a double (write "
          "template <class T> void rhs(T t, const T* y, const T* p, T* f) "
          "to have it derived)");
  }

  void require_band() const {
    if (!declares_band()) detail::fail<InvalidArgument>(band_refusal());
  }

  void require_initial_state() const {
    if (!has_initial_state())
      detail::fail<InvalidArgument>(path_, ": the model ", name(),
                                    " declares no initial_state(p, y0)");
  }

  static std::vector<std::string> names(const char* const* list, Index count) {
    return std::vector<std::string>(list, list + count);
  }

  std::shared_ptr<void> library_;  // dlclose'd when the last copy goes
  const rwd_model_plugin* d_;
  std::string path_;
};

namespace detail {

// Whether the file starts like an ELF object (the shared libraries dlopen loads on Linux).
inline bool looks_like_shared_library(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' &&
         magic[3] == 'F';
}

// Refuses a description whose band is malformed: a band is both widths in 0 … state_size − 1 with
// a band_jacobian, no band both widths −1 without one.
inline void require_well_formed_band(const rwd_model_plugin& d, const std::string& path) {
  const bool none = d.band_upper == -1 && d.band_lower == -1 && d.band_jacobian == nullptr;
  const bool declared = d.band_upper >= 0 && d.band_lower >= 0 && d.band_upper < d.state_size &&
                        d.band_lower < d.state_size && d.band_jacobian != nullptr;
  if (!none && !declared)
    fail<InvalidArgument>(
        "model '", path, "' (", d.name, ") describes a malformed band: (upper ", d.band_upper,
        ", lower ", d.band_lower, ") with ", d.band_jacobian ? "a" : "no",
        " band_jacobian; widths are both in 0 … state_size − 1 (", d.state_size - 1,
        ") with a band_jacobian, or both −1 without one: rebuild the model "
        "against this rewind");
}

// Refuses a description with one of the time derivatives and not the other.
inline void require_paired_time_derivatives(const rwd_model_plugin& d, const std::string& path) {
  if ((d.time_derivative == nullptr) != (d.time_derivative_vjp == nullptr))
    fail<InvalidArgument>("model '", path, "' (", d.name, ") describes time_derivative",
                          d.time_derivative ? "" : " (null)", " and time_derivative_vjp",
                          d.time_derivative_vjp ? "" : " (null)",
                          ": both or neither; rebuild the model against this rewind");
}

// Refuses a stencil model's description whose grid is malformed: a dimension above 3, a smallest
// size below 1, or a grid_ function missing.
inline void require_well_formed_grid(const rwd_model_plugin& d, const std::string& path) {
  if (d.grid_dimension == 0) return;
  bool ok =
      d.grid_dimension <= 3 && d.grid_default_size >= 0 && d.grid_error && d.grid_make &&
      d.grid_free && d.grid_set_threads && d.grid_rhs && d.grid_vjp && d.grid_jvp &&
      d.grid_jvp_vjp && d.grid_nonzeros && d.grid_sparsity && d.grid_jacobian_values &&
      (d.grid_has_initial_state != 0) == (d.grid_initial_state != nullptr) &&
      (d.grid_initial_state != nullptr) == (d.grid_initial_state_vjp != nullptr) &&
      d.grid_points >= 1 && d.grid_slab_offsets && d.grid_slab_boundary <= 2 &&
      (d.grid_dimension < 2 || d.window_make != nullptr) &&  // 1-D: null from older builds
      (d.window_make == nullptr || (d.window_free && d.window_rhs && d.window_jvp && d.window_vjp));
  for (std::uint32_t dim = 0; ok && dim < d.grid_dimension; ++dim) ok = d.grid_min_sizes[dim] >= 1;
  if (!ok)
    fail<InvalidArgument>("model '", path, "' (", d.name,
                          ") describes a malformed grid (dimension ", d.grid_dimension,
                          "): rebuild the model against this rewind (rewind_add_model)");
}

// The library at `path`, loaded, and the description its entry point returns, checked (see the
// top of this file for what is refused).
inline std::pair<std::shared_ptr<void>, const rwd_model_plugin*> open_model_plugin(
    const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec)) detail::fail<InvalidArgument>("model '", path, "' does not exist");
  if (!fs::is_regular_file(path, ec))
    detail::fail<InvalidArgument>("model '", path, "' is not a file");
  if (!detail::looks_like_shared_library(path))
    detail::fail<InvalidArgument>("model '", path,
                                  "' is not a shared library (build one with rewind_add_model)");
  // A path without '/' would make dlopen search the library path, not this file.
  const std::string file = fs::path(path).has_parent_path() ? path : "./" + path;
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    detail::fail<InvalidArgument>("model '", path, "' cannot be loaded: ", why ? why : "?");
  }
  std::shared_ptr<void> library(handle, [](void* h) { dlclose(h); });
  dlerror();
  void* symbol = dlsym(handle, kModelPluginEntryPoint);
  if (symbol == nullptr)
    detail::fail<InvalidArgument>("model '", path, "' is not a rewind model: it exports no ",
                                  kModelPluginEntryPoint,
                                  " (a model's source ends with REWIND_MODEL(Type))");
  const auto entry = reinterpret_cast<rwd_model_plugin_entry>(symbol);
  const rwd_model_plugin* description = entry();
  if (description == nullptr)
    detail::fail<InvalidArgument>("model '", path, "': ", kModelPluginEntryPoint,
                                  " returned no description");
  if (description->abi_version != kModelAbiVersion)
    detail::fail<InvalidArgument>("model '", path, "' was built for rewind model ABI version ",
                                  description->abi_version, ", and this rewind loads version ",
                                  kModelAbiVersion,
                                  ": rebuild the model against this rewind (rewind_add_model)");
  if (description->struct_size != sizeof(rwd_model_plugin))
    detail::fail<InvalidArgument>("model '", path, "' describes itself in ",
                                  description->struct_size, " bytes, not the ",
                                  sizeof(rwd_model_plugin), " of ABI version ", kModelAbiVersion,
                                  ": rebuild the model against this rewind");
  if (description->error != nullptr)
    detail::fail<InvalidArgument>("model '", path, "' (", description->name,
                                  ") is refused: ", description->error);
  require_well_formed_band(*description, path);
  require_well_formed_grid(*description, path);
  require_paired_time_derivatives(*description, path);
  return {std::move(library), description};
}

}  // namespace detail

// Loads the model plugin at `path` (see the top of this file for what is refused, and how). A
// stencil model is refused here, pointing at rwd::load_stencil_plugin (its state's size is the
// grid's, which the caller chooses).
inline PluginModel load_model_plugin(const std::string& path) {
  auto [library, description] = detail::open_model_plugin(path);
  if (description->grid_dimension != 0)
    detail::fail<InvalidArgument>("model '", path, "' (", description->name,
                                  ") is a stencil model on a ", description->grid_dimension,
                                  "-D grid: load it with rwd::load_stencil_plugin and give the "
                                  "grid's sizes");
  return PluginModel(std::move(library), description, path);
}

}  // namespace rwd
