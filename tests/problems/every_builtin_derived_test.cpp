// Every built-in problem re-expressed as a templated model (rwd::auto_problem) or a stencil model
// (rwd::stencil_problem), models in tests/problems/models/: the derived vjp equals the
// hand-written one to 1e-13 relative, the rhs is the same bits, and gradients of the derived
// problem are the same bits for every schedule, store and thread count (issue 42, item 3).
//
// For each built-in of the command line's list (src/cli/builtin_problems.hpp) and the two other
// problems of src/problems/include/rewind/problems/ (projectile, cubic_spiral):
// 1. at random states and parameters (a few per problem, parameters drawn around the defaults):
//    the derived (∂f/∂y)ᵀv and (∂f/∂θ)ᵀv against the hand-written vjp, for random cotangents and
//    every unit cotangent (which compares the Jacobian row by row), each part to 1e-13 relative
//    to its largest entry; for the SDEs also the diffusion's vjp against diffusion_vjp;
// 2. rhs (and the SDEs' diffusion) bit for bit: every model writes the built-in's expressions in
//    the built-in's order, so no tolerance is needed;
// 3. a short run (RK4, or Milstein for the SDEs): store-all, revolve(3) in memory and revolve(3)
//    with its snapshots on disk give the same bits — loss, dJ/dy0, dJ/dθ, final state — on 1
//    and 2 threads for the grid problems (grids large enough to be split among threads); the
//    built-in's own store-all run gives the same loss and final state bits (the forward
//    arithmetic is the same) and its gradient to 1e-12 relative (the two vjps add their terms in
//    different orders: round-off, carried through the run).
//
// How each built-in is written:
// - linear, ornstein_uhlenbeck: their size n is chosen at run time, a templated model's at compile
//   time (its name arrays), so the models are templates on n: linear compared at n = 1, 3, 5 and
//   run at n = 3 (the command line's default), ornstein_uhlenbeck compared at n = 1 (the default)
//   and n = 4 and run at n = 4;
// - lorenz63, lotka_volterra, van_der_pol, robertson (with and without the integral state),
//   projectile, cubic_spiral: templated models; stochastic_lorenz63 and ornstein_uhlenbeck with a
//   diffusion (SDEs);
// - lorenz96, gray_scott, heat2d: stencil models; brusselator too (no-flux walls are reflecting
//   boundaries), but its built-in interleaves u and v per cell where a stencil problem keeps each
//   field whole, so the built-in is compared through FieldMajorLayout below, the same numbers in
//   the stencil problem's order.
// No built-in is left out: none has a structure that depends on its parameters.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "problems/models/stencil_models.hpp"
#include "problems/models/templated_builtins.hpp"
#include "rewind/adjoint/differentiate.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/integrators/sde_problem.hpp"
#include "rewind/integrators/stochastic_stepper.hpp"
#include "rewind/model.hpp"
#include "rewind/parallel.hpp"
#include "rewind/problems/brusselator2d.hpp"
#include "rewind/problems/cubic_spiral.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/heat2d.hpp"
#include "rewind/problems/linear.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "rewind/problems/lotka_volterra.hpp"
#include "rewind/problems/ornstein_uhlenbeck.hpp"
#include "rewind/problems/projectile.hpp"
#include "rewind/problems/robertson.hpp"
#include "rewind/problems/stochastic_lorenz63.hpp"
#include "rewind/problems/van_der_pol.hpp"
#include "rewind/schedule/schedules.hpp"
#include "rewind/stencil_model.hpp"
#include "support/random_data.hpp"
#include "support/same_gradient_bits.hpp"
#include "support/scratch_directory.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vector = B::Vector;
namespace models = test_models;
using testing::BrusselatorStencil;
using testing::GrayScottStencil;
using testing::Heat2DStencil;
using testing::Lorenz96Stencil;

constexpr double kVjpTolerance = 1e-13;
constexpr double kBuiltInGradientTolerance = 1e-12;

// max_i |a_i − b_i| / max_i |b_i| (the absolute difference where b is zero).
double relative_error(const Vector& a, const Vector& b) {
  const double scale = b.size() > 0 ? b.cwiseAbs().maxCoeff() : 0.0;
  const double difference = b.size() > 0 ? (a - b).cwiseAbs().maxCoeff() : 0.0;
  return difference / (scale > 0.0 ? scale : 1.0);
}

bool same_bits(const Vector& a, const Vector& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(double)) == 0;
}

// A state and parameters to compare the two problems at.
struct Point {
  Vector y;
  Vector theta;
};

