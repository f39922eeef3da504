// bench/neural_ode_bench.cpp — rewind's side of the neural-ODE comparison with PyTorch
// (bench/neural_ode_torch_compare.py drives both and prints the tables). One JSON object on
// stdout per call.
//
//   neural_ode_bench --mode parameters [--init-seed 1]
//       the initial parameters θ (or those of --parameters): {"theta": [...], "layout"}
//   neural_ode_bench --mode gradient --parameters theta.h5 --starts 3,77,512 [--window 10]
//       loss and dJ/dθ of the window MSE at the given parameters and window starts (batch =
//       number of starts): {"loss", "grad_theta": [...], "seconds"}
//   neural_ode_bench --mode train --iterations 200 [--batch 20 --window 10 --seed 1]
//       time per training iteration (sample, exact gradient, Adam) and peak RSS:
//       {"iterations", "seconds_per_iteration", "final_loss", "peak_rss_bytes"}
//   neural_ode_bench --mode series --observations lorenz63.h5 --out lorenz63.csv
//       an observation file of `rewind generate` (all components observed) as a time series,
//       t = step · dt, normalised per component as `rewind train --data` does (z-scores over
//       all points): {"points", "dimension", "mean", "scale"}
//   neural_ode_bench --mode horizon --steps 100000 [--snapshots 8 --batch 20]
//       one gradient over a long horizon: J = ½ mean |y_T|² over the batch, from the first
//       `batch` data points, dt = the data spacing, revolve(--snapshots) (0: store all):
//       {"steps", "seconds", "peak_rss_bytes", "rss_before_bytes", "loss", "grad_norm",
//       "snapshots",
//        "peak_stored_bytes"}
//
// --threads 1 (default): rewind's OpenMP loops on one thread, like the PyTorch side
// (torch.set_num_threads(1)); the results do not depend on it, the time does.
// --adjoint backsolve: the continuous adjoint (rwd::BacksolveAdjoint) in the gradient and train
// modes instead of the exact discrete one.
// Common: --data data/spiral.csv, --hidden 50 (or --layers 64,64: any hidden widths),
// --activation tanh, --features cube, --method rk4, --substeps 1, --init-seed 1 (used when
// --parameters is not given), --learning-rate 1e-2.
// The model is the one of `rewind train spiral`: dy/dt = mlp(φ(y); θ), MLP D-H-…-D with D the
// data's dimension (2-50-2 for the spiral; 3-64-64-3 with identity features for Lorenz-63).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "peak_rss.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/fit/observations.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/neural/adam.hpp"
#include "rewind/neural/mlp.hpp"
#include "rewind/neural/neural_ode.hpp"
#include "rewind/neural/neural_ode_trainer.hpp"
#include "rewind/neural/parameter_file.hpp"
#include "rewind/neural/time_series.hpp"
#include "rewind/neural/trajectory_set.hpp"
#include "rewind/parallel.hpp"
#include "rewind/schedule/schedules.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using rwd::Index;

using rwd::bench::peak_rss_bytes;

struct Arguments {
  std::string mode = "gradient", data = "data/spiral.csv", parameters, activation = "tanh",
              features = "cube", method = "rk4", adjoint = "discrete", observations, out;
  std::vector<Index> starts, layers;
  Index window = 10, batch = 20, substeps = 1, hidden = 50, iterations = 200, steps = 10000,
        snapshots = 8;
  int threads = 1;
  std::uint64_t seed = 1, init_seed = 1;
  double learning_rate = 1e-2;
};

