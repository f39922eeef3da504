// The Rosenbrock methods on stencil models (rewind/stencil_model.hpp): the derived second
// derivatives jvp_vjp — ∇_y and ∇_θ of wᵀ (∂f/∂y) u by nested forward mode — equal the built-in
// Brusselator's hand-written ones (to 1e-13) and central differences of the jvp on a periodic
// 2-D, a 1-D and a fixed-wall model, with the same bits on 1, 2 and 4 threads and with the read
// check on; the exact Rosenbrock adjoint of a stencil model is the built-in Brusselator's gradient
// with dense and sparse (KLU) stage matrices, agrees with finite differences of the same map, and
// has the store-all bits under revolve and stage keeping.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "problems/models/stencil_models.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/forward_loss.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/rosenbrock.hpp"
#include "rewind/parallel.hpp"
#include "rewind/problems/brusselator2d.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/schedule/schedules.hpp"
#include "rewind/stencil_model.hpp"
#include "support/error_message.hpp"
#include "support/random_data.hpp"

namespace rwd {
namespace {

using Vector = EigenBackend::Vector;
using testing::BrusselatorStencil;
using testing::GrayScottStencil;
using testing::Heat2DStencil;
using testing::Lorenz96Stencil;

static_assert(SecondDerivativeProblem<StencilProblem<BrusselatorStencil>> &&
              DeclaredAutonomousProblem<StencilProblem<BrusselatorStencil>>);

bool same_bits(const Vector& a, const Vector& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(double)) == 0;
}

// The built-in Brusselator interleaves its species per cell; a stencil problem stores each field
// whole: stencil index k·cells + c is built-in index 2c + k.
Eigen::VectorXi built_in_index(Index cells) {
  Eigen::VectorXi at(2 * cells);
  for (Index k = 0; k < 2; ++k)
    for (Index c = 0; c < cells; ++c) at[k * cells + c] = static_cast<int>(2 * c + k);
  return at;
}
Vector to_stencil_order(const Vector& interleaved, const Eigen::VectorXi& at) {
  Vector out(at.size());
  for (Index i = 0; i < at.size(); ++i) out[i] = interleaved[at[i]];
  return out;
}

TEST(StencilSecondDerivatives, EqualTheBuiltInBrusselatorsHandWrittenOnes) {
  std::mt19937_64 rng(51);
  const Index n = 7, cells = n * n;
  const Brusselator2D built_in(n);
  const auto stencil = stencil_problem(BrusselatorStencil{}, n, n);
  const Vector theta{{1.1, 3.3, 0.003}};
  const Vector y = built_in.default_initial_state() +
                   testing::random_vector(built_in.state_size(), rng, 0.0, 0.5);
  const Vector u = testing::random_vector(2 * cells, rng, -1.0, 1.0);
  const Vector w = testing::random_vector(2 * cells, rng, -1.0, 1.0);
  Vector hand_y(2 * cells), hand_theta(3), derived_y(2 * cells), derived_theta(3);
  built_in.jvp_vjp(0.0, y, theta, u, w, hand_y, hand_theta);
  const Eigen::VectorXi at = built_in_index(cells);
  stencil.jvp_vjp(0.0, to_stencil_order(y, at), theta, to_stencil_order(u, at),
                  to_stencil_order(w, at), derived_y, derived_theta);
  const Vector hand_in_stencil_order = to_stencil_order(hand_y, at);
  EXPECT_LE((derived_y - hand_in_stencil_order).cwiseAbs().maxCoeff(),
            1e-13 * hand_in_stencil_order.cwiseAbs().maxCoeff());
  EXPECT_LE((derived_theta - hand_theta).cwiseAbs().maxCoeff(),
            1e-13 * hand_theta.cwiseAbs().maxCoeff());
  EXPECT_GT(derived_y.cwiseAbs().minCoeff(), 0.0);  // every entry carries a second derivative
}

// ∇_y and ∇_θ of wᵀ (∂f/∂y) u against central differences of the jvp, along a random direction
// in y and along each parameter. The models here are at most quadratic in y and their Jacobians
// linear in θ, so the differences are exact up to round-off.
template <class Model>
void expect_second_derivatives_difference_the_jvp(const StencilProblem<Model>& problem,
                                                  const Vector& theta, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const Index n = problem.state_size(), p = problem.parameter_size();
  const Vector y = testing::random_vector(n, rng, 0.0, 1.0);
  const Vector u = testing::random_vector(n, rng, -1.0, 1.0);
  const Vector w = testing::random_vector(n, rng, -1.0, 1.0);
  const Vector d = testing::random_vector(n, rng, -1.0, 1.0);
  Vector out_y(n), out_theta(p), plus(n), minus(n);
  problem.jvp_vjp(0.0, y, theta, u, w, out_y, out_theta);
  const double eps = 1e-3;
  problem.jvp(0.0, y + eps * d, theta, u, plus);
  problem.jvp(0.0, y - eps * d, theta, u, minus);
  const double along_d = w.dot(plus - minus) / (2.0 * eps);
  EXPECT_NEAR(out_y.dot(d), along_d, 1e-10 * (std::abs(along_d) + 1.0));
  for (Index k = 0; k < p; ++k) {
    Vector up = theta, down = theta;
    const double step = eps * (std::abs(theta[k]) + 1.0);
    up[k] += step;
    down[k] -= step;
    problem.jvp(0.0, y, up, u, plus);
    problem.jvp(0.0, y, down, u, minus);
    const double along_k = w.dot(plus - minus) / (2.0 * step);
    EXPECT_NEAR(out_theta[k], along_k, 1e-10 * (std::abs(along_k) + 1.0)) << "theta[" << k << "]";
  }
}

TEST(StencilSecondDerivatives, DifferenceTheJvpOnPeriodicOneDimensionalAndWalledGrids) {
  {
    SCOPED_TRACE("Gray-Scott, periodic 2-D");
    expect_second_derivatives_difference_the_jvp(stencil_problem(GrayScottStencil{}, 9, 11),
                                                 GrayScott<>::default_parameters(), 61);
  }
  {
    SCOPED_TRACE("Lorenz-96, periodic 1-D");
    expect_second_derivatives_difference_the_jvp(stencil_problem(Lorenz96Stencil{}, 40),
                                                 Vector{{8.0}}, 62);
  }
  {
    // The Jacobian does not depend on y (out_y is 0); its θ-part does not vanish.
    SCOPED_TRACE("Heat2D, fixed walls");
    const auto heat = stencil_problem(Heat2DStencil(8), 8, 8);
    expect_second_derivatives_difference_the_jvp(heat, Vector{{0.2, 0.7}}, 63);
  }
}

TEST(StencilSecondDerivatives, SameBitsOnAnyThreadCountAndToRoundOffWithTheReadCheck) {
  if (!kThreadsAvailable) GTEST_SKIP() << "built without OpenMP";
  const auto problem = stencil_problem(BrusselatorStencil{}, 130, 130);
  ASSERT_GT(problem.block_count(), 2);
  std::mt19937_64 rng(64);
  const Index n = problem.state_size();
  const Vector theta{{1.0, 3.4, 0.002}};
  const Vector y = testing::random_vector(n, rng, 0.5, 2.0);
  const Vector u = testing::random_vector(n, rng, -1.0, 1.0);
  const Vector w = testing::random_vector(n, rng, -1.0, 1.0);
  auto second = [&](const StencilProblem<BrusselatorStencil>& at) {
    Vector out_y(n), out_theta(3);
    at.jvp_vjp(0.0, y, theta, u, w, out_y, out_theta);
    Vector both(n + 3);
    both << out_y, out_theta;
    return both;
  };
  set_thread_count(1);
  const Vector one = second(problem);
  for (const int threads : {2, 4}) {
    set_thread_count(threads);
    EXPECT_TRUE(same_bits(second(problem), one)) << threads << " threads";
  }
  set_thread_count(1);
  // The read check evaluates cell by cell, adding into each entry in cell order and summing the
  // parameter parts in cell order, where the vectorised runs add line group by line group and
  // sum in four lanes: the same derivatives to round-off, as the vjp's.
  const auto checked =
      stencil_problem(BrusselatorStencil{}, {130, 130}, StencilOptions{.check_reads = true});
  const Vector with_check = second(checked);
  for (const auto& [part, size] : {std::pair<Index, Index>{0, n}, std::pair<Index, Index>{n, 3}})
    EXPECT_LE((with_check.segment(part, size) - one.segment(part, size)).norm(),
              1e-14 * one.segment(part, size).norm())
        << "read check on, entries " << part << " to " << part + size;
}

TEST(StencilSecondDerivatives, RefuseADirectionOfTheWrongLength) {
  const auto problem = stencil_problem(GrayScottStencil{}, 4, 4);
  const Vector theta = GrayScott<>::default_parameters(), y = Vector::Zero(32);
  Vector out_y(32), out_theta(4);
  testing::expect_message(testing::error_message<InvalidArgument>([&] {
                            problem.jvp_vjp(0.0, y, theta, Vector::Zero(31), y, out_y, out_theta);
                          }),
                          "direction u");
}

// The Rosenbrock adjoint of the stencil Brusselator against the built-in Brusselator's: the same
// numbers in another order, so the same gradient to round-off.
TEST(StencilRosenbrockAdjoint, IsTheBuiltInBrusselatorsGradientWithEveryLinearSolver) {
  const Index n = 5, cells = n * n;
  const Brusselator2D built_in(n);
  const auto stencil = stencil_problem(BrusselatorStencil{}, n, n);
  const Vector theta = built_in.default_parameters();
  const Vector interleaved_y0 = built_in.default_initial_state();
  const Eigen::VectorXi at = built_in_index(cells);
  const Vector y0 = to_stencil_order(interleaved_y0, at);
  const auto objective = Objective<EigenBackend>::terminal_squared_norm();
  const auto control = StepControl::fixed(0.0, 0.2, 20);
  RosenbrockStepper reference_stepper(built_in, RosenbrockTableau::rodas4(), control,
                                      ImplicitLinearSolver::dense);
  StoreAllAdjoint reference_driver(reference_stepper, objective);
  const auto reference = reference_driver.run(interleaved_y0, theta);
  const Vector reference_y0 = to_stencil_order(reference.grad_y0, at);
  std::vector<ImplicitLinearSolver> solvers{ImplicitLinearSolver::dense};
  if (kSparseLuAvailable) solvers.push_back(ImplicitLinearSolver::sparse);
  for (const auto solver : solvers) {
    SCOPED_TRACE(static_cast<int>(solver));
    RosenbrockStepper stepper(stencil, RosenbrockTableau::rodas4(), control, solver);
    StoreAllAdjoint driver(stepper, objective);
    const auto result = driver.run(y0, theta);
    EXPECT_NEAR(result.loss, reference.loss, 1e-13 * reference.loss);
    EXPECT_LE((result.grad_theta - reference.grad_theta).norm(),
              1e-12 * reference.grad_theta.norm());
    EXPECT_LE((result.grad_y0 - reference_y0).norm(), 1e-12 * reference_y0.norm());
  }
  // And against central differences of the same discrete map, extrapolated (Richardson: the loss
  // is curved enough that a plain difference's O(h²) error is 1e-7 of the gradient at h = 1e-5).
  RosenbrockStepper stepper(stencil, RosenbrockTableau::ros3p(), control);
  StoreAllAdjoint driver(stepper, objective);
  const auto result = driver.run(y0, theta);
  auto central = [&](Index k, double h) {
    Vector plus = theta, minus = theta;
    plus[k] += h;
    minus[k] -= h;
    return (forward_loss(stepper, objective, y0, plus) -
            forward_loss(stepper, objective, y0, minus)) /
           (2.0 * h);
  };
  for (Index k = 0; k < 3; ++k) {
    const double h = 1e-4 * theta[k];
    const double fd = (4.0 * central(k, h / 2.0) - central(k, h)) / 3.0;
    EXPECT_NEAR(result.grad_theta[k], fd, 1e-8 * std::abs(fd)) << "theta[" << k << "]";
  }
}

TEST(StencilRosenbrockAdjoint, RevolveAndStageKeepingGiveTheStoreAllBits) {
  const auto problem = stencil_problem(GrayScottStencil{}, 12, 12);
  const Vector theta = GrayScott<>::default_parameters();
  std::mt19937_64 rng(65);
  const Vector y0 = testing::random_vector(problem.state_size(), rng, 0.2, 0.8);
  const auto objective = Objective<EigenBackend>::terminal_squared_norm();
  RosenbrockStepper stepper(problem, RosenbrockTableau::ros3p(), StepControl::fixed(0.0, 2.0, 24));
  StoreAllAdjoint store_all(stepper, objective);
  const auto reference = store_all.run(y0, theta);
  CheckpointOptions options;
  options.drift_policy = DriftPolicy::fail;
  CheckpointedAdjoint driver(stepper, objective, options);
  for (const auto& planner :
       {revolve_schedule(3), stage_aware_schedule(12, stepper.stage_count())}) {
    const auto replayed = driver.run(y0, theta, planner);
    EXPECT_TRUE(same_bits(replayed.grad_theta, reference.grad_theta));
    EXPECT_TRUE(same_bits(replayed.grad_y0, reference.grad_y0));
    EXPECT_TRUE(replayed.drift.bitwise_identical());
  }
  StoreAllOptions keep;
  keep.keep_stages = true;
  StoreAllAdjoint keeping(stepper, objective, keep);
  const auto kept = keeping.run(y0, theta);
  EXPECT_TRUE(same_bits(kept.grad_theta, reference.grad_theta));
  EXPECT_TRUE(same_bits(kept.grad_y0, reference.grad_y0));
}

}  // namespace
}  // namespace rwd
