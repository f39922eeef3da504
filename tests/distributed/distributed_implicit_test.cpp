// The diagonally implicit engine on a state split across MPI ranks
// (rwd::DiagonallyImplicitRungeKutta on the distributed backend: Newton with matrix-free GMRES,
// rwd::MatrixFreeStageMatrix over rwd::BackendGmres), run by ctest under mpiexec with 1, 2, 3 and 4
// ranks: the stiff Brusselator as a stencil model split by rows — the gradient has the same bits
// whether split across the world's ranks or held whole by each rank (every reduction folds in the
// same global order), for fixed and adaptive steps; it agrees with the one-process Eigen engine's
// to the Newton tolerance; revolve, uniform and stage-aware schedules give the store-all bits with
// no drift; and a direct solver is refused, naming gmres.
#include <gtest/gtest.h>

#include <mpi.h>

#include <array>
#include <cmath>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "distributed_test_support.hpp"
#include "problems/models/stencil_models.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/distributed/distributed_cvodes.hpp"  // the distributed N_Vector for GMRES
#include "rewind/distributed/distributed_stencil.hpp"
#include "rewind/integrators/diagonally_implicit_runge_kutta.hpp"
#include "rewind/schedule/schedules.hpp"
#include "rewind/stencil_model.hpp"
#include "support/error_message.hpp"

