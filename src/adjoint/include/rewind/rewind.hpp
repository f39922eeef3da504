// rewind/rewind.hpp — everything a CPU user needs, in one include.
//
//   #include <rewind/rewind.hpp>
//   rwd::ExplicitRungeKutta stepper(my_model, rwd::ButcherTableau::rk4(),
//                                   rwd::StepControl::fixed(0.0, 0.01, 1000));
//   rwd::StoreAllAdjoint driver(stepper,
//   rwd::Objective<rwd::EigenBackend>::terminal_squared_norm()); auto result = driver.run(y0,
//   theta);
//
// GPU (Thrust) support is opt-in: include rewind/backend/thrust_backend.hpp yourself.
#pragma once

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
#include "rewind/stop_condition.hpp"
#include "rewind/types.hpp"
