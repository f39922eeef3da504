// rewind/problems/projectile.hpp — a projectile with quadratic air drag, flying until it lands.
//
//   x' = u,   z' = w,   u' = −k |v| u,   w' = −g − k |v| w,     |v| = √(u² + w²)
//
// State (x, z, u, w): position and velocity, 4 unknowns. Parameters θ = (g, k): gravity and the
// drag coefficient (k = ρ C_d A / 2m, in 1/m). The launch enters through the initial state,
// y_0 = (0, 0, v₀ cos α, v₀ sin α) (launch_state), so derivatives with respect to the launch
// speed and angle follow from dJ/dy_0 by the chain rule (launch_state_derivative).
//
// The run ends when the projectile lands — a stop condition z ≤ 0 with the event z = 0 located
// inside the last step (landing()) — and the range is J = x at the landing. Without drag the
// trajectory is a parabola that RK4 integrates exactly and the range has the closed form
// R = v₀² sin 2α / g (dR/dα = 2 v₀² cos 2α / g, dR/dg = −R/g): the check of an event-stopped
// gradient. With drag the range has no closed form; finite differences of the whole run check it.
//
//   rwd::Projectile<> shot;
//   auto y0 = shot.launch_state(/*speed=*/50.0, /*angle=*/0.6);
//   auto theta = shot.default_parameters();     // (g, k) = (9.81, 0.002)
//   rwd::StoreAllAdjoint driver(stepper, rwd::Objective<rwd::EigenBackend>::terminal_linear(
//                                  rwd::Projectile<>::range_weights()), {}, shot.landing());
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/host_device.hpp"
#include "rewind/problems/detail/problem_support.hpp"
#include "rewind/stop_condition.hpp"
#include "rewind/types.hpp"

namespace rwd {
namespace detail {

struct ProjectileRhsKernel {
  const double* y;
  const double* theta;
  double* f;

  REWIND_HOST_DEVICE void operator()(Index) const {
    const double g = theta[0], k = theta[1];
    const double u = y[2], w = y[3];
    const double speed = sqrt(u * u + w * w);
    f[0] = u;
    f[1] = w;
    f[2] = -k * speed * u;
    f[3] = -g - k * speed * w;
  }
};

// With s = |v|: ∂(s u)/∂u = s + u²/s, ∂(s u)/∂w = u w / s (and symmetrically), all 0 at s = 0
// where s·u is differentiable with zero derivative. ∂f/∂g = (0, 0, 0, −1),
// ∂f/∂k = (0, 0, −s u, −s w).
struct ProjectileVjpKernel {
  const double* y;
  const double* theta;
  const double* v;
  double* out_y;
  double* out_theta;

  REWIND_HOST_DEVICE void operator()(Index) const {
    const double k = theta[1];
    const double u = y[2], w = y[3];
    const double s = sqrt(u * u + w * w);
    const double uu = s > 0.0 ? s + u * u / s : 0.0;
    const double ww = s > 0.0 ? s + w * w / s : 0.0;
    const double uw = s > 0.0 ? u * w / s : 0.0;
    out_y[0] = 0.0;
    out_y[1] = 0.0;
    out_y[2] = v[0] - k * (uu * v[2] + uw * v[3]);
    out_y[3] = v[1] - k * (uw * v[2] + ww * v[3]);
    out_theta[0] = -v[3];
    out_theta[1] = -s * (u * v[2] + w * v[3]);
  }
};

}  // namespace detail

template <class B = EigenBackend>
class Projectile {
 public:
  using Backend = B;
  using Vector = typename B::Vector;
  static constexpr const char* name = "projectile";
  // f does not depend on t: the event step's size can be differentiated
  // (rewind/stop_condition.hpp).
  static constexpr bool autonomous = true;

  Index state_size() const { return 4; }
  Index parameter_size() const { return 2; }

  // θ = (g, k); defaults: g = 9.81 m/s², k = 0.002 1/m (a ball of a few hundred grams).
  static Vector default_parameters(double g = 9.81, double k = 0.002) {
    return detail::vector_from_host<B>({g, k});
  }
  static std::vector<std::string> parameter_names() { return {"g", "k"}; }

  // y_0 = (0, 0, v₀ cos α, v₀ sin α).
  static Vector launch_state(double speed, double angle) {
    return detail::vector_from_host<B>(
        {0.0, 0.0, speed * std::cos(angle), speed * std::sin(angle)});
  }
  // A launch at 50 m/s and 0.6 rad (34°).
  Vector default_initial_state() const { return launch_state(50.0, 0.6); }
  // ∂y_0/∂v₀ and ∂y_0/∂α, for dJ/dv₀ = dJ/dy_0 · ∂y_0/∂v₀ and the same for α.
  static std::vector<double> launch_state_derivative_speed(double /*speed*/, double angle) {
    return {0.0, 0.0, std::cos(angle), std::sin(angle)};
  }
  static std::vector<double> launch_state_derivative_angle(double speed, double angle) {
    return {0.0, 0.0, -speed * std::sin(angle), speed * std::cos(angle)};
  }
  // The weights of J = x (the range) for Objective::terminal_linear.
  static Vector range_weights() { return detail::vector_from_host<B>({1.0, 0.0, 0.0, 0.0}); }

  // The run ends when z ≤ 0 after the launch, the landing located at z = 0 inside the last step.
  static StopCondition<B> landing() {
    return StopCondition<B>::crossing(1, 0.0, Crossing::downward, "the projectile lands");
  }

  void rhs(double /*t*/, const Vector& y, const Vector& theta, Vector& f) const {
    detail::require_rhs_sizes<B>(name, 4, 2, y, theta, f);
    B::for_each_index(1, detail::ProjectileRhsKernel{B::data(y), B::data(theta), B::data(f)});
  }

  // out_y = (∂f/∂y)ᵀ v, out_theta = (∂f/∂θ)ᵀ v (both overwritten).
  void vjp(double /*t*/, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    detail::require_vjp_sizes<B>(name, 4, 2, y, theta, v, out_y, out_theta);
    B::for_each_index(1, detail::ProjectileVjpKernel{B::data(y), B::data(theta), B::data(v),
                                                     B::data(out_y), B::data(out_theta)});
  }
};

}  // namespace rwd
