// rewind/backend/cuda_check.hpp — CUDA failures as rwd::DeviceError, for .cu files (nvcc) only.
//
//   rwd::cuda::check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice), "copy the state");
//   rwd::cuda::check_fits(bytes, "zeros");          // before a large allocation
//   double s = rwd::cuda::translate_errors("dot", [&] { return thrust::reduce(...); });
//
// Every CUDA call rewind makes goes through one of these, so no failure is silent or reaches the
// user as a bare thrust::system_error or std::bad_alloc:
//   check(status, operation)       a cudaError_t that is not cudaSuccess becomes a DeviceError
//                                  naming the operation, CUDA's error name and its description;
//   check_fits(bytes, operation)   an allocation larger than the device's free memory
//                                  (cudaMemGetInfo) is refused before it is tried, naming the
//                                  bytes requested and the bytes free ("a state that does not fit
//                                  the device");
//   translate_errors(operation, f) runs f and turns what Thrust throws on a CUDA failure
//                                  (thrust::system_error, and thrust's bad_alloc when an
//                                  allocation fails anyway) into a DeviceError naming the
//                                  operation.
// Kernels run asynchronously: a fault inside a kernel (an illegal address) is reported by the
// next call that waits for the device — a reduction, a copy to the host — and CUDA keeps
// reporting it from then on (a sticky error); the message says so.
#pragma once

#if !defined(__CUDACC__)
#error "rewind/backend/cuda_check.hpp is for .cu files compiled by nvcc"
#endif

#include <cuda_runtime.h>
#include <thrust/system_error.h>

#include <cstddef>
#include <new>
#include <string>
#include <utility>

#include "rewind/backend/device_error.hpp"
#include "rewind/error.hpp"

namespace rwd::cuda {

// Free and total device memory in bytes; zeros when CUDA cannot say (no device).
struct DeviceMemory {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
};

inline DeviceMemory device_memory() {
  DeviceMemory m;
  if (cudaMemGetInfo(&m.free_bytes, &m.total_bytes) != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky; leave no error behind for the next call
    return {};
  }
  return m;
}

// Whether `status` reports a fault inside a kernel, which may be one launched earlier.
inline bool kernel_fault(cudaError_t status) {
  return status == cudaErrorIllegalAddress || status == cudaErrorLaunchFailure ||
         status == cudaErrorIllegalInstruction || status == cudaErrorMisalignedAddress ||
         status == cudaErrorAssert || status == cudaErrorHardwareStackError;
}

inline void check(cudaError_t status, const char* operation) {
  if (status == cudaSuccess) return;
  detail::fail<DeviceError>(
      operation, ": CUDA error ", cudaGetErrorName(status), " (", cudaGetErrorString(status), ")",
      kernel_fault(status) ? "; the faulting kernel may be one launched earlier, "
                             "asynchronously"
                           : "");
}

inline void check_fits(std::size_t bytes, const char* operation) {
  std::size_t free_bytes = 0, total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), operation);
  if (bytes > free_bytes)
    detail::fail<DeviceError>(operation, ": a state that does not fit the device: ", bytes,
                              " bytes requested, ", free_bytes, " bytes free of ", total_bytes);
}

template <class F>
decltype(auto) translate_errors(const char* operation, F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const thrust::system_error& e) {
    detail::fail<DeviceError>(operation, ": CUDA error: ", e.what());
  } catch (const std::bad_alloc& e) {
    const DeviceMemory m = device_memory();
    detail::fail<DeviceError>(operation, ": a device allocation failed (", e.what(), "); ",
                              m.free_bytes, " bytes free of ", m.total_bytes);
  }
}

}  // namespace rwd::cuda
