// The neural-ODE training benchmark (neural_ode_gpu_bench.hpp) on the CPU: rwd::nn::NeuralOde,
// rewind's CPU model (Eigen backend, its saved forward passes on, one thread), at the same sizes
// as on the GPU, so the GPU's speed-up over it can be quoted. Memory is the growth of the peak
// resident set size during a batch size's run.
//
//   build/bench/gpu/neural_ode_gpu_bench_cpu [--batches 256,1024,4096] [--json FILE]
#include <cstdio>
#include <exception>

#include "../peak_rss.hpp"
#include "neural_ode_gpu_bench.hpp"
#include "rewind/neural/neural_ode.hpp"

namespace {

struct CpuPlatform {
  using Model = rwd::nn::NeuralOde;
  static std::string device_name() { return "CPU, one thread"; }
  static void synchronize() {}
  static double memory_in_use() { return static_cast<double>(rwd::bench::peak_rss_bytes()); }
  static std::string products_note(const Model&) { return "rewind's CPU kernels"; }
  static Model make_model(const rwd::nn::Mlp& shape, rwd::Index batch, rwd::Index stage_calls,
                          const std::string&) {
    Model model(shape, batch);
    model.keep_forward_passes(stage_calls);
    return model;
  }
};

}  // namespace

int main(int argc, char** argv) {
  try {
    rwd::bench::NeuralGpuOptions defaults;
    defaults.batches = {256, 1024, 4096};
    defaults.iterations = 5;
    return rwd::bench::NeuralOdeGpuBench<CpuPlatform>(
               rwd::bench::parse_neural_options(argc, argv, defaults))
        .run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "neural_ode_gpu_bench_cpu: %s\n", e.what());
    return 1;
  }
}
