// neural_sde_spiral — train a neural SDE on the classic spiral from C++, with exact pathwise
// gradients through Euler–Maruyama.
//
// The data are those of neural_ode_spiral: the cubic spiral dy/dt = (y³)A sampled at 1000 points
// on [0, 25] (data/spiral.csv; made here if the file is missing). The model is
//   dy = mlp(y³; θ_net) dt + σ ∘ dW,   σ = exp(s) learnable (rwd::nn::NeuralSde),
// an MLP 2-50-2 with tanh and one noise level per component, integrated by Euler–Maruyama with
// one step per data interval. Each iteration draws 20 windows of 10 intervals and runs K sample
// paths of each (K copies of the window in one batched state); the loss is the windows' mean
// squared misfit, averaged over the K paths of each window, and its gradient is the exact
// pathwise adjoint of that discrete run (rwd::StoreAllAdjoint; windows are short). Adam updates
// θ = [θ_net, s] with the learning rate decaying from 1e-2 to 1e-4.
//
// Noise: iteration i runs with the stepper seed mix(seed, i); the draw of window w, path k,
// component d at step n is keyed by (that seed, n, component (w·K + k)·2 + d), so every
// (iteration, window, path) has its own Brownian path and a rerun is the same bits.
//
// The data are one deterministic trajectory, so a mean-squared loss pays for any spread: the
// learned σ falls during training (the gradient of every sample path's misfit with respect to σ
// is what moves it), while the drift learns the spiral.
//
//   neural_sde_spiral                          # 2000 iterations, K = 10, data/spiral.csv
//   neural_sde_spiral --iterations 800 --paths 4 --json sde.json --check
//
// Prints the loss every 100 iterations with σ and the whole-trajectory error of the mean of
// M = 100 sample paths from the first data point (fixed evaluation noise), and at the end σ and
// that error; exit 1 unless the error fell below a fifth of the initial one and below the error
// of predicting the origin at every point, the data's mean square (--check, the CI smoke test:
// the untrained network's paths run far off, so the first rule alone is met by a model that has
// only learned to decay). --json FILE writes the loss per iteration, σ every 100 iterations, the
// data, the mean path and a few sample paths, for plotting.
//
// Build against an installed rewind:  find_package(rewind REQUIRED)  +  rewind::rewind.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include <rewind/adjoint/store_all_adjoint.hpp>
#include <rewind/integrators/stochastic_stepper.hpp>
#include <rewind/neural/adam.hpp>
#include <rewind/neural/mlp.hpp>
#include <rewind/neural/neural_sde.hpp>
#include <rewind/neural/sampled_solution.hpp>
#include <rewind/neural/time_series.hpp>
#include <rewind/neural/window_fit.hpp>
#include <rewind/neural/window_sampler.hpp>
#include <rewind/problems/cubic_spiral.hpp>

