// python/commands/module.cpp — the extension module rewind._commands: rewind's command line
// (run, plan, generate, fit) inside a Python process, for rewind.run, rewind.gradient,
// rewind.plan, rewind.generate and rewind.fit (python/rewind/commands.py).
//
//   _commands.execute(["run", "lorenz96", "--steps", "200", "--json"])
//       -> (report, vectors, warnings): the command's JSON report as Python objects (None when
//          the command wrote none), the vectors it gave beside it by name as float64 arrays
//          (run: "grad_y0", "grad_theta"; generate: "data", "initial_state"), its warnings'
//          messages
//   _commands.option_names(["run"]) -> ["--adaptive", "--atol", ...]   (for keyword checks)
//   _commands.help_text(["fit"])    -> `rewind fit --help`'s text
//
// The command line is the tool's own (src/cli/command_line.hpp): the same options, defaults,
// checks and messages, and the same bits. Errors raise the exceptions of rewind._rewind:
// InvalidArgument for bad input (a parse error with the tool's hint), Error for a failed run;
// an interrupted run (SIGINT during a run with a disk level) raises KeyboardInterrupt. The GIL
// is released while the command runs, and commands run one at a time (a process-wide lock: the
// library's warning handler and thread count are the process's); --threads holds for that
// command only.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "command_line.hpp"
#include "option_hint.hpp"
#include "report_output.hpp"
#include "rewind/error.hpp"
#include "rewind/interrupt.hpp"
#include "rewind/parallel.hpp"
#include "rewind/warning.hpp"

#ifndef REWIND_VERSION
#define REWIND_VERSION "unknown"
#endif

namespace nb = nanobind;

namespace {

using Json = nlohmann::ordered_json;

// What one command handed over: its JSON report and its vectors.
class KeptReports final : public rwd::cli::ReportReceiver {
 public:
  void json(const Json& report) override { report_ = report; }
  void vector(std::string_view name, std::vector<double> values) override {
    vectors_.insert_or_assign(std::string(name), std::move(values));
  }
  const Json& report() const { return report_; }
  std::map<std::string, std::vector<double>>& vectors() { return vectors_; }

 private:
  Json report_;  // null until a command writes one
  std::map<std::string, std::vector<double>> vectors_;
};

// A JSON value as the Python object json.loads would give, except that a non-finite number,
// which the tool prints as null, stays a float (nan, inf).
nb::object to_python(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return nb::none();
    case Json::value_t::boolean:
      return nb::bool_(value.get<bool>());
    case Json::value_t::number_integer:
      return nb::int_(value.get<std::int64_t>());
    case Json::value_t::number_unsigned:
      return nb::int_(value.get<std::uint64_t>());
    case Json::value_t::number_float:
      return nb::float_(value.get<double>());
    case Json::value_t::string:
      return nb::str(value.get_ref<const std::string&>().c_str());
    case Json::value_t::array: {
      nb::list list;
      for (const Json& item : value) list.append(to_python(item));
      return list;
    }
    case Json::value_t::object: {
      nb::dict dict;
      for (const auto& [key, item] : value.items()) dict[nb::str(key.c_str())] = to_python(item);
      return dict;
    }
    default:
      return nb::none();  // binary and discarded values: never written by a report
  }
}

// `values` as a one-dimensional float64 array that owns them (no copy).
nb::object to_array(std::vector<double>&& values) {
  auto* owned = new std::vector<double>(std::move(values));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
  return nb::cast(
      nb::ndarray<nb::numpy, double, nb::ndim<1>>(owned->data(), {owned->size()}, owner));
}

// Warnings the command gave, kept to be raised as Python warnings once it returns (a warning
// cannot reach Python while the GIL is released).
class KeptWarnings {
 public:
  KeptWarnings()
      : previous_(rwd::set_warning_handler([this](const rwd::Warning& w) {
          const std::lock_guard<std::mutex> lock(mutex_);
          messages_.push_back(w.message);
        })) {}
  ~KeptWarnings() { rwd::set_warning_handler(previous_); }
  KeptWarnings(const KeptWarnings&) = delete;
  KeptWarnings& operator=(const KeptWarnings&) = delete;
  std::vector<std::string> messages() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return messages_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> messages_;
  rwd::WarningHandler previous_;
};

// The thread count a command's --threads changes, given back when the command returns.
class KeptThreadCount {
 public:
  KeptThreadCount() : setting_(rwd::detail::thread_count_setting().load()) {}
  ~KeptThreadCount() { rwd::detail::thread_count_setting().store(setting_); }
  KeptThreadCount(const KeptThreadCount&) = delete;
  KeptThreadCount& operator=(const KeptThreadCount&) = delete;

 private:
  int setting_;
};

// The exception types of rewind._rewind (python/src/errors.cpp), looked up once.
nb::object rewind_exception(const char* name) {
  return nb::module_::import_("rewind._rewind").attr(name);
}

