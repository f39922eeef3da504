// bench/gpu/neural_ode_gpu_bench.hpp — neural-ODE training iterations at large batches, written
// once for any platform: neural_ode_gpu_bench.cu (rwd::nn::DeviceNeuralOde on the CUDA device
// system) and neural_ode_gpu_bench_cpu.cpp (rwd::nn::NeuralOde, rewind's CPU model, one thread)
// give it a Platform and a main. bench/gpu/neural_ode_torch_gpu.py runs the same iterations with
// torchdiffeq on the same GPU from the files --dump writes.
//
//   neural_ode_gpu_bench [--batches 256,4096,65536] [--layers 64,64] [--dim 3] [--steps 20]
//       [--dt 0.02] [--iterations 20] [--method rk38] [--products automatic|kernels|cublas]
//       [--dump DIR] [--json FILE]
//
// The problem, per batch size B: dy/dt = mlp(y; θ), an MLP dim-64-64-dim tanh (4611 parameters
// for dim 3), a window of `steps` fixed steps of Kutta's 3/8 rule (torchdiffeq's "rk4"), B
// initial states drawn uniformly from [-1, 1)^dim, and as data the states the same network with
// other parameters (a teacher: initial_parameters(2)) reaches from them at every step — a fit
// that can succeed, so the loss must fall. J = ½ Σ_{k=1..steps} Σ_b |y_k,b − d_k,b|² / B.
// θ starts at initial_parameters(1).
//
// One training iteration: the store-all gradient of J (rwd::StoreAllAdjoint; the whole window
// fits), the gradient copied to the host, one Adam step there (lr 1e-3; 4611 values), θ copied
// back. Reported per B: median and best time per iteration over `iterations` (after one warm-up
// iteration), the loss before and after, and the memory in use at its peak (device memory on
// the GPU: total − free after the first iteration, less what was in use before; peak RSS on the
// CPU). --dump DIR writes, per B, the inputs and rewind's first gradient as raw little-endian
// float64 (b<B>_theta.bin, _y0.bin, _data.bin [steps × B × dim], _grad.bin) and b<B>.json (the
// loss, sizes and options), for the PyTorch side's same-gradient check.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "index_list.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/neural/adam.hpp"
#include "rewind/neural/mlp.hpp"
#include "rewind/objective.hpp"

namespace rwd::bench {

struct NeuralGpuOptions {
  std::vector<Index> batches{256, 1024, 4096, 16384, 65536};
  std::vector<Index> layers{64, 64};
  Index dim = 3;
  Index steps = 20;
  double dt = 0.02;
  Index iterations = 20;
  std::string method = "rk38";
  std::string products = "automatic";  // the device model's matrix products (DenseProducts)
  std::string dump_dir, json_path;
};

inline NeuralGpuOptions parse_neural_options(int argc, char** argv, NeuralGpuOptions o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc)
      detail::fail<InvalidArgument>("option ", a, " needs a value (see the header of ", __FILE__,
                                    ")");
    const std::string v = argv[++i];
    if (a == "--batches")
      o.batches = parse_index_list(v);
    else if (a == "--layers")
      o.layers = parse_index_list(v);
    else if (a == "--dim")
      o.dim = std::stoll(v);
    else if (a == "--steps")
      o.steps = std::stoll(v);
    else if (a == "--dt")
      o.dt = std::stod(v);
    else if (a == "--iterations")
      o.iterations = std::stoll(v);
    else if (a == "--method")
      o.method = v;
    else if (a == "--products")
      o.products = v;
    else if (a == "--dump")
      o.dump_dir = v;
    else if (a == "--json")
      o.json_path = v;
    else
      detail::fail<InvalidArgument>("unknown option ", a);
  }
  if (o.batches.empty() || o.dim < 1 || o.steps < 1 || o.iterations < 1 || !(o.dt > 0.0))
    detail::fail<InvalidArgument>("need batches, dim >= 1, steps >= 1, iterations >= 1, dt > 0");
  for (const Index b : o.batches)
    if (b < 1) detail::fail<InvalidArgument>("batch sizes must be >= 1 (got ", b, ")");
  return o;
}

