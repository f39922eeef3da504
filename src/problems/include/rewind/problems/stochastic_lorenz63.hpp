// rewind/problems/stochastic_lorenz63.hpp — Lorenz-63 driven by multiplicative noise.
//
//   dx = σ (y − x) dt + s x dW_0
//   dy = (x (ρ − z) − y) dt + s y dW_1
//   dz = (x y − β z) dt + s z dW_2          θ = (σ, ρ, β, s)
//
// The drift is rwd::Lorenz63's (rewind/problems/lorenz63.hpp); the noise is diagonal and
// multiplicative, g_i = s·y_i. Multiplicative rather than additive because g_i then depends on
// y_i alone: the noise is commutative, so the derivative-free Milstein scheme of
// rwd::StochasticStepper reaches strong order 1, and its correction term (g(ŷ) − g(y)) is not
// zero — with additive noise Milstein collapses to Euler–Maruyama and its adjoint's extra
// branch would go untested. Defaults: θ = (10, 28, 8/3, 0.2), y_0 = (1, 1, 1).
//
//   rwd::StochasticLorenz63<> model;
//   rwd::StochasticStepper stepper(model, rwd::SdeScheme::milstein,
//                                  rwd::StepControl::fixed(0.0, 0.001, 1000), /*seed=*/7);
#pragma once

#include <string>
#include <vector>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/host_device.hpp"
#include "rewind/problems/detail/problem_support.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/problem_facts.hpp"
#include "rewind/types.hpp"

namespace rwd {
namespace detail {

// Lorenz-63's VJP for θ = (σ, ρ, β, s): the drift does not depend on s.
struct StochasticLorenz63VjpKernel {
  const double* y;
  const double* theta;
  const double* v;
  double* out_y;
  double* out_theta;
  REWIND_HOST_DEVICE void operator()(Index) const {
    Lorenz63VjpKernel{y, theta, v, out_y, out_theta}(0);
    out_theta[3] = 0.0;
  }
};

struct MultiplicativeNoiseKernel {
  const double* y;
  const double* theta;
  double* g;
  REWIND_HOST_DEVICE void operator()(Index) const {
    for (int i = 0; i < 3; ++i) g[i] = theta[3] * y[i];
  }
};

// (∂g/∂y)ᵀv = s v,  (∂g/∂θ)ᵀv = (0, 0, 0, Σ y_i v_i).
struct MultiplicativeNoiseVjpKernel {
  const double* y;
  const double* theta;
  const double* v;
  double* out_y;
  double* out_theta;
  REWIND_HOST_DEVICE void operator()(Index) const {
    double s = 0.0;
    for (int i = 0; i < 3; ++i) {
      out_y[i] = theta[3] * v[i];
      s += y[i] * v[i];
    }
    out_theta[0] = 0.0;
    out_theta[1] = 0.0;
    out_theta[2] = 0.0;
    out_theta[3] = s;
  }
};

}  // namespace detail

template <class B = EigenBackend>
class StochasticLorenz63 {
 public:
  using Backend = B;
  using Vector = typename B::Vector;
  static constexpr const char* name = "stochastic_lorenz63";

  Index state_size() const { return 3; }
  Index parameter_size() const { return 4; }
  Index noise_size() const { return 3; }

  // θ = (σ, ρ, β, s): Lorenz-63's classic values and the relative noise amplitude.
  static Vector default_parameters(double sigma = 10.0, double rho = 28.0, double beta = 8.0 / 3.0,
                                   double noise = 0.2) {
    return detail::vector_from_host<B>({sigma, rho, beta, noise});
  }
  static std::vector<std::string> parameter_names() { return {"sigma", "rho", "beta", "s"}; }

  Vector default_initial_state(double x = 1.0, double y = 1.0, double z = 1.0) const {
    return detail::vector_from_host<B>({x, y, z});
  }

  void rhs(double /*t*/, const Vector& y, const Vector& theta, Vector& f) const {
    detail::require_rhs_sizes<B>(name, 3, 4, y, theta, f);
    B::for_each_index(1, detail::Lorenz63RhsKernel{B::data(y), B::data(theta), B::data(f)});
  }

  void vjp(double /*t*/, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    detail::require_vjp_sizes<B>(name, 3, 4, y, theta, v, out_y, out_theta);
    B::for_each_index(1, detail::StochasticLorenz63VjpKernel{B::data(y), B::data(theta), B::data(v),
                                                             B::data(out_y), B::data(out_theta)});
  }

  void diffusion(double /*t*/, const Vector& y, const Vector& theta, Vector& g) const {
    detail::require_rhs_sizes<B>(name, 3, 4, y, theta, g);
    B::for_each_index(1, detail::MultiplicativeNoiseKernel{B::data(y), B::data(theta), B::data(g)});
  }

  void diffusion_vjp(double /*t*/, const Vector& y, const Vector& theta, const Vector& v,
                     Vector& out_y, Vector& out_theta) const {
    detail::require_vjp_sizes<B>(name, 3, 4, y, theta, v, out_y, out_theta);
    B::for_each_index(1,
                      detail::MultiplicativeNoiseVjpKernel{B::data(y), B::data(theta), B::data(v),
                                                           B::data(out_y), B::data(out_theta)});
  }
};

// What the tools that run problems by name know about StochasticLorenz63
// (rewind/problems/problem_facts.hpp).
struct StochasticLorenz63Declaration {
  static ProblemFacts facts() {
    return {.name = "stochastic_lorenz63",
            .description =
                "Lorenz-63 with multiplicative noise s*y_i dW_i; theta = (sigma, rho, "
                "beta, s) = (10, 28, 8/3, 0.2)",
            .fixed_state_size = 3,
            .default_dt = 0.005,
            .default_steps = 200,
            .noise = true,
            // s = 0 is the deterministic Lorenz-63.
            .parameters = {{"sigma", ParameterDomain::positive},
                           {"rho", ParameterDomain::positive},
                           {"beta", ParameterDomain::positive},
                           {"s", ParameterDomain::nonnegative}},
            .fields = state_components({"x", "y", "z"})};
  }
  static StochasticLorenz63<> make(Index /*fixed size*/) { return StochasticLorenz63<>(); }
};

}  // namespace rwd