namespace {

// SplitMix64's finaliser (Steele, Lea & Flood, OOPSLA 2014): nearby inputs give unrelated
// seeds, so the seeds of consecutive iterations share no structure.
std::uint64_t mix(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (i + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// M sample paths from the series' first point over the whole grid, with a fixed noise seed: the
// paths (D × points each) and their mean.
struct SamplePaths {
  std::vector<Eigen::MatrixXd> paths;
  Eigen::MatrixXd mean;
};

SamplePaths sample_paths(const rwd::nn::Mlp& mlp, const rwd::training::TimeSeries& data,
                         const Eigen::VectorXd& theta, double spacing, rwd::Index count,
                         std::uint64_t seed) {
  const rwd::Index d = data.dimension(), points = data.points();
  const rwd::nn::NeuralSde model(mlp, count, rwd::nn::InputFeatures::cube);
  rwd::StochasticStepper stepper(model, rwd::SdeScheme::euler_maruyama,
                                 rwd::StepControl::fixed(0.0, spacing, points - 1), seed);
  Eigen::VectorXd y = data.values.col(0).replicate(count, 1);
  rwd::Carry carry = stepper.initial_carry(y, theta);
  SamplePaths out{
      std::vector<Eigen::MatrixXd>(static_cast<std::size_t>(count), Eigen::MatrixXd(d, points)),
      Eigen::MatrixXd(d, points)};
  for (rwd::Index k = 0; k < points; ++k) {
    if (k > 0) stepper.step(y, carry, theta);
    const Eigen::Map<const Eigen::MatrixXd> columns(y.data(), d, count);
    for (rwd::Index m = 0; m < count; ++m)
      out.paths[static_cast<std::size_t>(m)].col(k) = columns.col(m);
    out.mean.col(k) = columns.rowwise().sum() / static_cast<double>(count);
  }
  return out;
}

// Mean squared error of the mean path against the series (all points after the first).
double mean_path_error(const SamplePaths& s, const rwd::training::TimeSeries& data) {
  const rwd::Index n = data.points() - 1;
  return (s.mean.rightCols(n) - data.values.rightCols(n)).squaredNorm() /
         static_cast<double>(n * data.dimension());
}

void write_row(std::FILE* f, const Eigen::VectorXd& row) {
  std::fputc('[', f);
  for (Eigen::Index i = 0; i < row.size(); ++i) std::fprintf(f, "%s%.9g", i ? ", " : "", row[i]);
  std::fputc(']', f);
}

void write_matrix(std::FILE* f, const Eigen::MatrixXd& m) {
  std::fputc('[', f);
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    if (r) std::fputs(", ", f);
    write_row(f, m.row(r).transpose());
  }
  std::fputc(']', f);
}

}  // namespace

int main(int argc, char** argv) try {
  std::string data_file = "data/spiral.csv", json;
  long iterations = 2000, paths = 10;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--iterations" && i + 1 < argc)
      iterations = std::atol(argv[++i]);
    else if (arg == "--paths" && i + 1 < argc)
      paths = std::atol(argv[++i]);
    else if (arg == "--data" && i + 1 < argc)
      data_file = argv[++i];
    else if (arg == "--json" && i + 1 < argc)
      json = argv[++i];
    else if (arg == "--check")
      check = true;
    else {
      std::fprintf(stderr,
                   "usage: neural_sde_spiral [--iterations N] [--paths K] [--data FILE] "
                   "[--json FILE] [--check]\n");
      return 2;
    }
  }
  if (iterations < 1 || paths < 1) {
    std::fprintf(stderr, "neural_sde_spiral: --iterations (%ld) and --paths (%ld) must be >= 1\n",
                 iterations, paths);
    return 2;
  }

  const rwd::CubicSpiral spiral;
  const rwd::training::TimeSeries data =
      std::filesystem::exists(data_file)
          ? rwd::training::load_time_series(data_file)
          : rwd::training::sample_solution(spiral, spiral.default_initial_state(),
                                           spiral.default_parameters(), rwd::ButcherTableau::rk4(),
                                           /*t_final=*/25.0, /*points=*/1000, /*substeps=*/100);
  const double spacing = rwd::training::uniform_spacing(data);

  const rwd::Index window = 10, windows = 20, evaluation_paths = 100;
  const std::uint64_t noise_seed = 2024, evaluation_seed = 7;
  const rwd::nn::Mlp mlp({2, 50, 2}, rwd::nn::Activation::tanh);
  // One batched state: window w's K paths are columns w·K … w·K + K − 1.
  const rwd::nn::NeuralSde model(mlp, windows * paths, rwd::nn::InputFeatures::cube);
  Eigen::VectorXd theta = model.initial_parameters(/*seed=*/1, /*sigma=*/0.1);
  rwd::training::WindowSampler sampler(data.points(), window, windows, /*seed=*/1);
  rwd::training::AdamOptions adam_options;
  adam_options.learning_rate = 1e-2;
  rwd::training::Adam adam(adam_options);

  auto sigma_text = [&] {
    const Eigen::VectorXd sigma = model.noise_levels(theta);
    char text[64];
    std::snprintf(text, sizeof text, "(%.4g, %.4g)", sigma[0], sigma[1]);
    return std::string(text);
  };
  const double initial_error = mean_path_error(
      sample_paths(mlp, data, theta, spacing, evaluation_paths, evaluation_seed), data);
  std::printf("%s (K = %ld paths per window), %ld parameters; sigma %s; mean-path MSE %.4g\n",
              model.describe().c_str(), paths, static_cast<long>(theta.size()),
              sigma_text().c_str(), initial_error);