// Values in [-1, 1) from a fixed hash of (seed, i): the same on every platform.
inline std::vector<double> uniform_values(std::size_t n, std::uint64_t seed) {
  std::vector<double> h(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ULL + i + 1;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    x ^= x >> 31;
    h[i] = static_cast<double>(x >> 11) * 0x1.0p-52 - 1.0;
  }
  return h;
}

inline void write_raw(const std::string& path, const std::vector<double>& values) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(values.data()),
            static_cast<std::streamsize>(values.size() * sizeof(double)));
  if (!out) detail::fail<StorageError>("cannot write ", path);
}

// Platform: Model (a rwd::Problem built from (Mlp, batch)), device_name(), memory_in_use()
// (bytes), make_model(shape, batch, steps × stages, products), products_note(model),
// synchronize().
template <class Platform>
class NeuralOdeGpuBench {
 public:
  using Model = typename Platform::Model;
  using B = typename Model::Backend;
  using Vector = typename B::Vector;
  using Host = std::vector<double>;

  explicit NeuralOdeGpuBench(NeuralGpuOptions options) : o_(std::move(options)) {}

  int run() {
    json_.precision(12);
    std::vector<Index> widths{o_.dim};
    widths.insert(widths.end(), o_.layers.begin(), o_.layers.end());
    widths.push_back(o_.dim);
    const nn::Mlp shape(widths, nn::Activation::tanh);
    std::printf("neural ODE training iterations on %s (%s): %s, %s, %lld steps of %g\n",
                Platform::device_name().c_str(), B::name, shape.describe().c_str(),
                o_.method.c_str(), static_cast<long long>(o_.steps), o_.dt);
    std::printf("%8s %12s %12s %14s %14s %12s\n", "batch", "median ms", "best ms", "loss first",
                "loss last", "memory MB");
    json_ << "{\"device\":\"" << Platform::device_name() << "\",\"backend\":\"" << B::name
          << "\",\"network\":\"" << shape.describe() << "\",\"method\":\"" << o_.method
          << "\",\"steps\":" << o_.steps << ",\"dt\":" << o_.dt
          << ",\"iterations\":" << o_.iterations << ",\"runs\":[";
    for (std::size_t i = 0; i < o_.batches.size(); ++i) {
      if (i > 0) json_ << ",";
      run_batch(shape, o_.batches[i]);
    }
    json_ << "]}";
    std::printf("%s\n", json_.str().c_str());
    if (!o_.json_path.empty()) {
      std::ofstream out(o_.json_path);
      out << json_.str() << "\n";
      if (!out) detail::fail<StorageError>("cannot write ", o_.json_path);
    }
    return 0;
  }

