// src/cli/inspect_files.cpp — see inspect_files.hpp.
#include "inspect_files.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "exit_status.hpp"
#include "report_output.hpp"
#include "rewind/error.hpp"
#include "rewind/fit/observations.hpp"
#include "rewind/hdf5/hdf5_handles.hpp"
#include "rewind/neural/model_file.hpp"
#include "rewind/neural/trajectory_set.hpp"
#include "rewind/plugin_model.hpp"

namespace rwd::cli {
namespace {

using Json = nlohmann::ordered_json;
using detail::Hdf5Handle;
using detail::Hdf5Kind;

std::string format(const char* spec, double value) {
  char text[64];
  std::snprintf(text, sizeof text, spec, value);
  return text;
}

std::string lower_extension(const std::filesystem::path& file) {
  std::string ext = file.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

// What the file's root group says of it: whether HDF5 opens it at all, its string attribute
// "format" ("" when there is none), and whether it holds the datasets of a time series.
struct FormatProbe {
  bool hdf5 = false;
  std::string format;
  bool has_t_and_y = false;  // datasets /t and /y: a time series written by rewind
};

FormatProbe probe_hdf5(const std::filesystem::path& file) {
  FormatProbe probe;
  detail::QuietHdf5 quiet;
  if (H5Fis_hdf5(file.c_str()) <= 0) return probe;  // HDF5 1.10: no H5Fis_accessible
  Hdf5Handle h5(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), Hdf5Kind::file);
  if (!h5.valid()) return probe;
  probe.hdf5 = true;
  probe.has_t_and_y =
      H5Lexists(h5.get(), "t", H5P_DEFAULT) > 0 && H5Lexists(h5.get(), "y", H5P_DEFAULT) > 0;
  if (H5Aexists(h5.get(), "format") <= 0) return probe;
  Hdf5Handle attribute(H5Aopen(h5.get(), "format", H5P_DEFAULT), Hdf5Kind::attribute);
  if (!attribute.valid()) return probe;
  Hdf5Handle type(H5Aget_type(attribute.get()), Hdf5Kind::datatype);
  if (!type.valid() || H5Tget_class(type.get()) != H5T_STRING) return probe;
  if (H5Tis_variable_str(type.get()) > 0) {
    char* text = nullptr;
    if (H5Aread(attribute.get(), type.get(), &text) >= 0 && text != nullptr) probe.format = text;
    if (text != nullptr) H5free_memory(text);
  } else {
    std::string text(H5Tget_size(type.get()), '\0');
    if (H5Aread(attribute.get(), type.get(), text.data()) >= 0)
      probe.format = text.substr(0, text.find('\0'));
  }
  return probe;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

}  // namespace

FileKind identify_file(const std::filesystem::path& file) {
  if (!std::filesystem::exists(file))
    rwd::detail::fail<InvalidArgument>("file '", file.string(), "' does not exist");
  if (std::filesystem::is_directory(file))
    rwd::detail::fail<InvalidArgument>("'", file.string(), "' is a directory, not a file");
  if (lower_extension(file) == ".csv") return FileKind::time_series;
  if (rwd::detail::looks_like_shared_library(file)) return FileKind::model_plugin;
  const FormatProbe probe = probe_hdf5(file);
  if (probe.format == "rewind snapshots") return FileKind::snapshots;
  if (probe.format == "rewind observations") return FileKind::observations;
  if (probe.format == "rewind mlp parameters") return FileKind::parameters;
  if (probe.hdf5 && probe.format.empty()) return FileKind::time_series;  // /t,/y or groups of them
  rwd::detail::fail<InvalidArgument>(
      "'", file.string(), "' is ",
      probe.hdf5 ? "an HDF5 file of format '" + probe.format + "', " : std::string("not HDF5, "),
      "none of the files rewind writes: snapshot files (rewind run --disk), observation files "
      "(rewind generate), model and parameter files (rewind train), time series (.csv, or .h5 "
      "with t and y), model plugins (rewind_add_model)");
}

namespace {

// "rtol = 1e-10, atol = 1e-14, linear solver dense": the settings recorded (empty: none, the
// method's defaults, as in a file written before they were recorded).
std::string describe_method_settings(const MethodSettings& s) {
  std::string text;
  const auto add = [&](const std::string& item) { text += (text.empty() ? "" : ", ") + item; };
  if (s.rtol > 0.0) add("rtol = " + format("%.6g", s.rtol));
  if (s.atol > 0.0) add("atol = " + format("%.6g", s.atol));
  if (s.newton_rtol > 0.0) add("Newton rtol = " + format("%.6g", s.newton_rtol));
  if (s.newton_atol > 0.0) add("Newton atol = " + format("%.6g", s.newton_atol));
  if (!s.linear_solver.empty()) add("linear solver " + s.linear_solver);
  return text;
}

}  // namespace

int inspect_observations(const std::filesystem::path& file, bool json) {
  const Observations o = load_observations(file);
  const double t_final = o.dt * static_cast<double>(o.steps);
  if (json) {
    Json out;
    out["kind"] = "observations";
    out["file"] = file.string();
    out["problem"] = o.problem;
    out["size"] = o.size;
    out["state_size"] = o.state_size;
    out["method"] = o.method;
    out["method_settings"] = {{"rtol", o.method_settings.rtol},
                              {"atol", o.method_settings.atol},
                              {"linear_solver", o.method_settings.linear_solver},
                              {"newton_rtol", o.method_settings.newton_rtol},
                              {"newton_atol", o.method_settings.newton_atol}};
    out["dt"] = o.dt;
    out["steps"] = o.steps;
    out["parameter_names"] = o.parameter_names;
    out["parameters"] =
        std::vector<double>(o.parameters.data(), o.parameters.data() + o.parameters.size());
    out["field"] = {{"name", o.field.name}, {"offset", o.field.offset}, {"count", o.field.count}};
    out["noise"] = o.noise;
    out["seed"] = o.seed;
    out["observed_steps"] = o.observed_steps;
    emit_json_report(out);
    return kExitSuccess;
  }
  std::cout << "rewind observation file " << file.string() << "\n"
            << "  problem           " << o.problem;
  if (o.size > 0) std::cout << " (n = " << o.size << ")";
  std::cout << ", " << o.state_size << " state values\n"
            << "  generated by      " << o.method << ", dt = " << format("%.10g", o.dt) << ", "
            << o.steps << " steps (t = 0 .. " << format("%.10g", t_final) << ")\n";
  const std::string settings = describe_method_settings(o.method_settings);
  if (!settings.empty()) std::cout << "  method settings   " << settings << "\n";
  std::cout << "  parameters        ";
  for (std::size_t i = 0; i < o.parameter_names.size(); ++i)
    std::cout << (i ? ", " : "") << o.parameter_names[i] << " = "
              << format("%.10g", o.parameters[static_cast<Index>(i)]);
  std::cout << "\n  observed          '" << o.field.name << "' (" << o.field.count
            << " values from component " << o.field.offset << ") at " << o.observed_steps.size()
            << " steps";
  if (!o.observed_steps.empty())
    std::cout << ", " << o.observed_steps.front() << " .. " << o.observed_steps.back();
  std::cout << "\n  noise             "
            << (o.noise > 0.0
                    ? "sigma = " + format("%.6g", o.noise) + ", seed " + std::to_string(o.seed)
                    : std::string("none"))
            << "\n";
  return kExitSuccess;
}

int inspect_parameters(const std::filesystem::path& file, bool json) {
  const std::string network = nn::describe_file_network(file);
  // A parameter file without the model's fields holds weights only; load_model says so.
  std::string model_problem;
  std::optional<nn::LoadedModel> loaded;
  try {
    loaded = nn::load_model(file);
  } catch (const StorageError& e) {
    model_problem = e.what();
  }
  if (json) {
    Json out;
    out["kind"] = loaded ? "model" : "parameters";
    out["file"] = file.string();
    out["network"] = network;
    if (loaded) {
      out["parameters"] = loaded->theta.size();
      out["components"] = loaded->model.names;
      out["augment"] = loaded->model.augment;
      out["time_input"] = loaded->model.time_input;
      out["method"] = loaded->model.method;
      out["adaptive"] = loaded->model.adaptive;
      out["substeps"] = loaded->model.substeps;
    } else {
      out["model"] = model_problem;
    }
    emit_json_report(out);
    return kExitSuccess;
  }
  std::cout << "rewind " << (loaded ? "model" : "parameter") << " file " << file.string() << "\n"
            << "  network           " << network << "\n";
  if (!loaded) {
    std::cout << "  model             none: " << model_problem << "\n";
    return kExitSuccess;
  }
  const nn::NeuralModel& m = loaded->model;
  std::cout << "  parameters        " << loaded->theta.size() << "\n"
            << "  components        " << joined(m.names);
  if (m.augment > 0) std::cout << " + " << m.augment << " augmented";
  std::cout << (m.time_input ? ", time as input" : "") << "\n"
            << "  integrator        " << m.method
            << (m.adaptive ? ", adaptive (rtol " + format("%.3g", m.rtol) + ", atol " +
                                 format("%.3g", m.atol) + ")"
                           : ", " + std::to_string(m.substeps) + " steps per interval")
            << "\n";
  return kExitSuccess;
}

int inspect_time_series(const std::filesystem::path& file, bool json) {
  const training::TrajectorySet set = training::load_trajectories(file);
  if (json) {
    Json out;
    out["kind"] = "time series";
    out["file"] = file.string();
    out["components"] = set.names;
    out["trajectories"] = set.labels;
    Json points = Json::array(), spans = Json::array();
    for (const training::TimeSeries& s : set.trajectories) {
      points.push_back(s.points());
      spans.push_back({s.times.front(), s.times.back()});
    }
    out["points"] = points;
    out["time_spans"] = spans;
    emit_json_report(out);
    return kExitSuccess;
  }
  std::cout << "time series " << file.string() << "\n"
            << "  components        " << joined(set.names) << "\n"
            << "  trajectories      " << set.size() << ", " << set.points() << " points\n";
  for (Index j = 0; j < set.size(); ++j) {
    const training::TimeSeries& s = set.trajectories[static_cast<std::size_t>(j)];
    std::cout << "    " << set.labels[static_cast<std::size_t>(j)] << ": " << s.points()
              << " points, t = " << format("%.10g", s.times.front()) << " .. "
              << format("%.10g", s.times.back()) << "\n";
  }
  return kExitSuccess;
}

}  // namespace rwd::cli
