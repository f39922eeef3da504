// rewind/model.hpp — a model written once, generic in the scalar type, and made a problem whose
// vector–Jacobian products are derived exactly: no hand-written derivative.
//
//   #include <rewind/model.hpp>
//   struct Sir {
//     static constexpr std::array<const char*, 3> state_names{"S", "I", "R"};
//     static constexpr std::array<const char*, 3> parameter_names{"beta", "gamma", "N"};
//     template <class T>
//     void rhs(double t, const T* y, const T* p, T* f) const {
//       const T infection = p[0] * y[0] * y[1] / p[2];
//       f[0] = -infection;
//       f[1] = infection - p[1] * y[1];
//       f[2] = p[1] * y[1];
//     }
//     // optional: default parameter values, and an initial state that depends on parameters
//     static constexpr std::array<double, 3> default_parameters{0.5, 0.25, 1000.0};
//     template <class T>
//     void initial_state(const T* p, T* y0) const { y0[0] = p[2] - 1.0; y0[1] = 1.0; y0[2] = 0.0; }
//   };
//   auto problem = rwd::auto_problem(Sir{});   // an rwd::Problem (Eigen backend)
//   rwd::ExplicitRungeKutta stepper(problem, rwd::ButcherTableau::rk4(),
//                                   rwd::StepControl::fixed(0.0, 0.1, 1000));
//   const auto theta = problem.default_parameters();
//   auto result = rwd::differentiate(stepper, objective, problem.initial_state(theta), theta,
//                                    rwd::StoreAllStrategy{});
//   auto dJ_dtheta = problem.total_parameter_gradient(theta, result.grad_y0, result.grad_theta);
//
// What a model provides: `state_names` and `parameter_names` (std::array<const char*, N>, each
// name non-empty and distinct within its list; a model without parameters has an empty array),
// and `rhs(t, y, p, f)` templated on the scalar T, writing all of f from y and p (t is a plain
// double: time is not differentiated). Optional: `default_parameters` (std::array<double, P>) and
// `initial_state(p, y0)`, templated like rhs, writing all of y0.
//
// How the derivatives are derived: rhs is evaluated once with Sacado's forward-mode scalar
// SFad<double, n + p> (Trilinos' automatic differentiation, Debian's libtrilinos-sacado-dev), the
// inputs seeded with the unit vectors, which gives the whole Jacobian [∂f/∂y  ∂f/∂θ] at the
// point; the vjp is vᵀ times it, each entry summed over the outputs k = 0 … n−1 in order. The
// derivative is that of the computed expressions (exact to round-off, the same as a correct
// hand-written vjp to ~1e-16 relative; tests compare at 1e-13) and the same inputs always give
// the same bits, so gradients are bitwise the same for every schedule and store. The choice of
// library and its cost are measured in bench/results/ad_choice.md: the derived vjp of Lorenz-63
// takes about 2× the hand-written one. One evaluation costs about n + p times an rhs, so this is
// for small dense models; a structured-grid PDE wants a stencil model (one cell's update).
//
// Rules for writing rhs (and initial_state) so that they differentiate:
// - Name intermediate values with the type T (`const T infection = …`), never `auto`: with
//   Sacado's types an `auto` holds an unevaluated expression that refers to temporaries already
//   gone (undefined behaviour).
// - Call mathematical functions unqualified (`exp(x)`, `sin(x)`, `pow(x, 2.0)`) after
//   `using std::exp;` etc.: argument-dependent lookup finds Sacado's versions for its types.
// - Branches on values are allowed; the derivative is that of the branch taken at the point.
//
// The problem also has jacobian(t, y, θ, J) (∂f/∂y, dense) and jvp(t, y, θ, w, out) ((∂f/∂y) w,
// one forward-mode evaluation along w), which CVODES's BDF uses for its dense and matrix-free
// (GMRES) Newton iterations: no hand-written Jacobian there either.
//
// A model with a templated `diffusion(t, y, p, g)` as well (diagonal noise, dy_i = f_i dt +
// g_i dW_i) is an SDE problem (rwd::SdeProblem) for rwd::StochasticStepper: its diffusion_vjp is
// derived the same way.
//
// Bad models are refused: a model without the members above fails to compile with a message
// naming the missing member (static_assert); empty or repeated state or parameter names are
// refused when the problem is made, with an rwd::InvalidArgument naming the name and its index.
// Runs on the CPU (rwd::EigenBackend): the derived vjp is host code.
#pragma once

