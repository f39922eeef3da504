// The Gray–Scott roofline benchmark (gray_scott_roofline.hpp) on a CUDA GPU: rwd::ThrustBackend
// on the CUDA device system; copy bandwidth from cudaMemcpy device to device, timed with CUDA
// events; every CUDA call checked (rewind/backend/cuda_check.hpp). After the roofline, a breakdown
// of one step's kernels at each size, each launched the way ThrustBackend does and the generic
// way (thrust::for_each_n), in GB/s.
//
//   build-device/bench/gpu/gray_scott_roofline [--sizes 1024,4096] [--json FILE]
#include <cuda_runtime.h>

#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "cuda_device_name.hpp"
#include "gray_scott_roofline.hpp"
#include "rewind/backend/cuda_check.hpp"

namespace {

using rwd::cuda::check;

// Milliseconds per call of launch(), best of 20 after a warm-up, timed with CUDA events.
template <class Launch>
double best_ms(const Launch& launch) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  launch();
  float best = 1e30f;
  for (int r = 0; r < 20; ++r) {
    check(cudaEventRecord(start), "cudaEventRecord");
    launch();
    check(cudaEventRecord(stop), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0.0f;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    best = ms < best ? ms : best;
  }
  check(cudaEventDestroy(start), "cudaEventDestroy");
  check(cudaEventDestroy(stop), "cudaEventDestroy");
  return best;
}

struct CudaPlatform {
  static std::string device_name() { return rwd::bench::cuda_device_name(); }
  static void synchronize() { check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }
  static double free_bytes() { return static_cast<double>(rwd::cuda::device_memory().free_bytes); }

  // cudaMemcpy device to device of 1 GiB, best of 20 after a warm-up: (read + written) / time.
  static double copy_bandwidth() {
    const std::size_t bytes = std::size_t{1} << 30;
    rwd::cuda::check_fits(2 * bytes, "copy bandwidth buffers");
    void* a = nullptr;
    void* b = nullptr;
    check(cudaMalloc(&a, bytes), "cudaMalloc");
    check(cudaMalloc(&b, bytes), "cudaMalloc");
    check(cudaMemset(a, 1, bytes), "cudaMemset");
    const double ms =
        best_ms([&] { check(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy"); });
    check(cudaFree(a), "cudaFree");
    check(cudaFree(b), "cudaFree");
    return 2.0 * static_cast<double>(bytes) / (ms * 1e-3);
  }
};

// The kernels of one RK4 step at 2n² unknowns, each launched the way rewind launches it
// (ThrustBackend: a plain kernel, one thread per index) and through thrust::for_each_n over a
// counting iterator, plus one fixed-order reduction, as GB/s against the copy bandwidth: which
// kernel, and which launch, keeps a step from the roofline.
void kernel_breakdown(rwd::Index n, double copy_bandwidth) {
  using B = rwd::ThrustBackend;
  rwd::GrayScott<B> problem(n);
  const rwd::Index N = problem.state_size();
  const B::Vector theta = problem.default_parameters();
  const B::Vector y = problem.default_initial_state();
  std::vector<B::Vector> k;
  for (int i = 0; i < 4; ++i) k.push_back(B::zeros(N));
  B::Vector out = B::zeros(N);
  const double bytes = 8.0 * static_cast<double>(N);
  const auto cells = static_cast<std::uint32_t>(problem.cell_count());
  const rwd::detail::GrayScottRhsCellKernel rhs{B::data(y), B::data(theta), B::data(k[0]),
                                                static_cast<std::uint32_t>(n), cells};
  rwd::thrust_detail::FusedCombination<true> generic4{};
  generic4.out = B::data(out);
  generic4.x = B::data(y);
  generic4.a = 1.0;
  generic4.terms = 4;
  for (int j = 0; j < 4; ++j) {
    generic4.c[j] = 0.1 * (j + 1);
    generic4.v[j] = B::data(k[static_cast<std::size_t>(j)]);
  }
  // The right-hand side runs one index per cell (n² of them), the combinations one per unknown.
  const auto thrust_launch = [&](rwd::Index count, const auto& f) {
    thrust::for_each_n(thrust::cuda::par_nosync, thrust::counting_iterator<rwd::Index>(0), count,
                       f);
    check(cudaGetLastError(), "thrust::for_each_n");
  };
  const auto rewind_launch = [&](rwd::Index count, const auto& f) {
    rwd::thrust_detail::launch_indices("breakdown", count, f);
  };
  const double ms_problem_rhs = best_ms([&] { problem.rhs(0.0, y, theta, k[0]); });
  const double ms_rhs_thrust = best_ms([&] { thrust_launch(cells, rhs); });
  const double ms_rhs_rewind = best_ms([&] { rewind_launch(cells, rhs); });
  const double ms_comb_thrust = best_ms([&] { thrust_launch(N, generic4); });
  const double ms_comb_generic = best_ms([&] { rewind_launch(N, generic4); });
  const double ms_dot = best_ms([&] { (void)B::dot(y, k[1]); });
  const std::vector<const B::Vector*> ks = {&k[0], &k[1], &k[2], &k[3]};
  const double coeffs[4] = {0.1, 0.2, 0.3, 0.4};
  const double ms_comb_backend = best_ms([&] {
    B::linear_combination(out, 1.0, y, {coeffs, 4}, {ks.data(), ks.size()});
  });
  std::printf("\nkernels of one RK4 step, n = %lld (%lld unknowns), best of 20:\n",
              static_cast<long long>(n), static_cast<long long>(N));
  std::printf("%-52s %10s %10s %9s\n", "kernel, launch", "ms", "GB/s", "roofline");
  const auto row = [&](const char* what, double ms, double moved) {
    const double gbps = moved / (ms * 1e-3) * 1e-9;
    std::printf("%-52s %10.4f %10.1f %8.1f%%\n", what, ms, gbps,
                100.0 * gbps * 1e9 / copy_bandwidth);
    std::printf("JSON-KERNEL {\"n\":%lld,\"kernel\":\"%s\",\"ms\":%.5f,\"GBps\":%.1f}\n",
                static_cast<long long>(n), what, ms, gbps);
  };
  row("rhs: GrayScott::rhs (as a step runs it)", ms_problem_rhs, 2 * bytes);
  row("rhs: thrust::for_each_n", ms_rhs_thrust, 2 * bytes);
  row("rhs: one thread per index", ms_rhs_rewind, 2 * bytes);
  row("y + 4 terms: thrust::for_each_n, loop over terms", ms_comb_thrust, 6 * bytes);
  row("y + 4 terms: one thread per index, loop over terms", ms_comb_generic, 6 * bytes);
  row("y + 4 terms: ThrustBackend::linear_combination", ms_comb_backend, 6 * bytes);
  row("dot(y, k): fixed-order reduction, to the host", ms_dot, 2 * bytes);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    rwd::bench::RooflineOptions defaults;
    defaults.sizes = {1024, 4096};
    defaults.steps = 200;
    defaults.alive_steps = 2000;
    defaults.gradient_size = 1024;
    defaults.gradient_steps = 100;
    const rwd::bench::RooflineOptions options = rwd::bench::parse_options(argc, argv, defaults);
    const int status = rwd::bench::GrayScottRoofline<CudaPlatform>(options).run();
    const double bandwidth = CudaPlatform::copy_bandwidth();
    for (const rwd::Index n : options.sizes) kernel_breakdown(n, bandwidth);
    return status;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gray_scott_roofline: %s\n", e.what());
    return 1;
  }
}