namespace rwd {
namespace {

using test::local_values;
using test::same_bits;
using test::world;
using testing::BrusselatorStencil;

using V = Eigen::VectorXd;
using B = DistributedBackend;
using Split = DistributedStencilProblem<BrusselatorStencil>;

constexpr std::array<Index, 2> kSizes{12, 10};

// The Brusselator's state near its steady state (u = A, v = B/A) with a smooth bump: entry i of
// the serial layout [u; v].
V initial_state(Index cells) {
  V y(2 * cells);
  for (Index c = 0; c < cells; ++c) {
    const double bump = 0.2 * std::sin(0.7 * static_cast<double>(c));
    y[c] = 1.0 + bump;
    y[cells + c] = 3.4 - 0.5 * bump;
  }
  return y;
}

NewtonOptions gmres_newton() {
  NewtonOptions newton;
  newton.linear_solver = ImplicitLinearSolver::gmres;
  return newton;
}

struct Gradient {
  V y_final, grad_y0, grad_theta;
};

// The store-all gradient of J = ½|y_N|² for esdirk43 on the Brusselator split over `comm`,
// gathered whole on every rank.
Gradient split_gradient(const Communicator& comm, const StepControl& control) {
  const Split problem(BrusselatorStencil{}, kSizes, comm);
  const V whole = initial_state(kSizes[0] * kSizes[1]);
  const DistributedVector y0 = problem.local_part(
      std::span<const double>(whole.data(), static_cast<std::size_t>(whole.size())));
  DiagonallyImplicitRungeKutta stepper(problem, ImplicitTableau::esdirk43(), control,
                                       gmres_newton());
  StoreAllAdjoint driver(stepper, Objective<B>::terminal_squared_norm());
  const auto r = driver.run(y0, Split::default_parameters());
  EXPECT_GT(stepper.implicit_counters().gmres_products, 0);
  EXPECT_GE(r.summary.steps, 8) << "too few steps to exercise the step-size choice";
  auto gathered = [&](const DistributedVector& x) {
    V out(problem.state_size());
    problem.layout().gather_whole(
        std::span<const double>(x.local.data(), x.local.size()),
        std::span<double>(out.data(), static_cast<std::size_t>(out.size())));
    return out;
  };
  return {gathered(r.y_final), gathered(r.grad_y0), r.grad_theta.local};
}

Communicator self() {
  return Communicator(MPI_COMM_SELF);
}

TEST(DistributedImplicit, GradientHasTheSameBitsSplitOrWhole) {
  for (const StepControl& control :
       {StepControl::fixed(0.0, 0.02, 8), StepControl::adaptive(0.0, 2.0, 1e-8, 1e-10)}) {
    SCOPED_TRACE(control.is_adaptive() ? "adaptive" : "fixed");
    const Gradient split = split_gradient(world(), control);
    const Gradient whole = split_gradient(self(), control);
    EXPECT_TRUE(same_bits(
        std::vector<double>(split.y_final.data(), split.y_final.data() + split.y_final.size()),
        std::vector<double>(whole.y_final.data(), whole.y_final.data() + whole.y_final.size())));
    EXPECT_TRUE(same_bits(
        std::vector<double>(split.grad_y0.data(), split.grad_y0.data() + split.grad_y0.size()),
        std::vector<double>(whole.grad_y0.data(), whole.grad_y0.data() + whole.grad_y0.size())));
    for (Index j = 0; j < 3; ++j)
      EXPECT_TRUE(same_bits(split.grad_theta[j], whole.grad_theta[j])) << "dJ/dtheta " << j;
  }
}

TEST(DistributedImplicit, AgreesWithTheOneProcessEngineToTheNewtonTolerance) {
  const StepControl control = StepControl::fixed(0.0, 0.02, 8);
  const Gradient split = split_gradient(world(), control);
  const StencilProblem<BrusselatorStencil> serial(BrusselatorStencil{}, kSizes);
  DiagonallyImplicitRungeKutta stepper(serial, ImplicitTableau::esdirk43(), control,
                                       gmres_newton());
  StoreAllAdjoint driver(stepper, Objective<EigenBackend>::terminal_squared_norm());
  const auto r = driver.run(initial_state(kSizes[0] * kSizes[1]),
                            StencilProblem<BrusselatorStencil>::default_parameters());
  EXPECT_LT((split.y_final - r.y_final).norm(), 1e-9 * r.y_final.norm());
  EXPECT_LT((split.grad_y0 - r.grad_y0).norm(), 1e-8 * r.grad_y0.norm());
  for (Index j = 0; j < 3; ++j)
    EXPECT_NEAR(split.grad_theta[j], r.grad_theta[j], 1e-8 * std::abs(r.grad_theta[j])) << j;
}

TEST(DistributedImplicit, EveryScheduleGivesTheStoreAllBits) {
  const Split problem(BrusselatorStencil{}, kSizes, world());
  const V whole = initial_state(kSizes[0] * kSizes[1]);
  const DistributedVector y0 = problem.local_part(
      std::span<const double>(whole.data(), static_cast<std::size_t>(whole.size())));
  const DistributedVector theta = Split::default_parameters();
  const auto objective = Objective<B>::terminal_squared_norm();
  for (const StepControl& control :
       {StepControl::fixed(0.0, 0.02, 12), StepControl::adaptive(0.0, 2.0, 1e-8, 1e-10)}) {
    SCOPED_TRACE(control.is_adaptive() ? "adaptive" : "fixed");
    DiagonallyImplicitRungeKutta stepper(problem, ImplicitTableau::esdirk43(), control,
                                         gmres_newton());
    StoreAllAdjoint reference_driver(stepper, objective);
    const auto reference = reference_driver.run(y0, theta);
    std::vector<std::pair<std::string, Planner>> planners{{"revolve c=3", revolve_schedule(3)},
                                                          {"uniform k=4", uniform_schedule(4)}};
    if (!control.is_adaptive())
      planners.emplace_back("stage-aware 20 units",
                            stage_aware_schedule(20, stepper.stage_count()));
    {  // store-all keeping every step's stages (and, adaptive, the step's size): no Newton replay
      SCOPED_TRACE("store-all keeping stages");
      StoreAllOptions keep;
      keep.keep_stages = true;
      StoreAllAdjoint driver(stepper, objective, keep);
      const auto r = driver.run(y0, theta);
      EXPECT_TRUE(same_bits(local_values(r.grad_y0), local_values(reference.grad_y0)));
      for (Index j = 0; j < 3; ++j)
        EXPECT_TRUE(same_bits(r.grad_theta.local[j], reference.grad_theta.local[j])) << j;
    }
    for (const auto& [name, planner] : planners) {
      SCOPED_TRACE(name);
      CheckpointOptions options;
      options.drift_policy = DriftPolicy::fail;
      CheckpointedAdjoint driver(stepper, objective, options);
      const auto r = driver.run(y0, theta, planner);
      EXPECT_TRUE(same_bits(local_values(r.grad_y0), local_values(reference.grad_y0)));
      EXPECT_TRUE(same_bits(local_values(r.y_final), local_values(reference.y_final)));
      for (Index j = 0; j < 3; ++j)
        EXPECT_TRUE(same_bits(r.grad_theta.local[j], reference.grad_theta.local[j])) << j;
      EXPECT_TRUE(r.drift.bitwise_identical());
    }
  }
}

TEST(DistributedImplicit, RefusesADirectSolverNamingGmres) {
  const Split problem(BrusselatorStencil{}, kSizes, world());
  NewtonOptions newton;
  newton.linear_solver = ImplicitLinearSolver::dense;
  const std::string message = testing::error_message<InvalidArgument>([&] {
    DiagonallyImplicitRungeKutta stepper(problem, ImplicitTableau::esdirk43(),
                                         StepControl::fixed(0.0, 0.02, 4), newton);
  });
  EXPECT_NE(message.find("matrix-free GMRES only (--linear-solver gmres)"), std::string::npos)
      << message;
}

}  // namespace
}  // namespace rwd
