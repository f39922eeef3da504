// neural_ode_spiral — train a neural ODE on the classic spiral from C++, with exact gradients.
//
// The data are the cubic spiral dy/dt = (y³)A, A = [[−0.1, 2], [−2, −0.1]], y(0) = (2, 0),
// sampled at 1000 points on [0, 25] (data/spiral.csv, written by `rewind generate spiral`; this
// program makes the same series itself if the file is missing). The model is
// dy/dt = mlp(y³; θ), an MLP 2-50-2 with tanh, trained with Adam on minibatches of 20 windows of
// 10 data intervals (learning rate 1e-2 decaying to 1e-4), RK4 with one step per interval, and
// the exact discrete adjoint of every window (rwd::CheckpointedAdjoint inside
// rwd::training::NeuralOdeTrainer).
//
//   neural_ode_spiral                          # 2000 iterations, data/spiral.csv
//   neural_ode_spiral --iterations 300 --data my_series.csv --save trained.h5
//
// Prints the loss every 100 iterations and the whole-trajectory error at the end; exit 1 if
// that error did not fall below a tenth of the initial one (--check) — the CI smoke test.
//
// Build against an installed rewind:  find_package(rewind REQUIRED)  +  rewind::rewind.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>

#include <rewind/neural/adam.hpp>
#include <rewind/neural/mlp.hpp>
#include <rewind/neural/neural_ode.hpp>
#include <rewind/neural/neural_ode_trainer.hpp>
#include <rewind/neural/parameter_file.hpp>
#include <rewind/neural/sampled_solution.hpp>
#include <rewind/neural/time_series.hpp>
#include <rewind/problems/cubic_spiral.hpp>

int main(int argc, char** argv) try {
  std::string data_file = "data/spiral.csv", save;
  long iterations = 2000;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--iterations" && i + 1 < argc)
      iterations = std::atol(argv[++i]);
    else if (arg == "--data" && i + 1 < argc)
      data_file = argv[++i];
    else if (arg == "--save" && i + 1 < argc)
      save = argv[++i];
    else if (arg == "--check")
      check = true;
    else {
      std::fprintf(
          stderr,
          "usage: neural_ode_spiral [--iterations N] [--data FILE] [--save FILE.h5] [--check]\n");
      return 2;
    }
  }

  // The data: the file, or the same series made here (RK4, 100 steps per sample interval).
  const rwd::CubicSpiral spiral;
  rwd::training::TimeSeries data =
      std::filesystem::exists(data_file)
          ? rwd::training::load_time_series(data_file)
          : rwd::training::sample_solution(spiral, spiral.default_initial_state(),
                                           spiral.default_parameters(), rwd::ButcherTableau::rk4(),
                                           /*t_final=*/25.0, /*points=*/1000,
                                           /*substeps=*/100);

  // The network and the neural ODE it defines; θ is one flat vector.
  const rwd::nn::Mlp mlp({2, 50, 2}, rwd::nn::Activation::tanh);
  Eigen::VectorXd theta = mlp.initial_parameters(/*seed=*/1);

  rwd::training::TrainerOptions options;  // window 10, batch 20, RK4, store-all per window
  rwd::training::NeuralOdeTrainer trainer(mlp, rwd::nn::InputFeatures::cube, data, options);
  rwd::training::AdamOptions adam_options;
  adam_options.learning_rate = 1e-2;
  rwd::training::Adam adam(adam_options);

  const double initial_error = trainer.trajectory_error(theta);
  std::printf("%s, %ld parameters; trajectory MSE %.4g\n", trainer.model().describe().c_str(),
              static_cast<long>(theta.size()), initial_error);
  // The learning rate decays geometrically from 1e-2 to 1e-4 over the run: a constant rate keeps
  // the long-trajectory fit jumping between good and poor phases (see docs/neural_odes.md).
  const double decay =
      iterations > 1 ? std::pow(1e-2, 1.0 / static_cast<double>(iterations - 1)) : 1.0;
  double mean_loss = 0.0;
  for (long i = 1; i <= iterations; ++i) {
    if (i > 1) adam.set_learning_rate(adam.learning_rate() * decay);
    const auto record = trainer.step(theta, adam);  // sample windows, exact gradient, Adam
    mean_loss += record.loss;
    if (i % 100 == 0) {
      std::printf("iteration %5ld  mean minibatch loss %.4e  trajectory MSE %.4e\n", i,
                  mean_loss / 100, trainer.trajectory_error(theta));
      mean_loss = 0.0;
    }
  }
  const double final_error = trainer.trajectory_error(theta);
  std::printf("trajectory MSE %.4g -> %.4g\n", initial_error, final_error);
  if (!save.empty()) rwd::nn::save_parameters(save, mlp, theta);
  if (check && !(final_error < 0.1 * initial_error)) {
    std::fprintf(stderr, "neural_ode_spiral: the trajectory error did not fall tenfold\n");
    return 1;
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "neural_ode_spiral: %s\n", e.what());
  return 1;
}