// Sacado's forward types, header-only. Debian builds Trilinos with Kokkos and Teuchos, and its
// configuration header would make these types include their headers and MPI's and need Teuchos'
// library; they need none of it. So the configuration header is bypassed (Trilinos' own switch)
// and the two settings of Debian's build that the forward types use are set here. A translation
// unit that includes this header therefore cannot also include Trilinos headers that need their
// configuration (bench/results/ad_choice.md measures the difference: 0.58 s against 2.54 s to
// compile one small model, and no library to link).
#ifndef TRILINOS_NO_CONFIG_H
#define TRILINOS_NO_CONFIG_H
#endif
#ifndef SACADO_NEW_FAD_DESIGN_IS_DEFAULT
#define SACADO_NEW_FAD_DESIGN_IS_DEFAULT
#endif
#ifndef HAVE_SACADO_CXX11
#define HAVE_SACADO_CXX11
#endif
#if __has_include(<trilinos/Sacado_Fad_SFad.hpp>)
#include <trilinos/Sacado_Fad_SFad.hpp>  // Debian's layout (libtrilinos-sacado-dev)
#else
#include <Sacado_Fad_SFad.hpp>
#endif

#include <array>
#include <concepts>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/problems/detail/problem_support.hpp"
#include "rewind/types.hpp"

namespace rwd {
namespace detail {

// The scalar every model's rhs must accept besides double: Sacado's forward-mode type with the
// given number of derivative components.
template <int Components>
using ForwardScalar = Sacado::Fad::SFad<double, Components>;

template <class Names>
inline constexpr bool kIsNameArray = false;
template <std::size_t N>
inline constexpr bool kIsNameArray<std::array<const char*, N>> = true;

// The number of names in a std::array<const char*, N> member.
template <class Names>
inline constexpr Index name_count =
    static_cast<Index>(std::tuple_size_v<std::remove_cvref_t<Names>>);

// Refuses an empty or repeated name of a model's `list` ("state_names", "parameter_names").
template <std::size_t N>
void require_valid_names(const char* model, const char* list,
                         const std::array<const char*, N>& names) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == nullptr || std::string_view(names[i]).empty())
      fail<InvalidArgument>(model, ": ", list, "[", i, "] is empty; every name must be non-empty");
    for (std::size_t j = 0; j < i; ++j)
      if (std::string_view(names[i]) == std::string_view(names[j]))
        fail<InvalidArgument>(model, ": ", list, "[", i, "] = '", names[i], "' repeats ", list, "[",
                              j, "]; names must be distinct");
  }
}

}  // namespace detail

// The names of a model rewind can differentiate (see the top of this file): state_names and
// parameter_names as std::array<const char*, N> members. AutoProblem's static_asserts check the
// rest (rhs, defaults), one message each.
template <class M>
concept TemplatedModel = detail::kIsNameArray<std::remove_cvref_t<decltype(M::state_names)>> &&
    detail::kIsNameArray<std::remove_cvref_t<decltype(M::parameter_names)>>;

// A problem (rwd::Problem on rwd::EigenBackend) made from a templated model: rhs calls the model
// with doubles, vjp derives (∂f/∂y)ᵀv and (∂f/∂θ)ᵀv with Sacado's forward mode. Make one with
// rwd::auto_problem(Model{}).
template <class Model>
class AutoProblem {
  static_assert(
      requires { Model::state_names; },
      "rwd::auto_problem: the model needs `static constexpr std::array<const char*, N> "
      "state_names`");
  static_assert(
      requires { Model::parameter_names; },
      "rwd::auto_problem: the model needs `static constexpr std::array<const char*, P> "
      "parameter_names` (an empty array for a model without parameters)");
  static_assert(TemplatedModel<Model>,
                "rwd::auto_problem: state_names and parameter_names must be "
                "std::array<const char*, N>");

 public:
  using Backend = EigenBackend;
  using Vector = Backend::Vector;
  static constexpr Index kStates = detail::name_count<decltype(Model::state_names)>;
  static constexpr Index kParameters = detail::name_count<decltype(Model::parameter_names)>;
  static_assert(kStates >= 1, "rwd::auto_problem: the model needs at least one state");
  static constexpr int kComponents = static_cast<int>(kStates + kParameters);
  using Derivative = detail::ForwardScalar<kComponents>;
  static_assert(
      requires(const Model& m, double t, const double* y, double* f) { m.rhs(t, y, y, f); },
      "rwd::auto_problem: the model needs `template <class T> void rhs(double t, const T* y, "
      "const T* p, T* f) const`, callable with T = double");
  static_assert(
      requires(const Model& m, double t, const Derivative* y, Derivative* f) { m.rhs(t, y, y, f); },
      "rwd::auto_problem: rhs must be a template in the scalar type T (it is called with "
      "Sacado's forward-mode scalar to derive the vjp)");

