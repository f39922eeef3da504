// rewind/backend/thrust_fixed_reduction.hpp — reductions whose bits depend on n alone, for every
// Thrust device system (CPP, OMP, CUDA). Used by rwd::ThrustBackend; included through
// rewind/backend/thrust_backend.hpp, not on its own.
//
//   const ReductionLayout layout = reduction_layout(n);  // how many partials, fixed by n
//   double s = fixed_reduce(n, Square{p}, Plus{}, 0.0);  // Σ_i p_i², same bits on CPU and GPU*
//   (* up to nvcc's fused multiply-adds, below)
//
// The decomposition (a fixed function of n, never of the device system, the thread count or
// the launch configuration):
//   1. P = clamp(ceil(n / 32), 1, 65536) partials. Partial k folds f(k), f(k + P), f(k + 2P), …
//      left to right, starting from the identity.
//   2. If P > 256, a second pass folds the P partials the same way into Q = 256: final partial q
//      folds partial q, q + 256, q + 512, … left to right. Otherwise Q = P.
//   3. The host folds the Q values left to right, starting from the identity.
// Why these numbers: partial k reads elements k, k + P, … so consecutive GPU threads read
// consecutive addresses (coalesced), and 65536 partials — a quarter of an H100's 270 000
// resident threads, each reading a new element every iteration — keep enough loads in flight to
// approach memory bandwidth once n is in the millions. At least 32 elements per partial keeps
// pass 1 dominant for small n, where a launch costs more than the arithmetic. The second pass
// reads 512 KiB at most (L2-resident on a GPU), and 256 values are few enough to fold on the
// host after one small copy: two kernel launches and one device-to-host copy per reduction, no
// atomics, nothing that depends on how the work is split.
//
// The same partials are computed in a different loop order per device system, with the same
// bits: on CUDA one thread per partial (coalesced reads); on the CPP and OMP systems one task per
// block of 512 partials, which walks the data row by row (elements [rP, rP + P) in order), so a
// CPU reads memory once, front to back, instead of once per partial. Each partial still folds
// its own elements in the same order, so the CPP system, the OMP system with any thread count
// and the CUDA system give the same sums of the same terms.
//
// Floating-point contraction: nvcc contracts a·b + c into fused multiply-adds in device code by
// default (--fmad=true), also across the map and the fold (x_i·y_i + acc in dot). The GPU result
// is then as deterministic as on the CPU, but differs from the CPU's in the last bits. Building
// with --fmad=false (the CMake option REWIND_CUDA_FMAD=OFF) makes CUDA and CPU results equal bit
// for bit, at some cost in speed.
#pragma once

#include <thrust/copy.h>
#include <thrust/device_free.h>
#include <thrust/device_malloc.h>
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
#include <thrust/system/cuda/execution_policy.h>
#endif

#include <algorithm>
#include <array>
#include <cstddef>
#include <type_traits>

#include "rewind/backend/thrust_launch.hpp"
#include "rewind/backend/thrust_system.hpp"
#include "rewind/host_device.hpp"
#include "rewind/types.hpp"