// Each θ_j times a factor drawn from [1 − spread, 1 + spread).
Vector around(const Vector& defaults, std::mt19937_64& rng, double spread = 0.1) {
  const Vector factors = testing::random_vector(defaults.size(), rng, 1.0 - spread, 1.0 + spread);
  return defaults.cwiseProduct(factors);
}

// A problem whose state interleaves its fields per cell (the built-in Brusselator: u, v, u, v, …)
// seen in a stencil problem's field-major layout ([u; v]): the same rhs and vjp, their numbers
// reordered. Values move, none is computed, so the bits are the wrapped problem's.
template <class Interleaved, int Fields>
class FieldMajorLayout {
 public:
  using Backend = EigenBackend;
  using Vector = Backend::Vector;

  explicit FieldMajorLayout(Interleaved problem) : problem_(std::move(problem)) {}

  Index state_size() const { return problem_.state_size(); }
  Index parameter_size() const { return problem_.parameter_size(); }
  Vector default_parameters() const { return problem_.default_parameters(); }
  Vector default_initial_state() const { return field_major(problem_.default_initial_state()); }

  void rhs(double t, const Vector& y, const Vector& theta, Vector& f) const {
    Vector interleaved_f(state_size());
    problem_.rhs(t, interleaved(y), theta, interleaved_f);
    f = field_major(interleaved_f);
  }
  void vjp(double t, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    Vector interleaved_out(state_size());
    problem_.vjp(t, interleaved(y), theta, interleaved(v), interleaved_out, out_theta);
    out_y = field_major(interleaved_out);
  }

  // x_field_major[k·cells + c] = x_interleaved[Fields·c + k].
  Vector field_major(const Vector& x) const {
    const Index cells = x.size() / Fields;
    Vector out(x.size());
    for (Index c = 0; c < cells; ++c)
      for (Index k = 0; k < Fields; ++k) out[k * cells + c] = x[Fields * c + k];
    return out;
  }
  Vector interleaved(const Vector& x) const {
    const Index cells = x.size() / Fields;
    Vector out(x.size());
    for (Index c = 0; c < cells; ++c)
      for (Index k = 0; k < Fields; ++k) out[Fields * c + k] = x[k * cells + c];
    return out;
  }

 private:
  Interleaved problem_;
};

using BrusselatorFieldMajor = FieldMajorLayout<Brusselator2D, 2>;

// The derived vjp: an AutoProblem's derived_vjp (its vjp would be a model's own, had it one), a
// stencil problem's vjp (always derived).
template <class Derived>
void derived_vjp(const Derived& derived, const Point& at, const Vector& v, Vector& out_y,
                 Vector& out_theta) {
  if constexpr (requires { derived.derived_vjp(0.0, at.y, at.theta, v, out_y, out_theta); })
    derived.derived_vjp(0.0, at.y, at.theta, v, out_y, out_theta);
  else
    derived.vjp(0.0, at.y, at.theta, v, out_y, out_theta);
}

// Random cotangents, and every unit cotangent where the state is small enough to afford one
// vjp per output (a unit cotangent e_k gives row k of ∂f/∂y and of ∂f/∂θ).
std::vector<Vector> cotangents(Index n, std::mt19937_64& rng) {
  std::vector<Vector> all;
  for (int i = 0; i < 3; ++i) all.push_back(testing::random_vector(n, rng));
  if (n <= 200)
    for (Index k = 0; k < n; ++k) all.push_back(Vector::Unit(n, k));
  return all;
}

