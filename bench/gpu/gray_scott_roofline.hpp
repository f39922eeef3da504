// bench/gpu/gray_scott_roofline.hpp — the Gray–Scott roofline benchmark, written once for any
// Thrust device system; gray_scott_roofline.cu (CUDA) and gray_scott_roofline_cpu.cpp (thrust-cpp,
// one CPU thread) give it a Platform and a main.
//
//   build-device/bench/gpu/gray_scott_roofline [--sizes 1024,4096] [--steps 200]
//       [--alive-steps 2000] [--gradient-size 1024] [--gradient-steps 100] [--json FILE]
//
// What it measures, in order:
//   1. copy bandwidth: a device-to-device copy of a large buffer, bytes read + written per second
//      (the practical roofline of a memory-bound kernel);
//   2. Gray–Scott RK4 forward steps at each size: time per step, the bytes a step must move and
//      the fraction of the copy bandwidth reached. The bytes come from the kernels rewind's RK4
//      runs: 4 right-hand sides (read y, write k_i: 16N bytes each), 3 stage states
//      Y_i = y + h a_i,i−1 k_{i−1} (read 2N, write N: 24N each) and the final combination
//      y + h Σ b_i k_i (read 5N, write N: 48N): 184N bytes for N = 2n² unknowns, counting each
//      value once (the 5-point stencil's neighbours come from cache), in 8 kernel launches;
//   3. the pattern is alive: ‖v‖₂, mean and standard deviation of v every k steps of a longer run
//      at the first size (a living labyrinth has std(v) ≈ 0.1 once it fills the grid);
//   4. a store-all gradient (dJ/dy0, dJ/dθ of J = ½‖y_N‖²) against the forward run of the same
//      steps: time ratio, after checking that the stored states fit in memory.
// The last line is the same numbers as JSON (also written to --json FILE).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "index_list.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/backend/thrust_backend.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/objective.hpp"
#include "rewind/problems/gray_scott.hpp"

namespace rwd::bench {

struct RooflineOptions {
  std::vector<Index> sizes;
  Index steps = 200;
  Index alive_steps = 2000;
  Index gradient_size = 1024;
  Index gradient_steps = 100;
  std::string json_path;
};

inline constexpr double kRk4BytesPerUnknown = 184.0;  // see the header comment
inline constexpr int kRk4LaunchesPerStep = 8;

// Σ v_c and Σ v_c² over the v half of a Gray–Scott state, on the device.
struct VMoments {
  const double* v;
  REWIND_HOST_DEVICE Sums<2> operator()(Index c) const {
    Sums<2> s;
    s.v[0] = v[c];
    s.v[1] = v[c] * v[c];
    return s;
  }
};

inline RooflineOptions parse_options(int argc, char** argv, RooflineOptions o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc)
      detail::fail<InvalidArgument>("option ", a, " needs a value (see the header of ", __FILE__,
                                    ")");
    const std::string v = argv[++i];
    if (a == "--sizes")
      o.sizes = parse_index_list(v);
    else if (a == "--steps")
      o.steps = std::stoll(v);
    else if (a == "--alive-steps")
      o.alive_steps = std::stoll(v);
    else if (a == "--gradient-size")
      o.gradient_size = std::stoll(v);
    else if (a == "--gradient-steps")
      o.gradient_steps = std::stoll(v);
    else if (a == "--json")
      o.json_path = v;
    else
      detail::fail<InvalidArgument>("unknown option ", a);
  }
  if (o.sizes.empty() || o.steps < 1 || o.alive_steps < 0 || o.gradient_steps < 1)
    detail::fail<InvalidArgument>("need sizes, steps >= 1, alive-steps >= 0, gradient-steps >= 1");
  return o;
}

template <class Platform>
class GrayScottRoofline {
 public:
  using B = ThrustBackend;

  explicit GrayScottRoofline(RooflineOptions options) : o_(std::move(options)) {}

