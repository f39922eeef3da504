// src/cli/process_group.cpp — see process_group.hpp.
#include "process_group.hpp"

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include "exit_status.hpp"
#include "rewind/error.hpp"

#if REWIND_CLI_WITH_MPI
#include <mpi.h>

#include "rewind/distributed/mpi_batch_exchange.hpp"
#endif

namespace rwd::cli {
namespace {

int g_rank = 0, g_size = 1;
bool g_launched = false, g_working = false;

// Whether an MPI launcher started this process: Open MPI's mpirun, PMIx launchers (srun, prterun)
// and Hydra (MPICH) each set one of these.
bool started_by_mpi_launcher() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(name)) return true;
  return false;
}

}  // namespace

ProcessGroup::ProcessGroup(int& argc, char**& argv) {
#if REWIND_CLI_WITH_MPI
  if (!started_by_mpi_launcher()) return;
  int provided = 0;
  // Threads inside a rank never call MPI: only the thread that runs the command does.
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  g_launched = true;
  // Rank 0 speaks for the job: the others' standard output goes nowhere.
  if (g_rank != 0) std::cout.setstate(std::ios::badbit);
#else
  (void)argc;
  (void)argv;
#endif
}

ProcessGroup::~ProcessGroup() {
#if REWIND_CLI_WITH_MPI
  if (g_launched) MPI_Finalize();
#endif
}

int ProcessGroup::rank() {
  return g_rank;
}
int ProcessGroup::size() {
  return g_size;
}
bool ProcessGroup::launched() {
  return g_launched;
}
void ProcessGroup::require_one_process(std::string_view command) {
  if (g_size > 1)
    rwd::detail::fail<InvalidArgument>(
        command, " runs in one process, and this job has ", g_size,
        " ranks (each would run all of it and write the same files): run it without mpirun. "
        "Under mpirun, rewind run splits the problems whose state splits, and rewind train its "
        "minibatches");
}
void ProcessGroup::begin_work() {
  g_working = true;
}
bool ProcessGroup::working() {
  return g_working;
}

int ProcessGroup::fail(int status, std::string_view message, bool shared) {
  if (!g_launched || g_size == 1) return fail_with(status, message);
  if (!g_working) {
    // Before any communication every rank parsed the same command line and failed the same way.
    return g_rank == 0 ? fail_with(status, message) : status;
  }
#if REWIND_CLI_WITH_MPI
  if (g_rank == 0) {
    fail_with(status, message);
  } else if (shared) {
    // Rank 0 meets the same failure and ends the job with its message; if it has not within a
    // few seconds, this rank failed alone after all: say so.
    std::this_thread::sleep_for(std::chrono::seconds(3));
    fail_with(status, "rank " + std::to_string(g_rank) + ": " + std::string(message));
  } else {
    fail_with(status, "rank " + std::to_string(g_rank) + ": " + std::string(message));
  }
  std::cerr.flush();
  MPI_Abort(MPI_COMM_WORLD, status);
#endif
  return status;
}

int ProcessGroup::stop_together(int status, std::string_view message) {
  // Every rank agreed to stop at this point (rwd::CheckpointedAdjoint agrees on stop requests),
  // so each leaves main() and finalizes MPI with the others: no MPI_Abort racing the launcher,
  // which is itself passing the signal on.
  return g_rank == 0 ? fail_with(status, message) : status;
}

const training::BatchExchange& batch_exchange() {
#if REWIND_CLI_WITH_MPI
  if (g_launched) {
    static const MpiBatchExchange world{Communicator::world()};
    return world;
  }
#endif
  return training::single_process();
}

}  // namespace rwd::cli
