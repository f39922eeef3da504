// src/cli/command_line.cpp — see command_line.hpp.
#include "command_line.hpp"

#include <string>

#include "fit_command.hpp"
#include "generate_command.hpp"
#include "inspect_command.hpp"
#include "integer_option.hpp"
#include "plan_command.hpp"
#include "predict_command.hpp"
#include "rewind/parallel.hpp"
#include "run_command.hpp"
#include "train_command.hpp"

namespace rwd::cli {

void add_rewind_command_line(CLI::App& app, const char* version) {
  app.set_version_flag("--version", std::string("rewind ") + version);
  app.require_subcommand(1);
  // --threads before or after the subcommand: a subcommand passes options it does not know up
  // here. Applied as soon as it is parsed, so that it holds for the whole subcommand.
  app.fallthrough();
  add_integer_option_function<int>(
      app, "--threads", [](int threads) { rwd::set_thread_count(threads); },
      IntegerRange::between(1, kMaxThreads),
      "threads for the CPU loops (default: all cores, or OMP_NUM_THREADS);\n"
      "the results are the same bits for every thread count")
      ->type_name("T")
      ->trigger_on_parse();
  app.footer(
      "Run 'rewind SUBCOMMAND --help' for a subcommand's options.\n"
      "Exit status: 0 success, 1 the run failed (NaN/Inf, solver failure), 2 bad input.");
  add_run_command(app);
  add_plan_command(app);
  add_inspect_command(app);
  add_train_command(app);
  add_predict_command(app);
  add_generate_command(app);
  add_fit_command(app);
}

void stop_before_actions(CLI::App& app) {
  // CLI11 runs the top app's parse-complete callback after all option callbacks and before the
  // subcommands' callbacks.
  app.parse_complete_callback([] { throw CommandLineChecked{}; });
}

}  // namespace rwd::cli