  static constexpr bool kHasDefaultParameters = requires { Model::default_parameters; };
  static constexpr bool kHasDiffusion =
      requires(const Model& m, double t, const double* y, double* g) {
    m.diffusion(t, y, y, g);
  };
  static constexpr bool kHasInitialState = requires(const Model& m, const double* p, double* y0) {
    m.initial_state(p, y0);
  };

  explicit AutoProblem(Model model = {}) : model_(std::move(model)) {
    detail::require_valid_names(kName, "state_names", Model::state_names);
    detail::require_valid_names(kName, "parameter_names", Model::parameter_names);
    if constexpr (kHasDefaultParameters)
      static_assert(std::tuple_size_v<std::remove_cvref_t<decltype(Model::default_parameters)>> ==
                        static_cast<std::size_t>(kParameters),
                    "rwd::auto_problem: default_parameters must have one value per parameter name");
  }

  Index state_size() const { return kStates; }
  Index parameter_size() const { return kParameters; }
  const Model& model() const { return model_; }

  static std::vector<std::string> state_names() { return names(Model::state_names); }
  static std::vector<std::string> parameter_names() { return names(Model::parameter_names); }

  // The model's default_parameters (a model without them does not compile this).
  static Vector default_parameters() {
    static_assert(kHasDefaultParameters,
                  "rwd::AutoProblem::default_parameters: the model has no "
                  "`static constexpr std::array<double, P> default_parameters`");
    return detail::vector_from_host<Backend>(std::span<const double>(Model::default_parameters));
  }

  // y0 = initial_state(θ) from the model's initial_state (a model without it does not compile
  // this).
  Vector initial_state(const Vector& theta) const {
    static_assert(kHasInitialState,
                  "rwd::AutoProblem::initial_state: the model has no `template <class T> void "
                  "initial_state(const T* p, T* y0) const`");
    detail::require_length(kName, "parameter vector theta", theta.size(), kParameters);
    Vector y0(kStates);
    model_.initial_state(theta.data(), y0.data());
    return y0;
  }