 private:
  void run_batch(const nn::Mlp& shape, Index batch) {
    const double memory_before = Platform::memory_in_use();
    const Index n = o_.dim * batch;
    Model model = Platform::make_model(shape, batch, o_.steps * 4, o_.products);
    if (batch == o_.batches.front())
      std::printf("matrix products: %s\n", Platform::products_note(model).c_str());
    const ButcherTableau tableau = ButcherTableau::by_name(o_.method);
    const StepControl control = StepControl::fixed(0.0, o_.dt, o_.steps);
    ExplicitRungeKutta stepper(model, tableau, control);

    const Host y0_host = uniform_values(static_cast<std::size_t>(n), 1000 + batch);
    const Vector y0 = to_backend(y0_host);
    // The teacher's states at every step: the data.
    std::vector<Vector> data;
    Host data_host;
    {
      const Vector teacher = to_backend(eigen_values(shape.initial_parameters(2)));
      Vector y = to_backend(y0_host);
      Carry carry = stepper.initial_carry(y, teacher);
      for (Index k = 1; k <= o_.steps; ++k) {
        stepper.step(y, carry, teacher);
        data.push_back(y);
        const Host h = to_host(y);
        data_host.insert(data_host.end(), h.begin(), h.end());
      }
    }
    std::vector<Index> observed;
    for (Index k = 1; k <= o_.steps; ++k) observed.push_back(k);
    const double scale = 1.0 / static_cast<double>(batch);
    auto misfit = Objective<B>::trajectory_misfit(observed, data);
    // J / B: the mean over the batch, so the loss and the Adam step mean the same at every B.
    Objective<B> objective(typename Objective<B>::TerminalFn{}, observed,
                           [misfit, scale](Index step, double t, const Vector& y, Vector& grad) {
                             const double value = misfit.observation(step, t, y, grad);
                             B::scale(scale, grad);
                             return scale * value;
                           });
    StoreAllAdjoint driver(stepper, objective);

    Eigen::VectorXd theta = shape.initial_parameters(1);
    Vector theta_device = to_backend(eigen_values(theta));
    training::AdamOptions adam_options;
    adam_options.learning_rate = 1e-3;
    training::Adam adam(adam_options);
    Eigen::VectorXd gradient(shape.parameter_size());

    double first_loss = 0.0, last_loss = 0.0;
    double memory_peak = 0.0;
    std::vector<double> ms;
    for (Index it = 0; it <= o_.iterations; ++it) {
      const auto start = std::chrono::steady_clock::now();
      const auto result = driver.run(y0, theta_device);
      B::copy_to_host(result.grad_theta, std::span<double>(gradient.data(), gradient.size()));
      adam.step(theta, gradient);
      B::copy_from_host(std::span<const double>(theta.data(), theta.size()), theta_device);
      Platform::synchronize();
      const double elapsed =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      if (it == 0) {
        first_loss = result.loss;
        memory_peak = Platform::memory_in_use() - memory_before;
        if (!o_.dump_dir.empty()) dump(batch, y0_host, data_host, result, shape);
      } else {
        ms.push_back(elapsed);
      }
      last_loss = result.loss;
      if (!std::isfinite(result.loss))
        detail::fail<InvalidArgument>("batch ", batch, ": the loss is not finite at iteration ",
                                      it);
    }
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2], best = sorted.front();
    std::printf("%8lld %12.3f %12.3f %14.6e %14.6e %12.1f\n", static_cast<long long>(batch), median,
                best, first_loss, last_loss, memory_peak / 1e6);
    std::fflush(stdout);
    json_ << "{\"batch\":" << batch << ",\"median_ms\":" << median << ",\"best_ms\":" << best
          << ",\"loss_first\":" << first_loss << ",\"loss_last\":" << last_loss
          << ",\"memory_bytes\":" << memory_peak << ",\"parameters\":" << shape.parameter_size()
          << ",\"products\":\"" << json_text(Platform::products_note(model)) << "\"}";
  }

  template <class Result>
  void dump(Index batch, const Host& y0, const Host& data, const Result& result,
            const nn::Mlp& shape) const {
    const std::string base = o_.dump_dir + "/b" + std::to_string(batch);
    write_raw(base + "_theta.bin", eigen_values(shape.initial_parameters(1)));
    write_raw(base + "_y0.bin", y0);
    write_raw(base + "_data.bin", data);
    write_raw(base + "_grad.bin", to_host(result.grad_theta));
    std::ofstream out(base + ".json");
    out.precision(17);
    out << "{\"batch\":" << batch << ",\"dim\":" << o_.dim << ",\"layers\":[";
    for (std::size_t i = 0; i < o_.layers.size(); ++i) out << (i ? "," : "") << o_.layers[i];
    out << "],\"steps\":" << o_.steps << ",\"dt\":" << o_.dt << ",\"method\":\"" << o_.method
        << "\",\"loss\":" << result.loss << ",\"backend\":\"" << B::name << "\"}\n";
    if (!out) detail::fail<StorageError>("cannot write ", base, ".json");
  }

  // The text with the characters JSON would take as syntax replaced.
  static std::string json_text(std::string text) {
    for (char& c : text)
      if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) c = '\'';
    return text;
  }
  static Host eigen_values(const Eigen::VectorXd& v) { return Host(v.data(), v.data() + v.size()); }
  static Vector to_backend(const Host& h) {
    Vector v = B::zeros(static_cast<Index>(h.size()));
    B::copy_from_host(std::span<const double>(h), v);
    return v;
  }
  static Host to_host(const Vector& v) {
    Host h(static_cast<std::size_t>(B::size(v)));
    B::copy_to_host(v, std::span<double>(h));
    return h;
  }

  NeuralGpuOptions o_;
  std::ostringstream json_;
};

}  // namespace rwd::bench
