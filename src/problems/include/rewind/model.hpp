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
// and `rhs(t, y, p, f)` templated on the scalar T, writing all of f from y and p (t a plain double,
// or of type T: "Time" below). Optional: `default_parameters` (std::array<double, P>) and
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
// (GMRES) Newton iterations: no hand-written Jacobian there either (band: below). And it has
// jvp_vjp(t, y, θ, u, w, out_y, out_θ) (the gradients in y and θ of wᵀ (∂f/∂y) u, by nested
// forward mode), the second derivatives of the Rosenbrock methods' exact adjoints
// (rewind/integrators/rosenbrock.hpp), which also need the model to declare
// `static constexpr bool autonomous = true;` (the problem's `autonomous` says what the model
// declares, false when it does not) — or ∂f/∂t:
//
// Time. A model whose f depends on t may take t as its scalar type,
//   template <class T> void rhs(T t, const T* y, const T* p, T* f) const;
// (kTimeDifferentiable): the problem then also has time_derivative(t, y, θ, out) = ∂f/∂t (forward
// mode along t), time_derivative_vjp(t, y, θ, w, out_y, out_θ) = the gradients in y and θ of
// wᵀ ∂f/∂t (nested forward mode, the inner component along t) and vjp_time(t, y, θ, v) = v·∂f/∂t,
// so the Rosenbrock methods and the run-end adjoints take it without a declared autonomy. Every
// other evaluation passes t to it as a constant of the scalar type (zero derivative components).
//
// Hand-written derivatives stay possible where they are faster. A model may also have
//   void vjp(double t, const double* y, const double* p, const double* v,
//            double* out_y, double* out_p) const;      // (∂f/∂y)ᵀv, (∂f/∂θ)ᵀv, overwritten
//   void jacobian(double t, const double* y, const double* p, double* J) const;
//                                                       // ∂f/∂y, n × n column-major:
//                                                       // J[i + n·j] = ∂f_i/∂y_j, overwritten
// (plain doubles, not templates). The problem's vjp and jacobian are then the model's own — every
// driver, CVODES and a plugin use them — while derived_vjp and derived_jacobian stay the derived
// ones; rwd::check_derivatives(problem, t, y, θ) then compares the hand-written vjp with the
// derived one entry by entry (to options.derived_tolerance, 1e-12 relative), besides finite
// differences, and names the entry that differs (and the model's own jacobian with the derived
// one likewise). A built-in problem with a hand-written vjp is checked the same way against a
// templated model of its rhs:
//   rwd::check_derivatives(rwd::Lorenz63<>{}, rwd::auto_problem(MyLorenz63{}), t, y, θ).
//
// A band Jacobian: a model whose ∂f/∂y is banded may declare its half-bandwidths,
//   static constexpr rwd::JacobianBand jacobian_band{/*upper=*/1, /*lower=*/1};
// and the problem then has band_jacobian (LAPACK band storage), derived with upper + lower + 1
// forward-mode components instead of n (compressed columns), and band_upper()/band_lower(): the
// band solvers (CVODES's, the implicit engines' band LU) take them, and so does a plugin (ABI 4).
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

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/derivative_checker.hpp"
#include "rewind/error.hpp"
#include "rewind/problems/detail/problem_support.hpp"
#include "rewind/types.hpp"

