// rewind/neural/batch_exchange.hpp — how the processes that train one network together share a
// minibatch: which windows each takes, and the one collective that brings their results together.
//
//   const rwd::training::BatchExchange& one = rwd::training::single_process();   // the default
//   rwd::training::NeuralOdeTrainer trainer(mlp, features, data, options, exchange);
//   auto mine = rwd::training::windows_of_process(20, /*rank=*/1, /*size=*/3);  // [7, 14)
//
// Data parallelism: every process holds the whole series and θ, draws the same window starts
// (the same seed), integrates and differentiates only its own windows, and the per-window losses
// and gradients of all processes are gathered on every process and added in window order — so
// every process takes the same optimizer step, and the loss history is the same bits for 1, 2 or
// N processes (the trainer's header says why the per-window terms themselves do not depend on
// the split). This interface is the one thing the trainer needs from a process group; the neural
// part knows nothing of MPI. rwd::MpiBatchExchange (rewind/distributed/mpi_batch_exchange.hpp)
// implements it over an MPI communicator; single_process() is the one-process case.
//
// Windows go to processes in contiguous blocks, as evenly as possible: with B = q·P + r, the
// first r processes take q + 1 windows and the others q. More processes than windows is refused
// (a process without windows would still have to take part in every step for nothing).
#pragma once

#include <span>

#include "rewind/types.hpp"

namespace rwd::training {

class BatchExchange {
 public:
  virtual ~BatchExchange() = default;
  // This process's number in [0, size()) and the number of processes.
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every process's `mine` (counts[r] values from process r), concatenated in process order, into
  // `all` on every process. counts has size() entries, the same on every process; all has their
  // sum. A collective: every process calls it, in the same order.
  virtual void all_gather(std::span<const double> mine, std::span<const int> counts,
                          std::span<double> all) const = 0;
};

// One process alone: rank 0 of 1, the gather a copy.
class SingleProcessExchange final : public BatchExchange {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void all_gather(std::span<const double> mine, std::span<const int> counts,
                  std::span<double> all) const override;
};

// A SingleProcessExchange that lives for the whole program.
const BatchExchange& single_process();

// The windows [begin, end) of a minibatch that one process takes.
struct WindowRange {
  Index begin = 0;
  Index end = 0;
  Index size() const { return end - begin; }
  friend bool operator==(const WindowRange&, const WindowRange&) = default;
};

// Process `rank` of `size`'s share of a batch of `batch` windows (see above). rwd::InvalidArgument
// for size < 1, rank outside [0, size), batch < 1, or more processes than windows.
WindowRange windows_of_process(Index batch, int rank, int size);

}  // namespace rwd::training
