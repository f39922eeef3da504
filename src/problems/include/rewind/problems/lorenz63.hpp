// rewind/problems/lorenz63.hpp — the Lorenz-63 system, the classic chaotic test problem.
//
//   x' = σ (y − x)
//   y' = x (ρ − z) − y
//   z' = x y − β z
//
// State (x, y, z), 3 unknowns. Parameters θ = (σ, ρ, β); the classic chaotic values are
// (10, 28, 8/3) (default_parameters()). The default initial state is (1, 1, 1). With these values
// trajectories settle on the butterfly attractor in about t = 1 and the largest Lyapunov exponent
// is ≈ 0.906: gradients over long horizons grow like e^{0.9 t}, which makes this the standard
// stress test for adjoint accuracy. RK4 with dt = 0.01 is accurate; dt ≲ 0.05 is stable.
//
//   rwd::Lorenz63<> lorenz;                                     // Eigen backend
//   auto theta = lorenz.default_parameters();                   // (10, 28, 8/3)
//   auto y = lorenz.default_initial_state();                    // (1, 1, 1)
//   auto f = rwd::EigenBackend::zeros(3);
//   lorenz.rhs(0.0, y, theta, f);                               // f = (0, 26, -5/3)
//
// Kernels are REWIND_HOST_DEVICE functors over raw pointers, so Lorenz63<rwd::ThrustBackend>
// runs entirely on the device (one one-thread launch per rhs or vjp).
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

struct Lorenz63RhsKernel {
  const double* y;
  const double* theta;
  double* f;

  REWIND_HOST_DEVICE void operator()(Index) const {
    const double sigma = theta[0], rho = theta[1], beta = theta[2];
    const double x0 = y[0], x1 = y[1], x2 = y[2];
    f[0] = sigma * (x1 - x0);
    f[1] = x0 * (rho - x2) - x1;
    f[2] = x0 * x1 - beta * x2;
  }
};

// Jacobian J = [[-σ, σ, 0], [ρ - z, -1, -x], [y, x, -β]];
// ∂f/∂θ columns: ∂f/∂σ = (y - x, 0, 0), ∂f/∂ρ = (0, x, 0), ∂f/∂β = (0, 0, -z).
struct Lorenz63VjpKernel {
  const double* y;
  const double* theta;
  const double* v;
  double* out_y;
  double* out_theta;

  REWIND_HOST_DEVICE void operator()(Index) const {
    const double sigma = theta[0], rho = theta[1], beta = theta[2];
    const double x0 = y[0], x1 = y[1], x2 = y[2];
    const double v0 = v[0], v1 = v[1], v2 = v[2];
    out_y[0] = -sigma * v0 + (rho - x2) * v1 + x1 * v2;
    out_y[1] = sigma * v0 - v1 + x0 * v2;
    out_y[2] = -x0 * v1 - beta * v2;
    out_theta[0] = (x1 - x0) * v0;
    out_theta[1] = x0 * v1;
    out_theta[2] = -x2 * v2;
  }
};

}  // namespace detail

template <class B = EigenBackend>
class Lorenz63 {
 public:
  using Backend = B;
  using Vector = typename B::Vector;
  static constexpr const char* name = "lorenz63";

  Lorenz63() = default;

  Index state_size() const { return 3; }
  Index parameter_size() const { return 3; }

  // θ = (σ, ρ, β); defaults are the classic chaotic values (10, 28, 8/3).
  static Vector default_parameters(double sigma = 10.0, double rho = 28.0,
                                   double beta = 8.0 / 3.0) {
    return detail::vector_from_host<B>({sigma, rho, beta});
  }
  static std::vector<std::string> parameter_names() { return {"sigma", "rho", "beta"}; }

  // (x, y, z) = (1, 1, 1) unless given.
  Vector default_initial_state(double x = 1.0, double y = 1.0, double z = 1.0) const {
    return detail::vector_from_host<B>({x, y, z});
  }

  void rhs(double /*t*/, const Vector& y, const Vector& theta, Vector& f) const {
    detail::require_rhs_sizes<B>(name, 3, 3, y, theta, f);
    B::for_each_index(1, detail::Lorenz63RhsKernel{B::data(y), B::data(theta), B::data(f)});
  }

  // out_y = (∂f/∂y)ᵀ v, out_theta = (∂f/∂θ)ᵀ v (both overwritten).
  void vjp(double /*t*/, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    detail::require_vjp_sizes<B>(name, 3, 3, y, theta, v, out_y, out_theta);
    B::for_each_index(1, detail::Lorenz63VjpKernel{B::data(y), B::data(theta), B::data(v),
                                                   B::data(out_y), B::data(out_theta)});
  }
};

// What the tools that run problems by name know about Lorenz63 (rewind/problems/problem_facts.hpp).
struct Lorenz63Declaration {
  static ProblemFacts facts() {
    return {.name = "lorenz63",
            .description = "Lorenz-63, chaotic; theta = (sigma, rho, beta) = (10, 28, 8/3)",
            .fixed_state_size = 3,
            .default_dt = 0.01,
            .default_steps = 200,
            .horizon =
                "dJ/dy0 grows like e^(0.9 t) and overflows double near t = 789 (78 900 "
                "steps): a NaN/Inf error",
            .parameters = {{"sigma", ParameterDomain::positive},
                           {"rho", ParameterDomain::positive},
                           {"beta", ParameterDomain::positive}},
            .fields = state_components({"x", "y", "z"})};
  }
  static Lorenz63<> make(Index /*fixed size*/) { return Lorenz63<>(); }
};

}  // namespace rwd