namespace rwd {

// The half-bandwidths of a model's ∂f/∂y: ∂f_i/∂y_j = 0 unless j − upper ≤ i ≤ j + lower. A
// model declares them with `static constexpr rwd::JacobianBand jacobian_band{upper, lower};`.
struct JacobianBand {
  Index upper = 0;  // super-diagonals: entries with j − i in 1 … upper
  Index lower = 0;  // sub-diagonals: entries with i − j in 1 … lower
};

namespace detail {

// The scalar every model's rhs must accept besides double: Sacado's forward-mode type with the
// given number of derivative components.
template <int Components>
using ForwardScalar = Sacado::Fad::SFad<double, Components>;

// The scalar T holding the constant `value` (every derivative component zero, nested ones too):
// time passed to a model whose rhs takes t as its scalar type (see "Time" at the top of this
// file). Component by component, not Sacado's constructor (see AutoProblem::seed).
template <class T>
T constant_scalar(double value) {
  if constexpr (std::is_same_v<T, double>) {
    return value;
  } else {
    using Inner = typename T::value_type;
    T a;
    a.val() = constant_scalar<Inner>(value);
    for (int k = 0; k < a.size(); ++k) a.fastAccessDx(k) = constant_scalar<Inner>(0.0);
    return a;
  }
}

// Whether the model's rhs takes t as a double when its state is of scalar type T (otherwise it
// takes t as a T: "Time" at the top of this file).
template <class Model, class T>
concept RhsTakesDoubleTime = requires(const Model& m, double t, const T* y, T* f) {
  m.rhs(t, y, y, f);
};

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
  // Whether the model's rhs takes t as its scalar type (`template <class T> void rhs(T t, const
  // T* y, const T* p, T* f) const`): ∂f/∂t is then derived (time_derivative), and the Rosenbrock
  // methods take the model even when it is not autonomous.
  static constexpr bool kTimeDifferentiable =
      requires(const Model& m, detail::ForwardScalar<1> t, const detail::ForwardScalar<1>* y,
               detail::ForwardScalar<1>* f) {
    m.rhs(t, y, y, f);
  };
  static_assert(
      requires(const Model& m, double t, const Derivative* y, Derivative* f) {
        m.rhs(t, y, y, f);
      } || kTimeDifferentiable,
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
  // The model's own vjp and Jacobian (see "Hand-written derivatives" at the top of this file).
  static constexpr bool kHasHandWrittenVjp =
      requires(const Model& m, double t, const double* x, double* out) {
    m.vjp(t, x, x, x, out, out);
  };
  static constexpr bool kHasHandWrittenJacobian =
      requires(const Model& m, double t, const double* x, double* J) {
    m.jacobian(t, x, x, J);
  };
  static constexpr bool kHasJacobianBand = requires { Model::jacobian_band; };
  // Whether f does not depend on t, as the model declares it with `static constexpr bool
  // autonomous = true;` (false when it does not say). The Rosenbrock engine needs it true.
  static constexpr bool autonomous = [] {
    if constexpr (requires { Model::autonomous; })
      return static_cast<bool>(Model::autonomous);
    else
      return false;
  }();

  explicit AutoProblem(Model model = {}) : model_(std::move(model)) {
    detail::require_valid_names(kName, "state_names", Model::state_names);
    detail::require_valid_names(kName, "parameter_names", Model::parameter_names);
    if constexpr (kHasDefaultParameters)
      static_assert(std::tuple_size_v<std::remove_cvref_t<decltype(Model::default_parameters)>> ==
                        static_cast<std::size_t>(kParameters),
                    "rwd::auto_problem: default_parameters must have one value per parameter name");
    if constexpr (kHasJacobianBand) {
      static_assert(
          std::is_same_v<std::remove_cvref_t<decltype(Model::jacobian_band)>, JacobianBand>,
          "rwd::auto_problem: jacobian_band must be `static constexpr rwd::JacobianBand "
          "jacobian_band{upper, lower}`");
      static_assert(Model::jacobian_band.upper >= 0 && Model::jacobian_band.lower >= 0 &&
                        Model::jacobian_band.upper < kStates &&
                        Model::jacobian_band.lower < kStates,
                    "rwd::auto_problem: jacobian_band's half-bandwidths must be in 0 ... n - 1");
    }
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
    call_rhs(t, y.data(), theta.data(), f.data());
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
    call_rhs(t, x.data(), p.data(), f.data());
    for (Index i = 0; i < kStates; ++i) out[i] = f[i].fastAccessDx(0);
  }

  // Second derivatives, for the exact adjoints of Rosenbrock methods: out_y = ∇_y [wᵀ (∂f/∂y) u]
  // and out_theta = ∇_θ [wᵀ (∂f/∂y) u] at (t, y, θ) (both overwritten) — the vjp of the jvp
  // along u, with cotangent w. Derived by one evaluation of rhs in nested forward mode: the
  // scalar SFad<SFad<double, 1>, n + p>, whose inner component is the direction u of the states
  // (d/dε at y + εu) and whose outer components are the unit vectors of (y, θ); component k of
  // f_i then holds ∂/∂x_k [(∂f_i/∂y) u], and out_k = Σ_i w_i times it, i in order. Exact to
  // round-off, always the same bits for the same inputs. A model with a hand-written vjp still
  // gets this derived one.
  void jvp_vjp(double t, const Vector& y, const Vector& theta, const Vector& u, const Vector& w,
               Vector& out_y, Vector& out_theta) const {
    detail::require_vjp_sizes<Backend>(kName, kStates, kParameters, y, theta, w, out_y, out_theta);
    detail::require_length(kName, "direction u", u.size(), kStates);
    using Inner = detail::ForwardScalar<1>;
    using Nested = Sacado::Fad::SFad<Inner, kComponents>;
    std::array<Nested, static_cast<std::size_t>(kStates)> x, f;
    std::array<Nested, static_cast<std::size_t>(kParameters)> p;
    auto seed_nested = [](Nested& a, double value, double direction, Index j) {
      a.val().val() = value;
      a.val().fastAccessDx(0) = direction;
      for (int k = 0; k < kComponents; ++k) {
        a.fastAccessDx(k).val() = k == j ? 1.0 : 0.0;
        a.fastAccessDx(k).fastAccessDx(0) = 0.0;
      }
    };
    for (Index j = 0; j < kStates; ++j) seed_nested(x[j], y[j], u[j], j);
    for (Index j = 0; j < kParameters; ++j) seed_nested(p[j], theta[j], 0.0, kStates + j);
    call_rhs(t, x.data(), p.data(), f.data());
    take_second_derivatives(f, w, out_y, out_theta);
  }

  // J = ∂f/∂y, n × n (overwritten): the model's own jacobian if it has one, else
  // derived_jacobian. The Jacobian of BDF's dense Newton iterations.
  void jacobian(double t, const Vector& y, const Vector& theta, Eigen::MatrixXd& J) const {
    if constexpr (kHasHandWrittenJacobian) {
      detail::require_length(kName, "state y", y.size(), kStates);
      detail::require_length(kName, "parameter vector theta", theta.size(), kParameters);
      J.resize(kStates, kStates);
      model_.jacobian(t, y.data(), theta.data(), J.data());  // column-major, like Eigen's
    } else {
      derived_jacobian(t, y, theta, J);
    }
  }

  // J = ∂f/∂y, n × n (overwritten), derived from the forward-mode evaluation the vjp makes,
  // whether or not the model has a jacobian of its own.
  void derived_jacobian(double t, const Vector& y, const Vector& theta, Eigen::MatrixXd& J) const {
    detail::require_length(kName, "state y", y.size(), kStates);
    detail::require_length(kName, "parameter vector theta", theta.size(), kParameters);
    const auto f = derivative_evaluation(t, y, theta);
    J.resize(kStates, kStates);
    for (Index i = 0; i < kStates; ++i)
      for (Index j = 0; j < kStates; ++j) J(i, j) = f[i].fastAccessDx(static_cast<int>(j));
  }

  // The half-bandwidths of ∂f/∂y a model declares with `jacobian_band` (CVODES's band solver
  // takes them, and band_jacobian, in place of its difference quotients).
  static constexpr Index band_upper() requires kHasJacobianBand {
    return Model::jacobian_band.upper;
  }
  static constexpr Index band_lower() requires kHasJacobianBand {
    return Model::jacobian_band.lower;
  }

  // ∂f/∂y of a model that declares `jacobian_band`, in LAPACK's band storage: bands is resized to
  // (upper + lower + 1) × n and bands(upper + i − j, j) = ∂f_i/∂y_j for every i, j in the band
  // (max(0, j − upper) ≤ i ≤ min(n − 1, j + lower)); the rest of bands is 0. Derived by one
  // forward-mode evaluation of rhs with upper + lower + 1 derivative components, not n: column j
  // is seeded in component j mod (upper + lower + 1), and no row reaches two columns of the same
  // component inside the band (compressed columns, Curtis–Powell–Reid). The entries are those of
  // derived_jacobian. The declared band must hold: a dependence outside it would be added into an
  // entry of the band (check a new model once with band_jacobian against derived_jacobian).
  void band_jacobian(double t, const Vector& y, const Vector& theta,
                     Eigen::MatrixXd& bands) const requires kHasJacobianBand {
    detail::require_length(kName, "state y", y.size(), kStates);
    detail::require_length(kName, "parameter vector theta", theta.size(), kParameters);
    constexpr Index upper = Model::jacobian_band.upper, lower = Model::jacobian_band.lower;
    constexpr int colours = static_cast<int>(upper + lower + 1);
    using Compressed = detail::ForwardScalar<colours>;
    std::array<Compressed, static_cast<std::size_t>(kStates)> x, f;
    std::array<Compressed, static_cast<std::size_t>(kParameters)> p;
    for (Index j = 0; j < kStates; ++j) seed(x[j], y[j], j % colours);
    for (Index j = 0; j < kParameters; ++j) seed(p[j], theta[j], -1);  // constants
    call_rhs(t, x.data(), p.data(), f.data());
    bands.setZero(colours, kStates);
    for (Index j = 0; j < kStates; ++j) {
      const Index first = std::max<Index>(0, j - upper),
                  last = std::min<Index>(kStates - 1, j + lower);
      for (Index i = first; i <= last; ++i)
        bands(upper + i - j, j) = f[i].fastAccessDx(static_cast<int>(j % colours));
    }
  }

  // out_y = (∂f/∂y)ᵀ v, out_theta = (∂f/∂θ)ᵀ v (both overwritten): the model's own vjp if it has
  // one (it is then what every driver uses), else derived_vjp.
  void vjp(double t, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    if constexpr (kHasHandWrittenVjp) {
      detail::require_vjp_sizes<Backend>(kName, kStates, kParameters, y, theta, v, out_y,
                                         out_theta);
      model_.vjp(t, y.data(), theta.data(), v.data(), out_y.data(), out_theta.data());
    } else {
      derived_vjp(t, y, theta, v, out_y, out_theta);
    }
  }

  // out_y = (∂f/∂y)ᵀ v, out_theta = (∂f/∂θ)ᵀ v (both overwritten), from one forward-mode
  // evaluation of rhs, whether or not the model has a vjp of its own: the reference
  // rwd::check_derivatives compares a hand-written vjp with.
  void derived_vjp(double t, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
                   Vector& out_theta) const {
    detail::require_vjp_sizes<Backend>(kName, kStates, kParameters, y, theta, v, out_y, out_theta);
    const auto f = derivative_evaluation(t, y, theta);
    for (Index j = 0; j < kStates; ++j) out_y[j] = weighted(f, v.data(), j);
    for (Index j = 0; j < kParameters; ++j) out_theta[j] = weighted(f, v.data(), kStates + j);
  }

  // ∂f/∂t at (t, y, θ) (overwritten), from one evaluation of rhs in forward mode along t, for a
  // model whose rhs takes t as its scalar type: the time-derivative term of the Rosenbrock
  // methods' stages.
  void time_derivative(double t, const Vector& y, const Vector& theta,
                       Vector& out) const requires kTimeDifferentiable {
    detail::require_rhs_sizes<Backend>(kName, kStates, kParameters, y, theta, out);
    using Directional = detail::ForwardScalar<1>;
    std::array<Directional, static_cast<std::size_t>(kStates)> x, f;
    std::array<Directional, static_cast<std::size_t>(kParameters)> p;
    for (Index j = 0; j < kStates; ++j) x[j] = detail::constant_scalar<Directional>(y[j]);
    for (Index j = 0; j < kParameters; ++j) p[j] = detail::constant_scalar<Directional>(theta[j]);
    Directional time = detail::constant_scalar<Directional>(t);
    time.fastAccessDx(0) = 1.0;
    model_.rhs(time, x.data(), p.data(), f.data());
    for (Index i = 0; i < kStates; ++i) out[i] = f[i].fastAccessDx(0);
  }

  // out_y = ∇_y [wᵀ ∂f/∂t] and out_theta = ∇_θ [wᵀ ∂f/∂t] at (t, y, θ) (both overwritten): the
  // adjoint of the Rosenbrock stages' time-derivative term. Nested forward mode as jvp_vjp, the
  // inner component along t instead of a state direction.
  void time_derivative_vjp(double t, const Vector& y, const Vector& theta, const Vector& w,
                           Vector& out_y, Vector& out_theta) const requires kTimeDifferentiable {
    detail::require_vjp_sizes<Backend>(kName, kStates, kParameters, y, theta, w, out_y, out_theta);
    using Inner = detail::ForwardScalar<1>;
    using Nested = Sacado::Fad::SFad<Inner, kComponents>;
    std::array<Nested, static_cast<std::size_t>(kStates)> x, f;
    std::array<Nested, static_cast<std::size_t>(kParameters)> p;
    for (Index j = 0; j < kStates; ++j) {
      x[j] = detail::constant_scalar<Nested>(y[j]);
      x[j].fastAccessDx(static_cast<int>(j)).val() = 1.0;
    }
    for (Index j = 0; j < kParameters; ++j) {
      p[j] = detail::constant_scalar<Nested>(theta[j]);
      p[j].fastAccessDx(static_cast<int>(kStates + j)).val() = 1.0;
    }
    Nested time = detail::constant_scalar<Nested>(t);
    time.val().fastAccessDx(0) = 1.0;
    model_.rhs(time, x.data(), p.data(), f.data());
    take_second_derivatives(f, w, out_y, out_theta);
  }

  // v·∂f/∂t (the run-end adjoints' dJ/dh of a non-autonomous model, rewind/adjoint/run_end.hpp).
  double vjp_time(double t, const Vector& y, const Vector& theta,
                  const Vector& v) const requires kTimeDifferentiable {
    Vector rate(kStates);
    time_derivative(t, y, theta, rate);
    double s = 0.0;
    for (Index i = 0; i < kStates; ++i) s += v[i] * rate[i];
    return s;
  }

 private:
  static constexpr const char* kName = "rwd::auto_problem";

  // The model's rhs on scalars T, t passed as a double or, to a model whose rhs takes t as its
  // scalar type, as a constant T.
  template <class T>
  void call_rhs(double t, const T* y, const T* p, T* f) const {
    if constexpr (detail::RhsTakesDoubleTime<Model, T>)
      model_.rhs(t, y, p, f);
    else
      model_.rhs(detail::constant_scalar<T>(t), y, p, f);
  }

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
        [&](const Derivative* x, const Derivative* p, Derivative* f) { call_rhs(t, x, p, f); });
  }

