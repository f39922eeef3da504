// rewind/store/host_copy_stream.hpp — how HostSnapshotStore (rewind/store/host_snapshot_store.hpp)
// moves a state between the backend's memory and its host slots. Internal.
//
//   rwd::detail::HostCopyStream<B> copies(/*slots=*/8, /*held values=*/n, /*state size=*/n);
//   copies.to_host(y, 3);     // y into host slot 3
//   copies.prefetch(3);       // start bringing slot 3 back (asynchronous backends only)
//   copies.from_host(3, y);   // slot 3 into y
//
// The general version copies synchronously through B::copy_to_host / B::copy_from_host into one
// host allocation. Compiled by nvcc for a backend whose vectors are CUDA device vectors
// (thrust::device_vector<double> on the CUDA device system), the slots are pinned host memory
// (cudaHostAlloc) and the copies run on a stream of their own:
//  * to_host: a device-to-device copy of the state into one of two staging buffers, on the
//    compute (default) stream, then the PCIe copy staging → host slot on the copy stream after an
//    event — the caller may overwrite the state at once, and the PCIe copy overlaps the compute
//    that follows. A staging buffer is reused only once its PCIe copy has finished.
//  * prefetch: the PCIe copy host slot → a device fetch buffer on the copy stream (ordered after
//    any pending copy into that slot, and after the last restore read the fetch buffer).
//  * from_host: the compute stream waits for the fetch (started now if it was not prefetched)
//    and copies the fetch buffer into the state, device to device.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "rewind/backend/backend.hpp"
#include "rewind/error.hpp"
#include "rewind/types.hpp"

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#include <thrust/device_vector.h>
#endif

namespace rwd::detail {

template <VectorBackend B>
class HostCopyStream {
 public:
  using Vector = typename B::Vector;
  static constexpr bool asynchronous = false;

  HostCopyStream(int slots, Index held_values, Index /*state_size*/)
      : held_(static_cast<std::size_t>(held_values)),
        values_(static_cast<std::size_t>(slots) * held_) {}

  void to_host(const Vector& x, std::size_t slot) { B::copy_to_host(x, span(slot)); }
  void from_host(std::size_t slot, Vector& x) {
    B::copy_from_host(std::span<const double>(span(slot)), x);
  }
  void prefetch(std::size_t /*slot*/) {}  // nothing to overlap: restores copy synchronously
  void synchronize() {}
  Index prefetch_hits() const { return 0; }

 private:
  std::span<double> span(std::size_t slot) { return {values_.data() + slot * held_, held_}; }

  std::size_t held_;
  std::vector<double> values_;
};

#if defined(__CUDACC__) && THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA

inline void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    fail<StorageError>("host snapshot level: ", what, " failed: ", cudaGetErrorString(status));
}

template <VectorBackend B>
requires std::is_same_v<typename B::Vector, thrust::device_vector<double>>
class HostCopyStream<B> {
 public:
  using Vector = typename B::Vector;
  static constexpr bool asynchronous = true;

  // A CUDA state is never split across processes: held values = state size.
  HostCopyStream(int slots, Index /*held_values*/, Index state_size)
      : size_(static_cast<std::size_t>(state_size)), bytes_(size_ * sizeof(double)) {
    const std::size_t total = static_cast<std::size_t>(slots) * bytes_;
    cuda_check(cudaHostAlloc(reinterpret_cast<void**>(&host_), total > 0 ? total : 1,
                             cudaHostAllocDefault),
               "cudaHostAlloc (pinned host slots)");
    cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    for (int i = 0; i < 2; ++i) {
      cuda_check(cudaMalloc(reinterpret_cast<void**>(&staging_[i]), bytes_ > 0 ? bytes_ : 1),
                 "cudaMalloc (staging buffer)");
      cuda_check(cudaEventCreateWithFlags(&staged_[i], cudaEventDisableTiming), "cudaEventCreate");
    }
    cuda_check(cudaMalloc(reinterpret_cast<void**>(&fetch_), bytes_ > 0 ? bytes_ : 1),
               "cudaMalloc (fetch buffer)");
    for (cudaEvent_t* e : {&compute_ready_, &fetched_, &consumed_})
      cuda_check(cudaEventCreateWithFlags(e, cudaEventDisableTiming), "cudaEventCreate");
  }
  HostCopyStream(const HostCopyStream&) = delete;
  HostCopyStream& operator=(const HostCopyStream&) = delete;
  ~HostCopyStream() {  // nothing may throw here: errors were reported by the calls that met them
    cudaStreamSynchronize(stream_);
    for (int i = 0; i < 2; ++i) {
      cudaFree(staging_[i]);
      cudaEventDestroy(staged_[i]);
    }
    cudaFree(fetch_);
    for (cudaEvent_t e : {compute_ready_, fetched_, consumed_}) cudaEventDestroy(e);
    cudaStreamDestroy(stream_);
    cudaFreeHost(host_);
  }