  int run() {
    std::printf("Gray–Scott RK4 roofline on %s (%s)\n", Platform::device_name().c_str(), B::name);
    const double copy_bytes_per_second = Platform::copy_bandwidth();
    std::printf("copy bandwidth (bytes read + written / time): %.1f GB/s\n\n",
                copy_bytes_per_second * 1e-9);
    json_ << "{\"device\":\"" << Platform::device_name() << "\",\"backend\":\"" << B::name
          << "\",\"copy_GBps\":" << copy_bytes_per_second * 1e-9 << ",\"forward\":[";

    std::printf("%8s %12s %14s %16s %12s %10s\n", "n", "unknowns N", "ms per step",
                "bytes per step", "GB/s", "roofline");
    std::printf(
        "  (bytes per step = 184·N: 4 rhs × 16N + 3 stage states × 24N + final 48N;"
        " %d launches per step)\n",
        kRk4LaunchesPerStep);
    for (std::size_t i = 0; i < o_.sizes.size(); ++i) {
      const Index n = o_.sizes[i];
      const double seconds = forward_seconds_per_step(n, o_.steps);
      const double N = 2.0 * static_cast<double>(n) * static_cast<double>(n);
      const double bytes = kRk4BytesPerUnknown * N;
      const double fraction = bytes / seconds / copy_bytes_per_second;
      std::printf("%8lld %12.0f %14.4f %16.3e %12.1f %9.1f%%\n", static_cast<long long>(n), N,
                  seconds * 1e3, bytes, bytes / seconds * 1e-9, 100.0 * fraction);
      json_ << (i ? "," : "") << "{\"n\":" << n << ",\"unknowns\":" << N
            << ",\"ms_per_step\":" << seconds * 1e3 << ",\"bytes_per_step\":" << bytes
            << ",\"GBps\":" << bytes / seconds * 1e-9 << ",\"roofline_fraction\":" << fraction
            << "}";
    }
    json_ << "]";

    alive(o_.sizes.front(), o_.alive_steps);
    gradient_ratio(o_.gradient_size, o_.gradient_steps);

    json_ << "}";
    std::printf("\nJSON %s\n", json_.str().c_str());
    if (!o_.json_path.empty()) {
      std::FILE* f = std::fopen(o_.json_path.c_str(), "w");
      if (!f) detail::fail<InvalidArgument>("cannot write ", o_.json_path);
      std::fprintf(f, "%s\n", json_.str().c_str());
      std::fclose(f);
    }
    return 0;
  }

 private:
  static StepControl steps_of_one(Index steps) { return StepControl::fixed(0.0, 1.0, steps); }