std::unique_ptr<CLI::App> command_line() {
  auto app = std::make_unique<CLI::App>("rewind " REWIND_VERSION, "rewind");
  rwd::cli::add_rewind_command_line(*app, REWIND_VERSION);
  return app;
}

// The subcommand `path` names (["generate", "lotka_volterra"]), or InvalidArgument.
const CLI::App& subcommand(const CLI::App& app, const std::vector<std::string>& path) {
  const CLI::App* command = &app;
  for (const std::string& name : path) {
    const CLI::App* next = nullptr;
    for (const CLI::App* sub : command->get_subcommands([](const CLI::App*) { return true; }))
      if (sub->check_name(name)) next = sub;
    if (next == nullptr)
      rwd::detail::fail<rwd::InvalidArgument>("'", name, "' is not a subcommand of '",
                                              command->get_name(), "'");
    command = next;
  }
  return *command;
}

std::vector<std::string> option_names(const std::vector<std::string>& path) {
  const auto app = command_line();
  std::vector<std::string> names;
  for (const CLI::Option* option : subcommand(*app, path).get_options())
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
  return names;
}

std::string help_text(const std::vector<std::string>& path) {
  const auto app = command_line();
  return subcommand(*app, path).help();
}

// Parses and runs `rewind ARGS...` with the GIL released; the reports and warnings stay in C++.
void run_command_line(CLI::App& app, const std::vector<std::string>& args) {
  std::vector<std::string> words{"rewind"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  const int argc = static_cast<int>(argv.size());
  try {
    app.parse(argc, argv.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
      rwd::detail::fail<rwd::InvalidArgument>(
          "--help and --version are not run from Python: "
          "use rewind.help(command)");
    throw rwd::InvalidArgument(rwd::cli::explain_parse_error(app, e.what(), argc, argv.data()));
  }
}

// What a command left besides its reports: its warnings' messages and the exception it ended
// with (null: none).
struct CommandOutcome {
  std::vector<std::string> warnings;
  std::exception_ptr failure;
};

// Commands run one at a time in a process, whatever Python thread calls them: the warning handler
// and the thread count they set are the process's.
std::mutex& command_mutex() {
  static std::mutex mutex;
  return mutex;
}

// Runs `rewind ARGS...` (the caller has released the GIL), its reports into `reports`.
CommandOutcome run_alone(CLI::App& app, const std::vector<std::string>& args,
                         KeptReports& reports) {
  const std::lock_guard<std::mutex> lock(command_mutex());
  const KeptWarnings warnings;
  const KeptThreadCount threads;
  const rwd::cli::ReceiveReports receiving(reports);
  CommandOutcome outcome;
  try {
    run_command_line(app, args);
  } catch (...) {
    outcome.failure = std::current_exception();
  }
  outcome.warnings = warnings.messages();
  return outcome;
}

nb::tuple execute(const std::vector<std::string>& args) {
  const auto app = command_line();
  KeptReports reports;
  CommandOutcome outcome;
  {
    nb::gil_scoped_release released;
    outcome = run_alone(*app, args, reports);
  }
  const std::exception_ptr& failure = outcome.failure;
  nb::list warned;
  for (const std::string& message : outcome.warnings) warned.append(nb::str(message.c_str()));
  nb::dict vectors;
  for (auto& [name, values] : reports.vectors())
    vectors[nb::str(name.c_str())] = to_array(std::move(values));
  nb::object report = to_python(reports.report());
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const rwd::Interrupted& e) {
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    } catch (const rwd::Error& e) {
      // The error type of rewind._rewind, with what the command reported before it failed (a
      // fit that stopped reports its best parameters) and its warnings.
      const bool bad_input = dynamic_cast<const rwd::InvalidArgument*>(&e) != nullptr;
      nb::object type = rewind_exception(bad_input ? "InvalidArgument" : "Error");
      nb::object exception = type(nb::str(e.what()));
      exception.attr("report") = report;
      exception.attr("vectors") = vectors;
      exception.attr("warnings") = warned;
      PyErr_SetObject(type.ptr(), exception.ptr());
    }
    throw nb::python_error();
  }
  return nb::make_tuple(report, vectors, warned);
}

}  // namespace

NB_MODULE(_commands, m) {
  m.doc() =
      "rewind's command line (run, plan, generate, fit) in this process: the functions of "
      "rewind.commands call it.";
  m.def("execute", &execute, nb::arg("args"),
        "Runs `rewind ARGS...` here; returns (report, vectors, warnings).");
  m.def("option_names", &option_names, nb::arg("command"),
        "The long option names of the subcommand `command` names (a list of words).");
  m.def("help_text", &help_text, nb::arg("command"),
        "The help page of the subcommand `command` names (a list of words).");
  m.attr("version") = REWIND_VERSION;
}