Arguments parse(int argc, char** argv) {
  Arguments a;
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    if (i + 1 >= argc) throw rwd::InvalidArgument("option " + key + " needs a value");
    const std::string value = argv[++i];
    if (key == "--mode")
      a.mode = value;
    else if (key == "--data")
      a.data = value;
    else if (key == "--parameters")
      a.parameters = value;
    else if (key == "--activation")
      a.activation = value;
    else if (key == "--features")
      a.features = value;
    else if (key == "--method")
      a.method = value;
    else if (key == "--adjoint")
      a.adjoint = value;
    else if (key == "--window")
      a.window = std::stoll(value);
    else if (key == "--batch")
      a.batch = std::stoll(value);
    else if (key == "--substeps")
      a.substeps = std::stoll(value);
    else if (key == "--hidden")
      a.hidden = std::stoll(value);
    else if (key == "--iterations")
      a.iterations = std::stoll(value);
    else if (key == "--steps")
      a.steps = std::stoll(value);
    else if (key == "--snapshots")
      a.snapshots = std::stoll(value);
    else if (key == "--seed")
      a.seed = std::stoull(value);
    else if (key == "--init-seed")
      a.init_seed = std::stoull(value);
    else if (key == "--learning-rate")
      a.learning_rate = std::stod(value);
    else if (key == "--threads")
      a.threads = std::stoi(value);
    else if (key == "--observations")
      a.observations = value;
    else if (key == "--out")
      a.out = value;
    else if (key == "--starts" || key == "--layers") {
      std::stringstream list(value);
      std::string item;
      while (std::getline(list, item, ','))
        (key == "--starts" ? a.starts : a.layers).push_back(std::stoll(item));
    } else
      throw rwd::InvalidArgument("unknown option " + key);
  }
  return a;
}

rwd::training::TrainerOptions trainer_options(const Arguments& a, Index batch) {
  rwd::training::TrainerOptions o;
  o.window = a.window;
  o.batch = batch;
  o.substeps = a.substeps;
  o.tableau = rwd::ButcherTableau::by_name(a.method);
  o.seed = a.seed;
  if (a.adjoint == "backsolve")
    o.method = rwd::training::GradientMethod::backsolve;
  else if (a.adjoint != "discrete")
    throw rwd::InvalidArgument("--adjoint must be discrete or backsolve");
  return o;
}

// `rewind generate PROBLEM` writes observations for `rewind fit`; the trainers read time series.
nlohmann::ordered_json write_series(const Arguments& a) {
  if (a.observations.empty() || a.out.empty())
    throw rwd::InvalidArgument("--mode series needs --observations FILE.h5 and --out FILE.csv");
  const rwd::Observations obs = rwd::load_observations(a.observations);
  rwd::training::TrajectorySet set;
  rwd::training::TimeSeries series;
  for (Index step : obs.observed_steps) series.times.push_back(static_cast<double>(step) * obs.dt);
  series.values = obs.data;
  set.trajectories.push_back(series);
  set.labels.push_back("0");
  const auto norm = rwd::training::Normalization::of(set);
  rwd::training::save_time_series_csv(a.out, norm.normalize(series));
  nlohmann::ordered_json out;
  out["points"] = series.points();
  out["dimension"] = series.dimension();
  out["mean"] = std::vector<double>(norm.mean.data(), norm.mean.data() + norm.mean.size());
  out["scale"] = std::vector<double>(norm.scale.data(), norm.scale.data() + norm.scale.size());
  return out;
}

