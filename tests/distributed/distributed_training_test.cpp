// Neural ODE training with the minibatch split across MPI ranks (rwd::MpiBatchExchange), run by
// ctest under mpiexec with 1, 2, 3 and 4 ranks: every rank's loss history, gradient norms and
// final parameters must be the same bits as a one-process run of the same training computed in
// this test without the exchange — with 1 and with 2 threads per rank.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "rewind/distributed/mpi_batch_exchange.hpp"
#include "rewind/neural/adam.hpp"
#include "rewind/neural/neural_ode_trainer.hpp"
#include "rewind/neural/sampled_solution.hpp"
#include "rewind/parallel.hpp"
#include "rewind/problems/cubic_spiral.hpp"

namespace rwd {
namespace {

// The spiral series of `rewind generate spiral`'s kind, made here: 400 points on [0, 10].
training::TimeSeries spiral_series() {
  const CubicSpiral spiral;
  return training::sample_solution(spiral, spiral.default_initial_state(),
                                   spiral.default_parameters(), ButcherTableau::rk4(), 10.0, 400,
                                   20, {"y0", "y1"});
}

struct History {
  std::vector<double> losses, norms;
  Eigen::VectorXd theta;
};

// 20 Adam steps of a 2-16-2 network on 12-window minibatches (which split over 1 to 4 ranks as
// 12, 6+6, 4+4+4, 3+3+3+3).
History train(const training::BatchExchange& exchange, training::GradientMethod method) {
  const nn::Mlp mlp({2, 16, 2}, nn::Activation::tanh);
  training::TrainerOptions options;
  options.window = 8;
  options.batch = 12;
  options.seed = 11;
  options.method = method;
  training::NeuralOdeTrainer trainer(mlp, nn::InputFeatures::cube, spiral_series(), options,
                                     exchange);
  Eigen::VectorXd theta = mlp.initial_parameters(2);
  training::Adam adam({.learning_rate = 1e-2});
  History history;
  for (int i = 0; i < 20; ++i) {
    const training::IterationRecord record = trainer.step(theta, adam);
    history.losses.push_back(record.loss);
    history.norms.push_back(record.gradient_norm);
  }
  history.theta = theta;
  return history;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

void expect_one_process_bits(training::GradientMethod method, int threads) {
  const Communicator world = Communicator::world();
  set_thread_count(threads);
  const History one = train(training::single_process(), method);  // no exchange: the reference
  const MpiBatchExchange exchange(world);
  const History split = train(exchange, method);
  set_thread_count(1);
  const std::string where = "rank " + std::to_string(world.rank()) + " of " +
                            std::to_string(world.size()) + ", " + std::to_string(threads) +
                            " thread(s)";
  for (std::size_t i = 0; i < one.losses.size(); ++i)
    EXPECT_EQ(std::memcmp(&one.losses[i], &split.losses[i], sizeof(double)), 0)
        << where << ": loss of iteration " << i + 1 << " is " << split.losses[i] << ", one process "
        << one.losses[i];
  EXPECT_TRUE(same_bits(one.norms, split.norms)) << where << ": gradient norms differ";
  EXPECT_TRUE(same_bits(std::vector<double>(one.theta.begin(), one.theta.end()),
                        std::vector<double>(split.theta.begin(), split.theta.end())))
      << where << ": final parameters differ";
  EXPECT_LT(split.losses.back(), split.losses.front()) << where << ": training did not learn";
}

TEST(DistributedTraining, LossHistoryIsTheOneProcessBits) {
  expect_one_process_bits(training::GradientMethod::discrete, 1);
}

TEST(DistributedTraining, LossHistoryIsTheOneProcessBitsWithTwoThreads) {
  if (!kThreadsAvailable) GTEST_SKIP() << "built without OpenMP";
  expect_one_process_bits(training::GradientMethod::discrete, 2);
}

TEST(DistributedTraining, BacksolveGradientToo) {
  expect_one_process_bits(training::GradientMethod::backsolve, 1);
}

TEST(DistributedTraining, MoreRanksThanWindowsIsRefusedOnEveryRank) {
  const Communicator world = Communicator::world();
  const MpiBatchExchange exchange(world);
  training::TrainerOptions options;
  options.batch = 1;
  const nn::Mlp mlp({2, 4, 2}, nn::Activation::tanh);
  if (world.size() == 1) {
    EXPECT_NO_THROW(training::NeuralOdeTrainer(mlp, nn::InputFeatures::cube, spiral_series(),
                                               options, exchange));
    return;
  }
  try {
    training::NeuralOdeTrainer trainer(mlp, nn::InputFeatures::cube, spiral_series(), options,
                                       exchange);
    ADD_FAILURE() << "a 1-window batch was accepted by " << world.size() << " ranks";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("batch 1 windows cannot be split over " +
                                         std::to_string(world.size()) + " ranks"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace rwd
