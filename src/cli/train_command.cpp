// src/cli/train_command.cpp — see train_command.hpp.
#include "train_command.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "integer_option.hpp"
#include "process_group.hpp"
#include "progress.hpp"
#include "rewind/error.hpp"
#include "rewind/format.hpp"
#include "rewind/neural/adam.hpp"
#include "rewind/neural/mlp.hpp"
#include "rewind/neural/model_file.hpp"
#include "rewind/neural/neural_ode.hpp"
#include "rewind/neural/neural_ode_trainer.hpp"
#include "rewind/neural/parameter_file.hpp"
#include "rewind/neural/sgd.hpp"
#include "rewind/neural/time_series.hpp"
#include "rewind/parallel.hpp"
#include "train_data_command.hpp"

namespace rwd::cli {
namespace {

struct TrainSettings {
  std::string data = "data/spiral.csv";
  Index iterations = 2000;
  Index batch = 20;
  Index window = 10;
  Index substeps = 1;
  std::string method = "rk4";
  Index hidden = 50;
  std::string activation = "tanh";
  std::string features = "cube";
  std::string optimizer = "adam";
  double learning_rate = 1e-2;
  std::optional<double> final_learning_rate =
      1e-4;  // geometric decay to this by the last iteration
  std::uint64_t seed = 1;
  std::uint64_t init_seed = 1;
  std::optional<Index> snapshots;
  std::string adjoint = "discrete";
  bool reanchor = false;
  Index eval_every = 50;
  std::optional<std::string> json;
  std::optional<std::string> save_parameters;
  std::optional<std::string> load_parameters;
  std::optional<double> target_mse;
  bool quiet = false;
};

std::unique_ptr<training::Optimizer> make_optimizer(const TrainSettings& settings) {
  if (settings.optimizer == "adam") {
    training::AdamOptions options;
    options.learning_rate = settings.learning_rate;
    return std::make_unique<training::Adam>(options);
  }
  if (settings.optimizer == "sgd") {
    training::SgdOptions options;
    options.learning_rate = settings.learning_rate;
    return std::make_unique<training::Sgd>(options);
  }
  rwd::detail::fail<InvalidArgument>("--optimizer '", settings.optimizer,
                                     "' is not known (adam, sgd)");
}

nlohmann::ordered_json matrix_rows(const Eigen::MatrixXd& dimension_by_points) {
  // Row per time point, as numpy would hold it: y[k] = (y0, y1, …) at t_k.
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (Eigen::Index k = 0; k < dimension_by_points.cols(); ++k) {
    nlohmann::ordered_json row = nlohmann::ordered_json::array();
    for (Eigen::Index i = 0; i < dimension_by_points.rows(); ++i)
      row.push_back(dimension_by_points(i, k));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string short_number(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3e", x);
  return buffer;
}

void train_spiral(const TrainSettings& settings) {
  if (settings.iterations < 0) rwd::detail::fail<InvalidArgument>("--iterations must be >= 0");
  if (settings.hidden < 1) rwd::detail::fail<InvalidArgument>("--hidden must be >= 1");
  if (settings.eval_every < 1) rwd::detail::fail<InvalidArgument>("--eval-every must be >= 1");
  if (!(settings.learning_rate > 0.0))
    rwd::detail::fail<InvalidArgument>("--learning-rate must be > 0");
  if (settings.final_learning_rate && !(*settings.final_learning_rate > 0.0))
    rwd::detail::fail<InvalidArgument>("--final-learning-rate must be > 0");
  if (settings.snapshots && *settings.snapshots < 1)
    rwd::detail::fail<InvalidArgument>("--snapshots must be >= 1");
  if (!std::filesystem::exists(settings.data))
    rwd::detail::fail<InvalidArgument>("data file '", settings.data,
                                       "' does not exist; write it with: rewind generate spiral "
                                       "--out ",
                                       settings.data);
  if (settings.save_parameters && std::filesystem::exists(*settings.save_parameters))
    rwd::detail::fail<InvalidArgument>("--save-parameters '", *settings.save_parameters,
                                       "' exists; remove it first");

  const nn::Mlp mlp({2, settings.hidden, 2}, nn::parse_activation(settings.activation));
  const nn::InputFeatures features = nn::parse_input_features(settings.features);
  training::TrainerOptions options;
  options.window = settings.window;
  options.batch = settings.batch;
  options.substeps = settings.substeps;
  options.tableau = ButcherTableau::by_name(settings.method);
  options.seed = settings.seed;
  // Without --snapshots the trainer's default: every step's stages kept (store-all, no re-run).
  if (settings.snapshots)
    options.schedule = revolve_schedule(static_cast<int>(*settings.snapshots));
  options.checkpoint.drift_policy = DriftPolicy::fail;  // a replay that differs is a bug here
  if (settings.adjoint == "backsolve") {
    options.method = training::GradientMethod::backsolve;
    options.backsolve.reanchor = settings.reanchor;
  } else if (settings.adjoint != "discrete") {
    rwd::detail::fail<InvalidArgument>("--adjoint '", settings.adjoint,
                                       "' is not known (discrete, backsolve)");
  }
  if (settings.snapshots && settings.adjoint == "backsolve")
    rwd::detail::fail<InvalidArgument>(
        "--snapshots schedules the discrete adjoint; backsolve keeps its own anchors");
  if (settings.reanchor && settings.adjoint != "backsolve")
    rwd::detail::fail<InvalidArgument>("--reanchor needs --adjoint backsolve");
  std::unique_ptr<training::Optimizer> optimizer = make_optimizer(settings);
  // The minibatch is split across the processes of an MPI run (every one draws the same windows
  // and takes the same step): the same loss history as one process.
  training::NeuralOdeTrainer trainer(mlp, features, training::load_time_series(settings.data),
                                     options, batch_exchange());
  if (trainer.data().dimension() != 2)
    rwd::detail::fail<InvalidArgument>("spiral training needs 2-dimensional data; '", settings.data,
                                       "' has ", trainer.data().dimension(), " components");

  Eigen::VectorXd theta = settings.load_parameters
                              ? nn::load_parameters(*settings.load_parameters, mlp)
                              : mlp.initial_parameters(settings.init_seed);
  const Eigen::MatrixXd initial_prediction = trainer.predict(theta);

  nlohmann::ordered_json iterations = nlohmann::ordered_json::array();
  nlohmann::ordered_json evaluations = nlohmann::ordered_json::array();
  evaluations.push_back({{"iteration", 0}, {"trajectory_mse", trainer.trajectory_error(theta)}});

  ProgressBar bar(stderr_is_terminal() && !settings.quiet && ProcessGroup::prints());
  // Under mpirun the ranks exchange every step from here on: a failure ends the job.
  ProcessGroup::begin_work();
  double gradient_seconds = 0.0, loss = std::nan(""), smoothed = std::nan("");
  const auto start = std::chrono::steady_clock::now();
  // Geometric decay from --learning-rate to --final-learning-rate over the run (constant without).
  const double decay = settings.final_learning_rate && settings.iterations > 1
                           ? std::pow(*settings.final_learning_rate / settings.learning_rate,
                                      1.0 / static_cast<double>(settings.iterations - 1))
                           : 1.0;
  for (Index i = 1; i <= settings.iterations; ++i) {
    if (i > 1 && decay != 1.0) optimizer->set_learning_rate(optimizer->learning_rate() * decay);
    const training::IterationRecord record = trainer.step(theta, *optimizer);
    loss = record.loss;
    smoothed = std::isnan(smoothed) ? loss : 0.95 * smoothed + 0.05 * loss;
    gradient_seconds += record.gradient_seconds;
    iterations.push_back({{"iteration", record.iteration},
                          {"loss", record.loss},
                          {"gradient_norm", record.gradient_norm},
                          {"seconds", record.gradient_seconds + record.update_seconds}});
    if (i % settings.eval_every == 0 || i == settings.iterations)
      evaluations.push_back(
          {{"iteration", i}, {"trajectory_mse", trainer.trajectory_error(theta)}});
    if (bar.due())
      bar.draw("rewind: train " +
               percent(static_cast<double>(i) / static_cast<double>(settings.iterations)) +
               " | iteration " + std::to_string(i) + "/" + std::to_string(settings.iterations) +
               " | loss " + short_number(smoothed));
  }
  bar.clear();
  const double seconds = seconds_since(start);
  const double final_mse = trainer.trajectory_error(theta);
  const double per_iteration =
      settings.iterations > 0 ? seconds / static_cast<double>(settings.iterations) : 0.0;

  // Every rank holds the same θ and history: rank 0 writes the files.
  // A complete model file (rewind predict reads it): the spiral works in the data's own units.
  if (settings.save_parameters && ProcessGroup::prints()) {
    nn::NeuralModel model;
    model.hidden = {settings.hidden};
    model.activation = nn::parse_activation(settings.activation);
    model.features = features;
    model.observed = 2;
    model.names =
        trainer.data().names.empty() ? std::vector<std::string>{"y0", "y1"} : trainer.data().names;
    model.mean = Eigen::VectorXd::Zero(2);
    model.scale = Eigen::VectorXd::Ones(2);
    model.method = settings.method;
    model.substeps = settings.substeps;
    model.training_options = nlohmann::json{
        {"problem", "spiral"},
        {"data", settings.data},
        {"iterations", settings.iterations},
        {"batch", settings.batch},
        {"window", settings.window},
        {"learning_rate", settings.learning_rate},
        {"seed", settings.seed},
        {"init_seed",
         settings.init_seed}}.dump();
    nn::save_model(*settings.save_parameters, model, theta);
  }

  if (!settings.quiet)
    std::cout << "trained " << trainer.describe() << " (" << theta.size() << " parameters) on "
              << settings.data << ": " << settings.iterations << " iterations of "
              << optimizer->name() << ", " << settings.batch << " windows of " << settings.window
              << " intervals, " << settings.method << " × " << settings.substeps << "\n"
              << "minibatch loss " << short_number(loss) << " (last), " << short_number(smoothed)
              << " (smoothed); trajectory MSE "
              << short_number(evaluations.front()["trajectory_mse"].get<double>()) << " -> "
              << short_number(final_mse) << "; " << short_number(per_iteration * 1e3)
              << " ms per iteration ("
              << short_number(gradient_seconds /
                              std::max<double>(1.0, static_cast<double>(settings.iterations)) * 1e3)
              << " ms in the gradient)\n";

  if (settings.json && ProcessGroup::prints()) {
    nlohmann::ordered_json log;
    log["problem"] = "spiral";
    log["threads"] = rwd::thread_count();
    log["ranks"] = ProcessGroup::size();
    log["model"] = {{"network", mlp.describe()},
                    {"features", std::string(nn::to_string(features))},
                    {"parameters", theta.size()}};
    log["options"] = {
        {"data", settings.data},
        {"iterations", settings.iterations},
        {"batch", settings.batch},
        {"window", settings.window},
        {"substeps", settings.substeps},
        {"method", settings.method},
        {"optimizer", optimizer->name()},
        {"learning_rate", settings.learning_rate},
        {"final_learning_rate", settings.final_learning_rate.value_or(settings.learning_rate)},
        {"seed", settings.seed},
        {"init_seed", settings.init_seed},
        {"adjoint", settings.adjoint + (settings.reanchor ? " (re-anchored)" : "")},
        {"schedule", settings.snapshots ? "revolve(c = " + std::to_string(*settings.snapshots) + ")"
                                        : "store-all"}};
    log["iterations"] = std::move(iterations);
    log["evaluations"] = std::move(evaluations);
    log["data"] = {{"t", trainer.data().times}, {"y", matrix_rows(trainer.data().values)}};
    log["predictions"] = nlohmann::ordered_json::array(
        {{{"iteration", 0}, {"y", matrix_rows(initial_prediction)}},
         {{"iteration", settings.iterations}, {"y", matrix_rows(trainer.predict(theta))}}});
    log["final_loss"] = loss;
    log["final_trajectory_mse"] = final_mse;
    log["seconds"] = seconds;
    log["seconds_per_iteration"] = per_iteration;
    log["parameters_file"] = settings.save_parameters
                                 ? nlohmann::ordered_json(*settings.save_parameters)
                                 : nlohmann::ordered_json();
    std::ofstream out(*settings.json);
    if (!out)
      rwd::detail::fail<StorageError>("cannot write the training log '", *settings.json, "'");
    out << log.dump(1) << "\n";
    if (!out)
      rwd::detail::fail<StorageError>("writing the training log '", *settings.json, "' failed");
  }
  if (settings.target_mse && !(final_mse <= *settings.target_mse))
    rwd::detail::fail<Error>("final trajectory MSE ", short_number(final_mse),
                             " is above --target-mse ", short_number(*settings.target_mse));
}

}  // namespace

CLI::App* add_train_command(CLI::App& app) {
  CLI::App* train = app.add_subcommand(
      "train",
      "Train a neural ODE on --data FILE (options below), or the spiral ('train spiral').");
  train->require_subcommand(0, 1);
  add_train_data_options(*train);
  auto settings = std::make_shared<TrainSettings>();
  CLI::App* spiral = train->add_subcommand(
      "spiral", "Fit dy/dt = mlp(y^3) to the cubic spiral (data: rewind generate spiral).");
  spiral->add_option("--data", settings->data, "time series, .csv or .h5")->capture_default_str();
  add_integer_option(*spiral, "--iterations,-i", settings->iterations,
                     IntegerRange::count_or_zero(), "optimizer steps");
  add_integer_option(*spiral, "--batch", settings->batch, IntegerRange::count(),
                     "windows per minibatch");
  add_integer_option(*spiral, "--window", settings->window, IntegerRange::count(),
                     "data intervals per window");
  add_integer_option(*spiral, "--substeps", settings->substeps, IntegerRange::count(),
                     "integrator steps per data interval");
  spiral->add_option("--method", settings->method, "Runge-Kutta tableau (fixed steps)")
      ->capture_default_str();
  add_integer_option(*spiral, "--hidden", settings->hidden, IntegerRange::count(),
                     "hidden width H of the 2-H-2 network");
  spiral->add_option("--activation", settings->activation, "tanh, relu, softplus, gelu")
      ->capture_default_str();
  spiral->add_option("--features", settings->features, "cube (y^3) or identity")
      ->capture_default_str();
  spiral->add_option("--optimizer", settings->optimizer, "adam or sgd")->capture_default_str();
  spiral->add_option("--learning-rate,--lr", settings->learning_rate, "step size")
      ->capture_default_str();
  spiral
      ->add_option("--final-learning-rate", settings->final_learning_rate,
                   "decay the learning rate geometrically to this by the last\n"
                   "iteration (default 1e-4; equal to --learning-rate: constant)")
      ->capture_default_str();
  add_integer_option(*spiral, "--seed", settings->seed, IntegerRange::unsigned_seed(),
                     "seed of the window sampler");
  add_integer_option(*spiral, "--init-seed", settings->init_seed, IntegerRange::unsigned_seed(),
                     "seed of the initial weights");
  add_integer_option(*spiral, "--snapshots", settings->snapshots, IntegerRange::count(),
                     "revolve with this many snapshots per window (default: store all)");
  spiral->add_option("--adjoint", settings->adjoint, "discrete (exact) or backsolve (continuous)")
      ->capture_default_str();
  spiral->add_flag("--reanchor", settings->reanchor,
                   "backsolve: reset the backward state at each checkpoint");
  add_integer_option(*spiral, "--eval-every", settings->eval_every, IntegerRange::count(),
                     "iterations between whole-trajectory evaluations");
  spiral->add_option("--json", settings->json, "write the training log here");
  spiral->add_option("--save-parameters", settings->save_parameters,
                     "write the trained parameters (HDF5)");
  spiral->add_option("--load-parameters", settings->load_parameters,
                     "start from these parameters (HDF5)");
  spiral->add_option("--target-mse", settings->target_mse,
                     "exit 1 if the final trajectory MSE is above this");
  spiral->add_flag("--quiet,-q", settings->quiet, "no progress bar, no summary");
  spiral->callback([settings] { train_spiral(*settings); });
  return train;
}

}  // namespace rwd::cli
