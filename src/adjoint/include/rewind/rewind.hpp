// rewind/rewind.hpp — everything an ODE gradient needs, in one include (link rewind::rewind):
// the explicit steppers, the objective, the store-all, checkpointed and backsolve drivers and
// their one entry point rwd::differentiate, the schedules and plans, the derivative checker.
//
//   #include <rewind/rewind.hpp>
//   rwd::ExplicitRungeKutta stepper(my_model, rwd::ButcherTableau::rk4(),
//                                   rwd::StepControl::fixed(0.0, 0.01, 1000));
//   auto objective = rwd::Objective<rwd::EigenBackend>::terminal_squared_norm();
//   rwd::StoreAllAdjoint all(stepper, objective);
//   auto result = all.run(y0, theta);                        // every state kept
//   rwd::CheckpointedAdjoint revolve(stepper, objective);
//   auto same = revolve.run(y0, theta, rwd::revolve_schedule(/*snapshots=*/20));  // same bits
//
// Fitting parameters (rewind/fit.hpp, rewind::fit) and neural ODEs (rewind/neural.hpp,
// rewind::neural) have umbrellas of their own. GPU (Thrust) support is opt-in: include
// rewind/backend/thrust_backend.hpp yourself; BDF through CVODES is
// rewind/integrators/cvodes_interval_stepper.hpp.
#pragma once

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/differentiate.hpp"
#include "rewind/adjoint/forward_loss.hpp"
#include "rewind/adjoint/gradient_result.hpp"
#include "rewind/adjoint/step_observer.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/adjoint/summary.hpp"
#include "rewind/backend/backend.hpp"
#include "rewind/backend/eigen_backend.hpp"
#include "rewind/carry.hpp"
#include "rewind/derivative_checker.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/butcher_tableau.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/integrators/step_control.hpp"
#include "rewind/integrators/stepper_concepts.hpp"
#include "rewind/objective.hpp"
#include "rewind/problem.hpp"
#include "rewind/schedule/checkpoint_plan.hpp"
#include "rewind/schedule/schedules.hpp"
#include "rewind/stop_condition.hpp"
#include "rewind/types.hpp"
