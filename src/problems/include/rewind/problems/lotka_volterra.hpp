// rewind/problems/lotka_volterra.hpp — the Lotka–Volterra predator–prey model.
//
//   x' = α x − β x y        (prey)
//   y' = δ x y − γ y        (predators)
//
// State (x, y), 2 unknowns. Parameters θ = (α, β, δ, γ); defaults (1.5, 1, 1, 3), the values used
// in the SciML/DiffEqFlux tutorials, with initial state (1, 1). Solutions are periodic (period
// ≈ 3.32 for the defaults, prey peaking near 6.9; δx − γ ln x + βy − α ln y is conserved), so
// the problem is the usual parameter-fitting benchmark: integrate to t = 10 with RK4, dt = 0.01.
//
//   rwd::LotkaVolterra<> lv;
//   auto theta = lv.default_parameters();          // (1.5, 1, 1, 3)
//   auto y = lv.default_initial_state();           // (1, 1)
//   auto f = rwd::EigenBackend::zeros(2);
//   lv.rhs(0.0, y, theta, f);                      // f = (0.5, -2)
#pragma once

#include <string>
#include <vector>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/host_device.hpp"
#include "rewind/problems/detail/problem_support.hpp"
#include "rewind/problems/problem_facts.hpp"
#include "rewind/types.hpp"

namespace rwd {
namespace detail {

struct LotkaVolterraRhsKernel {
  const double* y;
  const double* theta;
  double* f;

  REWIND_HOST_DEVICE void operator()(Index) const {
    const double alpha = theta[0], beta = theta[1], delta = theta[2], gamma = theta[3];
    const double x = y[0], p = y[1];
    f[0] = alpha * x - beta * x * p;
    f[1] = delta * x * p - gamma * p;
  }
};

// J = [[α − βy, −βx], [δy, δx − γ]];
// ∂f/∂θ columns: ∂f/∂α = (x, 0), ∂f/∂β = (−xy, 0), ∂f/∂δ = (0, xy), ∂f/∂γ = (0, −y).
struct LotkaVolterraVjpKernel {
  const double* y;
  const double* theta;
  const double* v;
  double* out_y;
  double* out_theta;

  REWIND_HOST_DEVICE void operator()(Index) const {
    const double alpha = theta[0], beta = theta[1], delta = theta[2], gamma = theta[3];
    const double x = y[0], p = y[1];
    const double v0 = v[0], v1 = v[1];
    out_y[0] = (alpha - beta * p) * v0 + delta * p * v1;
    out_y[1] = -beta * x * v0 + (delta * x - gamma) * v1;
    out_theta[0] = x * v0;
    out_theta[1] = -x * p * v0;
    out_theta[2] = x * p * v1;
    out_theta[3] = -p * v1;
  }
};

}  // namespace detail

template <class B = EigenBackend>
class LotkaVolterra {
 public:
  using Backend = B;
  using Vector = typename B::Vector;
  static constexpr const char* name = "lotka-volterra";

  LotkaVolterra() = default;

  Index state_size() const { return 2; }
  Index parameter_size() const { return 4; }

  // θ = (α, β, δ, γ); defaults (1.5, 1, 1, 3).
  static Vector default_parameters(double alpha = 1.5, double beta = 1.0, double delta = 1.0,
                                   double gamma = 3.0) {
    return detail::vector_from_host<B>({alpha, beta, delta, gamma});
  }
  static std::vector<std::string> parameter_names() { return {"alpha", "beta", "delta", "gamma"}; }

  // (prey, predators) = (1, 1) unless given.
  Vector default_initial_state(double prey = 1.0, double predators = 1.0) const {
    return detail::vector_from_host<B>({prey, predators});
  }

  void rhs(double /*t*/, const Vector& y, const Vector& theta, Vector& f) const {
    detail::require_rhs_sizes<B>(name, 2, 4, y, theta, f);
    B::for_each_index(1, detail::LotkaVolterraRhsKernel{B::data(y), B::data(theta), B::data(f)});
  }

  // out_y = (∂f/∂y)ᵀ v, out_theta = (∂f/∂θ)ᵀ v (both overwritten).
  void vjp(double /*t*/, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    detail::require_vjp_sizes<B>(name, 2, 4, y, theta, v, out_y, out_theta);
    B::for_each_index(1, detail::LotkaVolterraVjpKernel{B::data(y), B::data(theta), B::data(v),
                                                        B::data(out_y), B::data(out_theta)});
  }
};

// What the tools that run problems by name know about LotkaVolterra
// (rewind/problems/problem_facts.hpp).
struct LotkaVolterraDeclaration {
  static ProblemFacts facts() {
    return {.name = "lotka_volterra",
            .description = "Lotka-Volterra predator-prey; theta = (alpha, beta, delta, gamma)",
            .fixed_state_size = 2,
            .default_dt = 0.01,
            .default_steps = 200,
            .parameters = {{"alpha", ParameterDomain::positive},
                           {"beta", ParameterDomain::positive},
                           {"delta", ParameterDomain::positive},
                           {"gamma", ParameterDomain::positive}},
            .fields = state_components({"prey", "predator"})};
  }
  static LotkaVolterra<> make(Index /*fixed size*/) { return LotkaVolterra<>(); }
};

}  // namespace rwd
