// The implicit engine's sparse and matrix-free stage solves (rwd::ImplicitLinearSolver::sparse:
// the problem's sparse Jacobian factored by KLU; ::gmres: GMRES on the problem's jvp and vjp;
// ::gmres_ilu: the same GMRES right-preconditioned by ILU(0) of the sparse Jacobian, in fewer
// products):
// on the Brusselator written as a stencil model, the esdirk43 gradient is the dense solver's to
// round-off with either; every schedule and store gives the store-all bits with no drift (each
// replayed factorisation or Krylov solve repeats the first run's), and so does every thread
// count; a problem without a sparse
// Jacobian or a jvp, and a malformed pattern, are refused before any work, naming the method and
// the rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "problems/models/stencil_models.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/diagonally_implicit_runge_kutta.hpp"
#include "rewind/integrators/sparse_jacobian_check.hpp"
#include "rewind/parallel.hpp"
#include "rewind/problems/brusselator2d.hpp"
#include "rewind/problems/robertson.hpp"
#include "rewind/schedule/schedules.hpp"
#include "rewind/stencil_model.hpp"
#include "support/error_message.hpp"
#include "support/scratch_directory.hpp"

namespace rwd {
namespace {

using V = Eigen::VectorXd;
using testing::BrusselatorStencil;

bool same_bits(const V& a, const V& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(double)) == 0;
}

double relative(const V& a, const V& b) {
  return (a - b).norm() / b.norm();
}

NewtonOptions newton_with(ImplicitLinearSolver solver) {
  NewtonOptions newton;
  newton.rtol = 1e-12;
  newton.atol = 1e-14;
  newton.linear_solver = solver;
  return newton;
}

// The stencil Brusselator on an 8 × 8 grid (128 unknowns) near its steady state, perturbed.
struct Setting {
  StencilProblem<BrusselatorStencil> problem = stencil_problem(BrusselatorStencil{}, 8, 8);
  V theta{{1.0, 3.4, 0.002}};
  V y0;
  Setting() {
    const Index cells = 64;
    y0.resize(2 * cells);
    for (Index c = 0; c < cells; ++c) {
      y0[c] = 1.0 + 0.4 * std::sin(0.9 * static_cast<double>(c));
      y0[cells + c] = 3.4 + 0.3 * std::cos(0.5 * static_cast<double>(c));
    }
  }
};

// The esdirk43 gradient with `solver` against the dense LU's on the same adaptive run: equal
// steps, and the state and gradients within `tolerance` (relative); the stepper for counts.
void expect_dense_gradient(ImplicitLinearSolver solver, double tolerance,
                           const std::function<void(const ImplicitCounters&)>& check_counts) {
  const Setting s;
  const auto control = StepControl::adaptive(0.0, 2.0, 1e-7, 1e-9);
  const auto objective = Objective<EigenBackend>::terminal_squared_norm();
  DiagonallyImplicitRungeKutta stepper(s.problem, ImplicitTableau::esdirk43(), control,
                                       newton_with(solver));
  DiagonallyImplicitRungeKutta dense(s.problem, ImplicitTableau::esdirk43(), control,
                                     newton_with(ImplicitLinearSolver::dense));
  StoreAllAdjoint driver(stepper, objective), dense_driver(dense, objective);
  const auto r = driver.run(s.y0, s.theta);
  const auto d = dense_driver.run(s.y0, s.theta);
  EXPECT_EQ(r.summary.steps, d.summary.steps);
  EXPECT_GT(r.summary.steps, 10);
  EXPECT_LT(relative(r.y_final, d.y_final), 0.1 * tolerance);
  EXPECT_LT(relative(r.grad_y0, d.grad_y0), tolerance);
  EXPECT_LT(relative(r.grad_theta, d.grad_theta), tolerance);
  EXPECT_GT(dense.implicit_counters().factorizations, 0);
  check_counts(stepper.implicit_counters());
}

// Fixed esdirk32 steps with `solver`: revolve, uniform, stage-aware and disk schedules give the
// store-all bits, with no drift.
void expect_store_all_bits_under_every_schedule(ImplicitLinearSolver solver) {
  const Setting s;
  DiagonallyImplicitRungeKutta stepper(s.problem, ImplicitTableau::esdirk32(),
                                       StepControl::fixed(0.0, 0.05, 24), newton_with(solver));
  const auto objective = Objective<EigenBackend>::terminal_squared_norm();
  StoreAllAdjoint reference_driver(stepper, objective);
  const auto reference = reference_driver.run(s.y0, s.theta);
  const test::ScratchDirectory scratch;
  const std::vector<Planner> planners{revolve_schedule(3), uniform_schedule(4),
                                      stage_aware_schedule(12, 4), on_disk(revolve_schedule(4))};
  for (const Planner& planner : planners) {
    CheckpointOptions options;
    options.drift_policy = DriftPolicy::fail;
    options.disk.directory = scratch.path();
    CheckpointedAdjoint driver(stepper, objective, options);
    const auto r = driver.run(s.y0, s.theta, planner);
    EXPECT_TRUE(same_bits(r.grad_theta, reference.grad_theta));
    EXPECT_TRUE(same_bits(r.grad_y0, reference.grad_y0));
  }
}

TEST(ImplicitLinearSolver, SparseGradientIsTheDenseSolversToRoundOff) {
  if (!kSparseLuAvailable) GTEST_SKIP() << "built without KLU";
  expect_dense_gradient(ImplicitLinearSolver::sparse, 1e-10, [](const ImplicitCounters& c) {
    EXPECT_GT(c.factorizations, 0);
    EXPECT_EQ(c.gmres_products, 0);
  });
}

TEST(ImplicitLinearSolver, SparseUnderEveryScheduleAndStoreGivesTheStoreAllBits) {
  if (!kSparseLuAvailable) GTEST_SKIP() << "built without KLU";
  expect_store_all_bits_under_every_schedule(ImplicitLinearSolver::sparse);
}

TEST(ImplicitLinearSolver, GmresGradientIsTheDenseSolversToRoundOff) {
  // Full Newton with inexact (10⁻³) Krylov updates converges the stages to the same Newton
  // tolerance as the dense LU's simplified Newton, so the two runs differ by about that
  // tolerance, and the error estimate's filter is solved to the Krylov tolerance too, which moves
  // the accepted sizes a little; the transposed solves are exact to 10⁻¹⁴. Nothing is factored.
  expect_dense_gradient(ImplicitLinearSolver::gmres, 3e-9, [](const ImplicitCounters& c) {
    EXPECT_EQ(c.factorizations, 0);
    EXPECT_GT(c.gmres_products, 0);
  });
  const Setting s;
  DiagonallyImplicitRungeKutta gmres(s.problem, ImplicitTableau::esdirk43(),
                                     StepControl::fixed(0.0, 0.1, 2),
                                     newton_with(ImplicitLinearSolver::gmres));
  EXPECT_NE(gmres.describe().find("matrix-free GMRES"), std::string::npos) << gmres.describe();
}

TEST(ImplicitLinearSolver, GmresUnderEveryScheduleAndStoreGivesTheStoreAllBits) {
  expect_store_all_bits_under_every_schedule(ImplicitLinearSolver::gmres);
}

TEST(ImplicitLinearSolver, GmresGivesTheSameBitsOnAnyThreadCount) {
  // The built-in Brusselator on a 128 × 128 grid (32768 unknowns: its rhs, jvp and vjp rows run
  // on several threads) gives the same bits on any thread count; the Krylov iteration's vector
  // operations are rewind's own, in a fixed order: so is the implicit gradient.
  const Brusselator2D problem(128);
  const V y0 = problem.default_initial_state(), theta = problem.default_parameters();
  const auto objective = Objective<EigenBackend>::terminal_squared_norm();
  DiagonallyImplicitRungeKutta stepper(problem, ImplicitTableau::esdirk43(),
                                       StepControl::fixed(0.0, 0.02, 1),
                                       newton_with(ImplicitLinearSolver::gmres));
  const int threads_before = thread_count();
  std::vector<GradientResult<V>> results;
  for (const int threads : {1, 3}) {
    set_thread_count(threads);
    StoreAllAdjoint driver(stepper, objective);
    results.push_back(driver.run(y0, theta));
  }
  set_thread_count(threads_before);
  for (std::size_t i = 1; i < results.size(); ++i) {
    EXPECT_TRUE(same_bits(results[i].grad_theta, results[0].grad_theta)) << i;
    EXPECT_TRUE(same_bits(results[i].grad_y0, results[0].grad_y0)) << i;
  }
}

TEST(ImplicitLinearSolver, IluPreconditionedGmresGradientIsTheDenseSolversInFewerProducts) {
  Index unpreconditioned = 0;
  expect_dense_gradient(ImplicitLinearSolver::gmres, 3e-9,
                        [&](const ImplicitCounters& c) { unpreconditioned = c.gmres_products; });
  expect_dense_gradient(ImplicitLinearSolver::gmres_ilu, 3e-9, [&](const ImplicitCounters& c) {
    EXPECT_EQ(c.factorizations, 0);
    EXPECT_GT(c.gmres_products, 0);
    EXPECT_LT(10 * c.gmres_products, 7 * unpreconditioned)
        << c.gmres_products << " products preconditioned, " << unpreconditioned << " without";
  });
  const Setting s;
  DiagonallyImplicitRungeKutta stepper(s.problem, ImplicitTableau::esdirk43(),
                                       StepControl::fixed(0.0, 0.1, 2),
                                       newton_with(ImplicitLinearSolver::gmres_ilu));
  EXPECT_NE(stepper.describe().find("GMRES preconditioned by ILU(0)"), std::string::npos)
      << stepper.describe();
}

TEST(ImplicitLinearSolver, IluPreconditionedGmresUnderEveryScheduleAndStoreGivesTheStoreAllBits) {
  expect_store_all_bits_under_every_schedule(ImplicitLinearSolver::gmres_ilu);
}

// The Brusselator stencil with a pattern that lists row 3's columns backwards.
struct MisdeclaredPattern : StencilProblem<BrusselatorStencil> {
  MisdeclaredPattern()
      : StencilProblem<BrusselatorStencil>(stencil_problem(BrusselatorStencil{}, 4, 4)) {}
  SparsityPattern sparsity() const {
    SparsityPattern p = StencilProblem<BrusselatorStencil>::sparsity();
    std::reverse(p.columns.begin() + p.row_starts[3], p.columns.begin() + p.row_starts[4]);
    return p;
  }
};

TEST(ImplicitLinearSolver, RefusesAProblemWithoutASparseJacobianAndAMalformedPattern) {
  const Robertson robertson;
  testing::expect_message(testing::error_message<InvalidArgument>([&] {
                            DiagonallyImplicitRungeKutta(robertson, ImplicitTableau::sdirk2(),
                                                         StepControl::fixed(0.0, 1e-3, 10),
                                                         newton_with(ImplicitLinearSolver::sparse));
                          }),
                          "method 'sdirk2': the sparse linear solver needs a problem that "
                          "declares its sparse Jacobian");
  testing::expect_message(
      testing::error_message<InvalidArgument>([&] {
        DiagonallyImplicitRungeKutta(robertson, ImplicitTableau::sdirk2(),
                                     StepControl::fixed(0.0, 1e-3, 10),
                                     newton_with(ImplicitLinearSolver::gmres_ilu));
      }),
      "method 'sdirk2': the gmres-ilu linear solver needs the problem's Jacobian-vector product");
  const MisdeclaredPattern misdeclared;
  testing::expect_message(testing::error_message<InvalidArgument>([&] {
                            DiagonallyImplicitRungeKutta(
                                misdeclared, ImplicitTableau::sdirk2(),
                                StepControl::fixed(0.0, 1e-3, 10),
                                newton_with(ImplicitLinearSolver::gmres_ilu));
                          }),
                          "the problem's sparsity() has row 3's columns out of order");
  if (!kSparseLuAvailable) GTEST_SKIP() << "built without KLU";
  testing::expect_message(testing::error_message<InvalidArgument>([&] {
                            DiagonallyImplicitRungeKutta(misdeclared, ImplicitTableau::sdirk2(),
                                                         StepControl::fixed(0.0, 1e-3, 10),
                                                         newton_with(ImplicitLinearSolver::sparse));
                          }),
                          "the problem's sparsity() has row 3's columns out of order");
}

// A Brusselator whose declared pattern leaves out one coupling: row 5's last entry (a neighbour)
// is dropped from sparsity() and from jacobian_values() alike — a pattern declared wrongly, which
// the sparse solvers would factor without a word.
struct PatternMissingANeighbour : Brusselator2D {
  PatternMissingANeighbour() : Brusselator2D(4) {}
  static constexpr Index kRow = 5;
  SparsityPattern sparsity() const {
    SparsityPattern p = Brusselator2D::sparsity();
    const Index dropped = p.row_starts[kRow + 1] - 1;
    p.columns.erase(p.columns.begin() + dropped);
    for (Index r = kRow + 1; r <= p.size; ++r) --p.row_starts[static_cast<std::size_t>(r)];
    return p;
  }
  Index dropped_column() const {
    const SparsityPattern full = Brusselator2D::sparsity();
    return full.columns[static_cast<std::size_t>(full.row_starts[kRow + 1] - 1)];
  }
  void jacobian_values(double t, const V& y, const V& theta, std::span<double> values) const {
    const SparsityPattern full = Brusselator2D::sparsity();
    std::vector<double> all(full.columns.size());
    Brusselator2D::jacobian_values(t, y, theta, all);
    all.erase(all.begin() + (full.row_starts[kRow + 1] - 1));
    std::copy(all.begin(), all.end(), values.begin());
  }
};

// The same pattern, one value wrong (row 2's first entry doubled).
struct WrongJacobianValue : Brusselator2D {
  WrongJacobianValue() : Brusselator2D(4) {}
  void jacobian_values(double t, const V& y, const V& theta, std::span<double> values) const {
    Brusselator2D::jacobian_values(t, y, theta, values);
    values[static_cast<std::size_t>(sparsity().row_starts[2])] *= 2.0;
  }
};

// rwd::check_sparse_jacobian: the built-in Brusselator's declared Jacobian agrees with finite
// differences; a pattern that leaves out a coupling and a wrong value are each named, with the
// entry; a malformed pattern is refused before any rhs.
TEST(ImplicitLinearSolver, SparseJacobianCheckNamesAMissingCouplingAndAWrongValue) {
  const Brusselator2D good(4);
  const V theta = good.default_parameters();
  V y = good.default_initial_state();
  for (Index i = 0; i < y.size(); ++i) y[i] += 0.1 * std::sin(1.0 + static_cast<double>(i));
  const auto passed = check_sparse_jacobian(good, 0.0, y, theta);
  EXPECT_TRUE(passed.ok) << passed.report();
  EXPECT_EQ(passed.entries_checked, y.size() * y.size());
  EXPECT_LT(passed.error, 1e-7);

  const PatternMissingANeighbour missing;
  const auto caught = check_sparse_jacobian(missing, 0.0, y, theta);
  EXPECT_FALSE(caught.ok);
  EXPECT_TRUE(caught.outside_pattern);
  EXPECT_EQ(caught.row, PatternMissingANeighbour::kRow);
  EXPECT_EQ(caught.column, missing.dropped_column());
  EXPECT_NE(caught.report().find("outside the declared sparsity()"), std::string::npos)
      << caught.report();

  const WrongJacobianValue wrong;
  const auto named = check_sparse_jacobian(wrong, 0.0, y, theta);
  EXPECT_FALSE(named.ok);
  EXPECT_FALSE(named.outside_pattern);
  EXPECT_EQ(named.row, 2);
  EXPECT_NEAR(named.declared, 2.0 * named.finite_difference, 1e-6 * std::abs(named.declared));

  const MisdeclaredPattern misordered;
  testing::expect_message(
      testing::error_message<InvalidArgument>(
          [&] { check_sparse_jacobian(misordered, 0.0, y, misordered.default_parameters()); }),
      "row 3's columns out of order");
}

}  // namespace
}  // namespace rwd
