// src/cli/generate_command.cpp — see generate_command.hpp.
#include "generate_command.hpp"

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "integer_option.hpp"
#include "method_flag_options.hpp"
#include "observation_run.hpp"
#include "problem_registry.hpp"
#include "process_group.hpp"
#include "report_output.hpp"
#include "rewind/error.hpp"
#include "rewind/fit/observations.hpp"
#include "rewind/neural/sampled_solution.hpp"
#include "rewind/neural/time_series.hpp"
#include "rewind/problems/cubic_spiral.hpp"

namespace rwd::cli {
namespace {

struct SpiralSettings {
  std::string out = "data/spiral.csv";
  Index points = 1000;
  double t_final = 25.0;
  Index substeps = 100;
  bool force = false;
};

training::TimeSeries spiral_series(const SpiralSettings& settings) {
  const CubicSpiral spiral;
  return training::sample_solution(
      spiral, spiral.default_initial_state(), spiral.default_parameters(), ButcherTableau::rk4(),
      settings.t_final, settings.points, settings.substeps, {"y0", "y1"});
}

// What a generation writes, and where; shared by the options and the callback.
struct GenerateRequest {
  GenerateOptions options;
  std::string out;
  bool force = false;
};

// What a generation wrote, for an embedding of the command line (report_output.hpp): the tool
// prints it as one line of text.
nlohmann::ordered_json written_json(const Observations& observations, const std::string& file) {
  nlohmann::ordered_json j;
  j["file"] = file;
  j["problem"] = observations.problem;
  j["field"] = observations.field.name;
  j["values_per_observation"] = observations.field.count;
  j["observations"] = observations.observed_steps.size();
  j["observed_steps"] = observations.observed_steps;
  j["steps"] = observations.steps;
  j["noise"] = observations.noise;
  return j;
}

// Generates the observations the request asks for and writes them to its file.
void write_observations(const GenerateRequest& request) {
  if (request.out.empty())
    rwd::detail::fail<InvalidArgument>(
        "--out FILE.h5 is required: where to write the observations");
  if (std::filesystem::exists(request.out) && !request.force)
    rwd::detail::fail<InvalidArgument>("'", request.out, "' exists; pass --force to overwrite it");
  const Observations observations = generate_observations(request.options);
  save_observations(request.out, observations, request.force);
  if (reports_received()) {
    emit_json_report(written_json(observations, request.out));
    // Column k of `data` is d_k: observation by observation, each field.count values.
    const Eigen::MatrixXd& d = observations.data;
    emit_report_vector("data", std::vector<double>(d.data(), d.data() + d.size()));
    const Eigen::VectorXd& y0 = observations.initial_state;
    emit_report_vector("initial_state", std::vector<double>(y0.data(), y0.data() + y0.size()));
    return;
  }
  std::cout << "wrote " << observations.observed_steps.size() << " observations of '"
            << observations.field.name << "' (" << observations.field.count << " values each) of "
            << observations.problem << " over " << observations.steps << " steps, noise "
            << observations.noise << ", to " << request.out << "\n";
}

// The options every generation takes (the problem's size, where it has one, is added apart).
void add_generation_options(CLI::App& command, GenerateRequest& request) {
  GenerateOptions& options = request.options;
  add_integer_text_option(command, "--steps", options.run.checkpoint.steps, IntegerRange::count(),
                          "horizon in steps")
      ->type_name("L");
  command.add_option("--dt", options.run.dt, "step size");
  add_method_flags(command, options.run, MethodFlagUse::generate);
  command.add_option("--parameters", options.run.parameters, "theta by name, e.g. F=0.04,k=0.06")
      ->type_name("NAME=VALUE,...");
  add_integer_text_option(command, "--observe-every", options.observe_every, IntegerRange::count(),
                          "observe every K steps (required)")
      ->type_name("K");
  command.add_option("--observe", options.observe, "the observed field (default: all)")
      ->type_name("FIELD");
  command
      .add_option("--noise", options.noise,
                  "standard deviation of the Gaussian noise added (default 0)")
      ->type_name("SIGMA");
  add_integer_option(command, "--seed", options.seed, IntegerRange::unsigned_seed(),
                     "seed of the noise (default 1)");
  command.add_option("--out,-o", request.out, "observation file (.h5)")->type_name("FILE.h5");
  command.add_flag("--force", request.force, "overwrite an existing file");
}

// `rewind generate PROBLEM`: one subcommand per built-in problem, all with the same options.
void add_observation_generator(CLI::App& generate, const ProblemInfo& info) {
  auto request = std::make_shared<GenerateRequest>();
  request->options.run.problem = info.name;
  CLI::App* command =
      generate.add_subcommand(info.name, std::string("Observations of ") + info.description);
  const std::string dashed = [&] {
    std::string name = info.name;
    for (char& c : name)
      if (c == '_') c = '-';
    return name;
  }();
  if (dashed != info.name) command->alias(dashed);
  command->footer(
      "Runs the problem from its default initial state with its defaults unless changed, and\n"
      "writes H y_k + noise at steps K, 2K, ... <= --steps to FILE.h5 (HDF5) with the problem,\n"
      "its size, method (with its tolerances, linear solver and Newton tolerances), step,\n"
      "horizon, parameters, initial state, field and noise: all that `rewind fit` needs.\n"
      "Examples:\n"
      "  rewind generate gray_scott --n 64 --steps 20000 --observe-every 1000 --observe v \\\n"
      "                  --noise 0.01 --out gs.h5\n"
      "  rewind generate robertson --method bdf --rtol 1e-10 --atol 1e-14 --dt 0.4 \\\n"
      "                  --steps 100 --observe-every 5 --noise 1e-6 --out robertson.h5");
  if (info.sized())
    add_integer_option(*command, "-n,--n", request->options.run.n, IntegerRange::count(),
                       info.size_meaning);
  add_generation_options(*command, *request);
  command->get_option("--observe-every")->required();
  command->get_option("--out")->required();
  // --n given before the problem's name went to `generate` itself (for --model): refused before
  // anything is written.
  command->callback([request, &generate, name = command->get_name()] {
    ProcessGroup::require_one_process("rewind generate");
    if (generate.count("--n") > 0)
      rwd::detail::fail<InvalidArgument>(
          "--n before the problem's name is for --model; write "
          "rewind generate ",
          name, " --n N");
    write_observations(*request);
  });
}

// `rewind generate --model PATH`: observations of a model plugin, with the same options.
void add_model_generator(CLI::App& generate) {
  auto request = std::make_shared<GenerateRequest>();
  generate
      .add_option("--model", request->options.run.model,
                  "observations of a model plugin (rewind_add_model; docs/models.md)\n"
                  "instead of a built-in problem; --observe names one of its states")
      ->type_name("PATH");
  add_integer_option(generate, "-n,--n", request->options.run.n, IntegerRange::count(),
                     "with --model of a stencil model: its grid side n (default: the model's)");
  add_generation_options(generate, *request);
  generate.callback([&generate, request] {
    ProcessGroup::require_one_process("rewind generate");
    if (!generate.get_subcommands().empty()) {
      if (!request->options.run.model.empty())
        rwd::detail::fail<InvalidArgument>(
            "--model ", request->options.run.model, " replaces the problem '",
            generate.get_subcommands().front()->get_name(), "': give one of the two");
      return;
    }
    if (request->options.run.model.empty())
      rwd::detail::fail<InvalidArgument>(
          "generate: name a problem or spiral (rewind generate --help), or give --model PATH");
    write_observations(*request);
  });
}

}  // namespace

CLI::App* add_generate_command(CLI::App& app) {
  CLI::App* generate =
      app.add_subcommand("generate",
                         "Write a dataset: observations of a built-in problem for `rewind fit`\n"
                         "(generate PROBLEM --help), or the spiral for `rewind train`.");
  generate->require_subcommand(0, 1);
  for (const ProblemInfo& info : problem_table()) add_observation_generator(*generate, info);
  add_model_generator(*generate);
  auto settings = std::make_shared<SpiralSettings>();
  CLI::App* spiral = generate->add_subcommand("spiral",
                                              "The cubic spiral dy/dt = (y^3)A, A = [[-0.1, 2], "
                                              "[-2, -0.1]], y(0) = (2, 0), sampled uniformly.");
  spiral->add_option("--out,-o", settings->out, "output file: .csv, or .h5/.hdf5")
      ->capture_default_str();
  add_integer_option(*spiral, "--points", settings->points, IntegerRange::between(2, 1ULL << 62),
                     "samples, including t = 0");
  spiral->add_option("--t-final", settings->t_final, "last sample time")->capture_default_str();
  add_integer_option(*spiral, "--substeps", settings->substeps, IntegerRange::count(),
                     "RK4 steps per sample interval");
  spiral->add_flag("--force", settings->force, "overwrite an existing file");
  spiral->callback([settings] {
    ProcessGroup::require_one_process("rewind generate");
    const std::filesystem::path out(settings->out);
    if (std::filesystem::exists(out) && !settings->force)
      rwd::detail::fail<InvalidArgument>("'", settings->out,
                                         "' exists; pass --force to overwrite it");
    const training::TimeSeries series = spiral_series(*settings);
    if (out.has_parent_path()) std::filesystem::create_directories(out.parent_path());
    if (settings->force) std::filesystem::remove(out);
    const std::string ext = out.extension().string();
    if (ext == ".h5" || ext == ".hdf5")
      training::save_time_series_hdf5(out, series);
    else if (ext == ".csv")
      training::save_time_series_csv(out, series);
    else
      rwd::detail::fail<InvalidArgument>("'", settings->out,
                                         "': the output must end in .csv, .h5 or .hdf5");
    std::cout << "wrote " << series.points() << " points of the cubic spiral on [0, "
              << settings->t_final << "] to " << settings->out << "\n";
  });
  return generate;
}

}  // namespace rwd::cli
