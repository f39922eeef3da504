// The discrete adjoint of the diagonally implicit engine
// (rewind/integrators/diagonally_implicit_runge_kutta.hpp): on a stiff linear system it is the
// closed-form gradient (the product of the exact step matrices) to round-off for every method;
// on Robertson's stiff kinetics it agrees with central finite differences of the same discrete
// map; and it is the same bits under every schedule and store — revolve, uniform, disk,
// stage-aware (the reverse then solves no Newton system), the online schedule of an adaptive
// run — as the store-all gradient, with no drift in any replay.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Dense>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/diagonally_implicit_runge_kutta.hpp"
#include "rewind/model.hpp"
#include "rewind/problems/brusselator2d.hpp"
#include "rewind/problems/robertson.hpp"
#include "rewind/schedule/schedules.hpp"
#include "stop_and_resume.hpp"
#include "support/scratch_directory.hpp"

namespace rwd {
namespace {

using V = Eigen::VectorXd;
using M = Eigen::MatrixXd;

bool same_bits(const V& a, const V& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(double)) == 0;
}

// y' = A(θ) y, a stiff 3×3 system: eigenvalues from about −1 to −2·10³.
struct StiffLinear {
  using Backend = EigenBackend;
  using Vector = Backend::Vector;
  Index state_size() const { return 3; }
  Index parameter_size() const { return 3; }
  static M matrix(const Vector& theta) {
    M a(3, 3);
    a << -theta[0], theta[1], 0.0,            //
        theta[0], -theta[1] - theta[2], 0.5,  //
        0.0, theta[2], -2000.0;
    return a;
  }
  void rhs(double, const Vector& y, const Vector& theta, Vector& f) const { f = matrix(theta) * y; }
  void vjp(double, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    out_y = matrix(theta).transpose() * v;
    out_theta[0] = -y[0] * v[0] + y[0] * v[1];
    out_theta[1] = y[1] * v[0] - y[1] * v[1];
    out_theta[2] = -y[1] * v[1] + y[1] * v[2];
  }
  void jacobian(double, const Vector&, const Vector& theta, M& J) const { J = matrix(theta); }
};

// The exact step matrix R of a DIRK method on y' = A y: y_{n+1} = R y_n, built stage by stage
// from K_i = (I − h a_ii A)⁻¹ A (I + h Σ_{j<i} a_ij K_j) (k_i = K_i y_n).
M step_matrix(const ImplicitTableau& t, const M& a, double h) {
  const Index n = a.rows();
  const M identity = M::Identity(n, n);
  std::vector<M> k;
  M r = identity;
  for (int i = 0; i < t.stages; ++i) {
    M base = identity;
    for (int j = 0; j < i; ++j) base += h * t.a_at(i, j) * k[static_cast<std::size_t>(j)];
    k.push_back((identity - h * t.a_at(i, i) * a).partialPivLu().solve(a * base));
    r += h * t.b[static_cast<std::size_t>(i)] * k.back();
  }
  return r;
}

NewtonOptions tight_newton() {
  NewtonOptions newton;
  newton.rtol = 1e-13;
  newton.atol = 1e-16;
  return newton;
}

TEST(ImplicitAdjoint, IsTheClosedFormGradientOfAStiffLinearSystemForEveryMethod) {
  StiffLinear problem;
  V theta(3), y0(3);
  theta << 3.0, 1.5, 40.0;
  y0 << 1.0, -0.5, 2.0;
  const Index steps = 25;
  const double h = 0.02;
  for (const std::string& name : ImplicitTableau::names()) {
    SCOPED_TRACE(name);
    const ImplicitTableau tableau = ImplicitTableau::by_name(name);
    DiagonallyImplicitRungeKutta stepper(problem, tableau, StepControl::fixed(0.0, h, steps),
                                         tight_newton());
    StoreAllAdjoint driver(stepper, Objective<EigenBackend>::terminal_squared_norm());
    const auto result = driver.run(y0, theta);
    // J = ½|R^N y0|², dJ/dy0 = (R^N)ᵀ R^N y0.
    M power = M::Identity(3, 3);
    const M r = step_matrix(tableau, StiffLinear::matrix(theta), h);
    for (Index n = 0; n < steps; ++n) power = r * power;
    const V y_final = power * y0;
    const V expected = power.transpose() * y_final;
    EXPECT_LT((result.y_final - y_final).norm(), 1e-13 * y_final.norm());
    EXPECT_LT((result.grad_y0 - expected).norm(), 1e-12 * expected.norm())
        << result.grad_y0.transpose() << " vs " << expected.transpose();
    // dJ/dθ against central differences of the closed form (a smooth function of θ).
    for (int j = 0; j < 3; ++j) {
      const double d = 1e-6 * theta[j];
      V plus = theta, minus = theta;
      plus[j] += d;
      minus[j] -= d;
      auto loss = [&](const V& th) {
        M p = M::Identity(3, 3);
        const M rr = step_matrix(tableau, StiffLinear::matrix(th), h);
        for (Index n = 0; n < steps; ++n) p = rr * p;
        return 0.5 * (p * y0).squaredNorm();
      };
      const double fd = (loss(plus) - loss(minus)) / (2.0 * d);
      EXPECT_NEAR(result.grad_theta[j], fd, 1e-7 * std::max(1.0, std::abs(fd))) << "θ" << j;
    }
  }
}

// Robertson from t = 0 over `steps` prescribed steps growing geometrically from 10⁻⁵ by 1.25
// (to t ≈ 2.8 for 50 steps): the fast initial transient of y2 needs small first steps, as any
// stiff code takes them; from y2 = 0 a step of 0.02 leads Newton's iteration to a spurious
// negative root of the stage equation.
DiagonallyImplicitRungeKutta<Robertson> robertson_stepper(const Robertson& problem,
                                                          const std::string& method, Index steps) {
  std::vector<double> sizes;
  for (Index k = 0; k < steps; ++k) sizes.push_back(1e-5 * std::pow(1.25, static_cast<double>(k)));
  return DiagonallyImplicitRungeKutta(problem, ImplicitTableau::by_name(method),
                                      StepControl::prescribed(0.0, std::move(sizes)),
                                      tight_newton());
}

TEST(ImplicitAdjoint, RobertsonGradientAgreesWithFiniteDifferencesOfTheSameMap) {
  const Robertson problem;
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  const auto objective = Objective<EigenBackend>::terminal_squared_norm();
  for (const char* method : {"sdirk2", "esdirk32", "esdirk43"}) {
    SCOPED_TRACE(method);
    auto stepper = robertson_stepper(problem, method, 50);
    StoreAllAdjoint driver(stepper, objective);
    const auto result = driver.run(y0, theta);
    EXPECT_GT(stepper.implicit_counters().newton_iterations, 0);
    // The transposed stage solves converged by preconditioned iteration, none factored its own.
    EXPECT_GT(stepper.implicit_counters().adjoint_iterations, 0);
    EXPECT_EQ(stepper.implicit_counters().adjoint_fallbacks, 0);
    for (int j = 0; j < 3; ++j) {
      const double d = 1e-5 * theta[j];
      V plus = theta, minus = theta;
      plus[j] += d;
      minus[j] -= d;
      const double fd = (driver.run(y0, plus).loss - driver.run(y0, minus).loss) / (2.0 * d);
      // Central differences of step 1e-5·θ_j are good to ~5e-10 here (their own truncation
      // error); the map is smooth up to the Newton residual (rtol 1e-13). p3's gradient is ~3e-10:
      // there the differences' round-off, ~1e-18, shows.
      EXPECT_NEAR(result.grad_theta[j], fd, 2e-9 * std::abs(fd) + 1e-17) << "p" << j + 1;
    }
  }
}

TEST(ImplicitAdjoint, EveryScheduleAndStoreGivesTheStoreAllBits) {
  const Robertson problem;
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  const auto objective = Objective<EigenBackend>::terminal_squared_norm();
  auto stepper = robertson_stepper(problem, "esdirk43", 60);
  const int s = stepper.stage_count();
  StoreAllAdjoint reference_driver(stepper, objective);
  const auto reference = reference_driver.run(y0, theta);
  test::ScratchDirectory scratch;
  for (const auto& [name, planner] : std::vector<std::pair<std::string, Planner>>{
           {"revolve c=3", revolve_schedule(3)},
           {"uniform k=7", uniform_schedule(7)},
           {"revolve c=4 on disk", on_disk(revolve_schedule(4))},
           {"stage-aware 20 units", stage_aware_schedule(20, s)},
           {"store-all stages", store_all_stages_schedule(s)}}) {
    SCOPED_TRACE(name);
    CheckpointOptions options;
    options.drift_policy = DriftPolicy::fail;
    options.disk.directory = scratch.path();
    CheckpointedAdjoint driver(stepper, objective, options);
    const auto r = driver.run(y0, theta, planner);
    EXPECT_TRUE(same_bits(r.grad_y0, reference.grad_y0));
    EXPECT_TRUE(same_bits(r.grad_theta, reference.grad_theta));
    EXPECT_TRUE(same_bits(r.y_final, reference.y_final));
    EXPECT_TRUE(r.drift.bitwise_identical());
  }
}

// Kept stage values stand for the step's start too (a stage-aware schedule may restore from them,
// and an observation at step n reads y_n there): for every method — those whose first stage is
// implicit (backward Euler, sdirk2) as well as the explicit-first ones — the stage-keeping
// schedules give the store-all bits of a misfit observed along the run.
TEST(ImplicitAdjoint, KeptStagesGiveTheStoreAllBitsForEveryMethodWithObservations) {
  const Robertson problem;
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  std::vector<Index> steps;
  std::vector<V> data;
  for (Index k = 3; k <= 30; k += 3) {
    steps.push_back(k);
    data.push_back(V::Constant(3, 0.3));
  }
  const auto objective = Objective<EigenBackend>::trajectory_misfit(steps, data);
  for (const char* method : {"backward_euler", "trapezoid", "sdirk2", "esdirk32", "esdirk43"}) {
    SCOPED_TRACE(method);
    auto stepper = robertson_stepper(problem, method, 30);
    const int s = stepper.stage_count();
    StoreAllAdjoint reference_driver(stepper, objective);
    const auto reference = reference_driver.run(y0, theta);
    for (const auto& [name, planner] : std::vector<std::pair<std::string, Planner>>{
             {"stage-aware 12 units", stage_aware_schedule(12, s)},
             {"store-all stages", store_all_stages_schedule(s)}}) {
      SCOPED_TRACE(name);
      CheckpointOptions options;
      options.drift_policy = DriftPolicy::fail;
      CheckpointedAdjoint driver(stepper, objective, options);
      const auto r = driver.run(y0, theta, planner);
      EXPECT_EQ(r.loss, reference.loss);
      EXPECT_TRUE(same_bits(r.grad_y0, reference.grad_y0));
      EXPECT_TRUE(same_bits(r.grad_theta, reference.grad_theta));
      EXPECT_TRUE(same_bits(r.y_final, reference.y_final));
    }
  }
}

TEST(ImplicitAdjoint, StageAwareReverseSolvesNoNewtonSystem) {
  const Robertson problem;
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  auto stepper = robertson_stepper(problem, "esdirk32", 40);
  CheckpointedAdjoint driver(stepper, Objective<EigenBackend>::terminal_squared_norm());
  stepper.reset_counters();
  driver.run(y0, theta, store_all_stages_schedule(stepper.stage_count()));
  const Index forward = stepper.implicit_counters().newton_iterations;
  // Every step ran once, forward; the reverse sweep read the kept stages.
  StoreAllAdjoint store_all(stepper, Objective<EigenBackend>::terminal_squared_norm());
  stepper.reset_counters();
  store_all.run(y0, theta);
  EXPECT_EQ(forward * 2, stepper.implicit_counters().newton_iterations)
      << "store-all re-runs each step's Newton iterations in its reverse sweep";
}

// The gradient of an adaptive run with the given linear solver.
template <class P>
GradientResult<V> gradient_with(const P& problem, ImplicitLinearSolver solver, const V& y0,
                                const V& theta, double t_final) {
  NewtonOptions newton = tight_newton();
  newton.linear_solver = solver;
  DiagonallyImplicitRungeKutta stepper(problem, ImplicitTableau::esdirk43(),
                                       StepControl::adaptive(0.0, t_final, 1e-7, 1e-9), newton);
  StoreAllAdjoint driver(stepper, Objective<EigenBackend>::terminal_squared_norm());
  return driver.run(y0, theta);
}

double relative_difference(const V& a, const V& b) {
  return (a - b).norm() / b.norm();
}

TEST(ImplicitAdjoint, BandSolverGivesTheDenseSolversGradientAndEveryScheduleItsBits) {
  // The Brusselator states its half-bandwidth 2n (band_width()): the band Jacobian is assembled
  // from 4n + 1 vjps and factored by LAPACK; the dense one from 2n² vjps.
  const Brusselator2D problem(6);
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  const auto band = gradient_with(problem, ImplicitLinearSolver::automatic, y0, theta, 2.0);
  const auto dense = gradient_with(problem, ImplicitLinearSolver::dense, y0, theta, 2.0);
  EXPECT_EQ(band.summary.steps, dense.summary.steps);
  EXPECT_LT(relative_difference(band.y_final, dense.y_final), 1e-12);
  EXPECT_LT(relative_difference(band.grad_y0, dense.grad_y0), 1e-10);
  EXPECT_LT(relative_difference(band.grad_theta, dense.grad_theta), 1e-10);
  // Band solves are replayed bit for bit too.
  NewtonOptions newton = tight_newton();
  DiagonallyImplicitRungeKutta stepper(problem, ImplicitTableau::esdirk32(),
                                       StepControl::fixed(0.0, 0.05, 30), newton);
  const auto objective = Objective<EigenBackend>::terminal_squared_norm();
  StoreAllAdjoint reference_driver(stepper, objective);
  const auto reference = reference_driver.run(y0, theta);
  for (const Planner& planner : {revolve_schedule(3), stage_aware_schedule(12, 4)}) {
    CheckpointOptions options;
    options.drift_policy = DriftPolicy::fail;
    CheckpointedAdjoint driver(stepper, objective, options);
    const auto r = driver.run(y0, theta, planner);
    EXPECT_TRUE(same_bits(r.grad_theta, reference.grad_theta));
    EXPECT_TRUE(same_bits(r.grad_y0, reference.grad_y0));
  }
}

// A chain of 10 cells whose ∂f/∂y has one super- and two sub-diagonals, declared
// (jacobian_band: rwd::auto_problem gives band_jacobian()).
struct BandedChain {
  static constexpr std::array<const char*, 10> state_names{"u0", "u1", "u2", "u3", "u4",
                                                           "u5", "u6", "u7", "u8", "u9"};
  static constexpr std::array<const char*, 3> parameter_names{"D", "a", "k"};
  static constexpr JacobianBand jacobian_band{/*upper=*/1, /*lower=*/2};
  template <class T>
  void rhs(double /*t*/, const T* y, const T* p, T* f) const {
    for (int i = 0; i < 10; ++i) {
      const T left = i >= 1 ? y[i - 1] : T(0.0);
      const T left2 = i >= 2 ? y[i - 2] : T(0.0);
      const T right = i + 1 < 10 ? y[i + 1] : T(0.0);
      f[i] = p[0] * (left - 2.0 * y[i] + right) + p[1] * (left2 - left) - p[2] * y[i] * y[i];
    }
  }
};

TEST(ImplicitAdjoint, AModelsDeclaredBandJacobianServesTheBandSolver) {
  const auto problem = auto_problem(BandedChain{});
  V y0(10), theta(3);
  for (int i = 0; i < 10; ++i) y0[i] = 1.0 + 0.1 * i;
  theta << 40.0, 3.0, 2.0;  // diffusion 40: stiff
  const auto band = gradient_with(problem, ImplicitLinearSolver::band, y0, theta, 1.0);
  const auto dense = gradient_with(problem, ImplicitLinearSolver::dense, y0, theta, 1.0);
  EXPECT_LT(relative_difference(band.grad_y0, dense.grad_y0), 1e-10);
  EXPECT_LT(relative_difference(band.grad_theta, dense.grad_theta), 1e-10);
  // A problem that states no band cannot have the band solver.
  NewtonOptions newton;
  newton.linear_solver = ImplicitLinearSolver::band;
  const Robertson robertson;
  EXPECT_THROW(DiagonallyImplicitRungeKutta(robertson, ImplicitTableau::sdirk2(),
                                            StepControl::fixed(0.0, 1e-3, 10), newton),
               InvalidArgument);
}

TEST(ImplicitAdjoint, ARunStoppedAnywhereResumesToTheUninterruptedBits) {
  testing::StoppingRobertson problem;
  std::vector<double> sizes;
  for (int k = 0; k < 40; ++k) sizes.push_back(1e-5 * std::pow(1.25, k));
  DiagonallyImplicitRungeKutta stepper(problem, ImplicitTableau::esdirk43(),
                                       StepControl::prescribed(0.0, sizes), tight_newton());
  testing::expect_stopped_runs_resume_to_the_same_bits(stepper, problem);
}

TEST(ImplicitAdjoint, AdaptiveRunUnderTheOnlineScheduleGivesTheStoreAllBits) {
  const Robertson problem;
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  const auto objective = Objective<EigenBackend>::terminal_squared_norm();
  DiagonallyImplicitRungeKutta stepper(problem, ImplicitTableau::esdirk32(),
                                       StepControl::adaptive(0.0, 40.0, 1e-6, 1e-10));
  StoreAllAdjoint reference_driver(stepper, objective);
  const auto reference = reference_driver.run(y0, theta);
  ASSERT_GT(reference.summary.steps, 20);
  for (int c : {2, 5}) {
    SCOPED_TRACE(c);
    CheckpointOptions options;
    options.drift_policy = DriftPolicy::fail;
    CheckpointedAdjoint driver(stepper, objective, options);
    const auto r = driver.run(y0, theta, revolve_schedule(c));
    EXPECT_EQ(r.summary.steps, reference.summary.steps);
    EXPECT_TRUE(same_bits(r.grad_theta, reference.grad_theta));
    EXPECT_TRUE(same_bits(r.grad_y0, reference.grad_y0));
  }
}

// Store-all keeping stages, adaptive steps: each step keeps its stages and its accepted size, and
// every step but the last is reversed from them — the store-all bits with none of the reverse
// sweep's Newton iterations but the last step's.
TEST(ImplicitAdjoint, StoreAllKeepingStagesGivesTheStoreAllBitsWithoutReSolvingSteps) {
  const Robertson problem;
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  const auto objective = Objective<EigenBackend>::terminal_squared_norm();
  for (const char* method : {"sdirk2", "esdirk43"}) {
    SCOPED_TRACE(method);
    DiagonallyImplicitRungeKutta stepper(problem, ImplicitTableau::by_name(method),
                                         StepControl::adaptive(0.0, 40.0, 1e-6, 1e-10));
    StoreAllAdjoint reference_driver(stepper, objective);
    const auto reference = reference_driver.run(y0, theta);
    const Index rerun_newton = stepper.implicit_counters().newton_iterations;
    ASSERT_GT(reference.summary.steps, 20);
    StoreAllOptions keep;
    keep.keep_stages = true;
    StoreAllAdjoint driver(stepper, objective, keep);
    const auto r = driver.run(y0, theta);
    EXPECT_EQ(r.loss, reference.loss);
    EXPECT_TRUE(same_bits(r.grad_theta, reference.grad_theta));
    EXPECT_TRUE(same_bits(r.grad_y0, reference.grad_y0));
    EXPECT_TRUE(same_bits(r.y_final, reference.y_final));
    EXPECT_EQ(r.summary.steps, reference.summary.steps);
    EXPECT_EQ(r.summary.forward_steps, r.summary.steps);
    EXPECT_EQ(r.summary.recomputed_steps, 0);
    EXPECT_EQ(r.summary.schedule, "store-all-stages");
    const Index kept_newton = stepper.implicit_counters().newton_iterations;
    // The forward run alone, for its Newton iterations: the kept run adds the last step's only.
    stepper.reset_counters();
    V y = y0;
    Carry carry = stepper.initial_carry(y, theta);
    while (!stepper.finished(carry)) stepper.step(y, carry, theta);
    const Index forward_newton = stepper.implicit_counters().newton_iterations;
    EXPECT_GT(kept_newton, forward_newton);
    EXPECT_LE(kept_newton, forward_newton + 20);
    EXPECT_GT(rerun_newton, forward_newton + reference.summary.steps);
  }
}

}  // namespace
}  // namespace rwd