// Items 1 and 2 at `count` points draw(rng): rhs (and diffusion) bit for bit, the derived vjps
// (the drift's, and the diffusion's for an SDE) to kVjpTolerance relative, each part; and the
// parameters have the built-in's names, in its order.
template <class Hand, class Derived, class Draw>
void expect_derived_equals_hand_written(const Hand& hand, const Derived& derived, const Draw& draw,
                                        std::uint64_t seed, int count = 4) {
  const Index n = hand.state_size(), p = hand.parameter_size();
  ASSERT_EQ(derived.state_size(), n);
  ASSERT_EQ(derived.parameter_size(), p);
  if constexpr (requires { hand.parameter_names(); }) {
    EXPECT_EQ(derived.parameter_names(), hand.parameter_names());  // θ means the same
  }
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < count; ++trial) {
    SCOPED_TRACE("point " + std::to_string(trial));
    const Point at = draw(rng);
    Vector f(n), hand_f(n);
    derived.rhs(0.0, at.y, at.theta, f);
    hand.rhs(0.0, at.y, at.theta, hand_f);
    EXPECT_TRUE(same_bits(f, hand_f)) << "rhs differs by " << relative_error(f, hand_f);
    for (const Vector& v : cotangents(n, rng)) {
      Vector out_y(n), out_theta(p), hand_y(n), hand_theta(p);
      derived_vjp(derived, at, v, out_y, out_theta);
      hand.vjp(0.0, at.y, at.theta, v, hand_y, hand_theta);
      EXPECT_LE(relative_error(out_y, hand_y), kVjpTolerance) << "(∂f/∂y)ᵀv, v = " << v.transpose();
      EXPECT_LE(relative_error(out_theta, hand_theta), kVjpTolerance)
          << "(∂f/∂θ)ᵀv, v = " << v.transpose();
      if constexpr (SdeProblem<Hand>) {
        derived.diffusion_vjp(0.0, at.y, at.theta, v, out_y, out_theta);
        hand.diffusion_vjp(0.0, at.y, at.theta, v, hand_y, hand_theta);
        EXPECT_LE(relative_error(out_y, hand_y), kVjpTolerance) << "(∂g/∂y)ᵀv";
        EXPECT_LE(relative_error(out_theta, hand_theta), kVjpTolerance) << "(∂g/∂θ)ᵀv";
      }
    }
    if constexpr (SdeProblem<Hand>) {
      Vector g(n), hand_g(n);
      derived.diffusion(0.0, at.y, at.theta, g);
      hand.diffusion(0.0, at.y, at.theta, hand_g);
      EXPECT_TRUE(same_bits(g, hand_g)) << "diffusion differs by " << relative_error(g, hand_g);
    }
  }
}

// The stepper of a short run: Milstein for an SDE (derivative-free; its adjoint uses the
// diffusion's vjp), RK4 otherwise.
template <class P>
auto stepper_for(const P& problem, const StepControl& control) {
  if constexpr (SdeProblem<P>)
    return StochasticStepper(problem, SdeScheme::milstein, control, /*seed=*/7);
  else
    return ExplicitRungeKutta(problem, ButcherTableau::rk4(), control);
}

// Item 3: the derived problem's store-all gradient is the reference; revolve(3) in memory and on
// disk, and store-all again, give its bits on every thread count of `threads`; the built-in's
// store-all run gives its loss and final state bits and its gradient to round-off.
template <class Derived, class Hand>
void expect_gradient_bits(const Derived& derived, const Hand& hand, const Vector& y0,
                          const Vector& theta, const StepControl& control,
                          const std::vector<int>& threads) {
  auto stepper = stepper_for(derived, control);
  const auto objective = Objective<B>::terminal_squared_norm();
  const int saved_threads = thread_count();
  set_thread_count(threads.front());
  const auto reference = differentiate(stepper, objective, y0, theta, StoreAllStrategy{});
  ASSERT_TRUE(std::isfinite(reference.loss));
  ASSERT_GT(reference.grad_theta.cwiseAbs().maxCoeff(), 0.0);
  const test::ScratchDirectory scratch("rewind-every-builtin");
  CheckpointOptions on_disk_options;
  on_disk_options.disk.directory = scratch.path();
  const std::vector<std::pair<std::string, CheckpointStrategy>> checkpointed = {
      {"revolve(3)", {revolve_schedule(3)}},
      {"revolve(3) on disk", {on_disk(revolve_schedule(3)), on_disk_options}}};
  for (const int count : threads) {
    SCOPED_TRACE(std::to_string(count) + " threads");
    set_thread_count(count);
    testing::expect_same_gradient_bits<B>(
        differentiate(stepper, objective, y0, theta, StoreAllStrategy{}), reference);
    for (const auto& [name, strategy] : checkpointed) {
      SCOPED_TRACE(name);
      const auto result = differentiate(stepper, objective, y0, theta, strategy);
      testing::expect_same_gradient_bits<B>(result, reference);
      // Revolve in 3 snapshots re-runs more steps than store-all's one per reverse step.
      EXPECT_GT(result.summary.recomputed_steps, reference.summary.recomputed_steps);
    }
  }
  set_thread_count(threads.front());
  auto hand_stepper = stepper_for(hand, control);
  const auto built_in = differentiate(hand_stepper, objective, y0, theta, StoreAllStrategy{});
  EXPECT_EQ(std::memcmp(&built_in.loss, &reference.loss, sizeof(double)), 0)
      << built_in.loss << " vs " << reference.loss;
  EXPECT_TRUE(same_bits(built_in.y_final, reference.y_final));
  EXPECT_LE(relative_error(reference.grad_y0, built_in.grad_y0), kBuiltInGradientTolerance);
  EXPECT_LE(relative_error(reference.grad_theta, built_in.grad_theta), kBuiltInGradientTolerance);
  set_thread_count(saved_threads);
}

