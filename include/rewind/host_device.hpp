// rewind/host_device.hpp — marks functions that run on the host and, under nvcc, on the device.
//
// Kernels of built-in problems and backends are written once as functors over raw pointers and
// marked REWIND_HOST_DEVICE; g++ sees plain functions, nvcc compiles them for both sides.
#pragma once

#if defined(__CUDACC__)
#define REWIND_HOST_DEVICE __host__ __device__
#else
#define REWIND_HOST_DEVICE
#endif

#include <cstdint>
#include <cstring>

namespace rwd {

// The bits of a double, in host and device code alike.
REWIND_HOST_DEVICE inline std::uint64_t double_bits(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(x));
#else
  std::uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
#endif
}

}  // namespace rwd