  void to_host(const Vector& x, std::size_t slot) {
    const int i = next_staging_;
    next_staging_ ^= 1;
    cuda_check(cudaEventSynchronize(staged_[i]), "waiting for a staging buffer");
    cuda_check(cudaMemcpyAsync(staging_[i], B::data(x), bytes_, cudaMemcpyDeviceToDevice, 0),
               "device-to-device copy into staging");
    cuda_check(cudaEventRecord(compute_ready_, 0), "cudaEventRecord");
    cuda_check(cudaStreamWaitEvent(stream_, compute_ready_, 0), "cudaStreamWaitEvent");
    cuda_check(
        cudaMemcpyAsync(host_ + slot * size_, staging_[i], bytes_, cudaMemcpyDeviceToHost, stream_),
        "device-to-host copy");
    cuda_check(cudaEventRecord(staged_[i], stream_), "cudaEventRecord");
    if (fetched_slot_ == static_cast<long long>(slot)) fetched_slot_ = -1;  // now stale
  }

  void prefetch(std::size_t slot) {
    if (fetched_slot_ == static_cast<long long>(slot)) return;
    cuda_check(cudaStreamWaitEvent(stream_, consumed_, 0), "cudaStreamWaitEvent");
    cuda_check(
        cudaMemcpyAsync(fetch_, host_ + slot * size_, bytes_, cudaMemcpyHostToDevice, stream_),
        "host-to-device copy");
    cuda_check(cudaEventRecord(fetched_, stream_), "cudaEventRecord");
    fetched_slot_ = static_cast<long long>(slot);
  }

  void from_host(std::size_t slot, Vector& x) {
    if (fetched_slot_ == static_cast<long long>(slot))
      ++hits_;  // its copy was started ahead (or is still there from the last restore)
    else
      prefetch(slot);
    cuda_check(cudaStreamWaitEvent(0, fetched_, 0), "cudaStreamWaitEvent");
    cuda_check(cudaMemcpyAsync(B::data(x), fetch_, bytes_, cudaMemcpyDeviceToDevice, 0),
               "device-to-device copy from the fetch buffer");
    cuda_check(cudaEventRecord(consumed_, 0), "cudaEventRecord");
  }

  void synchronize() { cuda_check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }
  Index prefetch_hits() const { return hits_; }

 private:
  std::size_t size_;
  std::size_t bytes_;
  double* host_ = nullptr;  // pinned: slots × size values
  cudaStream_t stream_ = nullptr;
  double* staging_[2] = {nullptr, nullptr};
  cudaEvent_t staged_[2] = {nullptr, nullptr};  // the PCIe copy out of staging_[i] is done
  int next_staging_ = 0;
  double* fetch_ = nullptr;
  cudaEvent_t compute_ready_ = nullptr;  // the state is in staging
  cudaEvent_t fetched_ = nullptr;        // fetch_ holds fetched_slot_
  cudaEvent_t consumed_ = nullptr;       // the last restore has read fetch_
  long long fetched_slot_ = -1;
  Index hits_ = 0;
};

#endif

}  // namespace rwd::detail
