// Stop times with the implicit engines' adaptive steps (diagonally implicit Runge–Kutta and
// Rosenbrock), on Robertson's stiff kinetics observed at log-spaced times that see its transient:
// every run lands exactly on each stop time (the carry's t is the stop time's bits), a landed step
// re-run from its (state, carry) gives its bits again, and a misfit observed at those times has
// the exact discrete adjoint of the accepted steps — bitwise the same from store-all, revolve,
// the counted uniform schedule, kept stages and stage-aware plans, bitwise the gradient of the
// prescribed run with those steps observed by index, and in agreement with finite differences of
// that run. Bad stop times are refused by the engines' constructors, an observation time that is
// not a stop time by the drivers, before any work.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/forward_loss.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/diagonally_implicit_runge_kutta.hpp"
#include "rewind/integrators/rosenbrock.hpp"
#include "rewind/problems/robertson.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/error_message.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using V = Eigen::VectorXd;

#define EXPECT_THROW_MESSAGE(statement, Error, part) \
  testing::expect_message(testing::error_message<Error>([&] { statement; }), part)

bool same_bits(const V& a, const V& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(double)) == 0;
}

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof(double)) == 0;
}

bool same_carry(const Carry& a, const Carry& b) {
  return same_bits(a.t, b.t) && same_bits(a.h, b.h) && same_bits(a.error_prev, b.error_prev) &&
         a.step == b.step && a.rejected == b.rejected;
}

// Log-spaced stop times over Robertson's fast transient (y2 peaks near t = 10⁻³) and its slow
// decay; none is a binary fraction. The run ends at t_final = 40, after the last of them.
const std::vector<double> kStops = {1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1,
                                    0.3,  1.0,  3.0,  7.0,  10.0, 30.0};
constexpr double kFinal = 40.0;

// The observed times: every stop time and t_final (which every adaptive run lands on as well).
std::vector<double> observed_times() {
  std::vector<double> times = kStops;
  times.push_back(kFinal);
  return times;
}

StepControl adaptive_with_stops(std::vector<double> stops = kStops) {
  StepControl c = StepControl::adaptive(0.0, kFinal, 1e-6, 1e-10);
  c.stop_times = std::move(stops);
  return c;
}

NewtonOptions tight_newton() {
  NewtonOptions newton;
  newton.rtol = 1e-13;
  newton.atol = 1e-16;
  return newton;
}

// Σ_k ½|W (y(t_k) − d_k)|², W = diag(1, 10⁴, 1) so that y2 (≲ 4·10⁻⁵) counts, d_k a made-up
// target per time.
Objective<B> misfit_at(const std::vector<double>& times) {
  auto fn = [times](Index, double t, const V& y, V& grad) {
    const auto k =
        static_cast<double>(std::lower_bound(times.begin(), times.end(), t) - times.begin());
    V target(3), weight(3);
    target << 0.9 - 0.01 * k, 2e-5, 0.1 + 0.01 * k;
    weight << 1.0, 1e4, 1.0;
    const V r = weight.cwiseProduct(y - target);
    grad = weight.cwiseProduct(r);
    return 0.5 * r.squaredNorm();
  };
  return Objective<B>::at_times(Objective<B>::TerminalFn{}, times, fn);
}

// An engine and method under test: makes a stepper for Robertson with the given step control.
template <class Stepper>
struct Engine {
  std::string name;
  std::function<Stepper(const Robertson&, StepControl)> make;
};

using Dirk = DiagonallyImplicitRungeKutta<Robertson>;
using Rosenbrock = RosenbrockStepper<Robertson>;

Engine<Dirk> dirk(const std::string& method) {
  return {method, [method](const Robertson& p, StepControl c) {
            return Dirk(p, ImplicitTableau::by_name(method), std::move(c), tight_newton());
          }};
}

Engine<Rosenbrock> rosenbrock(const std::string& method) {
  return {method, [method](const Robertson& p, StepControl c) {
            return Rosenbrock(p, RosenbrockTableau::by_name(method), std::move(c));
          }};
}

std::vector<Engine<Dirk>> every_dirk() {
  return {dirk("trapezoid"), dirk("sdirk2"), dirk("esdirk32"), dirk("esdirk43")};
}

