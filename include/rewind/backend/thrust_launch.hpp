// rewind/backend/thrust_launch.hpp — how rwd::ThrustBackend and its fixed reductions run f(i)
// for every i in [0, n). Internal; included through rewind/backend/thrust_backend.hpp.
//
//   thrust_detail::launch_indices("axpy", n, functor);   // functor(i) for i in [0, n)
//
// On CUDA: a plain kernel, one thread per index, 256 threads per block, on the default stream
// (the stream Thrust's own calls and the snapshot copies' events use), queued without waiting;
// a launch that does not start is reported at once (cudaGetLastError), a fault inside the kernel
// by the next call that waits. Why a kernel of its own: on an H100 the four-term combination of
// an RK4 step (a functor of ~300 bytes, its terms in a loop) ran at a fraction of the copy
// bandwidth through thrust::for_each_n over a counting iterator and at the copy bandwidth through
// this kernel (bench/results/gpu.md, bench/results/code_comments.md). On the CPU device systems:
// thrust::for_each_n.
#pragma once

#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>

#include "rewind/backend/thrust_system.hpp"
#include "rewind/error.hpp"
#include "rewind/types.hpp"

#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
#include <cuda_runtime.h>

#include "rewind/backend/cuda_check.hpp"
#endif

namespace rwd {
inline namespace REWIND_THRUST_SYSTEM_NAMESPACE {
namespace thrust_detail {

#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
inline constexpr int kThreadsPerBlock = 256;

template <class F>
__global__ void __launch_bounds__(kThreadsPerBlock) for_each_index_kernel(Index n, F f) {
  const Index i = static_cast<Index>(blockIdx.x) * kThreadsPerBlock + threadIdx.x;
  if (i < n) f(i);
}
#endif

template <class F>
void launch_indices([[maybe_unused]] const char* operation, Index n, const F& f) {
  if (n <= 0) return;
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
  const Index blocks = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
  if (blocks > 0x7fffffff)
    detail::fail<InvalidArgument>(operation, ": ", n, " indices exceed one launch's grid");
  for_each_index_kernel<<<static_cast<unsigned>(blocks), kThreadsPerBlock>>>(n, f);
  cuda::check(cudaGetLastError(), operation);
#else
  thrust::for_each_n(thrust::device, thrust::counting_iterator<Index>(0), n, f);
#endif
}

}  // namespace thrust_detail
}  // namespace REWIND_THRUST_SYSTEM_NAMESPACE
}  // namespace rwd