  const double decay =
      iterations > 1 ? std::pow(1e-2, 1.0 / static_cast<double>(iterations - 1)) : 1.0;
  std::vector<double> losses;
  std::vector<Eigen::VectorXd> sigma_history;
  std::vector<rwd::Index> starts;
  double mean_loss = 0.0;
  for (long i = 1; i <= iterations; ++i) {
    if (i > 1) adam.set_learning_rate(adam.learning_rate() * decay);
    starts.clear();
    for (rwd::Index s : sampler.next_batch())
      for (long k = 0; k < paths; ++k) starts.push_back(s);
    const auto objective = rwd::training::window_misfit(data, starts, window, /*substeps=*/1);
    const Eigen::VectorXd y0 = rwd::training::window_initial_states(data, starts);
    rwd::StochasticStepper stepper(model, rwd::SdeScheme::euler_maruyama,
                                   rwd::StepControl::fixed(0.0, spacing, window),
                                   mix(noise_seed, static_cast<std::uint64_t>(i)));
    rwd::StoreAllAdjoint driver(stepper, objective);
    const auto result = driver.run(y0, theta);
    adam.step(theta, result.grad_theta);
    losses.push_back(result.loss);
    mean_loss += result.loss;
    if (i % 100 == 0) {
      sigma_history.push_back(model.noise_levels(theta));
      const double error = mean_path_error(
          sample_paths(mlp, data, theta, spacing, evaluation_paths, evaluation_seed), data);
      std::printf("iteration %5ld  mean minibatch loss %.4e  sigma %s  mean-path MSE %.4e\n", i,
                  mean_loss / 100, sigma_text().c_str(), error);
      mean_loss = 0.0;
    }
  }

  const SamplePaths final_paths =
      sample_paths(mlp, data, theta, spacing, evaluation_paths, evaluation_seed);
  const double final_error = mean_path_error(final_paths, data);
  std::printf("learned sigma %s\n", sigma_text().c_str());
  const rwd::Index n = data.points() - 1;
  const double origin_error =
      data.values.rightCols(n).squaredNorm() / static_cast<double>(n * data.dimension());
  std::printf(
      "mean of %ld sample paths: trajectory MSE %.4g -> %.4g (predicting the origin: %.4g)\n",
      static_cast<long>(evaluation_paths), initial_error, final_error, origin_error);

  if (!json.empty()) {
    std::FILE* f = std::fopen(json.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "neural_sde_spiral: cannot write %s\n", json.c_str());
      return 1;
    }
    std::fprintf(f, "{\"model\": \"%s\", \"paths_per_window\": %ld, \"iterations\": %ld,\n",
                 model.describe().c_str(), paths, iterations);
    std::fprintf(f, " \"initial_error\": %.9g, \"final_error\": %.9g,\n \"loss\": ", initial_error,
                 final_error);
    write_row(f, Eigen::Map<const Eigen::VectorXd>(losses.data(),
                                                   static_cast<Eigen::Index>(losses.size())));
    std::fputs(",\n \"sigma_every_100\": [", f);
    for (std::size_t k = 0; k < sigma_history.size(); ++k) {
      if (k) std::fputs(", ", f);
      write_row(f, sigma_history[k]);
    }
    std::fputs("],\n \"sigma\": ", f);
    write_row(f, model.noise_levels(theta));
    std::fputs(",\n \"times\": ", f);
    write_row(f, Eigen::Map<const Eigen::VectorXd>(data.times.data(), data.points()));
    std::fputs(",\n \"data\": ", f);
    write_matrix(f, data.values);
    std::fputs(",\n \"mean_path\": ", f);
    write_matrix(f, final_paths.mean);
    std::fputs(",\n \"sample_paths\": [", f);
    for (std::size_t m = 0; m < 5; ++m) {
      if (m) std::fputs(",\n  ", f);
      write_matrix(f, final_paths.paths[m]);
    }
    std::fputs("]}\n", f);
    if (std::fclose(f) != 0) {
      std::fprintf(stderr, "neural_sde_spiral: error writing %s\n", json.c_str());
      return 1;
    }
  }
  if (check && !(final_error < 0.2 * initial_error && final_error < origin_error)) {
    std::fprintf(stderr,
                 "neural_sde_spiral: the mean-path error did not fall fivefold below the initial "
                 "one and below the origin's\n");
    return 1;
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "neural_sde_spiral: %s\n", e.what());
  return 1;
}