std::vector<Engine<Rosenbrock>> every_rosenbrock() {
  std::vector<Engine<Rosenbrock>> out;
  for (const std::string& method : RosenbrockTableau::names()) out.push_back(rosenbrock(method));
  return out;
}

// A run's states, carries and accepted step sizes.
struct Path {
  std::vector<V> states;       // y_n, n = 0..l
  std::vector<Carry> carries;  // carry_n
  std::vector<double> sizes;   // h_n of every accepted step
  std::vector<double> times() const {
    std::vector<double> t;
    for (const Carry& c : carries) t.push_back(c.t);
    return t;
  }
};

template <class Stepper>
Path walk(Stepper& stepper, const V& y0, const V& theta) {
  Path out;
  V y = y0;
  Carry carry = stepper.initial_carry(y, theta);
  out.states.push_back(y);
  out.carries.push_back(carry);
  while (!stepper.finished(carry)) {
    stepper.step(y, carry, theta);
    out.states.push_back(y);
    out.carries.push_back(carry);
    out.sizes.push_back(stepper.last_step_size());
  }
  return out;
}

template <class Stepper>
void expect_landing_on_every_stop_time(const Engine<Stepper>& engine) {
  SCOPED_TRACE(engine.name);
  const Robertson problem;
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  auto stepper = engine.make(problem, adaptive_with_stops());
  const std::vector<double> times = walk(stepper, y0, theta).times();
  for (double s : kStops) {
    const auto at = std::find(times.begin(), times.end(), s);
    ASSERT_TRUE(at != times.end()) << "no state at stop time " << s;
    EXPECT_TRUE(same_bits(*at, s));
  }
  EXPECT_TRUE(same_bits(times.back(), kFinal));
  EXPECT_TRUE(std::is_sorted(times.begin(), times.end()));
  EXPECT_TRUE(std::adjacent_find(times.begin(), times.end()) == times.end());
  for (double t : observed_times()) EXPECT_TRUE(stepper.lands_on(t)) << t;
  EXPECT_TRUE(stepper.lands_on(0.0));
  EXPECT_FALSE(stepper.lands_on(0.5));
  EXPECT_FALSE(stepper.lands_on(std::nextafter(1.0, 2.0)));
  // Thirteen stop times over 5.6 decades: a step near one stretches to it, and the step after a
  // landing retries the size the landing cut, so they cost few steps beyond the landings.
  auto free_stepper = engine.make(problem, StepControl::adaptive(0.0, kFinal, 1e-6, 1e-10));
  const auto free_steps = static_cast<Index>(walk(free_stepper, y0, theta).sizes.size());
  const auto steps = static_cast<Index>(times.size()) - 1;
  // Measured: 3 fewer to 7 more than without them, over 73 (esdirk43) to 3374 (trapezoid) — a
  // landing can leave the controller on a size that suits the next stretch better.
  EXPECT_LE(steps, free_steps + static_cast<Index>(kStops.size()))
      << free_steps << " steps without stop times";
  EXPECT_GE(steps, free_steps - 5) << free_steps << " steps without stop times";
}

TEST(ImplicitStopTimes, AdaptiveStepsLandExactlyOnEveryStopTime) {
  for (const auto& engine : every_dirk()) expect_landing_on_every_stop_time(engine);
  for (const auto& engine : every_rosenbrock()) expect_landing_on_every_stop_time(engine);
}

// Stop times on an even grid over the slow decay, where the free steps are long: almost every
// step is cut to the next stop time. The step after a landing retries the size the landing cut
// (not the controller's proposal from the short step's small error alone).
template <class Stepper>
void expect_dense_stop_times_cost_few_extra_steps(const Engine<Stepper>& engine) {
  SCOPED_TRACE(engine.name);
  const Robertson problem;
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  auto free_stepper = engine.make(problem, StepControl::adaptive(0.0, kFinal, 1e-6, 1e-10));
  const auto free_steps = static_cast<Index>(walk(free_stepper, y0, theta).sizes.size());
  for (int stops : {10, 40, 200}) {
    StepControl c = StepControl::adaptive(0.0, kFinal, 1e-6, 1e-10);
    for (int k = 1; k < stops; ++k) c.stop_times.push_back(kFinal * k / stops);
    auto stepper = engine.make(problem, c);
    const auto steps = static_cast<Index>(walk(stepper, y0, theta).sizes.size());
    SCOPED_TRACE(std::to_string(stops) + " stop times, " + std::to_string(free_steps) +
                 " steps without, " + std::to_string(steps) + " with");
    // At most one extra step per stop time (measured with 200: 117 → 266 steps for rodas4, and
    // 336 when the step after a landing takes only the controller's proposal).
    EXPECT_LE(steps, free_steps + stops);
    EXPECT_GE(steps, std::max<Index>(free_steps - 2, stops));
  }
}