// 1 and 2 threads for a grid problem split among threads (one thread without OpenMP).
template <class Derived>
std::vector<int> grid_thread_counts(const Derived& derived) {
  EXPECT_GE(derived.state_size(), detail::kParallelMinElements);  // large enough to be split
  EXPECT_GT(derived.block_count(), 2);
  if (!kThreadsAvailable) return {1};
  return {1, 2};
}

const std::vector<int> kOneThread{1};

// --- the small dense problems ----------------------------------------------------------------

template <int N>
void expect_linear_ode_matches() {
  SCOPED_TRACE("n = " + std::to_string(N));
  expect_derived_equals_hand_written(
      LinearOde<>(N), auto_problem(models::LinearOde<N>{}),
      [](std::mt19937_64& rng) {
        return Point{testing::random_vector(N, rng), testing::random_vector(N * N, rng)};
      },
      100 + N);
}

TEST(EveryBuiltinDerived, LinearOde) {
  expect_linear_ode_matches<1>();
  expect_linear_ode_matches<3>();
  expect_linear_ode_matches<5>();
  const LinearOde<> hand(3);
  expect_gradient_bits(auto_problem(models::LinearOde<3>{}), hand, hand.default_initial_state(),
                       hand.default_parameters(), StepControl::fixed(0.0, 0.01, 40), kOneThread);
}

TEST(EveryBuiltinDerived, Lorenz63) {
  const Lorenz63<> hand;
  const Vector defaults = hand.default_parameters();
  expect_derived_equals_hand_written(
      hand, auto_problem(models::Lorenz63{}),
      [&](std::mt19937_64& rng) {
        return Point{testing::random_vector(3, rng, -20.0, 20.0), around(defaults, rng)};
      },
      1);
  expect_gradient_bits(auto_problem(models::Lorenz63{}), hand, Vector{{1.0, 1.0, 1.0}}, defaults,
                       StepControl::fixed(0.0, 0.01, 40), kOneThread);
}

TEST(EveryBuiltinDerived, LotkaVolterra) {
  const LotkaVolterra<> hand;
  const Vector defaults = hand.default_parameters();
  expect_derived_equals_hand_written(
      hand, auto_problem(models::LotkaVolterra{}),
      [&](std::mt19937_64& rng) {
        return Point{testing::random_vector(2, rng, 0.1, 5.0), around(defaults, rng)};
      },
      2);
  expect_gradient_bits(auto_problem(models::LotkaVolterra{}), hand, Vector{{1.0, 0.5}}, defaults,
                       StepControl::fixed(0.0, 0.01, 40), kOneThread);
}

TEST(EveryBuiltinDerived, VanDerPol) {
  const VanDerPol<> hand;
  expect_derived_equals_hand_written(
      hand, auto_problem(models::VanDerPol{}),
      [](std::mt19937_64& rng) {
        return Point{testing::random_vector(2, rng, -3.0, 3.0),
                     testing::random_vector(1, rng, 0.5, 2.0)};
      },
      3);
  expect_gradient_bits(auto_problem(models::VanDerPol{}), hand, hand.default_initial_state(),
                       hand.default_parameters(), StepControl::fixed(0.0, 0.01, 40), kOneThread);
}

