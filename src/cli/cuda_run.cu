// src/cli/cuda_run.cu — see device_run.hpp. The CUDA device system (rewind::thrust_cuda),
// compiled by nvcc into a rewind built with REWIND_WITH_CUDA.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "device_gradient_run.hpp"
#include "rewind/backend/thrust_backend.hpp"

namespace rwd::cli {
namespace {

std::string cuda_error(const char* call, cudaError_t status) {
  return std::string(call) + ": " + cudaGetErrorString(status);
}

// Bytes in use on the current device (total − free).
std::int64_t device_bytes_in_use(std::int64_t& total) {
  std::size_t free_bytes = 0, total_bytes = 0;
  const cudaError_t status = cudaMemGetInfo(&free_bytes, &total_bytes);
  if (status != cudaSuccess)
    rwd::detail::fail<SolverError>("--backend cuda: ", cuda_error("cudaMemGetInfo", status));
  total = static_cast<std::int64_t>(total_bytes);
  return static_cast<std::int64_t>(total_bytes - free_bytes);
}

}  // namespace

bool built_with_cuda() {
  return true;
}

std::string cuda_unavailable_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess)
    return "no usable CUDA device (" + cuda_error("cudaGetDeviceCount", status) + ")";
  if (count == 0) return "no CUDA device on this machine";
  return {};
}

RunReport run_gradient_on_cuda(const RunSettings& settings, const PlanCallback& on_plan) {
  if (const std::string why = cuda_unavailable_reason(); !why.empty())
    rwd::detail::fail<InvalidArgument>("--backend cuda: ", why);
  int device = 0;
  cudaError_t status = cudaGetDevice(&device);
  cudaDeviceProp properties{};
  if (status == cudaSuccess) status = cudaGetDeviceProperties(&properties, device);
  if (status != cudaSuccess)
    rwd::detail::fail<SolverError>("--backend cuda: ",
                                   cuda_error("cudaGetDeviceProperties", status));

  DeviceReport device_report;
  device_report.name = properties.name;
  const std::int64_t before = device_bytes_in_use(device_report.total_bytes);
  auto sample = [&] {
    std::int64_t total = 0;
    device_report.used_bytes =
        std::max(device_report.used_bytes, device_bytes_in_use(total) - before);
    ++device_report.samples;
  };
  RunReport report;
  detail::with_device_model<ThrustBackend>("cuda", settings, [&](const auto& problem) {
    sample();  // the problem's own device memory, before the run
    report = detail::run_on_backend(problem, settings, on_plan, sample);
  });
  sample();
  report.device = device_report;
  return report;
}

}  // namespace rwd::cli
