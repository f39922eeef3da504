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
