// projectile_range — a run that ends on an event, and its gradient through the event time.
//
// A projectile with quadratic drag flies until it lands (z = 0, located inside the last step).
// The number of steps depends on the launch, so the run's length is unknown: the checkpointed
// driver runs the online schedule with a few snapshots, without a counting sweep. The range
// J = x(t_land) is differentiated with respect to the launch angle, the speed, gravity and the
// drag coefficient; dt_land/dθ is part of it.
//
//   projectile_range                  # check against the closed form, then find the best angle
//   projectile_range --drag 0.004 --speed 60
//
// Checks (exit status 1 if one fails): without drag, the range and dR/dα against the closed form
// R = v² sin 2α / g; with drag, dR/dα and dR/dk against central differences of the whole run.
// Then a few secant steps on dR/dα = 0 find the angle of longest range, below 45° with drag.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <rewind/adjoint/checkpointed_adjoint.hpp>
#include <rewind/problems/projectile.hpp>
#include <rewind/rewind.hpp>

namespace {

using B = rwd::EigenBackend;

struct Launch {
  double speed = 50.0, angle = 0.6, g = 9.81, drag = 0.002, dt = 0.002;
};

struct Range {
  double range = 0, d_angle = 0, d_speed = 0, d_g = 0, d_drag = 0, t_land = 0;
  rwd::Index steps = 0, recomputed = 0;
  std::string schedule;
};

Range fly(const Launch& launch, int snapshots) {
  rwd::Projectile<> shot;
  // The step count is only a cap: the landing ends the run long before.
  rwd::ExplicitRungeKutta stepper(shot, rwd::ButcherTableau::rk4(),
                                  rwd::StepControl::fixed(0.0, launch.dt, 10'000'000));
  rwd::CheckpointedAdjoint driver(
      stepper, rwd::Objective<B>::terminal_linear(rwd::Projectile<>::range_weights()), {},
      rwd::Projectile<>::landing());
  const auto result = driver.run(rwd::Projectile<>::launch_state(launch.speed, launch.angle),
                                 rwd::Projectile<>::default_parameters(launch.g, launch.drag),
                                 rwd::revolve_schedule(snapshots));
  Range r;
  r.range = result.loss;
  const auto da = rwd::Projectile<>::launch_state_derivative_angle(launch.speed, launch.angle);
  const auto dv = rwd::Projectile<>::launch_state_derivative_speed(launch.speed, launch.angle);
  for (int i = 0; i < 4; ++i) {
    r.d_angle += result.grad_y0[i] * da[static_cast<std::size_t>(i)];
    r.d_speed += result.grad_y0[i] * dv[static_cast<std::size_t>(i)];
  }
  r.d_g = result.grad_theta[0];
  r.d_drag = result.grad_theta[1];
  r.t_land = result.summary.t_final;
  r.steps = result.summary.steps;
  r.recomputed = result.summary.recomputed_steps;
  r.schedule = result.summary.schedule;
  return r;
}

bool check(const char* what, double value, double reference, double tolerance) {
  const double error = std::abs(value - reference) / std::max(std::abs(reference), 1e-300);
  const bool ok = error <= tolerance;
  std::printf("  %-34s %+.12e  reference %+.12e  rel. error %.1e %s\n", what, value, reference,
              error, ok ? "ok" : "FAILED");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  Launch launch;
  int snapshots = 8;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const double value = std::atof(argv[i + 1]);
    if (flag == "--speed")
      launch.speed = value;
    else if (flag == "--angle")
      launch.angle = value;
    else if (flag == "--drag")
      launch.drag = value;
    else if (flag == "--dt")
      launch.dt = value;
    else if (flag == "--snapshots")
      snapshots = static_cast<int>(value);
    else {
      std::fprintf(stderr, "unknown option %s (--speed, --angle, --drag, --dt, --snapshots)\n",
                   flag.c_str());
      return 2;
    }
  }
  bool ok = true;

  Launch vacuum = launch;
  vacuum.drag = 0.0;
  const Range v = fly(vacuum, snapshots);
  const double R = vacuum.speed * vacuum.speed * std::sin(2 * vacuum.angle) / vacuum.g;
  std::printf("without drag: %lld steps (%s, %lld recomputed), lands at t = %.6f s\n",
              static_cast<long long>(v.steps), v.schedule.c_str(),
              static_cast<long long>(v.recomputed), v.t_land);
  ok &= check("range R [m]", v.range, R, 1e-11);
  ok &= check("dR/dangle [m/rad]", v.d_angle,
              2 * vacuum.speed * vacuum.speed * std::cos(2 * vacuum.angle) / vacuum.g, 1e-9);
  ok &= check("dR/dg [m/(m/s^2)]", v.d_g, -R / vacuum.g, 1e-9);

  const Range d = fly(launch, snapshots);
  std::printf("with drag k = %g 1/m: %lld steps, range %.6f m, lands at t = %.6f s\n", launch.drag,
              static_cast<long long>(d.steps), d.range, d.t_land);
  auto central = [&](double Launch::*field, double h) {
    Launch plus = launch, minus = launch;
    plus.*field += h;
    minus.*field -= h;
    return (fly(plus, snapshots).range - fly(minus, snapshots).range) / (2 * h);
  };
  ok &= check("dR/dangle vs central differences", d.d_angle, central(&Launch::angle, 1e-6), 1e-6);
  ok &= check("dR/dk vs central differences", d.d_drag, central(&Launch::drag, 1e-8), 1e-6);
  ok &= check("dR/dspeed vs central differences", d.d_speed, central(&Launch::speed, 1e-5), 1e-6);

  // The longest range: dR/dα = 0, by secant steps on the exact derivative.
  Launch a = launch, b = launch;
  a.angle = 0.6;
  b.angle = 0.7;
  double fa = fly(a, snapshots).d_angle, fb = fly(b, snapshots).d_angle;
  for (int iteration = 0; iteration < 30 && std::abs(fb) > 1e-9; ++iteration) {
    const double next = b.angle - fb * (b.angle - a.angle) / (fb - fa);
    a = b;
    fa = fb;
    b.angle = next;
    fb = fly(b, snapshots).d_angle;
  }
  const Range best = fly(b, snapshots);
  std::printf("longest range with drag: angle %.6f rad (%.3f deg), range %.6f m, dR/dangle %.1e\n",
              b.angle, b.angle * 180.0 / M_PI, best.range, best.d_angle);
  if (launch.drag > 0.0 && !(b.angle < M_PI / 4)) {
    std::printf("  FAILED: with drag the best angle should be below 45 degrees\n");
    ok = false;
  }
  return ok ? 0 : 1;
}
