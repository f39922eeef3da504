// rewind/integrators/stepper_factory.hpp — an integration method as one value, and the one
// factory that turns it into a stepper for a problem.
//
//   rwd::Method method = rwd::method_by_name("dopri5");     // or "bdf", "milstein", …
//   rwd::with_stepper(problem, method, rwd::StepControl::fixed(0.0, 0.01, 200),
//                     [&](auto& stepper) { /* a driver runs it */ });
//   std::string name = rwd::method_name(method);            // "dopri5"
//
// A method is one of: an explicit Runge–Kutta tableau (rwd::ExplicitRungeKutta, fixed or adaptive
// steps as the StepControl says), a stochastic scheme with the key of its draws
// (rwd::StochasticStepper, for an rwd::SdeProblem), or CVODES's BDF on macro-intervals
// (rwd::CvodesIntervalStepper: a step is one interval of the control's fixed steps), or a
// diagonally implicit Runge–Kutta method with its Newton settings
// (rwd::DiagonallyImplicitRungeKutta: exact discrete adjoints for stiff problems, fixed or
// adaptive steps, on the Eigen backend), or a Rosenbrock method (rwd::RosenbrockStepper: no
// Newton iteration, exact discrete adjoints through second derivatives of f, for autonomous
// problems with jvp_vjp on the Eigen backend). with_stepper refuses a method the problem or the
// control cannot take (a stochastic scheme for a problem without noise, BDF with adaptive steps, an
// implicit or Rosenbrock method off the Eigen backend, a Rosenbrock method for a problem without
// jvp_vjp or declared autonomy) with an InvalidArgument before any step.
//
// Needs SUNDIALS (the BDF stepper): an opt-in header, like cvodes_interval_stepper.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/butcher_tableau.hpp"
#include "rewind/integrators/cvodes_interval_stepper.hpp"
#include "rewind/integrators/diagonally_implicit_runge_kutta.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/integrators/implicit_tableau.hpp"
#include "rewind/integrators/rosenbrock.hpp"
#include "rewind/integrators/rosenbrock_tableau.hpp"
#include "rewind/integrators/sde_problem.hpp"
#include "rewind/integrators/step_control.hpp"
#include "rewind/integrators/stochastic_stepper.hpp"

