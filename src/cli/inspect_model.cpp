// src/cli/inspect_model.cpp — `rewind inspect MODEL.so`: what a model plugin declares (see
// inspect_files.hpp).
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "exit_status.hpp"
#include "inspect_files.hpp"
#include "model_problem.hpp"
#include "report_output.hpp"
#include "rewind/model_plugin_abi.hpp"
#include "rewind/plugin_model.hpp"
#include "run_settings.hpp"

namespace rwd::cli {
namespace {

using Json = nlohmann::ordered_json;

// "S, I, R": the first `count` names of a description's list.
std::vector<std::string> names_of(const char* const* list, std::int64_t count) {
  return std::vector<std::string>(list, list + count);
}

// The derived forms a description carries, in words.
std::vector<std::string> forms_of(const rwd_model_plugin& d) {
  std::vector<std::string> forms;
  if (d.grid_dimension != 0) {
    forms = {"vjp", "jvp", "sparse Jacobian", "second derivatives (jvp_vjp)"};
    if (d.window_make) forms.push_back("slab windows (splits across MPI ranks)");
  } else {
    forms = {"vjp", "jvp", "Jacobian", "second derivatives (jvp_vjp)"};
    if (d.time_derivative) forms.push_back("time derivatives (df/dt and its vjp)");
    if (d.band_jacobian)
      forms.push_back("band Jacobian (upper " + std::to_string(d.band_upper) + ", lower " +
                      std::to_string(d.band_lower) + ")");
    if (d.diffusion) forms.push_back("diffusion and its vjp (stochastic)");
  }
  return forms;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

}  // namespace

int inspect_model_plugin(const std::filesystem::path& file, bool json) {
  const std::string path = file.string();
  const ProblemInfo& info = load_model_problem(path);  // every refusal the tool makes
  const auto [library, d] = rwd::detail::open_model_plugin(path);
  const bool stencil = d->grid_dimension != 0;
  const std::vector<std::string> states = names_of(d->state_names, d->state_size);
  const std::vector<std::string> parameters = names_of(d->parameter_names, d->parameter_size);
  const std::vector<double> defaults(d->default_parameters,
                                     d->default_parameters + d->parameter_size);
  const bool initial_state = stencil ? d->grid_has_initial_state != 0 : d->initial_state != nullptr;
  if (json) {
    Json out;
    out["kind"] = "model plugin";
    out["file"] = path;
    out["identity"] = info.identity;
    out["model"] = d->name;
    out["abi_version"] = d->abi_version;
    out["stencil"] = stencil;
    out[stencil ? "fields" : "states"] = states;
    out["grid_dimension"] = d->grid_dimension;
    out["default_n"] = info.sized() ? Json(info.default_n) : Json(nullptr);
    out["parameter_names"] = parameters;
    out["default_parameters"] = defaults;
    out["default_dt"] = info.default_dt;
    out["default_steps"] = info.default_steps;
    out["autonomous"] = d->autonomous != 0;
    out["initial_state"] = initial_state;
    out["derived"] = forms_of(*d);
    emit_json_report(out);
    return kExitSuccess;
  }
  std::cout << "rewind model plugin " << info.identity << "\n"
            << "  model             " << d->name << " (model ABI version " << d->abi_version
            << ")\n";
  if (stencil) {
    std::cout << "  grid              " << d->grid_dimension << "-D, --n N cells per side (default "
              << info.default_n << ", at least";
    for (std::uint32_t dim = 0; dim < d->grid_dimension; ++dim)
      std::cout << (dim ? " x " : " ") << d->grid_min_sizes[dim];
    std::cout << ")\n  fields            " << joined(states) << "\n";
  } else {
    std::cout << "  states            " << joined(states) << "\n";
  }
  std::vector<std::string> theta;
  for (std::size_t i = 0; i < parameters.size(); ++i)
    theta.push_back(parameters[i] + " = " + rwd::cli::detail::shortest(defaults[i]));
  std::cout << "  parameters        " << joined(theta) << "\n"
            << "  run defaults      dt = " << rwd::cli::detail::shortest(info.default_dt) << ", "
            << info.default_steps << " steps\n"
            << "  initial state     "
            << (initial_state ? (stencil ? "initial_cell(p, at, y0), differentiated in θ"
                                         : "initial_state(p, y0), differentiated in θ")
                              : "none")
            << "\n  autonomous        "
            << (d->autonomous        ? "yes"
                : d->time_derivative ? "no (df/dt derived: the Rosenbrock methods take it)"
                                     : "no (Rosenbrock refuses it: no df/dt)")
            << "\n  derived           " << joined(forms_of(*d)) << "\n";
  return kExitSuccess;
}

}  // namespace rwd::cli
