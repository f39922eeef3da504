// src/cli/main.cpp — the `rewind` command-line tool: subcommands, --version, exit statuses.
//
//   rewind run lorenz96 --n 40 --steps 200 --method rk4 --dt 0.01
//   rewind run gray-scott --n 32 --json
//   rewind run gray_scott --n 71 --steps 2000 --snapshots 20 --threads 2
//   rewind plan --steps 100000 --snapshots 20
//   rewind inspect snapshots.h5
//   rewind generate spiral && rewind train spiral --json spiral.json
//   rewind generate lotka_volterra --steps 1000 --observe-every 10 --out lv.h5
//   rewind fit lotka_volterra --observations lv.h5 --fit alpha,gamma --start alpha=1.3,gamma=3.3
//   rewind --version
//   mpirun -np 4 rewind run gray_scott --n 708 --snapshots 10     # the state split over 4 ranks
//
// Exit status 0 on success, 1 when a run fails (NaN/Inf, solver failure), 2 for bad input; every
// error is one line "rewind: error: ..." on stderr (exit_status.hpp). Under mpirun rank 0 prints,
// and a failure ends every rank (process_group.hpp).
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <new>
#include <string>

#include "command_line.hpp"
#include "exit_status.hpp"
#include "option_hint.hpp"
#include "process_group.hpp"
#include "rewind/error.hpp"
#include "rewind/interrupt.hpp"
#include "rewind/warning.hpp"

#ifndef REWIND_VERSION
#define REWIND_VERSION "unknown"
#endif

int main(int argc, char** argv) {
  using namespace rwd::cli;
  const ProcessGroup processes(argc, argv);
  // The library's warnings: one line each on stderr, "rewind: warning: ...", like the errors
  // (under mpirun every rank meets the same warnings: rank 0 prints them).
  rwd::set_warning_handler([](const rwd::Warning& w) {
    if (ProcessGroup::prints()) std::cerr << "rewind: warning: " << w.message << std::endl;
  });
  CLI::App app{"rewind " REWIND_VERSION
               " - exact gradients (discrete adjoints) of ODE simulations.",
               "rewind"};
  add_rewind_command_line(app, REWIND_VERSION);

  // CLI11 would say only "A subcommand is required" for `rewind bogus`.
  if (argc >= 2 && argv[1][0] != '-') {
    const std::string name = argv[1];
    std::string known;
    bool found = false;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      found = found || sub->check_name(name);
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    if (!found)
      return ProcessGroup::fail(kExitBadInput,
                                "unknown subcommand '" + name + "'; the subcommands are: " + known +
                                    " (see rewind --help)",
                                true);
  }

  // `shared`: a failure every rank meets at the same point (process_group.hpp).
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version arrive as "errors" with exit code 0: CLI11 prints them.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
      return ProcessGroup::prints() ? app.exit(e) : kExitSuccess;
    return ProcessGroup::fail(kExitBadInput, explain_parse_error(app, e.what(), argc, argv), true);
  } catch (const rwd::InvalidArgument& e) {
    return ProcessGroup::fail(kExitBadInput, e.what(), true);
  } catch (const rwd::Interrupted& e) {
    // 128 + the signal, as a shell reports a process ended by it. The ranks of a split state
    // agree on a stop before they honour it (rwd::CheckpointedAdjoint), so all of them are here.
    return ProcessGroup::stop_together(128 + (e.signal() > 0 ? e.signal() : SIGINT), e.what());
  } catch (const rwd::StorageError& e) {
    return ProcessGroup::fail(kExitFailure, e.what(), false);
  } catch (const rwd::Error& e) {
    return ProcessGroup::fail(kExitFailure, e.what(), true);
  } catch (const std::bad_alloc&) {
    return ProcessGroup::fail(kExitFailure, "out of memory", false);
  } catch (const std::exception& e) {
    return ProcessGroup::fail(kExitFailure, e.what(), false);
  } catch (...) {
    return ProcessGroup::fail(kExitFailure, "unknown failure", false);
  }
  return kExitSuccess;
}