  // out_theta = (∂y0/∂θ)ᵀ w for y0 = initial_state(θ), derived like the vjp (overwritten).
  void initial_state_vjp(const Vector& theta, const Vector& w, Vector& out_theta) const {
    static_assert(kHasInitialState,
                  "rwd::AutoProblem::initial_state_vjp: the model has no initial_state");
    detail::require_length(kName, "parameter vector theta", theta.size(), kParameters);
    detail::require_length(kName, "cotangent w", w.size(), kStates);
    detail::require_length(kName, "output out_theta", out_theta.size(), kParameters);
    if constexpr (kParameters > 0) {
      using Seeded = detail::ForwardScalar<static_cast<int>(kParameters)>;
      std::array<Seeded, static_cast<std::size_t>(kParameters)> p;
      std::array<Seeded, static_cast<std::size_t>(kStates)> y0;
      for (Index j = 0; j < kParameters; ++j) seed(p[j], theta[j], j);
      model_.initial_state(p.data(), y0.data());
      for (Index j = 0; j < kParameters; ++j) out_theta[j] = weighted(y0, w.data(), j);
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

  void rhs(double t, const Vector& y, const Vector& theta, Vector& f) const {
    detail::require_rhs_sizes<Backend>(kName, kStates, kParameters, y, theta, f);
    model_.rhs(t, y.data(), theta.data(), f.data());
  }

  // g(t, y, θ), the diagonal noise of an SDE (dy_i = f_i dt + g_i dW_i), for a model with a
  // templated `diffusion(t, y, p, g)` (rewind/integrators/sde_problem.hpp).
  void diffusion(double t, const Vector& y, const Vector& theta,
                 Vector& g) const requires kHasDiffusion {
    detail::require_rhs_sizes<Backend>(kName, kStates, kParameters, y, theta, g);
    model_.diffusion(t, y.data(), theta.data(), g.data());
  }

  // out_y = (∂g/∂y)ᵀ v, out_theta = (∂g/∂θ)ᵀ v (both overwritten), derived like the vjp.
  void diffusion_vjp(double t, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
                     Vector& out_theta) const requires kHasDiffusion {
    detail::require_vjp_sizes<Backend>(kName, kStates, kParameters, y, theta, v, out_y, out_theta);
    const auto g = derivative_evaluation(
        y, theta, [&](const Derivative* x, const Derivative* p, Derivative* out) {
          model_.diffusion(t, x, p, out);
        });
    for (Index j = 0; j < kStates; ++j) out_y[j] = weighted(g, v.data(), j);
    for (Index j = 0; j < kParameters; ++j) out_theta[j] = weighted(g, v.data(), kStates + j);
  }

  // out = (∂f/∂y) w (overwritten), from one evaluation of rhs in forward mode along w: the
  // Jacobian–vector products of BDF's matrix-free (GMRES) Newton iterations.
  void jvp(double t, const Vector& y, const Vector& theta, const Vector& w, Vector& out) const {
    detail::require_length(kName, "state y", y.size(), kStates);
    detail::require_length(kName, "parameter vector theta", theta.size(), kParameters);
    detail::require_length(kName, "direction w", w.size(), kStates);
    detail::require_length(kName, "output out", out.size(), kStates);
    using Directional = detail::ForwardScalar<1>;
    std::array<Directional, static_cast<std::size_t>(kStates)> x, f;
    std::array<Directional, static_cast<std::size_t>(kParameters)> p;
    for (Index j = 0; j < kStates; ++j) {
      x[j].val() = y[j];
      x[j].fastAccessDx(0) = w[j];
    }
    for (Index j = 0; j < kParameters; ++j) {
      p[j].val() = theta[j];
      p[j].fastAccessDx(0) = 0.0;
    }
    model_.rhs(t, x.data(), p.data(), f.data());
    for (Index i = 0; i < kStates; ++i) out[i] = f[i].fastAccessDx(0);
  }

  // J = ∂f/∂y, n × n (overwritten), from the forward-mode evaluation the vjp makes: the Jacobian
  // of BDF's dense Newton iterations.
  void jacobian(double t, const Vector& y, const Vector& theta, Eigen::MatrixXd& J) const {
    detail::require_length(kName, "state y", y.size(), kStates);
    detail::require_length(kName, "parameter vector theta", theta.size(), kParameters);
    const auto f = derivative_evaluation(t, y, theta);
    J.resize(kStates, kStates);
    for (Index i = 0; i < kStates; ++i)
      for (Index j = 0; j < kStates; ++j) J(i, j) = f[i].fastAccessDx(static_cast<int>(j));
  }

  // out_y = (∂f/∂y)ᵀ v, out_theta = (∂f/∂θ)ᵀ v (both overwritten), from one forward-mode
  // evaluation of rhs.
  void vjp(double t, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    detail::require_vjp_sizes<Backend>(kName, kStates, kParameters, y, theta, v, out_y, out_theta);
    const auto f = derivative_evaluation(t, y, theta);
    for (Index j = 0; j < kStates; ++j) out_y[j] = weighted(f, v.data(), j);
    for (Index j = 0; j < kParameters; ++j) out_theta[j] = weighted(f, v.data(), kStates + j);
  }

 private:
  static constexpr const char* kName = "rwd::auto_problem";

  // evaluate(x, p, out) (the model's rhs or diffusion) with every derivative component: of the
  // n outputs, component j < n is ∂/∂y_j and n + j is ∂/∂θ_j.
  template <class Evaluate>
  static std::array<Derivative, static_cast<std::size_t>(kStates)> derivative_evaluation(
      const Vector& y, const Vector& theta, const Evaluate& evaluate) {
    std::array<Derivative, static_cast<std::size_t>(kStates)> x, out;
    std::array<Derivative, static_cast<std::size_t>(kParameters)> p;
    for (Index j = 0; j < kStates; ++j) seed(x[j], y[j], j);
    for (Index j = 0; j < kParameters; ++j) seed(p[j], theta[j], kStates + j);
    evaluate(x.data(), p.data(), out.data());
    return out;
  }
  std::array<Derivative, static_cast<std::size_t>(kStates)> derivative_evaluation(
      double t, const Vector& y, const Vector& theta) const {
    return derivative_evaluation(
        y, theta,
        [&](const Derivative* x, const Derivative* p, Derivative* f) { model_.rhs(t, x, p, f); });
  }

  template <std::size_t N>
  static std::vector<std::string> names(const std::array<const char*, N>& list) {
    return std::vector<std::string>(list.begin(), list.end());
  }

  // a = value with derivative components e_j. Element by element, not Sacado's seeding
  // constructor, which zero-fills with a memset of run-time length (slower than the whole rhs).
  template <class Scalar>
  static void seed(Scalar& a, double value, Index j) {
    a.val() = value;
    for (int i = 0; i < a.size(); ++i) a.fastAccessDx(i) = i == j ? 1.0 : 0.0;
  }

  // Σ_k w_k ∂out_k/∂x_j, k in order.
  template <class Outputs>
  static double weighted(const Outputs& out, const double* w, Index j) {
    double s = 0.0;
    for (std::size_t k = 0; k < out.size(); ++k)
      s += w[k] * out[k].fastAccessDx(static_cast<int>(j));
    return s;
  }

  Model model_;
};

// The problem of a templated model (see the top of this file).
template <class Model>
AutoProblem<Model> auto_problem(Model model = {}) {
  return AutoProblem<Model>(std::move(model));
}

}  // namespace rwd