namespace rwd {

// An explicit Runge–Kutta method: its (validated) tableau.
struct ExplicitRungeKuttaMethod {
  ButcherTableau tableau;
};

// A stochastic scheme for an SDE, its draws keyed by noise_seed (with step, stage and component),
// so that replays regenerate them.
struct StochasticMethod {
  SdeScheme scheme = SdeScheme::euler_maruyama;
  std::uint64_t noise_seed = 1;
};

// CVODES's BDF on macro-intervals. `options` holds the tolerances and the rest; its
// linear_solver is replaced by `linear_solver` when that is set, and otherwise by the choice of
// bdf_linear_solver for the problem and backend.
struct BdfMethod {
  CvodesOptions options;
  std::optional<CvodesLinearSolver> linear_solver;
};

// A diagonally implicit Runge–Kutta method: its (validated) tableau and Newton settings.
struct ImplicitRungeKuttaMethod {
  ImplicitTableau tableau;
  NewtonOptions newton;
};

// A Rosenbrock method: its (validated) tableau, and how its stage matrices are factored.
struct RosenbrockMethod {
  RosenbrockTableau tableau;
  ImplicitLinearSolver linear_solver = ImplicitLinearSolver::automatic;
  int max_substeps =
      detail::kDefaultMaxSubsteps;  // a fixed step whose I − hγJ is singular: its most substeps
};

using Method = std::variant<ExplicitRungeKuttaMethod, StochasticMethod, BdfMethod,
                            ImplicitRungeKuttaMethod, RosenbrockMethod>;

// "rk4", "dopri5", "esdirk43", …: the tableau's name; "euler_maruyama" or "milstein"; "bdf".
inline std::string method_name(const Method& method) {
  if (const auto* rk = std::get_if<ExplicitRungeKuttaMethod>(&method)) return rk->tableau.name;
  if (const auto* irk = std::get_if<ImplicitRungeKuttaMethod>(&method)) return irk->tableau.name;
  if (const auto* ros = std::get_if<RosenbrockMethod>(&method)) return ros->tableau.name;
  if (const auto* sde = std::get_if<StochasticMethod>(&method)) return scheme_name(sde->scheme);
  return "bdf";
}

// The method called `name`, with default settings: "bdf", "euler_maruyama", "milstein", an
// implicit tableau's name (ImplicitTableau::names()), a Rosenbrock tableau's
// (RosenbrockTableau::names()) or an explicit one's (ButcherTableau::by_name); an unknown name is
// refused listing every family.
inline Method method_by_name(std::string_view name) {
  if (name == "bdf") return BdfMethod{};
  if (name == "euler_maruyama") return StochasticMethod{SdeScheme::euler_maruyama};
  if (name == "milstein") return StochasticMethod{SdeScheme::milstein};
  if (ImplicitTableau::known(name))
    return ImplicitRungeKuttaMethod{ImplicitTableau::by_name(name), {}};
  if (RosenbrockTableau::known(name)) return RosenbrockMethod{RosenbrockTableau::by_name(name)};
  try {
    return ExplicitRungeKuttaMethod{ButcherTableau::by_name(name)};
  } catch (const InvalidArgument&) {
    detail::fail<InvalidArgument>(
        "unknown method '", name,
        "'; known: euler, heun, rk4, rk38, bs3, dopri5, tsit5 (explicit), backward_euler, "
        "trapezoid, sdirk2, esdirk32, esdirk43 (implicit), ros3p, ros34pw2, rodas4 "
        "(Rosenbrock), bdf, euler_maruyama, milstein");
  }
}

// Whether the CVODES stepper can run on backend B (it has an N_Vector there).
template <class B>
inline constexpr bool kCvodesRunsOn = requires {
  CvodesVectorTraits<B>::matrix_solvers;
};

// The linear solver BDF uses for problem P: the one the method names; otherwise, off the Eigen
// backend, the matrix-free GMRES (across ranks the only one that distributes), and on it band LU
// for a semi-discretised PDE that states its band_width() (instead of a dense n × n one), else
// the options' (dense by default). A model that declares its band Jacobian — rwd::auto_problem's
// jacobian_band, or a plugin's known at run time (rwd::PluginModel::declares_band()) — gets the
// band solver when the method names it: CVODES then takes the model's band and band_jacobian().
template <class P>
CvodesLinearSolver bdf_linear_solver(const BdfMethod& method) {
  if (method.linear_solver) return *method.linear_solver;
  if constexpr (!std::is_same_v<typename P::Backend, EigenBackend>)
    return CvodesLinearSolver::gmres;
  else if constexpr (detail::HasBandWidth<P>)
    return CvodesLinearSolver::band;
  else
    return method.options.linear_solver;
}

// BDF's macro-intervals: each fixed step of `control` is one interval. Refuses adaptive or
// prescribed steps: BDF chooses its own steps inside each interval.
inline IntervalGrid bdf_interval_grid(const StepControl& control) {
  if (control.mode != StepControl::Mode::fixed)
    detail::fail<InvalidArgument>(
        "BDF takes macro-intervals of fixed length (StepControl::fixed); it chooses its own "
        "steps inside each");
  return IntervalGrid{control.t0, control.t0 + static_cast<double>(control.steps) * control.dt,
                      control.steps};
}

// A backend besides Eigen's whose vectors the implicit Runge–Kutta engine runs on: its CVODES
// vector traits say matrix_free_implicit (the distributed backend's, in
// rewind/distributed/distributed_cvodes.hpp, which a program splitting its state includes).
template <class B>
concept MatrixFreeImplicitBackend = requires {
  requires static_cast<bool>(CvodesVectorTraits<B>::matrix_free_implicit);
};

// Builds the stepper `method` names for `problem` with `control`, and returns f(stepper); the
// stepper lives for the duration of the call. Refuses (InvalidArgument), before any step: BDF on a
// backend without a CVODES N_Vector or with steps that are not fixed, a stochastic scheme for a
// problem without noise.
template <class P, class F>
decltype(auto) with_stepper(const P& problem, const Method& method, const StepControl& control,
                            F&& f) {
  using B = typename P::Backend;
  if (const auto* bdf = std::get_if<BdfMethod>(&method)) {
    if constexpr (!kCvodesRunsOn<B>) {
      detail::fail<InvalidArgument>("BDF does not run on backend ", B::name,
                                    " (it has no CVODES N_Vector)");
    } else {
      CvodesOptions options = bdf->options;
      options.linear_solver = bdf_linear_solver<P>(*bdf);
      CvodesIntervalStepper stepper(problem, options, bdf_interval_grid(control));
      return std::forward<F>(f)(stepper);
    }
  }
  if (const auto* irk = std::get_if<ImplicitRungeKuttaMethod>(&method)) {
    if constexpr (ImplicitEngineProblem<P>) {
      DiagonallyImplicitRungeKutta stepper(problem, irk->tableau, control, irk->newton);
      return std::forward<F>(f)(stepper);
    } else if constexpr (MatrixFreeImplicitBackend<B>) {
      // A split state or device vectors: matrix-free GMRES (the engine refuses the other
      // solvers), on the jvp.
      if constexpr (DiagonallyImplicitProblem<P>) {
        DiagonallyImplicitRungeKutta stepper(problem, irk->tableau, control, irk->newton);
        return std::forward<F>(f)(stepper);
      } else {
        detail::fail<InvalidArgument>(
            "the implicit method ", irk->tableau.name, " on backend ", B::name,
            " solves its stages by matrix-free GMRES, which needs the problem's Jacobian-vector "
            "product jvp(t, y, theta, v, out), and this problem has none there (the stencil "
            "models and brusselator have one across ranks, brusselator on a device)");
      }
    } else {
      detail::fail<InvalidArgument>("the implicit method ", irk->tableau.name,
                                    " runs on the CPU backend (Eigen), on a state split across MPI "
                                    "ranks and on device vectors (Thrust), not on ",
                                    B::name);
    }
  }
  if (const auto* ros = std::get_if<RosenbrockMethod>(&method)) {
    if constexpr (ImplicitEngineProblem<P>) {
      // refuses an unfit problem
      RosenbrockStepper stepper(problem, ros->tableau, control, ros->linear_solver,
                                ros->max_substeps);
      return std::forward<F>(f)(stepper);
    } else {
      detail::fail<InvalidArgument>("the Rosenbrock method ", ros->tableau.name,
                                    " runs on the CPU backend (Eigen), not on ", B::name);
    }
  }
  if (const auto* sde = std::get_if<StochasticMethod>(&method)) {
    if constexpr (SdeProblem<P>) {
      StochasticStepper stepper(problem, sde->scheme, control, sde->noise_seed);
      return std::forward<F>(f)(stepper);
    } else {
      detail::fail<InvalidArgument>("the stochastic scheme ", scheme_name(sde->scheme),
                                    " needs a problem with noise (an rwd::SdeProblem)");
    }
  }
  ExplicitRungeKutta stepper(problem, std::get<ExplicitRungeKuttaMethod>(method).tableau, control);
  return std::forward<F>(f)(stepper);
}

}  // namespace rwd