// Mid-reaction states, y2 small as on the real trajectory.
Vector robertson_state(std::mt19937_64& rng, Index n) {
  auto uniform = [&rng](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  Vector y(n);
  y[0] = uniform(0.5, 1.0);
  y[1] = uniform(1e-6, 5e-5);
  y[2] = uniform(0.0, 0.5);
  if (n == 4) y[3] = uniform(0.0, 1.0);
  return y;
}

// Both forms: the command line's three species, and the integral of y3 as a fourth state. Stiff:
// the short runs take steps RK4 is stable with.
TEST(EveryBuiltinDerived, Robertson) {
  for (const bool with_integral : {false, true}) {
    SCOPED_TRACE(with_integral ? "with the integral" : "three species");
    const Robertson hand(with_integral);
    const Vector defaults = hand.default_parameters();
    const Index n = hand.state_size();
    auto draw = [&](std::mt19937_64& rng) {
      return Point{robertson_state(rng, n), around(defaults, rng)};
    };
    const StepControl control = StepControl::fixed(0.0, 1e-4, 40);
    if (with_integral) {
      expect_derived_equals_hand_written(hand, auto_problem(models::Robertson{}), draw, 4);
      expect_gradient_bits(auto_problem(models::Robertson{}), hand, hand.default_initial_state(),
                           defaults, control, kOneThread);
    } else {
      expect_derived_equals_hand_written(hand, auto_problem(models::RobertsonWithoutIntegral{}),
                                         draw, 5);
      expect_gradient_bits(auto_problem(models::RobertsonWithoutIntegral{}), hand,
                           hand.default_initial_state(), defaults, control, kOneThread);
    }
  }
}

// Flying states, and one at rest (u = w = 0), where |v| has no derivative and both vjps give
// |v|·u and |v|·w a zero one.
TEST(EveryBuiltinDerived, Projectile) {
  const Projectile<> hand;
  const Vector defaults = hand.default_parameters();
  int drawn = 0;
  expect_derived_equals_hand_written(
      hand, auto_problem(models::Projectile{}),
      [&](std::mt19937_64& rng) {
        const Vector position = testing::random_vector(2, rng, 0.0, 100.0);
        const Vector velocity = testing::random_vector(2, rng, -50.0, 50.0);
        const double moving = drawn++ == 0 ? 0.0 : 1.0;
        const Vector y{{position[0], position[1], moving * velocity[0], moving * velocity[1]}};
        return Point{y, around(defaults, rng)};
      },
      6);
  expect_gradient_bits(auto_problem(models::Projectile{}), hand, hand.default_initial_state(),
                       defaults, StepControl::fixed(0.0, 0.05, 40), kOneThread);
}

TEST(EveryBuiltinDerived, CubicSpiral) {
  const CubicSpiral hand;
  const Vector defaults = hand.default_parameters();
  expect_derived_equals_hand_written(
      hand, auto_problem(models::CubicSpiral{}),
      [&](std::mt19937_64& rng) {
        return Point{testing::random_vector(2, rng, -2.0, 2.0), around(defaults, rng)};
      },
      7);
  expect_gradient_bits(auto_problem(models::CubicSpiral{}), hand, hand.default_initial_state(),
                       defaults, StepControl::fixed(0.0, 0.01, 40), kOneThread);
}

// --- the SDEs: drift and diffusion
// ----------------------------------------------------------------

template <int N>
void expect_ornstein_uhlenbeck_matches() {
  SCOPED_TRACE("n = " + std::to_string(N));
  const OrnsteinUhlenbeck<> hand(N);
  const Vector defaults = hand.default_parameters();
  expect_derived_equals_hand_written(
      hand, auto_problem(models::OrnsteinUhlenbeck<N>{}),
      [&](std::mt19937_64& rng) {
        return Point{testing::random_vector(N, rng, -2.0, 2.0), around(defaults, rng)};
      },
      200 + N);
}

TEST(EveryBuiltinDerived, OrnsteinUhlenbeck) {
  static_assert(SdeProblem<AutoProblem<models::OrnsteinUhlenbeck<4>>>);
  expect_ornstein_uhlenbeck_matches<1>();
  expect_ornstein_uhlenbeck_matches<4>();
  const OrnsteinUhlenbeck<> hand(4);
  expect_gradient_bits(auto_problem(models::OrnsteinUhlenbeck<4>{}), hand,
                       Vector{{0.0, 0.5, -0.5, 2.0}}, hand.default_parameters(),
                       StepControl::fixed(0.0, 0.01, 40), kOneThread);
}

TEST(EveryBuiltinDerived, StochasticLorenz63) {
  static_assert(SdeProblem<AutoProblem<models::StochasticLorenz63>>);
  const StochasticLorenz63<> hand;
  const Vector defaults = hand.default_parameters();
  expect_derived_equals_hand_written(
      hand, auto_problem(models::StochasticLorenz63{}),
      [&](std::mt19937_64& rng) {
        return Point{testing::random_vector(3, rng, -20.0, 20.0), around(defaults, rng)};
      },
      8);
  expect_gradient_bits(auto_problem(models::StochasticLorenz63{}), hand,
                       hand.default_initial_state(), defaults, StepControl::fixed(0.0, 0.005, 40),
                       kOneThread);
}

// --- the grid problems: stencil models
// ------------------------------------------------------------ Items 1 and 2 on a small grid (every
// unit cotangent) and a larger one; item 3 on a grid of at least detail::kParallelMinElements
// unknowns, on 1 and 2 threads.

TEST(EveryBuiltinDerived, Lorenz96) {
  for (const Index n : {6, 1027}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    expect_derived_equals_hand_written(
        Lorenz96<>(n), stencil_problem(Lorenz96Stencil{}, n),
        [n](std::mt19937_64& rng) {
          return Point{testing::random_vector(n, rng, -5.0, 10.0),
                       testing::random_vector(1, rng, 6.0, 10.0)};
        },
        9);
  }
  const Lorenz96<> hand(40000);
  const auto derived = stencil_problem(Lorenz96Stencil{}, 40000);
  Vector y0 = hand.default_initial_state();
  for (Index i = 0; i < y0.size(); ++i) y0[i] += std::sin(0.3 * static_cast<double>(i));
  expect_gradient_bits(derived, hand, y0, hand.default_parameters(),
                       StepControl::fixed(0.0, 0.01, 6), grid_thread_counts(derived));
}

TEST(EveryBuiltinDerived, GrayScott) {
  const Vector defaults = GrayScott<>::default_parameters();
  for (const Index n : {5, 33}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    expect_derived_equals_hand_written(
        GrayScott<>(n), stencil_problem(GrayScottStencil{}, n, n),
        [&](std::mt19937_64& rng) {
          return Point{testing::random_vector(2 * n * n, rng, 0.0, 1.0), around(defaults, rng)};
        },
        10);
  }
  const GrayScott<> hand(128);
  const auto derived = stencil_problem(GrayScottStencil{}, 128, 128);
  expect_gradient_bits(derived, hand, hand.default_initial_state(3), defaults,
                       StepControl::fixed(0.0, 1.0, 6), grid_thread_counts(derived));
}

TEST(EveryBuiltinDerived, Heat2D) {
  for (const Index n : {5, 33}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    expect_derived_equals_hand_written(
        Heat2D<>(n), stencil_problem(Heat2DStencil(n), n, n),
        [n](std::mt19937_64& rng) {
          return Point{testing::random_vector(n * n, rng, 0.0, 1.0),
                       Vector{{std::uniform_real_distribution<double>(0.1, 0.3)(rng),
                               std::uniform_real_distribution<double>(0.1, 1.0)(rng)}}};
        },
        11);
  }
  const Heat2D<> hand(190);
  const auto derived = stencil_problem(Heat2DStencil(190), 190, 190);
  expect_gradient_bits(derived, hand, hand.default_initial_state(5), Vector{{0.2, 0.5}},
                       StepControl::fixed(0.0, 1.0, 6), grid_thread_counts(derived));
}

// The built-in through FieldMajorLayout (u, v interleaved per cell in the built-in, [u; v] in the
// stencil problem). Its stiffness α n² ∇² bounds RK4's step: dt = 0.005 at n = 128.
TEST(EveryBuiltinDerived, Brusselator) {
  for (const Index n : {4, 33}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const BrusselatorFieldMajor hand{Brusselator2D(n)};
    const Vector defaults = hand.default_parameters();
    expect_derived_equals_hand_written(
        hand, stencil_problem(BrusselatorStencil{}, n, n),
        [&](std::mt19937_64& rng) {
          return Point{testing::random_vector(2 * n * n, rng, 0.5, 4.0), around(defaults, rng)};
        },
        12);
  }
  const BrusselatorFieldMajor hand{Brusselator2D(128)};
  const auto derived = stencil_problem(BrusselatorStencil{}, 128, 128);
  expect_gradient_bits(derived, hand, hand.default_initial_state(), hand.default_parameters(),
                       StepControl::fixed(0.0, 0.005, 6), grid_thread_counts(derived));
}

// The layout adapter itself: a round trip is the identity, and u of cell c sits at c.
TEST(EveryBuiltinDerived, FieldMajorLayoutOnlyReordersTheState) {
  const BrusselatorFieldMajor layout{Brusselator2D(3)};
  std::mt19937_64 rng(13);
  const Vector x = testing::random_vector(18, rng);
  EXPECT_TRUE(same_bits(layout.interleaved(layout.field_major(x)), x));
  const Vector fm = layout.field_major(x);
  EXPECT_EQ(fm[4], x[8]);      // u of cell 4
  EXPECT_EQ(fm[9 + 4], x[9]);  // v of cell 4
}

}  // namespace
}  // namespace rwd
