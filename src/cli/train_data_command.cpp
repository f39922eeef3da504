// src/cli/train_data_command.cpp — see train_data_command.hpp.
#include "train_data_command.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "input_file.hpp"
#include "integer_option.hpp"
#include "process_group.hpp"
#include "progress.hpp"
#include "rewind/error.hpp"
#include "rewind/format.hpp"
#include "rewind/neural/adam.hpp"
#include "rewind/neural/data_trainer.hpp"
#include "rewind/neural/model_file.hpp"
#include "rewind/neural/parameter_file.hpp"
#include "rewind/neural/sgd.hpp"
#include "rewind/neural/training_checkpoint.hpp"
#include "rewind/neural/trajectory_set.hpp"
#include "rewind/parallel.hpp"

namespace rwd::cli {
namespace {

using rwd::detail::fail;
using Json = nlohmann::ordered_json;

struct DataSettings {
  std::string data;
  std::optional<std::string> validation_data;
  std::string layers = "64,64";
  std::string activation = "tanh";
  std::string features = "identity";
  Index augment = 0;
  bool time_dependent = false;
  bool no_normalize = false;
  double validation = 0.0;
  std::optional<Index> patience;
  std::string validate_on = "trajectory";  // what the validation error measures
  Index iterations = 2000;
  std::optional<Index> stop_at;
  Index batch = 20;
  Index window = 10;
  Index substeps = 1;
  bool substeps_given = false;  // --substeps on the command line (refused with --adaptive)
  std::string method = "rk4";
  bool adaptive = false;
  std::optional<double> rtol, atol;  // adaptive only
  std::string optimizer = "adam";
  double learning_rate = 1e-2;
  double final_learning_rate = 1e-4;
  std::string lr_schedule = "geometric";
  double clip_norm = 0.0;
  std::uint64_t seed = 1;
  std::uint64_t init_seed = 1;
  std::optional<Index> snapshots;
  Index eval_every = 50;
  std::optional<Index> checkpoint_every;
  std::optional<std::string> checkpoint;
  std::optional<std::string> resume;
  std::optional<std::string> json;
  std::optional<std::string> save_parameters;
  bool quiet = false;
};

// --adaptive without --rtol/--atol: the tolerances of `rewind run --adaptive`.
constexpr double kTrainRtol = 1e-6;
constexpr double kTrainAtol = 1e-9;

// "64,64" → {64, 64}; "none" or "" → {} (a linear field). Each width an integer >= 1.
std::vector<Index> parse_layers(const std::string& text) {
  std::vector<Index> widths;
  if (text.empty() || text == "none") return widths;
  std::size_t begin = 0;
  for (int layer = 1;; ++layer) {
    const std::size_t comma = text.find(',', begin);
    const std::string field =
        text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    // Each width read like every integer option (integer_text.hpp), the layer named.
    const std::string label = "--layers (hidden layer " + std::to_string(layer) + ")";
    widths.push_back(parse_integer<Index>(label, field, IntegerRange::count()));
    if (comma == std::string::npos) return widths;
    begin = comma + 1;
  }
}

std::string short_number(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3e", x);
  return buffer;
}

// The step size of iteration i (1-based) of n: constant, geometric or cosine from lr to final.
double scheduled_rate(const DataSettings& s, Index i) {
  if (s.lr_schedule == "constant" || s.iterations <= 1) return s.learning_rate;
  const double x = static_cast<double>(i - 1) / static_cast<double>(s.iterations - 1);
  if (s.lr_schedule == "geometric")
    return s.learning_rate * std::pow(s.final_learning_rate / s.learning_rate, x);
  // Cosine annealing (Loshchilov & Hutter, "SGDR", ICLR 2017), one cycle, no restarts.
  return s.final_learning_rate +
         0.5 * (s.learning_rate - s.final_learning_rate) * (1.0 + std::cos(std::numbers::pi * x));
}

void validate(const DataSettings& s) {
  if (s.iterations < 0) fail<InvalidArgument>("--iterations must be >= 0");
  if (s.eval_every < 1) fail<InvalidArgument>("--eval-every must be >= 1");
  if (s.augment < 0) fail<InvalidArgument>("--augment = ", s.augment, " must be >= 0");
  if (!(s.validation >= 0.0 && s.validation < 1.0))
    fail<InvalidArgument>("--validation = ", s.validation, " must be a fraction in [0, 1)");
  if (s.patience && *s.patience < 1) fail<InvalidArgument>("--patience must be >= 1");
  (void)training::parse_validation_measure(s.validate_on);  // names the choices when unknown
  if (s.validate_on != "trajectory" && s.validation == 0.0 && !s.validation_data)
    fail<InvalidArgument>("--validate-on ", s.validate_on,
                          " measures the validation error: give --validation F or "
                          "--validation-data FILE");
  if (s.patience && s.validation == 0.0 && !s.validation_data)
    fail<InvalidArgument>(
        "--patience stops on the validation error: give --validation F or "
        "--validation-data FILE");
  if (!(s.learning_rate > 0.0 && std::isfinite(s.learning_rate)))
    fail<InvalidArgument>("--learning-rate must be finite and > 0");
  if (!(s.final_learning_rate > 0.0 && std::isfinite(s.final_learning_rate)))
    fail<InvalidArgument>("--final-learning-rate must be finite and > 0");
  if (s.lr_schedule != "constant" && s.lr_schedule != "geometric" && s.lr_schedule != "cosine")
    fail<InvalidArgument>("--lr-schedule '", s.lr_schedule,
                          "' is not known (constant, geometric, cosine)");
  if (!(s.clip_norm >= 0.0 && std::isfinite(s.clip_norm)))
    fail<InvalidArgument>("--clip-norm must be finite and >= 0 (0: no clipping)");
  if (s.snapshots && *s.snapshots < 1) fail<InvalidArgument>("--snapshots must be >= 1");
  if (s.checkpoint_every.has_value() != s.checkpoint.has_value())
    fail<InvalidArgument>("--checkpoint-every N and --checkpoint FILE go together");
  if (s.checkpoint_every && *s.checkpoint_every < 1)
    fail<InvalidArgument>("--checkpoint-every must be >= 1");
  if (s.stop_at && (*s.stop_at < 0 || *s.stop_at > s.iterations))
    fail<InvalidArgument>("--stop-at ", *s.stop_at, " must be in [0, --iterations]");
  require_input_file("--data", s.data);
  if (s.validation_data) require_input_file("--validation-data", *s.validation_data);
  if (s.save_parameters && std::filesystem::exists(*s.save_parameters))
    fail<InvalidArgument>("--save-parameters '", *s.save_parameters, "' exists; remove it first");
  if (s.adaptive) {
    if (s.substeps_given)
      fail<InvalidArgument>(
          "--substeps sets fixed steps; with --adaptive the error controller "
          "chooses the steps (set --rtol/--atol instead)");
    if (!ButcherTableau::by_name(s.method).has_embedded())
      fail<InvalidArgument>(
          "--adaptive needs a method with an embedded error estimate (dopri5, "
          "tsit5, bs3, heun); --method ",
          s.method, " has none");
    const double rtol = s.rtol.value_or(kTrainRtol), atol = s.atol.value_or(kTrainAtol);
    if (!(rtol >= 1e-15 && std::isfinite(rtol)))
      fail<InvalidArgument>("--rtol = ", rtol, " must be finite and >= 1e-15");
    if (!(atol > 0.0 && std::isfinite(atol)))
      fail<InvalidArgument>("--atol = ", atol, " must be finite and > 0");
  } else if (s.rtol || s.atol) {
    fail<InvalidArgument>(
        "--rtol and --atol are tolerances of adaptive steps: add --adaptive "
        "(and an embedded method such as --method dopri5)");
  }
  if (s.optimizer != "adam" && s.optimizer != "sgd")
    fail<InvalidArgument>("--optimizer '", s.optimizer, "' is not known (adam, sgd)");
}

// The options that decide the run's arithmetic: a resumed run must have the same.
Json run_options(const DataSettings& s) {
  return Json{{"data", s.data},
              {"validation_data", s.validation_data ? Json(*s.validation_data) : Json()},
              {"layers", s.layers},
              {"activation", s.activation},
              {"features", s.features},
              {"augment", s.augment},
              {"time_dependent", s.time_dependent},
              {"normalize", !s.no_normalize},
              {"validation", s.validation},
              {"patience", s.patience ? Json(*s.patience) : Json()},
              {"validate_on", s.validate_on},
              {"iterations", s.iterations},
              {"batch", s.batch},
              {"window", s.window},
              {"substeps", s.substeps},
              {"method", s.method},
              {"adaptive", s.adaptive},
              {"rtol", s.adaptive ? Json(s.rtol.value_or(kTrainRtol)) : Json()},
              {"atol", s.adaptive ? Json(s.atol.value_or(kTrainAtol)) : Json()},
              {"optimizer", s.optimizer},
              {"learning_rate", s.learning_rate},
              {"final_learning_rate", s.final_learning_rate},
              {"lr_schedule", s.lr_schedule},
              {"clip_norm", s.clip_norm},
              {"seed", s.seed},
              {"init_seed", s.init_seed},
              {"snapshots", s.snapshots ? Json(*s.snapshots) : Json()},
              {"eval_every", s.eval_every}};
}

bool records_adaptive_steps(const Json& options) {
  return options.contains("adaptive") && options["adaptive"] == true;
}

void check_resume_options(const Json& recorded, const Json& now, const std::string& file) {
  for (const auto& [key, value] : now.items()) {
    // Checkpoints written before adaptive training record no step-control keys: fixed steps.
    const bool step_control = key == "adaptive" || key == "rtol" || key == "atol";
    if (step_control && !recorded.contains(key) && !records_adaptive_steps(now)) continue;
    // Nor a validation measure: theirs was the trajectory's.
    if (key == "validate_on" && !recorded.contains(key) && value == "trajectory") continue;
    if (!recorded.contains(key) || recorded[key] != value)
      fail<InvalidArgument>("--resume '", file, "': the checkpoint was trained with ", key, " = ",
                            recorded.contains(key) ? recorded[key].dump() : "(not recorded)",
                            " but this command has ", value.dump(),
                            "; a continuation needs the same options");
  }
}

std::unique_ptr<training::Optimizer> make_optimizer(const DataSettings& s) {
  if (s.optimizer == "sgd") {
    training::SgdOptions options;
    options.learning_rate = s.learning_rate;
    return std::make_unique<training::Sgd>(options);
  }
  training::AdamOptions options;
  options.learning_rate = s.learning_rate;
  return std::make_unique<training::Adam>(options);
}

Json rows(const Eigen::MatrixXd& by_points) {
  Json out = Json::array();
  for (Eigen::Index k = 0; k < by_points.cols(); ++k) {
    Json row = Json::array();
    for (Eigen::Index i = 0; i < by_points.rows(); ++i) row.push_back(by_points(i, k));
    out.push_back(std::move(row));
  }
  return out;
}

Json number_or_null(double x) {
  return std::isfinite(x) ? Json(x) : Json();
}

void train_data(const DataSettings& s) {
  validate(s);
  const std::vector<Index> hidden = parse_layers(s.layers);
  const nn::Activation activation = nn::parse_activation(s.activation);
  const nn::InputFeatures features = nn::parse_input_features(s.features);
  const ButcherTableau tableau = ButcherTableau::by_name(s.method);

  // Data, the split, the normalisation.
  training::TrajectorySet set = training::load_trajectories(s.data);
  std::vector<Index> training_points;
  for (std::size_t j = 0; j < set.trajectories.size(); ++j) {
    const Index points = set.trajectories[j].points();
    const auto held = static_cast<Index>(std::ceil(s.validation * static_cast<double>(points)));
    if (points - held < 2)
      fail<InvalidArgument>("--validation ", s.validation, " leaves trajectory '", set.labels[j],
                            "' of ", s.data, " with ", points - held,
                            " training points; at least 2 are needed");
    training_points.push_back(points - held);
  }
  if (s.validation_data) {
    const training::TrajectorySet extra = training::load_trajectories(*s.validation_data);
    if (extra.dimension() != set.dimension())
      fail<InvalidArgument>("--validation-data '", *s.validation_data, "' has ", extra.dimension(),
                            " components but --data '", s.data, "' has ", set.dimension());
    for (std::size_t j = 0; j < extra.trajectories.size(); ++j) {
      set.trajectories.push_back(extra.trajectories[j]);
      set.labels.push_back("validation " + extra.labels[j]);
      training_points.push_back(1);  // held out whole: only its initial point is given
    }
  }
  const Index d = set.dimension();
  const training::Normalization norm = s.no_normalize
                                           ? training::Normalization::identity(d)
                                           : training::Normalization::of(set, training_points);

  nn::NeuralModel model;
  model.hidden = hidden;
  model.activation = activation;
  model.features = features;
  model.observed = d;
  model.augment = s.augment;
  model.time_input = s.time_dependent;
  model.names = set.names;
  model.mean = norm.mean;
  model.scale = norm.scale;
  model.method = s.method;
  model.substeps = s.substeps;
  std::optional<training::AdaptiveTolerances> adaptive;
  if (s.adaptive) {
    adaptive =
        training::AdaptiveTolerances{s.rtol.value_or(kTrainRtol), s.atol.value_or(kTrainAtol)};
    model.adaptive = true;
    model.rtol = adaptive->rtol;
    model.atol = adaptive->atol;
  }
  model.training_options = run_options(s).dump();
  if (s.time_dependent) {  // the network sees t scaled like the data: mean 0, std 1
    double sum = 0.0, squares = 0.0;
    Index count = 0;
    for (std::size_t j = 0; j < set.trajectories.size(); ++j)
      for (Index k = 0; k < training_points[j]; ++k, ++count)
        sum += set.trajectories[j].times[static_cast<std::size_t>(k)];
    model.time_shift = sum / static_cast<double>(count);
    for (std::size_t j = 0; j < set.trajectories.size(); ++j)
      for (Index k = 0; k < training_points[j]; ++k) {
        const double r = set.trajectories[j].times[static_cast<std::size_t>(k)] - model.time_shift;
        squares += r * r;
      }
    const double sd = std::sqrt(squares / static_cast<double>(count));
    model.time_scale = sd > 0.0 ? sd : 1.0;
  }
  model.validate();

  std::vector<training::TimeSeries> normalized;
  for (const training::TimeSeries& t : set.trajectories) normalized.push_back(norm.normalize(t));
  training::DataTrainerOptions options;
  options.window = s.window;
  options.batch = s.batch;
  options.substeps = s.substeps;
  options.adaptive = adaptive;
  options.tableau = tableau;
  options.seed = s.seed;
  // Without a budget, fixed steps keep every stage (no step re-run in the reverse sweep, and the
  // network's forward passes there are reused); adaptive steps keep every accepted state.
  options.schedule = s.snapshots  ? revolve_schedule(static_cast<int>(*s.snapshots))
                     : s.adaptive ? store_all_schedule()
                                  : store_all_stages_schedule(tableau.stages);
  options.checkpoint.drift_policy = DriftPolicy::fail;  // a replay that differs is a bug here
  options.augment = s.augment;
  options.clip_norm = s.clip_norm;
  options.validation = training::parse_validation_measure(s.validate_on);
  training::DataTrainer trainer(model.field(), normalized, training_points, options,
                                batch_exchange());
  const bool has_validation = s.validation > 0.0 || s.validation_data.has_value();

  std::unique_ptr<training::Optimizer> optimizer = make_optimizer(s);
  const Eigen::VectorXd initial = model.network().initial_parameters(s.init_seed);
  Eigen::VectorXd theta = initial;
  training::TrainingState state;
  state.best_validation = std::numeric_limits<double>::infinity();
  if (s.resume) {
    // Architecture first (parameter_file names the differing layer), then every option.
    const nn::Mlp network = model.network();
    try {
      (void)nn::load_parameters(*s.resume, network);
    } catch (const StorageError& e) {
      fail<InvalidArgument>("--resume: ", e.what());
    }
    training::LoadedCheckpoint loaded = training::load_training_checkpoint(*s.resume);
    check_resume_options(Json::parse(loaded.model.model.training_options), run_options(s),
                         *s.resume);
    theta = loaded.model.theta;
    state = std::move(loaded.state);
    optimizer->restore(state.optimizer);
    trainer.fast_forward(state.iteration);
  } else {
    const training::Evaluation e = trainer.evaluate(theta);
    state.evaluation_iterations.push_back(0);
    state.train_errors.push_back(e.train_mse);
    state.validation_errors.push_back(e.validation_mse);
    if (has_validation) {
      state.best_validation = e.validation_mse;
      state.best_theta = theta;
    }
  }

  ProgressBar bar(stderr_is_terminal() && !s.quiet && ProcessGroup::prints());
  ProcessGroup::begin_work();
  const Index last = s.stop_at.value_or(s.iterations);
  std::string stopped = s.stop_at && *s.stop_at < s.iterations ? "stop-at" : "iterations";
  double smoothed = std::nan(""), gradient_seconds = 0.0;
  Index run_iterations = 0, steps_taken = 0, steps_rejected = 0;
  std::vector<Index> iteration_steps;  // accepted steps of each iteration of this invocation
  const auto start = std::chrono::steady_clock::now();
  const auto write_checkpoint = [&] {
    state.optimizer = optimizer->state();
    if (ProcessGroup::prints())
      training::save_training_checkpoint(*s.checkpoint, model, theta, state);
  };
  for (Index i = state.iteration + 1; i <= last; ++i) {
    const double rate = scheduled_rate(s, i);
    optimizer->set_learning_rate(rate);
    const training::DataIteration record = trainer.step(theta, *optimizer);
    ++run_iterations;
    gradient_seconds += record.gradient_seconds;
    steps_taken += record.steps;
    steps_rejected += record.rejected;
    iteration_steps.push_back(record.steps);
    state.iteration = i;
    state.losses.push_back(record.loss);
    state.gradient_norms.push_back(record.gradient_norm);
    state.learning_rates.push_back(rate);
    smoothed = std::isnan(smoothed) ? record.loss : 0.95 * smoothed + 0.05 * record.loss;
    bool stop_early = false;
    if (i % s.eval_every == 0 || i == s.iterations) {
      const training::Evaluation e = trainer.evaluate(theta);
      state.evaluation_iterations.push_back(i);
      state.train_errors.push_back(e.train_mse);
      state.validation_errors.push_back(e.validation_mse);
      if (has_validation) {
        if (e.validation_mse < state.best_validation) {
          state.best_validation = e.validation_mse;
          state.best_theta = theta;
          state.best_iteration = i;
          state.evaluations_since_best = 0;
        } else if (s.patience && ++state.evaluations_since_best >= *s.patience) {
          stop_early = true;
        }
      }
    }
    if (s.checkpoint_every && (i % *s.checkpoint_every == 0 || stop_early)) write_checkpoint();
    if (bar.due()) {
      std::string line =
          "rewind: train " + percent(static_cast<double>(i) / static_cast<double>(s.iterations)) +
          " | iteration " + std::to_string(i) + "/" + std::to_string(s.iterations) + " | loss " +
          short_number(smoothed) + " | train " + short_number(state.train_errors.back());
      if (has_validation) line += " | validation " + short_number(state.validation_errors.back());
      bar.draw(line);
    }
    if (stop_early) {
      stopped = "early";
      break;
    }
  }
  bar.clear();
  const double seconds = seconds_since(start);
  // With validation the parameters of the best validation error are the result.
  const Eigen::VectorXd result =
      has_validation && state.best_theta.size() > 0 ? state.best_theta : theta;
  const training::Evaluation final_errors = trainer.evaluate(result);
  if (s.save_parameters && ProcessGroup::prints())
    nn::save_model(*s.save_parameters, model, result);

  // Held-out error in the data's own units, per component (RMSE), for people.
  Json held_out_rmse = Json::array();
  if (has_validation) {
    Eigen::VectorXd squares = Eigen::VectorXd::Zero(d);
    Index count = 0;
    for (std::size_t j = 0; j < set.trajectories.size(); ++j) {
      const Eigen::MatrixXd path = norm.denormalize(trainer.predict(result, j).topRows(d));
      for (Index k = training_points[j]; k < set.trajectories[j].points(); ++k, ++count)
        squares += (path.col(k) - set.trajectories[j].values.col(k)).array().square().matrix();
    }
    for (Index i = 0; i < d; ++i)
      held_out_rmse.push_back(count > 0 ? std::sqrt(squares[i] / static_cast<double>(count)) : 0.0);
  }

  const double per_iteration =
      run_iterations > 0 ? seconds / static_cast<double>(run_iterations) : 0.0;
  // Steps per window over this invocation (this process's windows when the batch is split).
  const double windows_run =
      static_cast<double>(run_iterations) *
      static_cast<double>(
          training::windows_of_process(s.batch, ProcessGroup::rank(), ProcessGroup::size()).size());
  const double steps_per_window =
      windows_run > 0 ? static_cast<double>(steps_taken) / windows_run : 0.0;
  std::string stepping = s.method + " × " + std::to_string(s.substeps);
  if (s.adaptive) {
    char text[160];
    std::snprintf(text, sizeof text,
                  "%s adaptive (rtol %.3g, atol %.3g): %.1f steps and %.2f rejections per window",
                  s.method.c_str(), model.rtol, model.atol, steps_per_window,
                  windows_run > 0 ? static_cast<double>(steps_rejected) / windows_run : 0.0);
    stepping = text;
  }
  if (!s.quiet && ProcessGroup::prints()) {
    std::cout << "trained " << model.describe() << " (" << theta.size() << " parameters) on "
              << s.data << " (" << set.size() << " trajector" << (set.size() == 1 ? "y" : "ies")
              << ", " << set.points() << " points): " << state.iteration << " iterations of "
              << optimizer->name() << " (" << s.lr_schedule << " schedule), " << s.batch
              << " windows of " << s.window << " intervals, " << stepping
              << (stopped == "early" ? ", stopped early" : "") << "\n"
              << "train MSE " << short_number(state.train_errors.front()) << " -> "
              << short_number(final_errors.train_mse);
    if (has_validation) {
      std::cout << "; validation MSE"
                << (s.validate_on == "windows"
                        ? " (windows of up to " + std::to_string(s.window) + " intervals)"
                        : std::string())
                << " " << short_number(state.validation_errors.front()) << " -> "
                << short_number(final_errors.validation_mse) << " (best at iteration "
                << state.best_iteration << "); held-out RMSE in data units";
      for (Index i = 0; i < d; ++i)
        std::cout << " " << set.names[static_cast<std::size_t>(i)] << " "
                  << short_number(held_out_rmse[static_cast<std::size_t>(i)].get<double>());
    }
    std::cout << " (MSE in normalised units); " << short_number(per_iteration * 1e3)
              << " ms per iteration ("
              << short_number(gradient_seconds / std::max<double>(1.0, run_iterations) * 1e3)
              << " ms in the gradient)\n";
  }

  if (s.json && ProcessGroup::prints()) {
    Json log;
    log["problem"] = "data";
    log["threads"] = rwd::thread_count();
    log["ranks"] = ProcessGroup::size();
    log["model"] = {{"network", model.network().describe()},
                    {"features", std::string(nn::to_string(features))},
                    {"parameters", theta.size()},
                    {"observed", d},
                    {"augment", s.augment},
                    {"time_input", s.time_dependent},
                    {"names", set.names},
                    {"description", model.describe()}};
    log["normalization"] = {{"mean", std::vector<double>(norm.mean.begin(), norm.mean.end())},
                            {"scale", std::vector<double>(norm.scale.begin(), norm.scale.end())}};
    Json opts = run_options(s);
    opts["optimizer"] = optimizer->name();
    log["options"] = opts;
    Json iterations = Json::array();
    // Steps are known for this invocation's iterations (a resumed run's earlier ones: null).
    const std::size_t first_here = state.losses.size() - iteration_steps.size();
    for (std::size_t k = 0; k < state.losses.size(); ++k)
      iterations.push_back(
          {{"iteration", k + 1},
           {"loss", state.losses[k]},
           {"gradient_norm", state.gradient_norms[k]},
           {"learning_rate", state.learning_rates[k]},
           {"steps", k >= first_here ? Json(iteration_steps[k - first_here]) : Json()}});
    log["iterations"] = std::move(iterations);
    Json evaluations = Json::array();
    for (std::size_t k = 0; k < state.train_errors.size(); ++k)
      evaluations.push_back({{"iteration", state.evaluation_iterations[k]},
                             {"trajectory_mse", state.train_errors[k]},
                             {"train_mse", state.train_errors[k]},
                             {"validation_mse", number_or_null(state.validation_errors[k])}});
    log["evaluations"] = std::move(evaluations);
    Json trajectories = Json::array();
    for (std::size_t j = 0; j < set.trajectories.size(); ++j) {
      const training::TimeSeries& t = set.trajectories[j];
      trajectories.push_back(
          {{"label", set.labels[j]},
           {"training_points", training_points[j]},
           {"t", t.times},
           {"y", rows(t.values)},
           {"predictions",
            Json::array(
                {{{"iteration", 0},
                  {"y", rows(norm.denormalize(trainer.predict(initial, j).topRows(d)))}},
                 {{"iteration", state.iteration},
                  {"y", rows(norm.denormalize(trainer.predict(result, j).topRows(d)))}}})}});
    }
    log["trajectories"] = std::move(trajectories);
    log["stopped"] = stopped;
    log["best_iteration"] = state.best_iteration;
    log["final_loss"] = state.losses.empty() ? Json() : Json(state.losses.back());
    log["final_train_mse"] = final_errors.train_mse;
    log["final_trajectory_mse"] = final_errors.train_mse;
    log["final_validation_mse"] = number_or_null(final_errors.validation_mse);
    log["held_out_rmse"] = held_out_rmse;
    log["seconds"] = seconds;
    log["seconds_per_iteration"] = per_iteration;
    log["steps_per_window"] = steps_per_window;
    log["rejected_steps"] = steps_rejected;
    log["parameters_file"] = s.save_parameters ? Json(*s.save_parameters) : Json();
    std::ofstream out(*s.json);
    if (!out) fail<StorageError>("cannot write the training log '", *s.json, "'");
    out << log.dump(1) << "\n";
    if (!out) fail<StorageError>("writing the training log '", *s.json, "' failed");
  }
}

}  // namespace

void add_train_data_options(CLI::App& train) {
  auto s = std::make_shared<DataSettings>();
  train.add_option("--data", s->data, "time series to fit, .csv or .h5 (one or more trajectories)")
      ->type_name("FILE");
  // Each width checked as it is parsed, like every integer option (integer_option.hpp).
  train
      .add_option_function<std::string>(
          "--layers",
          [s](const std::string& text) {
            (void)parse_layers(text);
            s->layers = text;
          },
          "hidden layer widths, e.g. 64,64 (none: linear)")
      ->default_str(s->layers);
  train.add_option("--activation", s->activation, "tanh, relu, softplus, gelu")
      ->capture_default_str();
  train.add_option("--features", s->features, "identity or cube (y^3)")->capture_default_str();
  add_integer_option(train, "--augment", s->augment, IntegerRange::count_or_zero(),
                     "K zero-started extra state components");
  train.add_flag("--time-dependent", s->time_dependent, "the field also sees t");
  train.add_flag("--no-normalize", s->no_normalize,
                 "train on the raw values (default: per-component mean 0, std 1)");
  train
      .add_option("--validation", s->validation, "hold out this final fraction of every trajectory")
      ->capture_default_str();
  train.add_option("--validation-data", s->validation_data, "held-out trajectories")
      ->type_name("FILE");
  add_integer_option(train, "--patience", s->patience, IntegerRange::count(),
                     "stop after N evaluations without a better validation error");
  train
      .add_option("--validate-on", s->validate_on,
                  "trajectory (free run from the first point) or windows (every held-out point "
                  "predicted from the observations up to --window intervals before it)")
      ->capture_default_str();
  add_integer_option(train, "--iterations,-i", s->iterations, IntegerRange::count_or_zero(),
                     "optimizer steps");
  add_integer_option(train, "--stop-at", s->stop_at, IntegerRange::count_or_zero(),
                     "end this invocation after iteration I (resume it later)");
  add_integer_option(train, "--batch", s->batch, IntegerRange::count(), "windows per minibatch");
  add_integer_option(train, "--window", s->window, IntegerRange::count(),
                     "observation intervals per window");
  add_integer_option(train, "--substeps", s->substeps, IntegerRange::count(),
                     "integrator steps per observation interval");
  train.add_option("--method", s->method, "Runge-Kutta tableau")->capture_default_str();
  train.add_flag("--adaptive", s->adaptive,
                 "adaptive steps of the method's embedded pair, landing on every observation");
  train.add_option("--rtol", s->rtol, "relative tolerance of adaptive steps (default 1e-6)");
  train.add_option("--atol", s->atol, "absolute tolerance of adaptive steps (default 1e-9)");
  train.add_option("--optimizer", s->optimizer, "adam or sgd")->capture_default_str();
  train.add_option("--learning-rate,--lr", s->learning_rate, "initial step size")
      ->capture_default_str();
  train
      .add_option("--final-learning-rate", s->final_learning_rate,
                  "step size at the last iteration (geometric, cosine)")
      ->capture_default_str();
  train.add_option("--lr-schedule", s->lr_schedule, "constant, geometric or cosine")
      ->capture_default_str();
  train.add_option("--clip-norm", s->clip_norm, "clip gradients to this length (0: off)")
      ->capture_default_str();
  add_integer_option(train, "--seed", s->seed, IntegerRange::unsigned_seed(),
                     "seed of the window sampler");
  add_integer_option(train, "--init-seed", s->init_seed, IntegerRange::unsigned_seed(),
                     "seed of the initial weights");
  add_integer_option(train, "--snapshots", s->snapshots, IntegerRange::count(),
                     "revolve with this many snapshots per window");
  add_integer_option(train, "--eval-every", s->eval_every, IntegerRange::count(),
                     "iterations between evaluations");
  add_integer_option(train, "--checkpoint-every", s->checkpoint_every, IntegerRange::count(),
                     "iterations between checkpoints");
  train.add_option("--checkpoint", s->checkpoint, "checkpoint file (HDF5), replaced each time")
      ->type_name("FILE");
  train.add_option("--resume", s->resume, "continue the run saved in this checkpoint")
      ->type_name("FILE");
  train.add_option("--json", s->json, "write the training log here");
  train.add_option("--save-parameters", s->save_parameters,
                   "write the trained model (HDF5; rewind predict reads it)");
  train.add_flag("--quiet,-q", s->quiet, "no progress bar, no summary");
  train.callback([s, &train] {
    if (!train.get_subcommands().empty()) return;  // `train spiral` ran
    if (s->data.empty())
      fail<InvalidArgument>("rewind train needs --data FILE (or the subcommand spiral)");
    s->substeps_given = train.count("--substeps") > 0;
    train_data(*s);
  });
}

}  // namespace rwd::cli
