// src/cli/process_group.hpp — the processes a command runs on, as the commands need them.
//
//   training::NeuralOdeTrainer trainer(mlp, features, data, options, batch_exchange());
//
// batch_exchange() is what `rewind train` splits its minibatch through: every rank of an MPI
// run (rwd::MpiBatchExchange over the world communicator), or this process alone. Until the
// command line starts MPI, it is the one-process exchange.
#pragma once

#include "rewind/neural/batch_exchange.hpp"

namespace rwd::cli {

inline const training::BatchExchange& batch_exchange() {
  return training::single_process();
}

}  // namespace rwd::cli
