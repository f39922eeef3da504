// rewind/distributed/mpi_batch_exchange.hpp — neural ODE training with the minibatch split
// across MPI ranks: the trainer's BatchExchange over a Communicator.
//
//   rwd::MpiSession mpi(argc, argv);
//   rwd::MpiBatchExchange exchange(rwd::Communicator::world());
//   rwd::training::NeuralOdeTrainer trainer(mlp, features, data, options, exchange);
//   for (…) trainer.step(theta, adam);   // every rank: the same loss, gradient and θ
//
// Each rank integrates and differentiates its contiguous share of every minibatch's windows;
// one all-gather per step brings every window's loss and gradient to every rank, where they are
// added in window order (rewind/neural/neural_ode_trainer.hpp) — so the loss history is the same
// bits as one process's, for any number of ranks up to the batch size. Every rank must build its
// trainer with the same data, options and seed, and step it the same number of times.
#pragma once

#include <span>

#include "rewind/distributed/communicator.hpp"
#include "rewind/neural/batch_exchange.hpp"

namespace rwd {

class MpiBatchExchange final : public training::BatchExchange {
 public:
  explicit MpiBatchExchange(Communicator communicator) : communicator_(communicator) {}
  int rank() const override { return communicator_.rank(); }
  int size() const override { return communicator_.size(); }
  void all_gather(std::span<const double> mine, std::span<const int> counts,
                  std::span<double> all) const override {
    communicator_.all_gather(mine, counts, all);
  }

 private:
  Communicator communicator_;
};

}  // namespace rwd
