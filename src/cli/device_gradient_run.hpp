// src/cli/device_gradient_run.hpp — the body of run_gradient_on_thrust / run_gradient_on_cuda
// (device_run.hpp): the problem built on the backend B, θ with --parameters applied on the host
// and copied over, then the generic run_gradient (gradient_run.hpp). Included by exactly one
// translation unit per device system (thrust_run.cpp, cuda_run.cu).
#pragma once

#include <vector>

#include "device_run.hpp"
#include "gradient_run.hpp"
#include "problem_parameters.hpp"
#include "rewind/integrators/thrust_cvodes.hpp"  // --method bdf: CVODES over device vectors
#include "rewind/problems/device_brusselator2d.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/heat2d.hpp"
#include "rewind/problems/lorenz96.hpp"

namespace rwd::cli::detail {

template <class P>
RunReport run_on_backend(const P& problem, const RunSettings& settings, const PlanCallback& on_plan,
                         const StepSampler& sample = {}) {
  using B = typename P::Backend;
  const typename B::Vector y0 = problem.default_initial_state();
  typename B::Vector theta = problem.default_parameters();
  std::vector<double> values = host_values<B>(theta);
  apply_parameter_values(settings.parameters, values);
  B::copy_from_host(values, theta);
  return run_gradient(problem, y0, theta, problem.parameter_names(), settings, on_plan, sample);
}

template <class B>
RunReport run_device_problem(const RunSettings& settings, const PlanCallback& on_plan) {
  switch (settings.problem->id) {
    case ProblemId::gray_scott:
      return run_on_backend(GrayScott<B>(settings.n), settings, on_plan);
    case ProblemId::heat2d:
      return run_on_backend(Heat2D<B>(settings.n), settings, on_plan);
    case ProblemId::lorenz96:
      return run_on_backend(Lorenz96<B>(settings.n), settings, on_plan);
    case ProblemId::brusselator:
      return run_on_backend(DeviceBrusselator2D<B>(settings.n), settings, on_plan);
    default:
      rwd::detail::fail<InvalidArgument>(
          "--backend ", B::name, ": ", settings.problem->name,
          " has no device right-hand side; the problems that do: ", device_problem_list());
  }
}

}  // namespace rwd::cli::detail
