// The neural-ODE training benchmark (neural_ode_gpu_bench.hpp) on a CUDA GPU:
// rwd::nn::DeviceNeuralOde over rwd::ThrustBackend on the CUDA device system. Memory is the device
// memory in use (total − free, cudaMemGetInfo) after a batch size's first iteration, less what
// was in use before its model was made.
//
//   build/bench/gpu/neural_ode_gpu_bench [--batches 256,1024,4096,16384,65536] [--dump DIR]
//       [--json FILE]
#include <cuda_runtime.h>

#include <cstdio>
#include <exception>
#include <string>

#include "cuda_device_name.hpp"
#include "neural_ode_gpu_bench.hpp"
#include "rewind/backend/cuda_check.hpp"
#include "rewind/backend/thrust_backend.hpp"
#include "rewind/neural/device_neural_ode.hpp"

namespace {

using rwd::cuda::check;

struct CudaPlatform {
  using Model = rwd::nn::DeviceNeuralOde<rwd::ThrustBackend>;
  static std::string device_name() { return rwd::bench::cuda_device_name(); }
  static void synchronize() { check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }
  static double memory_in_use() {
    const rwd::cuda::DeviceMemory m = rwd::cuda::device_memory();
    return static_cast<double>(m.total_bytes - m.free_bytes);
  }
  static std::string products_note(const Model& model) { return model.network().products_note(); }
  static Model make_model(const rwd::nn::Mlp& shape, rwd::Index batch, rwd::Index,
                          const std::string& products) {
    const rwd::nn::DenseProducts p = products == "kernels"  ? rwd::nn::DenseProducts::kernels
                                     : products == "cublas" ? rwd::nn::DenseProducts::cublas
                                                            : rwd::nn::DenseProducts::automatic;
    if (products != "kernels" && products != "cublas" && products != "automatic")
      rwd::detail::fail<rwd::InvalidArgument>("--products ", products,
                                              ": automatic, kernels or cublas");
    return Model(shape, batch, rwd::nn::InputFeatures::identity, p);
  }
};

}  // namespace

int main(int argc, char** argv) {
  try {
    return rwd::bench::NeuralOdeGpuBench<CudaPlatform>(
               rwd::bench::parse_neural_options(argc, argv, rwd::bench::NeuralGpuOptions{}))
        .run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "neural_ode_gpu_bench: %s\n", e.what());
    return 1;
  }
}