TEST(ImplicitStopTimes, DenseStopTimesCostFewExtraSteps) {
  for (const char* method : {"esdirk32", "esdirk43"})
    expect_dense_stop_times_cost_few_extra_steps(dirk(method));
  for (const char* method : {"ros34pw2", "rodas4"})
    expect_dense_stop_times_cost_few_extra_steps(rosenbrock(method));
}

// Every step of the run — those a stop time cut or stretched among them — re-run from its
// (y_n, carry_n) by the same stepper after the run, as a replay from a snapshot does: the same
// y_{n+1} and carry_{n+1}, bit for bit; and its adjoint from kept stages (whose last vector holds
// the accepted, landed size) is adjoint_step's.
template <class Stepper>
void expect_landed_steps_replay_bitwise(const Engine<Stepper>& engine) {
  SCOPED_TRACE(engine.name);
  const Robertson problem;
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  auto stepper = engine.make(problem, adaptive_with_stops());
  const Path path = walk(stepper, y0, theta);
  int landed = 0;
  for (std::size_t n = 0; n + 1 < path.states.size(); ++n) {
    const bool on_stop = std::binary_search(kStops.begin(), kStops.end(), path.carries[n + 1].t);
    V y = path.states[n];
    Carry carry = path.carries[n];
    std::vector<V> stages(static_cast<std::size_t>(stepper.stage_count()), V::Zero(3));
    stepper.step_keeping_stages(y, carry, theta, stages);
    ASSERT_TRUE(same_bits(y, path.states[n + 1])) << "step " << n;
    ASSERT_TRUE(same_carry(carry, path.carries[n + 1])) << "step " << n;
    if (!on_stop) continue;
    ++landed;
    // The step took the distance to the stop time, which its kept vectors hold.
    EXPECT_TRUE(same_bits(path.sizes[n], path.carries[n + 1].t - path.carries[n].t));
    EXPECT_TRUE(same_bits(stages.back()[0], path.sizes[n]));
    V lambda_kept = V::Constant(3, 1.0), mu_kept = V::Zero(3);
    V lambda_rerun = lambda_kept, mu_rerun = mu_kept;
    stepper.adjoint_step_from_stages(std::span<const V>(stages), path.carries[n], theta,
                                     lambda_kept, mu_kept);
    stepper.adjoint_step(path.states[n], path.carries[n], theta, lambda_rerun, mu_rerun);
    EXPECT_TRUE(same_bits(lambda_kept, lambda_rerun)) << "step " << n;
    EXPECT_TRUE(same_bits(mu_kept, mu_rerun)) << "step " << n;
  }
  EXPECT_EQ(landed, static_cast<int>(kStops.size()));
}

TEST(ImplicitStopTimes, ALandedStepReRunFromItsStateAndCarryGivesItsBits) {
  for (const char* method : {"sdirk2", "esdirk43"})
    expect_landed_steps_replay_bitwise(dirk(method));
  for (const char* method : {"ros3p", "rodas4"})
    expect_landed_steps_replay_bitwise(rosenbrock(method));
}