namespace rwd {
inline namespace REWIND_THRUST_SYSTEM_NAMESPACE {
namespace thrust_detail {

// The execution policy of rewind's kernels. On CUDA they are queued without waiting for the
// device (par_nosync): the kernels of a step run back to back, and the next call that needs a
// result (the copy at the end of a reduction, a copy to the host) waits once. Launch failures
// are still reported by the call that launched; a fault inside a kernel by the next that waits.
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
inline constexpr auto kNoWait = thrust::cuda::par_nosync;
#else
inline constexpr auto kNoWait = thrust::device;
#endif

inline constexpr Index kTermsPerPartial = 32;
inline constexpr Index kMaxPartials = 65536;
inline constexpr Index kFinalPartials = 256;

// How many partials a reduction of n terms folds: `partials` in pass 1, `final_partials` folded
// on the host (equal to `partials` when there is no second pass).
struct ReductionLayout {
  Index partials;
  Index final_partials;
};

constexpr ReductionLayout reduction_layout(Index n) {
  const Index wanted = (n + kTermsPerPartial - 1) / kTermsPerPartial;
  const Index partials = std::clamp<Index>(wanted, 1, kMaxPartials);
  return {partials, partials > kFinalPartials ? kFinalPartials : partials};
}

// Partials per task: one GPU thread per partial (coalesced), or blocks of partials walked row by
// row on CPU device systems (sequential reads). The bits are the same either way.
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
inline constexpr Index kPartialsPerTask = 1;
#else
inline constexpr Index kPartialsPerTask = 512;
#endif

// partials[k] = fold(…fold(fold(identity, map(k)), map(k + stride))…), for the partials
// [task·width, (task + 1)·width) of one task.
template <class T, class Map, class Fold>
struct FoldStrided {
  Map map;
  Fold fold;
  T identity;
  T* partials;
  Index n;
  Index stride;
  Index width;

  REWIND_HOST_DEVICE void operator()(Index task) const {
    const Index first = task * width;
    const Index last = first + width < stride ? first + width : stride;
    if (width == 1) {
      // One partial per GPU thread. Its terms are loaded kBatch at a time and then folded in
      // order: the loads of a batch are in flight together instead of one after another, which
      // matters where a thread folds many terms from memory it waits on (a second pass folds 256
      // partials per thread). The fold order, and so the bits, are those of the plain loop.
      constexpr int kBatch = sizeof(T) <= 4 * sizeof(double) ? 8 : 4;
      T acc = identity;
      Index i = first;
      for (; i + (kBatch - 1) * stride < n; i += kBatch * stride) {
        T terms[kBatch];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
        for (int b = 0; b < kBatch; ++b) terms[b] = map(i + b * stride);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
        for (int b = 0; b < kBatch; ++b) acc = fold(acc, terms[b]);
      }
      for (; i < n; i += stride) acc = fold(acc, map(i));
      partials[first] = acc;
      return;
    }
    for (Index k = first; k < last; ++k) partials[k] = identity;
    for (Index row = 0; row + first < n; row += stride) {
      const Index end = row + last < n ? row + last : n;
      for (Index i = row + first; i < end; ++i) {
        T& acc = partials[i - row];
        acc = fold(acc, map(i));
      }
    }
  }
};

// map(i) = values[i]: pass 2 reads pass 1's partials.
template <class T>
struct ReadValue {
  const T* values;
  REWIND_HOST_DEVICE T operator()(Index i) const { return values[i]; }
};

// One reusable device buffer per host thread for the partials (kMaxPartials + kFinalPartials
// values of up to kMaxValueBytes each): a reduction allocates nothing on the device once the
// first has run. Freed at thread exit; an error there (the CUDA runtime may already be gone at
// program exit) is ignored, since nothing can be reported then.
class ReductionScratch {
 public:
  static constexpr std::size_t kMaxValueBytes = 8 * sizeof(double);

  ~ReductionScratch() {
    try {
      if (data_.get() != nullptr) thrust::device_free(data_);
    } catch (...) {
    }
  }

  template <class T>
  static T* of_this_thread() {
    static_assert(sizeof(T) <= kMaxValueBytes && sizeof(T) % sizeof(double) == 0 &&
                      alignof(T) <= alignof(double),
                  "a reduction value must be a few doubles (Sums<K> with K <= 8)");
    thread_local ReductionScratch scratch;
    if (scratch.data_.get() == nullptr) scratch.data_ = thrust::device_malloc<double>(kDoubles);
    return reinterpret_cast<T*>(thrust::raw_pointer_cast(scratch.data_));
  }

 private:
  static constexpr std::size_t kDoubles =
      static_cast<std::size_t>(kMaxPartials + kFinalPartials) * kMaxValueBytes / sizeof(double);
  thrust::device_ptr<double> data_{};
};

// fold over map(0), …, map(n − 1) in the fixed decomposition above. fold must be associative
// only in the sense that every caller of one reduction uses the same fold: the order is fixed,
// so nothing relies on associativity.
template <class T, class Map, class Fold>
T fixed_reduce(Index n, Map map, Fold fold, T identity) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (n <= 0) return identity;
  const ReductionLayout layout = reduction_layout(n);
  T* partials = ReductionScratch::of_this_thread<T>();
  T* finals = partials + kMaxPartials;

  const auto tasks = [](Index count) { return (count + kPartialsPerTask - 1) / kPartialsPerTask; };
  launch_indices("reduction", tasks(layout.partials),
                 FoldStrided<T, Map, Fold>{map, fold, identity, partials, n, layout.partials,
                                           kPartialsPerTask});
  const T* last_pass = partials;
  if (layout.final_partials < layout.partials) {
    launch_indices("reduction", tasks(layout.final_partials),
                   FoldStrided<T, ReadValue<T>, Fold>{ReadValue<T>{partials}, fold, identity,
                                                      finals, layout.partials,
                                                      layout.final_partials, kPartialsPerTask});
    last_pass = finals;
  }

  std::array<T, kFinalPartials> host;
  const thrust::device_ptr<const T> first = thrust::device_pointer_cast(last_pass);
  thrust::copy(first, first + layout.final_partials, host.begin());
  T acc = identity;
  for (Index q = 0; q < layout.final_partials; ++q) acc = fold(acc, host[q]);
  return acc;
}

}  // namespace thrust_detail
}  // namespace REWIND_THRUST_SYSTEM_NAMESPACE
}  // namespace rwd