  template <std::size_t N>
  static std::vector<std::string> names(const std::array<const char*, N>& list) {
    return std::vector<std::string>(list.begin(), list.end());
  }

  // a = value with derivative components e_j (all zero for j = −1). Element by element, not
  // Sacado's seeding constructor, which zero-fills with a memset of run-time length (slower than
  // the whole rhs).
  template <class Scalar>
  static void seed(Scalar& a, double value, Index j) {
    a.val() = value;
    for (int i = 0; i < a.size(); ++i) a.fastAccessDx(i) = i == j ? 1.0 : 0.0;
  }

  // out_y, out_theta from a nested evaluation f (outer components (y, θ), one inner component):
  // entry j is Σ_i w_i ∂/∂x_j [the inner derivative of f_i], i in order.
  template <class Outputs>
  static void take_second_derivatives(const Outputs& f, const Vector& w, Vector& out_y,
                                      Vector& out_theta) {
    auto weighted_second = [&](Index k) {
      double s = 0.0;
      for (Index i = 0; i < kStates; ++i)
        s +=
            w[i] * f[static_cast<std::size_t>(i)].fastAccessDx(static_cast<int>(k)).fastAccessDx(0);
      return s;
    };
    for (Index j = 0; j < kStates; ++j) out_y[j] = weighted_second(j);
    for (Index j = 0; j < kParameters; ++j) out_theta[j] = weighted_second(kStates + j);
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

namespace detail {

// The reference compare_with_reference_vjp takes: derived.derived_vjp at (t, y, θ) for a host
// cotangent, into host outputs.
template <class Model>
auto derived_vjp_at(const AutoProblem<Model>& derived, double t, const EigenBackend::Vector& y,
                    const EigenBackend::Vector& theta) {
  return [&derived, t, &y, &theta](const std::vector<double>& v, std::vector<double>& out_y,
                                   std::vector<double>& out_theta) {
    using Vector = EigenBackend::Vector;
    const Vector v_vector = Eigen::Map<const Vector>(v.data(), static_cast<Index>(v.size()));
    Vector derived_y(y.size()), derived_theta(theta.size());
    derived.derived_vjp(t, y, theta, v_vector, derived_y, derived_theta);
    std::copy(derived_y.begin(), derived_y.end(), out_y.begin());
    std::copy(derived_theta.begin(), derived_theta.end(), out_theta.begin());
  };
}

// Refuses a templated model whose rhs differs from the problem's at the point being checked.
template <Problem P, class Model>
void require_same_rhs(const P& problem, const AutoProblem<Model>& derived, double t,
                      const typename P::Backend::Vector& y,
                      const typename P::Backend::Vector& theta, const EigenBackend::Vector& y_host,
                      const EigenBackend::Vector& theta_host, double tolerance) {
  using B = typename P::Backend;
  const Index n = derived.state_size();
  typename B::Vector f = B::zeros(n);
  problem.rhs(t, y, theta, f);
  std::vector<double> hand(static_cast<std::size_t>(n));
  B::copy_to_host(f, hand);
  EigenBackend::Vector mine(n);
  derived.rhs(t, y_host, theta_host, mine);
  double scale = 0.0;
  for (Index i = 0; i < n; ++i)
    scale = std::max({scale, std::abs(hand[static_cast<std::size_t>(i)]), std::abs(mine[i])});
  for (Index i = 0; i < n; ++i) {
    const double a = hand[static_cast<std::size_t>(i)], b = mine[i];
    if (!(std::abs(a - b) <= tolerance * scale))
      fail<InvalidArgument>("check_derivatives: the templated model is not the problem's model: f_",
                            i, " = ", b, " against the problem's ", a, " at t = ", t,
                            " (beyond derived_tolerance ", tolerance, " relative)");
  }
}

}  // namespace detail

// check_derivatives of a templated model: its vjp against finite differences, as for every
// problem (rewind/derivative_checker.hpp), and, when the model has a vjp of its own, that vjp
// against the derived one, entry by entry at options.derived_tolerance
// (DerivativeCheckReport::against_derived; the report names a wrong entry ∂f_i/∂y_j or
// ∂f_i/∂θ_j with both values); when it has a jacobian of its own, that Jacobian against the
// derived one the same way (DerivativeCheckReport::jacobian_against_derived).
template <class Model>
DerivativeCheckReport check_derivatives(const AutoProblem<Model>& problem, double t,
                                        const EigenBackend::Vector& y,
                                        const EigenBackend::Vector& theta,
                                        DerivativeCheckOptions options = {}) {
  DerivativeCheckReport report =
      check_derivatives_by_finite_differences(problem, t, y, theta, std::move(options));
  if constexpr (AutoProblem<Model>::kHasHandWrittenVjp)
    detail::compare_with_reference_vjp(problem, detail::derived_vjp_at(problem, t, y, theta), t, y,
                                       theta, report);
  if constexpr (AutoProblem<Model>::kHasHandWrittenJacobian) {
    const Index n = problem.state_size();
    Eigen::MatrixXd hand, derived;
    // Pre-filled with NaN, so an entry the model's jacobian leaves unwritten fails.
    hand.setConstant(n, n, std::numeric_limits<double>::quiet_NaN());
    problem.jacobian(t, y, theta, hand);
    problem.derived_jacobian(t, y, theta, derived);
    detail::compare_with_derived_jacobian({hand.data(), hand.data() + hand.size()},
                                          {derived.data(), derived.data() + derived.size()}, n,
                                          report);
  }
  return report;
}

// check_derivatives of a problem with a hand-written vjp (a built-in problem, on any backend)
// against a templated model of the same right-hand side: problem.vjp against finite differences
// of problem.rhs, and against derived.derived_vjp entry by entry at options.derived_tolerance.
// The two must be the same model: different sizes, or right-hand sides that differ at (t, y, θ)
// by more than options.derived_tolerance relative, are refused with an rwd::InvalidArgument
// naming the first differing component.
template <Problem P, class Model>
DerivativeCheckReport check_derivatives(const P& problem, const AutoProblem<Model>& derived,
                                        double t, const typename P::Backend::Vector& y,
                                        const typename P::Backend::Vector& theta,
                                        DerivativeCheckOptions options = {}) {
  DerivativeCheckReport report =
      check_derivatives_by_finite_differences(problem, t, y, theta, std::move(options));
  using B = typename P::Backend;
  if (problem.state_size() != derived.state_size() ||
      problem.parameter_size() != derived.parameter_size())
    detail::fail<InvalidArgument>(
        "check_derivatives: the problem has ", problem.state_size(), " states and ",
        problem.parameter_size(), " parameters, the templated model ", derived.state_size(),
        " and ", derived.parameter_size(), "; they must be the same model");
  EigenBackend::Vector y_host(derived.state_size()), theta_host(derived.parameter_size());
  B::copy_to_host(y, std::span<double>(y_host.data(), static_cast<std::size_t>(y_host.size())));
  B::copy_to_host(
      theta, std::span<double>(theta_host.data(), static_cast<std::size_t>(theta_host.size())));
  detail::require_same_rhs(problem, derived, t, y, theta, y_host, theta_host,
                           report.options.derived_tolerance);
  detail::compare_with_reference_vjp(
      problem, detail::derived_vjp_at(derived, t, y_host, theta_host), t, y, theta, report);
  return report;
}

}  // namespace rwd
