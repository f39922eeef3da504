// The discrete adjoint of the Rosenbrock engine (rewind/integrators/rosenbrock.hpp): on a stiff
// linear system whose matrix depends on θ it is the closed-form gradient (the product of the
// exact step matrices) to round-off for every method — the Jacobian's own dependence on θ
// included; on Robertson's stiff kinetics it agrees with central finite differences of the same
// discrete map; and it is the same bits under every schedule and store — revolve, uniform, disk,
// stage-aware (the reverse then evaluates no right-hand side), store-all-stages, the online
// schedule of an adaptive run — as the store-all gradient, with no drift in any replay, and after
// a run stopped three times and resumed from its disk snapshots; band
// stage matrices (a model that declares its band) give the dense ones' gradient.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Dense>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/forward_loss.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/rosenbrock.hpp"
#include "rewind/integrators/stepper_concepts.hpp"
#include "rewind/model.hpp"
#include "rewind/problems/brusselator2d.hpp"
#include "rewind/problems/robertson.hpp"
#include "rewind/schedule/schedules.hpp"
#include "stop_and_resume.hpp"
#include "support/error_message.hpp"
#include "support/scratch_directory.hpp"

namespace rwd {
namespace {

using V = Eigen::VectorXd;
using M = Eigen::MatrixXd;

bool same_bits(const V& a, const V& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(double)) == 0;
}

// y' = A(θ) y, a stiff 3×3 system (eigenvalues from about −1 to −2·10³) without a jacobian()
// member: the engine assembles J from n vjps. Its second derivatives: J = A(θ) does not depend
// on y, and ∇_θ [wᵀ A(θ) u] has the vjp's θ-part with y replaced by u.
struct StiffLinearFromVjps {
  using Backend = EigenBackend;
  using Vector = Backend::Vector;
  static constexpr bool autonomous = true;
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
  void jvp_vjp(double t, const Vector&, const Vector& theta, const Vector& u, const Vector& w,
               Vector& out_y, Vector& out_theta) const {
    Vector ignored(3);
    vjp(t, u, theta, w, ignored, out_theta);
    out_y.setZero();
  }
};
// The same with its dense Jacobian.
struct StiffLinear : StiffLinearFromVjps {
  void jacobian(double, const Vector&, const Vector& theta, M& J) const { J = matrix(theta); }
};

// The exact step matrix R of a Rosenbrock method on y' = A y (J = A): y_{n+1} = R y_n with
// U_i = K_i y_n, K_i = M⁻¹ (hγ A (I + Σ_{j<i} a_ij K_j) + Σ_{j<i} γ c_ij K_j), M = I − hγA,
// R = I + Σ m_i K_i.
M step_matrix(const RosenbrockTableau& t, const M& a, double h) {
  const Index n = a.rows();
  const M identity = M::Identity(n, n);
  const double hg = h * t.gamma;
  const auto lu = (identity - hg * a).partialPivLu();
  std::vector<M> k;
  M r = identity;
  for (int i = 0; i < t.stages; ++i) {
    M argument = identity, right = M::Zero(n, n);
    for (int j = 0; j < i; ++j) {
      argument += t.a_at(i, j) * k[static_cast<std::size_t>(j)];
      right += t.gamma * t.c_at(i, j) * k[static_cast<std::size_t>(j)];
    }
    k.push_back(lu.solve(hg * a * argument + right));
    r += t.m[static_cast<std::size_t>(i)] * k.back();
  }
  return r;
}

// What the engine declares it can do (rewind/integrators/stepper_concepts.hpp).
static_assert(TimeStepper<RosenbrockStepper<Robertson>>);
static_assert(SelfDescribingStepper<RosenbrockStepper<Robertson>>);
static_assert(StageKeepingStepper<RosenbrockStepper<Robertson>>);
static_assert(TimeLandingStepper<RosenbrockStepper<Robertson>>);
static_assert(SecondDerivativeProblem<Robertson> && DeclaredAutonomousProblem<Robertson>);

TEST(RosenbrockAdjoint, IsTheClosedFormGradientOfAStiffLinearSystemForEveryMethod) {
  StiffLinear problem;
  StiffLinearFromVjps from_vjps;
  V theta(3), y0(3);
  theta << 3.0, 1.5, 40.0;
  y0 << 1.0, -0.5, 2.0;
  const Index steps = 25;
  const double h = 0.02;
  auto closed_form = [&](const RosenbrockTableau& tableau, const V& th) {
    M power = M::Identity(3, 3);
    const M r = step_matrix(tableau, StiffLinear::matrix(th), h);
    for (Index n = 0; n < steps; ++n) power = r * power;
    return power;
  };
  for (const std::string& name : RosenbrockTableau::names()) {
    SCOPED_TRACE(name);
    const RosenbrockTableau tableau = RosenbrockTableau::by_name(name);
    RosenbrockStepper stepper(problem, tableau, StepControl::fixed(0.0, h, steps));
    StoreAllAdjoint driver(stepper, Objective<EigenBackend>::terminal_squared_norm());
    const auto result = driver.run(y0, theta);
    // J = ½|R^N y0|², dJ/dy0 = (R^N)ᵀ R^N y0.
    const M power = closed_form(tableau, theta);
    const V y_final = power * y0;
    const V expected = power.transpose() * y_final;
    EXPECT_LT((result.y_final - y_final).norm(), 1e-13 * y_final.norm());
    EXPECT_LT((result.grad_y0 - expected).norm(), 1e-12 * expected.norm())
        << result.grad_y0.transpose() << " vs " << expected.transpose();
    // dJ/dθ against central differences of the closed form: R depends on θ through A in the
    // stage arguments and in M = I − hγA (the jvp_vjp term).
    for (int j = 0; j < 3; ++j) {
      const double d = 1e-6 * theta[j];
      V plus = theta, minus = theta;
      plus[j] += d;
      minus[j] -= d;
      const double fd = (0.5 * (closed_form(tableau, plus) * y0).squaredNorm() -
                         0.5 * (closed_form(tableau, minus) * y0).squaredNorm()) /
                        (2.0 * d);
      EXPECT_NEAR(result.grad_theta[j], fd, 1e-7 * std::max(1.0, std::abs(fd))) << "θ" << j;
    }
    // J from n vjps: the same map, the same gradient to round-off.
    RosenbrockStepper assembled(from_vjps, tableau, StepControl::fixed(0.0, h, steps));
    StoreAllAdjoint assembled_driver(assembled, Objective<EigenBackend>::terminal_squared_norm());
    const auto r = assembled_driver.run(y0, theta);
    EXPECT_LT((r.grad_y0 - result.grad_y0).norm(), 1e-13 * result.grad_y0.norm());
    EXPECT_LT((r.grad_theta - result.grad_theta).norm(), 1e-13 * result.grad_theta.norm());
  }
}

// Robertson from t = 0 over `steps` prescribed steps growing geometrically from 10⁻⁵ by 1.25
// (to t ≈ 2.8 for 50 steps), as the implicit engine's test takes them.
RosenbrockStepper<Robertson> robertson_stepper(const Robertson& problem, const std::string& method,
                                               Index steps) {
  std::vector<double> sizes;
  for (Index k = 0; k < steps; ++k) sizes.push_back(1e-5 * std::pow(1.25, static_cast<double>(k)));
  return RosenbrockStepper(problem, RosenbrockTableau::by_name(method),
                           StepControl::prescribed(0.0, std::move(sizes)));
}

TEST(RosenbrockAdjoint, RobertsonGradientAgreesWithFiniteDifferencesOfTheSameMap) {
  const Robertson problem;
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  const auto objective = Objective<EigenBackend>::terminal_squared_norm();
  for (const std::string& method : RosenbrockTableau::names()) {
    SCOPED_TRACE(method);
    auto stepper = robertson_stepper(problem, method, 50);
    StoreAllAdjoint driver(stepper, objective);
    const auto result = driver.run(y0, theta);
    EXPECT_EQ(stepper.rosenbrock_counters().second_derivative_evaluations,
              50 * stepper.tableau().stages);
    // Fourth-order central differences (step 1e-4 relative: truncation ~1e-16, round-off
    // ~1e-11 relative); no Newton residual here, the map is smooth.
    auto derivative = [](const auto& loss) {
      return (-loss(2.0) + 8.0 * loss(1.0) - 8.0 * loss(-1.0) + loss(-2.0)) / 12.0;
    };
    for (int j = 0; j < 3; ++j) {
      const double d = 1e-4 * theta[j];
      const double fd = derivative([&](double k) {
                          V shifted = theta;
                          shifted[j] += k * d;
                          return driver.run(y0, shifted).loss;
                        }) /
                        d;
      EXPECT_NEAR(result.grad_theta[j], fd, 1e-9 * std::abs(fd) + 1e-17) << "p" << j + 1;
    }
    for (int j : {0, 2}) {
      const double d = 1e-4;
      const double fd = derivative([&](double k) {
                          V shifted = y0;
                          shifted[j] += k * d;
                          return driver.run(shifted, theta).loss;
                        }) /
                        d;
      EXPECT_NEAR(result.grad_y0[j], fd, 1e-9 * std::abs(fd)) << "y0_" << j + 1;
    }
  }
}

TEST(RosenbrockAdjoint, EveryScheduleAndStoreGivesTheStoreAllBits) {
  const Robertson problem;
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  const auto objective = Objective<EigenBackend>::terminal_squared_norm();
  for (const std::string& method : {std::string("rodas4"), std::string("ros34pw2")}) {
    SCOPED_TRACE(method);
    auto stepper = robertson_stepper(problem, method, 60);
    const int kept = stepper.stage_count();
    StoreAllAdjoint reference_driver(stepper, objective);
    const auto reference = reference_driver.run(y0, theta);
    test::ScratchDirectory scratch;
    for (const auto& [name, planner] : std::vector<std::pair<std::string, Planner>>{
             {"revolve c=3", revolve_schedule(3)},
             {"uniform k=7", uniform_schedule(7)},
             {"revolve c=4 on disk", on_disk(revolve_schedule(4))},
             {"stage-aware 20 units", stage_aware_schedule(20, kept)},
             {"store-all stages", store_all_stages_schedule(kept)}}) {
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
}

TEST(RosenbrockAdjoint, StageKeepingReverseEvaluatesNoRightHandSide) {
  const Robertson problem;
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  auto stepper = robertson_stepper(problem, "rodas4", 40);
  CheckpointedAdjoint driver(stepper, Objective<EigenBackend>::terminal_squared_norm());
  stepper.reset_counters();
  driver.run(y0, theta, store_all_stages_schedule(stepper.stage_count()));
  // Every step ran once, forward (6 right-hand sides each); the reverse read the kept vectors.
  EXPECT_EQ(stepper.counters().rhs_evaluations, 40 * 6);
  EXPECT_EQ(stepper.counters().adjoint_steps, 40);
  StoreAllAdjoint store_all(stepper, Objective<EigenBackend>::terminal_squared_norm());
  stepper.reset_counters();
  store_all.run(y0, theta);
  EXPECT_EQ(stepper.counters().rhs_evaluations, 2 * 40 * 6)
      << "store-all re-runs each step in its reverse sweep";
}

TEST(RosenbrockAdjoint, AdaptiveRunUnderTheOnlineScheduleGivesTheStoreAllBits) {
  const Robertson problem;
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  const auto objective = Objective<EigenBackend>::terminal_squared_norm();
  for (const std::string& method : RosenbrockTableau::names()) {
    SCOPED_TRACE(method);
    RosenbrockStepper stepper(problem, RosenbrockTableau::by_name(method),
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
      EXPECT_TRUE(r.drift.bitwise_identical());
    }
    // Store-all keeping each step's vectors and accepted size: the same bits, no step re-run.
    StoreAllOptions keep;
    keep.keep_stages = true;
    StoreAllAdjoint keeping(stepper, objective, keep);
    const auto kept = keeping.run(y0, theta);
    EXPECT_TRUE(same_bits(kept.grad_theta, reference.grad_theta));
    EXPECT_TRUE(same_bits(kept.grad_y0, reference.grad_y0));
    EXPECT_EQ(kept.summary.forward_steps, reference.summary.steps);
  }
}

// A chain of 8 cells, stiff by diffusion, whose ∂f/∂y has one super- and two sub-diagonals,
// declared (rwd::auto_problem then gives band_jacobian() and the second derivatives).
struct BandedChain {
  static constexpr std::array<const char*, 8> state_names{"u0", "u1", "u2", "u3",
                                                          "u4", "u5", "u6", "u7"};
  static constexpr std::array<const char*, 3> parameter_names{"D", "a", "k"};
  static constexpr JacobianBand jacobian_band{/*upper=*/1, /*lower=*/2};
  static constexpr bool autonomous = true;
  template <class T>
  void rhs(double /*t*/, const T* y, const T* p, T* f) const {
    for (int i = 0; i < 8; ++i) {
      const T left = i >= 1 ? y[i - 1] : T(0.0);
      const T left2 = i >= 2 ? y[i - 2] : T(0.0);
      const T right = i + 1 < 8 ? y[i + 1] : T(0.0);
      f[i] = p[0] * (left - 2.0 * y[i] + right) + p[1] * (left2 - left) - p[2] * y[i] * y[i];
    }
  }
};

TEST(RosenbrockAdjoint, BandStageMatricesGiveTheDenseGradient) {
  const auto problem = auto_problem(BandedChain{});
  V y0(8), theta(3);
  for (int i = 0; i < 8; ++i) y0[i] = 1.0 + 0.1 * i;
  theta << 40.0, 3.0, 2.0;
  const auto gradient = [&](ImplicitLinearSolver solver) {
    RosenbrockStepper stepper(problem, RosenbrockTableau::rodas4(),
                              StepControl::adaptive(0.0, 1.0, 1e-8, 1e-10), solver);
    EXPECT_NE(
        stepper.describe().find(solver == ImplicitLinearSolver::band ? "band LU" : "dense LU"),
        std::string::npos)
        << stepper.describe();
    StoreAllAdjoint driver(stepper, Objective<EigenBackend>::terminal_squared_norm());
    return driver.run(y0, theta);
  };
  const auto band = gradient(ImplicitLinearSolver::band);
  const auto dense = gradient(ImplicitLinearSolver::dense);
  EXPECT_EQ(band.summary.steps, dense.summary.steps);
  EXPECT_LT((band.grad_theta - dense.grad_theta).norm() / dense.grad_theta.norm(), 1e-10);
  EXPECT_LT((band.grad_y0 - dense.grad_y0).norm() / dense.grad_y0.norm(), 1e-10);
  // Robertson states no band and declares no sparse Jacobian.
  const Robertson robertson;
  for (const auto solver : {ImplicitLinearSolver::band, ImplicitLinearSolver::sparse})
    testing::expect_message(testing::error_message<InvalidArgument>([&] {
                              RosenbrockStepper(robertson, RosenbrockTableau::rodas4(),
                                                StepControl::fixed(0.0, 1e-3, 10), solver);
                            }),
                            "method 'rodas4': the");
}

TEST(RosenbrockAdjoint, OnTheBrusselatorEveryLinearSolverGivesTheGradientOfTheSameMap) {
  // The built-in Brusselator gives its second derivatives and declares its band and its sparse
  // Jacobian: rodas4's gradient is the same with dense, band and sparse (KLU) stage matrices and
  // agrees with central differences of the same discrete map.
  const Brusselator2D problem(4);
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  const auto objective = Objective<EigenBackend>::terminal_squared_norm();
  const auto control = StepControl::fixed(0.0, 0.1, 20);
  std::vector<ImplicitLinearSolver> solvers{ImplicitLinearSolver::dense,
                                            ImplicitLinearSolver::band};
  if (kSparseLuAvailable) solvers.push_back(ImplicitLinearSolver::sparse);
  std::vector<GradientResult<V>> results;
  for (const auto solver : solvers) {
    RosenbrockStepper stepper(problem, RosenbrockTableau::rodas4(), control, solver);
    StoreAllAdjoint driver(stepper, objective);
    results.push_back(driver.run(y0, theta));
  }
  for (std::size_t i = 1; i < results.size(); ++i) {
    EXPECT_LT((results[i].grad_theta - results[0].grad_theta).norm() / results[0].grad_theta.norm(),
              1e-12);
    EXPECT_LT((results[i].grad_y0 - results[0].grad_y0).norm() / results[0].grad_y0.norm(), 1e-12);
  }
  RosenbrockStepper stepper(problem, RosenbrockTableau::rodas4(), control);
  for (Index k = 0; k < 3; ++k) {
    const double h = 1e-5 * theta[k];
    V plus = theta, minus = theta;
    plus[k] += h;
    minus[k] -= h;
    const double fd =
        (forward_loss(stepper, objective, y0, plus) - forward_loss(stepper, objective, y0, minus)) /
        (2.0 * h);
    EXPECT_NEAR(results[0].grad_theta[k], fd, 1e-7 * std::abs(fd)) << "theta[" << k << "]";
  }
}

TEST(RosenbrockAdjoint, ARunStoppedAnywhereResumesToTheUninterruptedBits) {
  testing::StoppingRobertson problem;
  RosenbrockStepper stepper(problem, RosenbrockTableau::rodas4(),
                            StepControl::adaptive(0.0, 40.0, 1e-6, 1e-10));
  testing::expect_stopped_runs_resume_to_the_same_bits(stepper, problem);
}

}  // namespace
}  // namespace rwd
