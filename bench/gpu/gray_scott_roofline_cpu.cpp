// The Gray–Scott roofline benchmark (gray_scott_roofline.hpp) on the CPU: the same code over
// rwd::ThrustBackend on Thrust's CPP device system (one thread), at smaller default sizes, so the
// GPU's speed-up over it can be quoted.
//
//   build/bench/gpu/gray_scott_roofline_cpu [--sizes 256,512] [--json FILE]
#include <cstring>
#include <exception>
#include <vector>

#include "gray_scott_roofline.hpp"

namespace {

struct CppPlatform {
  static std::string device_name() { return "CPU, one thread"; }
  static void synchronize() {}
  static double free_bytes() { return 0.0; }  // unknown: not checked
  // std::memcpy of 256 MiB, best of 5: bytes read + written per second.
  static double copy_bandwidth() {
    const std::size_t count = std::size_t{32} << 20;
    std::vector<double> a(count, 1.0), b(count, 0.0);
    double best = 1e30;
    for (int r = 0; r < 5; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      std::memcpy(b.data(), a.data(), count * sizeof(double));
      const auto t1 = std::chrono::steady_clock::now();
      best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
      a[r] = b[count - 1 - r];  // keep the copies observable
    }
    return 2.0 * static_cast<double>(count * sizeof(double)) / best;
  }
};

}  // namespace

int main(int argc, char** argv) {
  try {
    rwd::bench::RooflineOptions defaults;
    defaults.sizes = {256, 512};
    defaults.steps = 20;
    defaults.alive_steps = 400;
    defaults.gradient_size = 256;
    defaults.gradient_steps = 100;
    return rwd::bench::GrayScottRoofline<CppPlatform>(
               rwd::bench::parse_options(argc, argv, defaults))
        .run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gray_scott_roofline_cpu: %s\n", e.what());
    return 1;
  }
}
