// rewind/problems/van_der_pol.hpp — the Van der Pol oscillator.
//
//   x' = y
//   y' = μ (1 − x²) y − x
//
// State (x, y), 2 unknowns. Parameters θ = (μ); the default μ = 1 is non-stiff (limit cycle of
// period ≈ 6.66, amplitude ≈ 2), so explicit RK4 with dt = 0.01 is accurate. The problem becomes
// stiff as μ grows (μ = 1000 is the classic stiff test; use an implicit method there). The
// default initial state (2, 0) starts near the limit cycle.
//
//   rwd::VanDerPol<> vdp;
//   auto theta = vdp.default_parameters();      // (1)
//   auto y = vdp.default_initial_state();       // (2, 0)
//   auto f = rwd::EigenBackend::zeros(2);
//   vdp.rhs(0.0, y, theta, f);                  // f = (0, -2)
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

struct VanDerPolRhsKernel {
  const double* y;
  const double* theta;
  double* f;

  REWIND_HOST_DEVICE void operator()(Index) const {
    const double mu = theta[0];
    const double x = y[0], w = y[1];
    f[0] = w;
    f[1] = mu * (1.0 - x * x) * w - x;
  }
};

// J = [[0, 1], [−2μxy − 1, μ(1 − x²)]]; ∂f/∂μ = (0, (1 − x²) y).
struct VanDerPolVjpKernel {
  const double* y;
  const double* theta;
  const double* v;
  double* out_y;
  double* out_theta;

  REWIND_HOST_DEVICE void operator()(Index) const {
    const double mu = theta[0];
    const double x = y[0], w = y[1];
    const double v0 = v[0], v1 = v[1];
    out_y[0] = (-2.0 * mu * x * w - 1.0) * v1;
    out_y[1] = v0 + mu * (1.0 - x * x) * v1;
    out_theta[0] = (1.0 - x * x) * w * v1;
  }
};

}  // namespace detail

template <class B = EigenBackend>
class VanDerPol {
 public:
  using Backend = B;
  using Vector = typename B::Vector;
  static constexpr const char* name = "van-der-pol";

  VanDerPol() = default;

  Index state_size() const { return 2; }
  Index parameter_size() const { return 1; }

  // θ = (μ); default μ = 1 (non-stiff).
  static Vector default_parameters(double mu = 1.0) { return detail::vector_from_host<B>({mu}); }
  static std::vector<std::string> parameter_names() { return {"mu"}; }

  // (x, y) = (2, 0) unless given.
  Vector default_initial_state(double x = 2.0, double y = 0.0) const {
    return detail::vector_from_host<B>({x, y});
  }

  void rhs(double /*t*/, const Vector& y, const Vector& theta, Vector& f) const {
    detail::require_rhs_sizes<B>(name, 2, 1, y, theta, f);
    B::for_each_index(1, detail::VanDerPolRhsKernel{B::data(y), B::data(theta), B::data(f)});
  }

  // out_y = (∂f/∂y)ᵀ v, out_theta = (∂f/∂θ)ᵀ v (both overwritten).
  void vjp(double /*t*/, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    detail::require_vjp_sizes<B>(name, 2, 1, y, theta, v, out_y, out_theta);
    B::for_each_index(1, detail::VanDerPolVjpKernel{B::data(y), B::data(theta), B::data(v),
                                                    B::data(out_y), B::data(out_theta)});
  }
};

// What the tools that run problems by name know about VanDerPol
// (rewind/problems/problem_facts.hpp).
struct VanDerPolDeclaration {
  static ProblemFacts facts() {
    return {.name = "van_der_pol",
            .alias = "vanderpol",
            .description = "Van der Pol oscillator; theta = (mu) = (1)",
            .fixed_state_size = 2,
            .default_dt = 0.01,
            .default_steps = 200,
            // mu = 0 is the harmonic oscillator
            .parameters = {{"mu", ParameterDomain::nonnegative}},
            .fields = state_components({"x", "v"})};
  }
  static VanDerPol<> make(Index /*fixed size*/) { return VanDerPol<>(); }
};

}  // namespace rwd