template <class Stepper>
void expect_every_schedule_gives_the_store_all_bits(const Engine<Stepper>& engine) {
  SCOPED_TRACE(engine.name);
  const Robertson problem;
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  auto stepper = engine.make(problem, adaptive_with_stops());
  const auto objective = misfit_at(observed_times());
  StoreAllAdjoint reference_driver(stepper, objective);
  const auto expected = reference_driver.run(y0, theta);
  ASSERT_GT(expected.summary.steps, static_cast<Index>(kStops.size()) + 5);
  EXPECT_GT(expected.loss, 0.0);
  EXPECT_GT(expected.grad_theta.norm(), 0.0);
  const auto expect_same = [&](const auto& r) {
    EXPECT_TRUE(same_bits(r.loss, expected.loss));
    EXPECT_TRUE(same_bits(r.grad_y0, expected.grad_y0));
    EXPECT_TRUE(same_bits(r.grad_theta, expected.grad_theta));
    EXPECT_TRUE(same_bits(r.y_final, expected.y_final));
  };
  for (int c : {1, 2, 3, 7, 1000}) {
    SCOPED_TRACE("online revolve c = " + std::to_string(c));
    CheckpointOptions options;
    options.drift_policy = DriftPolicy::fail;
    CheckpointedAdjoint driver(stepper, objective, options);
    const auto r = driver.run(y0, theta, revolve_schedule(c));
    EXPECT_EQ(r.counting_steps, 0);
    EXPECT_EQ(r.summary.steps, expected.summary.steps);
    EXPECT_TRUE(r.drift.bitwise_identical());
    expect_same(r);
  }
  {
    SCOPED_TRACE("uniform k = 5, after a counting run");
    CheckpointOptions options;
    options.drift_policy = DriftPolicy::fail;
    CheckpointedAdjoint driver(stepper, objective, options);
    const auto r = driver.run(y0, theta, uniform_schedule(5));
    EXPECT_GT(r.counting_steps, 0);
    EXPECT_TRUE(r.drift.bitwise_identical());
    expect_same(r);
  }
  // Each step's kept vectors hold its accepted (landed) size: the reverse re-runs no step.
  StoreAllOptions keep;
  keep.keep_stages = true;
  StoreAllAdjoint keeping(stepper, objective, keep);
  const auto kept_run = keeping.run(y0, theta);
  EXPECT_EQ(kept_run.summary.recomputed_steps, 0);
  expect_same(kept_run);
  EXPECT_TRUE(same_bits(forward_loss(stepper, objective, y0, theta), expected.loss));
}

TEST(ImplicitStopTimes, MisfitGradientIsTheSameBitsFromEveryDriverAndSchedule) {
  for (const char* method : {"esdirk32", "esdirk43"})
    expect_every_schedule_gives_the_store_all_bits(dirk(method));
  for (const char* method : {"ros34pw2", "rodas4"})
    expect_every_schedule_gives_the_store_all_bits(rosenbrock(method));
}

// The adaptive run's gradient is the prescribed run's with the same steps, observed at the step
// indices that landed on the observed times (Robertson is autonomous, so t_n + h_n rounding
// differently from a landed time changes nothing but the time the observation is told: it is
// given the landed time by index) — bit for bit; and that run's loss, a smooth function of y0
// and θ with the steps frozen, has central differences that agree with it.
template <class Stepper>
void expect_prescribed_bits_and_finite_differences(const Engine<Stepper>& engine) {
  SCOPED_TRACE(engine.name);
  const Robertson problem;
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  auto adaptive = engine.make(problem, adaptive_with_stops());
  const std::vector<double> observed = observed_times();
  const auto timed = StoreAllAdjoint(adaptive, misfit_at(observed)).run(y0, theta);
  const Path path = walk(adaptive, y0, theta);
  const std::vector<double> times = path.times();
  std::vector<Index> steps;
  for (double t : observed)
    steps.push_back(std::find(times.begin(), times.end(), t) - times.begin());
  const Objective<B> reference = misfit_at(observed);
  const auto by_index_fn = [&](Index step, double, const V& y, V& grad) {
    return reference.observation(step, times[static_cast<std::size_t>(step)], y, grad);
  };
  const Objective<B> by_index(Objective<B>::TerminalFn{}, steps, by_index_fn);
  auto prescribed = engine.make(problem, StepControl::prescribed(0.0, path.sizes));
  StoreAllAdjoint frozen(prescribed, by_index);
  const auto indexed = frozen.run(y0, theta);
  EXPECT_TRUE(same_bits(timed.loss, indexed.loss));
  EXPECT_TRUE(same_bits(timed.grad_y0, indexed.grad_y0));
  EXPECT_TRUE(same_bits(timed.grad_theta, indexed.grad_theta));

  // Fourth-order central differences, step 10⁻⁴ relative (truncation ~10⁻¹⁶). They agree to
  // 10⁻¹² – 10⁻¹⁰ but for p2, whose differences lose the most to round-off (10⁻⁹ with either
  // engine; the implicit stages' Newton residual, rtol 10⁻¹³, stays below that).
  const double tolerance = 1e-8;
  const auto derivative = [](const auto& loss) {
    return (-loss(2.0) + 8.0 * loss(1.0) - 8.0 * loss(-1.0) + loss(-2.0)) / 12.0;
  };
  for (int j = 0; j < 3; ++j) {
    const double d = 1e-4 * theta[j];
    const double fd = derivative([&](double k) {
                        V shifted = theta;
                        shifted[j] += k * d;
                        return forward_loss(prescribed, by_index, y0, shifted);
                      }) /
                      d;
    EXPECT_NEAR(timed.grad_theta[j], fd, tolerance * std::abs(fd)) << "p" << j + 1;
  }
  for (int j : {0, 2}) {  // y2 starts at 0; a negative start is outside the kinetics
    const double d = 1e-4;
    const double fd = derivative([&](double k) {
                        V shifted = y0;
                        shifted[j] += k * d;
                        return forward_loss(prescribed, by_index, shifted, theta);
                      }) /
                      d;
    EXPECT_NEAR(timed.grad_y0[j], fd, tolerance * std::abs(fd)) << "y0_" << j + 1;
  }
}

