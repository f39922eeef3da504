// rewind/fit.hpp — everything a parameter fit needs, in one include (link rewind::fit).
//
//   #include <rewind/fit.hpp>
//   rwd::Observations obs = rwd::load_observations("lv.h5");         // or built in code
//   const auto misfit = rwd::observation_misfit(obs, rwd::misfit_sigma(obs));
//   rwd::FitOptions options;
//   options.fitted = {0, 3};                                         // which components of θ
//   auto plan = rwd::plan_checkpoints(rwd::PlanRequest::revolve(8), obs.steps);
//   rwd::FitResult fit = rwd::fit_parameters(stepper, misfit, obs.initial_state, theta_start,
//                                            options, plan);
//   auto errors = rwd::parameter_uncertainty(stepper, misfit, fit, options, plan);
//
// The drivers, steppers and schedules come with it (rewind/rewind.hpp); the observation files,
// the misfit, the bounded L-BFGS fit and the standard errors are the headers under rewind/fit/.
#pragma once

#include "rewind/fit/fit_data.hpp"
#include "rewind/fit/fit_parameters.hpp"
#include "rewind/fit/gradient_check.hpp"
#include "rewind/fit/minimize_bounded.hpp"
#include "rewind/fit/misfit.hpp"
#include "rewind/fit/observations.hpp"
#include "rewind/fit/parameter_uncertainty.hpp"
#include "rewind/rewind.hpp"
