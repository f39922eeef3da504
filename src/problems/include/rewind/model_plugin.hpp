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
// One REWIND_MODEL per library (the entry point has one fixed name). Empty or repeated names are
// not refused at compile time: the description carries the reason, and the loader reports it.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <exception>
#include <string>

#include <Eigen/Core>

#include "rewind/model.hpp"
#include "rewind/model_plugin_abi.hpp"
#include "rewind/types.hpp"

namespace rwd::plugin_detail {

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

  static double default_dt() {
    if constexpr (requires { Model::default_dt; })
      return static_cast<double>(Model::default_dt);
    else
      return 0.0;
  }
  static std::int64_t default_steps() {
    if constexpr (requires { Model::default_steps; })
      return static_cast<std::int64_t>(Model::default_steps);
    else
      return 0;
  }

  static const rwd_model_plugin* describe(const char* name) {
    static const rwd_model_plugin description = [name] {
      rwd_model_plugin d{};
      d.abi_version = REWIND_MODEL_ABI_VERSION;
      d.struct_size = sizeof(rwd_model_plugin);
      d.name = name;
      static std::string refusal;
      if (problem(&refusal) == nullptr) {
        d.error = refusal.c_str();
        return d;
      }
      d.state_size = n;
      d.parameter_size = np;
      d.state_names = Model::state_names.data();
      d.parameter_names = Model::parameter_names.data();
      if constexpr (Problem::kHasDefaultParameters)
        d.default_parameters = Model::default_parameters.data();
      d.default_dt = default_dt();
      d.default_steps = default_steps();
      d.autonomous = Problem::autonomous ? 1 : 0;
      d.band_upper = d.band_lower = -1;
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

}  // namespace rwd::plugin_detail

// Exports Type (a templated model, rewind/model.hpp) as the library's model: defines the entry
// point rewind_model_plugin (rewind/model_plugin_abi.hpp), visible from outside the library.
#define REWIND_MODEL(Type)                                                                       \
  extern "C" __attribute__((visibility("default"))) const rwd_model_plugin* rewind_model_plugin( \
      void) {                                                                                    \
    return ::rwd::plugin_detail::ModelExport<Type>::describe(#Type);                             \
  }
