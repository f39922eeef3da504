// src/cli/device_gradient_run.hpp — the body of run_gradient_on_thrust / run_gradient_on_cuda
// (device_run.hpp): the problem's device form built on the backend B (the DeviceModel<B> of its
// declaration, builtin_problems.hpp), θ with --parameters applied on the host and copied over,
// then the generic run_gradient (gradient_run.hpp). Included by exactly one translation unit per
// device system (thrust_run.cpp, cuda_run.cu).
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include "builtin_problems.hpp"
#include "device_run.hpp"
#include "gradient_run.hpp"
#include "problem_parameters.hpp"
#include "rewind/integrators/thrust_cvodes.hpp"  // --method bdf: CVODES over device vectors
#include "rewind/problems/device_brusselator2d.hpp"

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

// "lorenz96, gray_scott, heat2d, brusselator": the built-in problems with a device form on B
// (what device_problem_list says, from the declarations, so that the device systems' translation
// units need not link the registry's table).
template <class B>
std::string device_model_list() {
  std::string names;
  for_each_declaration(BuiltinProblems{}, [&]<class D>(std::type_identity<D>) {
    if constexpr (kHasDeviceModel<D, B>) names += (names.empty() ? "" : ", ") + D::facts().name;
  });
  return names;
}

// Builds the device form on B of the problem the settings name, of size settings.n, and calls
// f(problem) with it; refuses (InvalidArgument, naming `backend`) a problem without one.
template <class B, class F>
void with_device_model(const char* backend, const RunSettings& settings, F&& f) {
  bool found = false;
  for_each_declaration(BuiltinProblems{}, [&]<class D>(std::type_identity<D>) {
    if constexpr (kHasDeviceModel<D, B>) {
      if (!found && D::facts().name == settings.problem->name) {
        found = true;
        typename D::template DeviceModel<B> problem(settings.n);
        f(problem);
      }
    }
  });
  if (!found)
    rwd::detail::fail<InvalidArgument>(
        "--backend ", backend, ": ", settings.problem->name,
        " has no device right-hand side; the problems that do: ", device_model_list<B>());
}

template <class B>
RunReport run_device_problem(const RunSettings& settings, const PlanCallback& on_plan) {
  RunReport report;
  with_device_model<B>(B::name, settings, [&](const auto& problem) {
    report = run_on_backend(problem, settings, on_plan);
  });
  return report;
}

}  // namespace rwd::cli::detail
