// rewind/backend/thrust_system.hpp — REWIND_THRUST_SYSTEM_NAMESPACE, the inline namespace
// (thrust_cpp, thrust_cuda, thrust_omp, thrust_tbb) that holds everything of rewind's whose
// definition depends on THRUST_DEVICE_SYSTEM, so that translation units on different device
// systems can share one program (see rewind/backend/thrust_backend.hpp).
#pragma once

#include <thrust/detail/config.h>  // THRUST_DEVICE_SYSTEM and its values

#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CPP
#define REWIND_THRUST_SYSTEM_NAMESPACE thrust_cpp
#elif THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
#define REWIND_THRUST_SYSTEM_NAMESPACE thrust_cuda
#elif THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_OMP
#define REWIND_THRUST_SYSTEM_NAMESPACE thrust_omp
#else
#define REWIND_THRUST_SYSTEM_NAMESPACE thrust_tbb
#endif