int run(const Arguments& a) {
  rwd::set_thread_count(a.threads);
  nlohmann::ordered_json out;
  out["mode"] = a.mode;
  if (a.mode == "series") {
    out.update(write_series(a));
    std::cout << out.dump() << "\n";
    return 0;
  }
  const rwd::training::TimeSeries data = rwd::training::load_time_series(a.data);
  const Index d = data.dimension();
  std::vector<Index> widths{d};
  if (a.layers.empty())
    widths.push_back(a.hidden);
  else
    widths.insert(widths.end(), a.layers.begin(), a.layers.end());
  widths.push_back(d);
  const rwd::nn::Mlp mlp(widths, rwd::nn::parse_activation(a.activation));
  const auto features = rwd::nn::parse_input_features(a.features);
  const Eigen::VectorXd theta0 = a.parameters.empty() ? mlp.initial_parameters(a.init_seed)
                                                      : rwd::nn::load_parameters(a.parameters, mlp);
  out["model"] = mlp.describe();

  if (a.mode == "parameters") {
    out["theta"] = std::vector<double>(theta0.data(), theta0.data() + theta0.size());
    out["layout"] = "per layer: W (outputs x inputs, column-major), then b";
  } else if (a.mode == "gradient") {
    if (a.starts.empty()) throw rwd::InvalidArgument("--mode gradient needs --starts");
    rwd::training::NeuralOdeTrainer trainer(
        mlp, features, data, trainer_options(a, static_cast<Index>(a.starts.size())));
    const auto start = Clock::now();
    const auto result = trainer.gradient(theta0, a.starts);
    out["seconds"] = std::chrono::duration<double>(Clock::now() - start).count();
    out["loss"] = result.loss;
    out["grad_theta"] = std::vector<double>(result.grad_theta.data(),
                                            result.grad_theta.data() + result.grad_theta.size());
  } else if (a.mode == "train") {
    rwd::training::NeuralOdeTrainer trainer(mlp, features, data, trainer_options(a, a.batch));
    rwd::training::AdamOptions adam_options;
    adam_options.learning_rate = a.learning_rate;
    rwd::training::Adam adam(adam_options);
    Eigen::VectorXd theta = theta0;
    trainer.step(theta, adam);  // warm-up: first-touch allocations of Adam's moments
    double loss = 0.0;
    const auto start = Clock::now();
    for (Index i = 0; i < a.iterations; ++i) loss = trainer.step(theta, adam).loss;
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    out["iterations"] = a.iterations;
    out["seconds_per_iteration"] = seconds / static_cast<double>(a.iterations);
    out["final_loss"] = loss;
    out["peak_rss_bytes"] = peak_rss_bytes();
  } else if (a.mode == "horizon") {
    const double spacing = rwd::training::uniform_spacing(data);
    const rwd::nn::NeuralOde model(mlp, a.batch, features);
    rwd::ExplicitRungeKutta stepper(
        model, rwd::ButcherTableau::by_name(a.method),
        rwd::StepControl::fixed(0.0, spacing / static_cast<double>(a.substeps), a.steps));
    Eigen::VectorXd y0(d * a.batch);
    for (Index b = 0; b < a.batch; ++b) y0.segment(d * b, d) = data.values.col(b % data.points());
    const double scale = 1.0 / static_cast<double>(a.batch);
    rwd::Objective<rwd::EigenBackend> objective(
        [scale](double, const Eigen::VectorXd& y, Eigen::VectorXd& grad) {
          grad = scale * y;
          return 0.5 * scale * y.squaredNorm();
        });
    rwd::CheckpointOptions options;
    options.drift_policy = rwd::DriftPolicy::fail;
    rwd::CheckpointedAdjoint driver(stepper, objective, options);
    const long long before = peak_rss_bytes();
    const auto start = Clock::now();
    const auto result =
        driver.run(y0, theta0,
                   a.snapshots > 0 ? rwd::revolve_schedule(static_cast<int>(a.snapshots))
                                   : rwd::store_all_schedule());
    out["steps"] = a.steps;
    out["seconds"] = std::chrono::duration<double>(Clock::now() - start).count();
    out["peak_rss_bytes"] = peak_rss_bytes();
    out["rss_before_bytes"] = before;
    out["loss"] = result.loss;
    out["grad_norm"] = result.grad_theta.norm();
    out["snapshots"] = a.snapshots;
    out["peak_stored_bytes"] = result.summary.storage.peak_bytes_on(rwd::LevelKind::memory);
    out["forward_steps"] = result.summary.forward_steps;
  } else {
    throw rwd::InvalidArgument("--mode must be parameters, gradient, train, horizon or series");
  }
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "neural_ode_bench: %s\n", e.what());
    return 1;
  }
}
