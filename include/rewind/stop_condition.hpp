// rewind/stop_condition.hpp — a run that ends when something happens, not at a fixed time.
//
//   // A projectile lands: the run ends at the first step boundary where z <= 0, and the last
//   // step is shortened so that it ends exactly on z = 0 (an event inside the step).
//   auto lands = rwd::StopCondition<rwd::EigenBackend>::crossing(/*component=*/1, /*level=*/0.0,
//                                                               rwd::Crossing::downward,
//                                                               "the projectile lands");
//   rwd::CheckpointedAdjoint driver(stepper, objective, {}, lands);
//   auto result = driver.run(y0, theta, rwd::revolve_schedule(20));   // online(c = 20)
//
// `holds(t_n, y_n)` is tested at every step boundary n >= 1; the run ends at the first n where it
// is true (data-dependent control flow: the number of steps l depends on y_0 and θ). The
// stepper's own end (fixed steps, or t_final of an adaptive run) is the cap: a condition that
// has not held by then is an error naming the cap, never an endless run.
//
// Event location (optional): with `event` set, e(t, y) is a smooth scalar that changes sign in
// the last step. The last step is then re-taken from y_{l−1} with the step size h* for which
// e(t_{l−1} + h*, Φ_{h*}(y_{l−1})) = 0 (a bracketed Illinois root-find on h, to round-off), so
// the final state is the state at the event. Its gradient includes the event time's dependence
// on y_0 and θ by the implicit function theorem: with λ = ∂J/∂y_l,
//     s = −(λ·∂Φ/∂h) / (∂e/∂t + ∂e/∂y·∂Φ/∂h),   the last step is reversed with λ + s ∂e/∂y,
// which is dJ/dy_{l−1} = Φ_yᵀλ + (λ·Φ_h) dh*/dy_{l−1} with dh*/dy_{l−1} = −Φ_yᵀ e_y / (de/dh)
// (the same for θ). The objective's terminal cost is differentiated through y_l only; to
// differentiate the event time itself, carry t as a state component (ṫ = 1).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "rewind/backend/backend.hpp"
#include "rewind/error.hpp"
#include "rewind/types.hpp"

namespace rwd {

enum class Crossing { upward, downward };

template <VectorBackend B>
struct StopCondition {
  using Vector = typename B::Vector;

  std::string name = "stop condition";  // for messages: "the projectile lands"
  // True at the step boundary where the run ends (t_n, y_n with n >= 1).
  std::function<bool(double t, const Vector& y)> holds;
  // Event location (both or neither): e(t, y), and its gradient — ∂e/∂y into de_dy (sized like
  // y, overwritten), ∂e/∂t returned.
  std::function<double(double t, const Vector& y)> event;
  std::function<double(double t, const Vector& y, Vector& de_dy)> event_gradient;

  bool locates_event() const { return static_cast<bool>(event); }

  void validate() const {
    if (!holds) detail::fail<InvalidArgument>(name, ": the stop condition needs a `holds` test");
    if (static_cast<bool>(event) != static_cast<bool>(event_gradient))
      detail::fail<InvalidArgument>(name, ": event location needs both `event` and ",
                                    "`event_gradient`");
  }

  // Component i of y reaches `level`, going up or down: holds when y_i >= level (upward) or
  // y_i <= level (downward), with the event e = y_i − level located inside the last step.
  static StopCondition crossing(Index component, double level, Crossing direction,
                                std::string name = "") {
    if (component < 0)
      detail::fail<InvalidArgument>("stop condition on component ", component, " < 0");
    StopCondition c;
    c.name = name.empty()
                 ? "component " + std::to_string(component) + " reaches " + std::to_string(level)
                 : std::move(name);
    const bool up = direction == Crossing::upward;
    // One host buffer for every test of the run (the condition is tested after each step; the
    // buffer is allocated at the first and reused, so the step loop does not allocate).
    auto host = std::make_shared<std::vector<double>>();
    auto value = [component, host](const Vector& y) {
      if (component >= B::size(y))
        detail::fail<InvalidArgument>("stop condition on component ", component,
                                      " of a state with ", B::size(y), " components");
      host->resize(static_cast<std::size_t>(host_size<B>(y)));
      B::copy_to_host(y, *host);
      return (*host)[static_cast<std::size_t>(component)];
    };
    c.holds = [value, level, up](double, const Vector& y) {
      const double v = value(y);
      return up ? v >= level : v <= level;
    };
    c.event = [value, level](double, const Vector& y) { return value(y) - level; };
    c.event_gradient = [component](double, const Vector& y, Vector& de_dy) {
      std::vector<double> unit(static_cast<std::size_t>(B::size(y)), 0.0);
      unit[static_cast<std::size_t>(component)] = 1.0;
      B::copy_from_host(unit, de_dy);
      return 0.0;
    };
    return c;
  }
};

}  // namespace rwd
