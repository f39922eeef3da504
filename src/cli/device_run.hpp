// src/cli/device_run.hpp — `rewind run --backend thrust|cuda`: the same gradient run with the
// state in Thrust device vectors.
//
//   if (settings.backend == RunBackend::cuda) return run_gradient_on_cuda(settings, on_plan);
//
// --backend thrust runs rwd::ThrustBackend on Thrust's CPP device system (the GPU code path,
// compiled by the C++ compiler, on one CPU core: what CI tests); --backend cuda runs it on a
// CUDA device (cuda_run.cu, compiled by nvcc into a rewind built with REWIND_WITH_CUDA). Both live
// in one executable: the backend's inline namespace keeps the two device systems' instantiations
// apart (rewind/backend/thrust_backend.hpp).
//
// The problems with device right-hand sides and VJPs that are worth a device: gray_scott,
// heat2d, lorenz96 and brusselator (runs_on_device, problem_registry.hpp); --method bdf runs CVODES
// with GMRES over device vectors. Other problems are refused before any work.
#pragma once

#include <string>

#include "gradient_run.hpp"
#include "problem_registry.hpp"
#include "run_report.hpp"
#include "run_settings.hpp"

namespace rwd::cli {

// thrust_run.cpp: the Thrust CPP device system.
RunReport run_gradient_on_thrust(const RunSettings& settings, const PlanCallback& on_plan);

// Whether this rewind was built with the CUDA backend (REWIND_WITH_CUDA).
bool built_with_cuda();
// Empty when a CUDA device can be used; otherwise why not ("this rewind was built without CUDA
// …", "no CUDA device (cudaGetDeviceCount: …)"). Cheap: asks the runtime, allocates nothing.
std::string cuda_unavailable_reason();
// cuda_run.cu: the CUDA device system. Precondition: cuda_unavailable_reason() is empty.
RunReport run_gradient_on_cuda(const RunSettings& settings, const PlanCallback& on_plan);

}  // namespace rwd::cli
