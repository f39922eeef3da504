// bench/gpu/cuda_device_name.hpp — "NVIDIA H100 80GB HBM3, 132 SMs": the current CUDA device as
// the GPU benchmarks report it (.cu files only; every CUDA call checked).
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "rewind/backend/cuda_check.hpp"

namespace rwd::bench {

inline std::string cuda_device_name() {
  int device = 0;
  cuda::check(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp p{};
  cuda::check(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties");
  return std::string(p.name) + ", " + std::to_string(p.multiProcessorCount) + " SMs";
}

}  // namespace rwd::bench
