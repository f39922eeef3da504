// src/cli/process_group.hpp — the processes one `rewind` command runs on: this one alone, or the
// ranks of an MPI job when the tool was started by mpirun/mpiexec (and built with MPI).
//
//   rwd::cli::ProcessGroup processes(argc, argv);   // MPI_Init when launched by an MPI launcher
//   if (processes.prints()) std::cout << ...;       // rank 0 speaks for the job
//
// A plain `rewind run ...` never initialises MPI, so the tool behaves exactly as a serial build.
// Under a launcher every rank parses the same command line and runs the same command: the
// problems that split their state across ranks (problems_split_across_ranks(),
// distributed_run.hpp) do, the others are refused before any work, and so are the subcommands
// that run in one process (plan, inspect, predict, generate, fit: require_one_process).
//
// Failures (main.cpp): every rank sees the same bad command line, so an error raised before the
// command starts its work is printed by rank 0 and every rank leaves normally with the same exit
// status. Once the work has started (begin_work()), a rank that fails cannot know whether the
// others failed too or wait for it in a collective: it says so and ends the whole job
// (MPI_Abort with the exit status) — no rank is ever left waiting. Failures that every rank meets
// together (NaN/Inf found by a collective check, a drift verdict, a solver failure, bad input)
// are printed once, by rank 0; a failure of one rank only (a disk error, memory) by that rank,
// naming it.
#pragma once

#include <string_view>

#include "rewind/neural/batch_exchange.hpp"

namespace rwd::cli {

class ProcessGroup {
 public:
  ProcessGroup(int& argc, char**& argv);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  // This process's rank and the number of ranks (0 and 1 without a launcher).
  static int rank();
  static int size();
  // Whether MPI is running (the tool was started by an MPI launcher, even with one rank).
  static bool launched();
  // Rank 0 prints results, warnings and the error of a failure every rank shares.
  static bool prints() { return rank() == 0; }

  // Refuses (InvalidArgument, before any work) to run `command` ("rewind generate"), which runs
  // in one process, in a job of more than one rank: every rank would run all of it and write
  // the same files. Under mpirun only `rewind run` (a problem whose state splits) and
  // `rewind train` use the ranks.
  static void require_one_process(std::string_view command);

  // The command has started work that communicates between ranks: from now on a failure ends the
  // job (see the top of this file).
  static void begin_work();
  static bool working();

  // Reports `message` as the command's failure with exit status `status` and returns the status
  // to leave main() with — or does not return, when the job must be ended (MPI_Abort).
  // `shared` says the failure is of a kind every rank meets at the same point.
  static int fail(int status, std::string_view message, bool shared);
  // A stop that every rank agreed to make at the same point (a signal, rwd::Interrupted): rank 0
  // reports it, and every rank returns `status` to leave main() normally (MPI finalized).
  static int stop_together(int status, std::string_view message);
};

// What `rewind train` splits its minibatch through: the ranks of the job (rwd::MpiBatchExchange
// over MPI_COMM_WORLD) when launched, else this process alone.
//   training::NeuralOdeTrainer trainer(mlp, features, data, options, batch_exchange());
const training::BatchExchange& batch_exchange();

}  // namespace rwd::cli