TEST(ImplicitStopTimes, GradientIsThePrescribedRunsAndMatchesFiniteDifferences) {
  for (const char* method : {"sdirk2", "esdirk43"})
    expect_prescribed_bits_and_finite_differences(dirk(method));
  for (const char* method : {"ros3p", "rodas4"})
    expect_prescribed_bits_and_finite_differences(rosenbrock(method));
}

template <class Stepper>
void expect_misuse_refused(const Engine<Stepper>& engine) {
  SCOPED_TRACE(engine.name);
  const Robertson problem;
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  // Stop times: strictly increasing, inside (t0, t_final], with adaptive steps only — refused by
  // the constructor, through StepControl::validate.
  EXPECT_THROW_MESSAGE((void)engine.make(problem, adaptive_with_stops({0.5, 0.5})), InvalidArgument,
                       "increase strictly");
  EXPECT_THROW_MESSAGE((void)engine.make(problem, adaptive_with_stops({1.0, 0.5})), InvalidArgument,
                       "increase strictly");
  EXPECT_THROW_MESSAGE((void)engine.make(problem, adaptive_with_stops({0.5, 41.0})),
                       InvalidArgument, "(t0, t_final]");
  EXPECT_THROW_MESSAGE((void)engine.make(problem, adaptive_with_stops({0.0})), InvalidArgument,
                       "(t0, t_final]");
  EXPECT_THROW_MESSAGE((void)engine.make(problem, adaptive_with_stops({std::nan("")})),
                       InvalidArgument, "finite");
  StepControl fixed = StepControl::fixed(0.0, 1e-3, 10);
  fixed.stop_times = {5e-3};
  EXPECT_THROW_MESSAGE((void)engine.make(problem, fixed), InvalidArgument, "adaptive steps");

  // An observation time that is not a stop time: refused by every driver before any step.
  auto stepper = engine.make(problem, adaptive_with_stops());
  const auto missing = misfit_at({0.1, 0.25});
  StoreAllAdjoint store_all(stepper, missing);
  EXPECT_THROW_MESSAGE(store_all.run(y0, theta), InvalidArgument, "t = 0.25");
  CheckpointedAdjoint checkpointed(stepper, missing);
  EXPECT_THROW_MESSAGE(checkpointed.run(y0, theta, revolve_schedule(3)), InvalidArgument,
                       "t = 0.25");
  EXPECT_THROW_MESSAGE((void)forward_loss(stepper, missing, y0, theta), InvalidArgument,
                       "t = 0.25");
  EXPECT_EQ(stepper.counters().steps, 0);
  // Fixed steps have no state at given times.
  auto fixed_stepper = engine.make(problem, StepControl::fixed(0.0, 1e-3, 100));
  StoreAllAdjoint on_fixed(fixed_stepper, misfit_at({0.01}));
  EXPECT_THROW_MESSAGE(on_fixed.run(y0, theta), InvalidArgument, "has no state there");
  EXPECT_EQ(fixed_stepper.counters().steps, 0);
}

TEST(ImplicitStopTimes, BadStopTimesAndUnlandedObservationTimesAreRefusedBeforeAnyWork) {
  expect_misuse_refused(dirk("esdirk43"));
  expect_misuse_refused(rosenbrock("rodas4"));
}

}  // namespace
}  // namespace rwd
