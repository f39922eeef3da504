// The Gray–Scott roofline benchmark (gray_scott_roofline.hpp) on a CUDA GPU: rwd::ThrustBackend
// on the CUDA device system; copy bandwidth from cudaMemcpy device to device, timed with CUDA
// events; every CUDA call checked (rewind/backend/cuda_check.hpp).
//
//   build-device/bench/gpu/gray_scott_roofline [--sizes 1024,4096] [--json FILE]
#include <cuda_runtime.h>

#include <exception>
#include <string>

#include "gray_scott_roofline.hpp"
#include "rewind/backend/cuda_check.hpp"

namespace {

using rwd::cuda::check;

struct CudaPlatform {
  static std::string device_name() {
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    cudaDeviceProp p{};
    check(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties");
    return std::string(p.name) + ", " + std::to_string(p.multiProcessorCount) + " SMs";
  }
  static void synchronize() { check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }
  static double free_bytes() { return static_cast<double>(rwd::cuda::device_memory().free_bytes); }

  // cudaMemcpy device to device of 1 GiB, best of 10 after a warm-up: (read + written) / time.
  static double copy_bandwidth() {
    const std::size_t bytes = std::size_t{1} << 30;
    rwd::cuda::check_fits(2 * bytes, "copy bandwidth buffers");
    void* a = nullptr;
    void* b = nullptr;
    check(cudaMalloc(&a, bytes), "cudaMalloc");
    check(cudaMalloc(&b, bytes), "cudaMalloc");
    check(cudaMemset(a, 1, bytes), "cudaMemset");
    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    check(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy");
    float best_ms = 1e30f;
    for (int r = 0; r < 10; ++r) {
      check(cudaEventRecord(start), "cudaEventRecord");
      check(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy");
      check(cudaEventRecord(stop), "cudaEventRecord");
      check(cudaEventSynchronize(stop), "cudaEventSynchronize");
      float ms = 0.0f;
      check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
      best_ms = ms < best_ms ? ms : best_ms;
    }
    check(cudaEventDestroy(start), "cudaEventDestroy");
    check(cudaEventDestroy(stop), "cudaEventDestroy");
    check(cudaFree(a), "cudaFree");
    check(cudaFree(b), "cudaFree");
    return 2.0 * static_cast<double>(bytes) / (static_cast<double>(best_ms) * 1e-3);
  }
};

}  // namespace

int main(int argc, char** argv) {
  try {
    rwd::bench::RooflineOptions defaults;
    defaults.sizes = {1024, 4096};
    defaults.steps = 200;
    defaults.alive_steps = 2000;
    defaults.gradient_size = 1024;
    defaults.gradient_steps = 100;
    return rwd::bench::GrayScottRoofline<CudaPlatform>(
               rwd::bench::parse_options(argc, argv, defaults))
        .run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gray_scott_roofline: %s\n", e.what());
    return 1;
  }
}