  static double now() {
    Platform::synchronize();
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  // Seconds per RK4 step over `steps` steps, after 5 warm-up steps.
  double forward_seconds_per_step(Index n, Index steps) {
    GrayScott<B> problem(n);
    const B::Vector theta = problem.default_parameters();
    B::Vector y = problem.default_initial_state();
    ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), steps_of_one(steps + 5));
    Carry carry = stepper.initial_carry(y, theta);
    for (int i = 0; i < 5; ++i) stepper.step(y, carry, theta);
    const double start = now();
    for (Index i = 0; i < steps; ++i) stepper.step(y, carry, theta);
    return (now() - start) / static_cast<double>(steps);
  }

  void alive(Index n, Index steps) {
    std::printf("\nalive: n = %lld, dt = 1, default θ = (0.16, 0.08, 0.037, 0.06)\n",
                static_cast<long long>(n));
    std::printf("%8s %14s %12s %12s\n", "step", "‖v‖₂", "mean v", "std v");
    GrayScott<B> problem(n);
    const B::Vector theta = problem.default_parameters();
    B::Vector y = problem.default_initial_state();
    ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(),
                               steps_of_one(std::max<Index>(steps, 1)));
    Carry carry = stepper.initial_carry(y, theta);
    const Index every = std::max<Index>(1, steps / 8);
    json_ << ",\"alive\":{\"n\":" << n << ",\"rows\":[";
    for (Index s = 0; s <= steps; ++s) {
      if (s % every == 0 || s == steps) {
        const Index cells = problem.cell_count();
        const Sums<2> m = B::sum_index<2>(cells, VMoments{B::data(y) + cells});
        const double mean = m[0] / static_cast<double>(cells);
        const double std_v =
            std::sqrt(std::max(0.0, m[1] / static_cast<double>(cells) - mean * mean));
        std::printf("%8lld %14.6e %12.6f %12.6f\n", static_cast<long long>(s), std::sqrt(m[1]),
                    mean, std_v);
        json_ << (s ? "," : "") << "{\"step\":" << s << ",\"v_norm\":" << std::sqrt(m[1])
              << ",\"v_mean\":" << mean << ",\"v_std\":" << std_v << "}";
      }
      if (s < steps) stepper.step(y, carry, theta);
    }
    json_ << "]}";
  }

  void gradient_ratio(Index n, Index steps) {
    GrayScott<B> problem(n);
    const double state_bytes = 8.0 * static_cast<double>(problem.state_size());
    // Store-all keeps every state, plus RK4's stages, the adjoint and a few work vectors.
    const double needed = state_bytes * static_cast<double>(steps + 1 + 16);
    const double free_bytes = Platform::free_bytes();
    std::printf("\nstore-all gradient: n = %lld, %lld steps, needs about %.2f GB",
                static_cast<long long>(n), static_cast<long long>(steps), needed * 1e-9);
    if (free_bytes > 0) std::printf(" (%.2f GB free)", free_bytes * 1e-9);
    std::printf("\n");
    if (free_bytes > 0 && needed > 0.9 * free_bytes) {
      std::printf("  skipped: does not fit\n");
      json_ << ",\"gradient\":null";
      return;
    }
    const B::Vector theta = problem.default_parameters();
    const B::Vector y0 = problem.default_initial_state();
    ExplicitRungeKutta stepper(problem, ButcherTableau::rk4(), steps_of_one(steps));

    B::Vector y = B::zeros(problem.state_size());
    const auto forward = [&] {
      B::copy(y0, y);
      Carry carry = stepper.initial_carry(y, theta);
      for (Index i = 0; i < steps; ++i) stepper.step(y, carry, theta);
    };
    forward();  // warm-up
    double start = now();
    forward();
    const double forward_seconds = now() - start;

    StoreAllAdjoint driver(stepper, Objective<B>::terminal_squared_norm());
    (void)driver.run(y0, theta);  // warm-up (allocates the stored states)
    start = now();
    const auto r = driver.run(y0, theta);
    const double gradient_seconds = now() - start;
    std::printf(
        "  forward %.3f s, gradient (forward + reverse) %.3f s: ratio %.2f; J = %.6e, "
        "dJ/dθ = (%.4e, %.4e, %.4e, %.4e)\n",
        forward_seconds, gradient_seconds, gradient_seconds / forward_seconds, r.loss,
        host_value(r.grad_theta, 0), host_value(r.grad_theta, 1), host_value(r.grad_theta, 2),
        host_value(r.grad_theta, 3));
    json_ << ",\"gradient\":{\"n\":" << n << ",\"steps\":" << steps
          << ",\"forward_s\":" << forward_seconds << ",\"gradient_s\":" << gradient_seconds
          << ",\"ratio\":" << gradient_seconds / forward_seconds << ",\"loss\":" << r.loss << "}";
  }

  static double host_value(const B::Vector& x, int i) {
    std::vector<double> h(static_cast<std::size_t>(B::size(x)));
    B::copy_to_host(x, h);
    return h[static_cast<std::size_t>(i)];
  }

  RooflineOptions o_;
  std::ostringstream json_;
};

}  // namespace rwd::bench
