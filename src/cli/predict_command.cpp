// src/cli/predict_command.cpp — see predict_command.hpp.
#include "predict_command.hpp"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "input_file.hpp"
#include "integer_option.hpp"
#include "process_group.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/butcher_tableau.hpp"
#include "rewind/neural/data_trainer.hpp"
#include "rewind/neural/model_file.hpp"
#include "rewind/neural/time_series.hpp"

namespace rwd::cli {
namespace {

using rwd::detail::fail;

struct PredictSettings {
  std::string parameters;
  std::string y0;
  std::optional<std::string> t;
  double t0 = 0.0;
  std::optional<double> t_final;
  std::optional<Index> steps;
  std::optional<Index> substeps;
  std::optional<double> rtol, atol;  // overrides for a model with adaptive steps
  std::optional<std::string> output;
  bool force = false;
};

std::vector<double> parse_numbers(const std::string& text, const char* option) {
  std::vector<double> values;
  std::size_t begin = 0;
  for (int item = 1;; ++item) {
    const std::size_t comma = text.find(',', begin);
    std::string field =
        text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    while (!field.empty() && field.front() == ' ') field.erase(0, 1);
    while (!field.empty() && field.back() == ' ') field.pop_back();
    double value = 0.0;
    const auto [ptr, error] = std::from_chars(field.data(), field.data() + field.size(), value);
    if (field.empty() || error != std::errc() || ptr != field.data() + field.size() ||
        !std::isfinite(value))
      fail<InvalidArgument>(option, " '", text, "': value ", item, " ('", field,
                            "') is not a finite number");
    values.push_back(value);
    if (comma == std::string::npos) return values;
    begin = comma + 1;
  }
}

void predict(const PredictSettings& s) {
  if (s.t.has_value() == (s.t_final.has_value() || s.steps.has_value()))
    fail<InvalidArgument>("give the times as --t LIST or as --t-final T --steps N, not both");
  if (!s.t && !(s.t_final && s.steps)) fail<InvalidArgument>("--t-final and --steps go together");
  if (s.steps && *s.steps < 1) fail<InvalidArgument>("--steps = ", *s.steps, " must be >= 1");
  if (s.t_final && !(*s.t_final > s.t0))
    fail<InvalidArgument>("--t-final = ", *s.t_final, " must be after --t0 = ", s.t0);
  if (s.substeps && *s.substeps < 1)
    fail<InvalidArgument>("--substeps = ", *s.substeps, " must be >= 1");
  require_input_file("--parameters", s.parameters);
  if (s.output && std::filesystem::exists(*s.output) && !s.force)
    fail<InvalidArgument>("--output '", *s.output, "' exists; pass --force to replace it");
  const std::vector<double> y0 = parse_numbers(s.y0, "--y0");
  std::vector<double> times;
  if (s.t) {
    times = parse_numbers(*s.t, "--t");
    for (std::size_t k = 1; k < times.size(); ++k)
      if (!(times[k] > times[k - 1]))
        fail<InvalidArgument>("--t: times must increase strictly, but value ", k + 1, " (",
                              times[k], ") does not come after ", times[k - 1]);
  } else {
    for (Index k = 0; k <= *s.steps; ++k)
      times.push_back(k == *s.steps ? *s.t_final
                                    : s.t0 + (*s.t_final - s.t0) * static_cast<double>(k) /
                                                 static_cast<double>(*s.steps));
  }

  const nn::LoadedModel loaded = nn::load_model(s.parameters);
  const nn::NeuralModel& model = loaded.model;
  if (static_cast<Index>(y0.size()) != model.observed) {
    std::string names;
    for (const std::string& n : model.names) names += (names.empty() ? "" : ",") + n;
    fail<InvalidArgument>("--y0 has ", y0.size(), " values but the model in '", s.parameters, "' (",
                          model.describe(), ") takes ", model.observed, " (", names, ")");
  }
  if (model.adaptive && s.substeps)
    fail<InvalidArgument>("--substeps: the model in '", s.parameters, "' takes adaptive steps (",
                          model.method, ", rtol ", model.rtol, ", atol ", model.atol,
                          "); --substeps is for fixed-step models");
  if (!model.adaptive && (s.rtol || s.atol))
    fail<InvalidArgument>("--rtol/--atol: the model in '", s.parameters, "' takes ", model.substeps,
                          " fixed ", model.method,
                          " steps per interval; use --substeps to change them");
  std::optional<training::AdaptiveTolerances> adaptive;
  if (model.adaptive)
    adaptive =
        training::AdaptiveTolerances{s.rtol.value_or(model.rtol), s.atol.value_or(model.atol)};
  if (adaptive && !(adaptive->rtol >= 1e-15 && std::isfinite(adaptive->rtol) &&
                    adaptive->atol > 0.0 && std::isfinite(adaptive->atol)))
    fail<InvalidArgument>("--rtol = ", adaptive->rtol, ", --atol = ", adaptive->atol,
                          ": the tolerances must be finite, rtol >= 1e-15 and atol > 0");
  Eigen::VectorXd start = Eigen::VectorXd::Zero(model.state_dimension());
  for (Index i = 0; i < model.observed; ++i)
    start[i] = (y0[static_cast<std::size_t>(i)] - model.mean[i]) / model.scale[i];
  const Eigen::MatrixXd path = training::integrate_on_grid(
      model.field(), ButcherTableau::by_name(model.method), s.substeps.value_or(model.substeps),
      loaded.theta, start, times, adaptive);
  training::TimeSeries series;
  series.times = times;
  series.values =
      ((path.topRows(model.observed).array().colwise() * model.scale.array()).colwise() +
       model.mean.array())
          .matrix();
  series.names = model.names;
  if (!series.values.allFinite())
    fail<NumericalError>(
        "the prediction left the finite numbers (the model diverges from --y0 "
        "over these times)");
  if (!s.output) {
    std::cout << "t";
    for (const std::string& n : series.names) std::cout << "," << n;
    std::cout << "\n";
    std::cout.precision(17);
    for (Index k = 0; k < series.points(); ++k) {
      std::cout << series.times[static_cast<std::size_t>(k)];
      for (Index i = 0; i < series.dimension(); ++i) std::cout << "," << series.values(i, k);
      std::cout << "\n";
    }
    return;
  }
  const std::filesystem::path out(*s.output);
  const std::string ext = out.extension().string();
  if (ext == ".h5" || ext == ".hdf5") {
    if (s.force) std::filesystem::remove(out);
    training::save_time_series_hdf5(out, series);
  } else if (ext == ".csv") {
    training::save_time_series_csv(out, series);
  } else {
    fail<InvalidArgument>("--output '", *s.output, "' must end in .csv, .h5 or .hdf5");
  }
  std::cout << "wrote " << series.points() << " points of " << model.describe() << " from "
            << s.parameters << " to " << *s.output << "\n";
}

}  // namespace

CLI::App* add_predict_command(CLI::App& app) {
  auto s = std::make_shared<PredictSettings>();
  CLI::App* command =
      app.add_subcommand("predict", "Integrate a trained neural ODE (rewind train) from --y0.");
  command->add_option("--parameters,-p", s->parameters, "model file written by rewind train")
      ->required()
      ->type_name("FILE.h5");
  command->add_option("--y0", s->y0, "initial state, comma-separated (data units)")
      ->required()
      ->type_name("A,B,...");
  command->add_option("--t", s->t, "output times, comma-separated, increasing")
      ->type_name("T0,T1,...");
  command->add_option("--t0", s->t0, "first time of a uniform grid")->capture_default_str();
  command->add_option("--t-final", s->t_final, "last time of a uniform grid");
  add_integer_option(*command, "--steps", s->steps, IntegerRange::count(),
                     "intervals of the uniform grid");
  add_integer_option(*command, "--substeps", s->substeps, IntegerRange::count(),
                     "RK steps per interval (default: the model's)");
  command->add_option("--rtol", s->rtol,
                      "relative tolerance (adaptive models; default: the model's)");
  command->add_option("--atol", s->atol,
                      "absolute tolerance (adaptive models; default: the model's)");
  command->add_option("--output,-o", s->output, "write here (.csv, .h5) instead of stdout");
  command->add_flag("--force", s->force, "replace an existing --output");
  command->callback([s] {
    ProcessGroup::require_one_process("rewind predict");
    predict(*s);
  });
  return command;
}

}  // namespace rwd::cli
