// A minibatch split across processes gives the same bits as one process: the per-window
// decomposition of the trainer (neural_ode_trainer.hpp), with the processes simulated by threads
// of this test sharing an in-memory all-gather. Partitions {20}, {10, 10}, {7, 7, 6} and
// {5, 5, 5, 5} of a 20-window batch must give the same loss and gradient bits, step after step,
// and the gradient must still be the derivative of the loss (finite differences, and the
// batched shared-θ gradient of the same windows).
#include <gtest/gtest.h>

#include <barrier>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/neural/adam.hpp"
#include "rewind/neural/batch_exchange.hpp"
#include "rewind/neural/neural_ode_trainer.hpp"
#include "rewind/neural/sampled_solution.hpp"
#include "rewind/neural/window_fit.hpp"
#include "rewind/parallel.hpp"
#include "rewind/problems/cubic_spiral.hpp"
#include "support/error_message.hpp"
#include "support/thread_group_exchange.hpp"

namespace {

using rwd::Index;
using rwd::testing::expect_message;
using rwd::testing::ThreadGroup;
using rwd::training::BatchExchange;
using rwd::training::NeuralOdeTrainer;
using rwd::training::TimeSeries;
using rwd::training::TrainerOptions;

template <class Call>
std::string invalid_argument_message(Call call) {
  return rwd::testing::error_message<rwd::InvalidArgument>(call);
}

TimeSeries spiral_series() {
  const rwd::CubicSpiral spiral;
  return rwd::training::sample_solution(spiral, spiral.default_initial_state(),
                                        spiral.default_parameters(), rwd::ButcherTableau::rk4(),
                                        10.0, 400, 20, {"y0", "y1"});
}

const rwd::nn::Mlp kMlp({2, 16, 2}, rwd::nn::Activation::tanh);

TrainerOptions options_of(rwd::training::GradientMethod method) {
  TrainerOptions o;
  o.window = 6;
  o.batch = 20;
  o.seed = 3;
  o.method = method;
  if (method == rwd::training::GradientMethod::discrete) o.schedule = rwd::revolve_schedule(2);
  return o;
}

struct History {
  std::vector<double> losses, norms;
  Eigen::VectorXd theta;
};

// `iterations` Adam steps with the batch split over `ranks` simulated processes; every rank's
// history.
std::vector<History> train_split(int ranks, rwd::training::GradientMethod method, int iterations) {
  const TimeSeries data = spiral_series();
  std::vector<History> histories(static_cast<std::size_t>(ranks));
  ThreadGroup group(ranks);
  group.run([&](int rank, const BatchExchange& exchange) {
    NeuralOdeTrainer trainer(kMlp, rwd::nn::InputFeatures::cube, data, options_of(method),
                             exchange);
    Eigen::VectorXd theta = kMlp.initial_parameters(7);
    rwd::training::Adam adam({.learning_rate = 1e-2});
    History& h = histories[static_cast<std::size_t>(rank)];
    for (int i = 0; i < iterations; ++i) {
      const auto record = trainer.step(theta, adam);
      h.losses.push_back(record.loss);
      h.norms.push_back(record.gradient_norm);
    }
    h.theta = theta;
  });
  return histories;
}

void expect_same_bits(const History& a, const History& b, const std::string& what) {
  ASSERT_EQ(a.losses.size(), b.losses.size());
  for (std::size_t i = 0; i < a.losses.size(); ++i) {
    EXPECT_EQ(std::memcmp(&a.losses[i], &b.losses[i], sizeof(double)), 0)
        << what << ": loss of iteration " << i + 1 << " is " << b.losses[i] << ", one process "
        << a.losses[i];
    EXPECT_EQ(std::memcmp(&a.norms[i], &b.norms[i], sizeof(double)), 0)
        << what << ": gradient norm of iteration " << i + 1;
  }
  ASSERT_EQ(a.theta.size(), b.theta.size());
  EXPECT_EQ(std::memcmp(a.theta.data(), b.theta.data(), sizeof(double) * a.theta.size()), 0)
      << what << ": final parameters differ";
}

TEST(WindowRanges, ContiguousAndEven) {
  using rwd::training::WindowRange;
  using rwd::training::windows_of_process;
  EXPECT_EQ(windows_of_process(20, 0, 1), (WindowRange{0, 20}));
  EXPECT_EQ(windows_of_process(20, 1, 3), (WindowRange{7, 14}));
  EXPECT_EQ(windows_of_process(20, 2, 3), (WindowRange{14, 20}));
  EXPECT_EQ(windows_of_process(20, 3, 4), (WindowRange{15, 20}));
  EXPECT_EQ(windows_of_process(5, 4, 5), (WindowRange{4, 5}));
  expect_message(invalid_argument_message([] { windows_of_process(20, 0, 32); }),
                 "batch 20 windows cannot be split over 32 ranks");
  EXPECT_THROW(windows_of_process(20, 3, 3), rwd::InvalidArgument);
  EXPECT_THROW(windows_of_process(20, 0, 0), rwd::InvalidArgument);
}

TEST(BatchSplit, MoreRanksThanWindowsIsRefusedBeforeAnyWork) {
  TrainerOptions options = options_of(rwd::training::GradientMethod::discrete);
  options.batch = 3;
  ThreadGroup group(4);
  std::vector<std::string> messages(4);
  group.run([&](int rank, const BatchExchange& exchange) {
    messages[static_cast<std::size_t>(rank)] = invalid_argument_message([&] {
      NeuralOdeTrainer trainer(kMlp, rwd::nn::InputFeatures::cube, spiral_series(), options,
                               exchange);
    });
  });
  for (const std::string& m : messages)
    expect_message(m, "batch 3 windows cannot be split over 4 ranks");
}

TEST(BatchSplit, EveryPartitionGivesTheOneProcessBits) {
  rwd::set_thread_count(1);
  for (auto method :
       {rwd::training::GradientMethod::discrete, rwd::training::GradientMethod::backsolve}) {
    const std::vector<History> one = train_split(1, method, 12);
    for (int ranks : {2, 3, 4}) {
      const std::vector<History> split = train_split(ranks, method, 12);
      for (int r = 0; r < ranks; ++r)
        expect_same_bits(one[0], split[static_cast<std::size_t>(r)],
                         std::to_string(ranks) + " ranks, rank " + std::to_string(r) +
                             (method == rwd::training::GradientMethod::discrete ? " (discrete)"
                                                                                : " (backsolve)"));
    }
  }
}

TEST(BatchSplit, SameBitsWithTwoThreadsPerProcess) {
  if (!rwd::kThreadsAvailable) GTEST_SKIP() << "built without OpenMP";
  rwd::set_thread_count(1);
  const std::vector<History> one = train_split(1, rwd::training::GradientMethod::discrete, 8);
  rwd::set_thread_count(2);
  const std::vector<History> split = train_split(2, rwd::training::GradientMethod::discrete, 8);
  rwd::set_thread_count(1);
  expect_same_bits(one[0], split[0], "2 ranks × 2 threads, rank 0");
  expect_same_bits(one[0], split[1], "2 ranks × 2 threads, rank 1");
}

TEST(BatchSplit, GradientIsTheDerivativeOfTheLoss) {
  // The per-window gradient, folded, against central differences of the folded loss and
  // against the batched gradient with one shared θ (the model's other mode, summed inside the
  // network's VJP): the same derivative to round-off.
  const TimeSeries data = spiral_series();
  TrainerOptions options = options_of(rwd::training::GradientMethod::discrete);
  options.substeps = 2;
  NeuralOdeTrainer trainer(kMlp, rwd::nn::InputFeatures::cube, data, options);
  const Eigen::VectorXd theta = kMlp.initial_parameters(4);
  std::vector<Index> starts;
  for (Index w = 0; w < options.batch; ++w) starts.push_back(17 * w + 3);
  const auto result = trainer.gradient(theta, starts);

  rwd::nn::NeuralOde shared(kMlp, options.batch, rwd::nn::InputFeatures::cube);
  rwd::ExplicitRungeKutta stepper(
      shared, options.tableau,
      rwd::StepControl::fixed(0.0, trainer.spacing() / 2, options.window * options.substeps));
  rwd::CheckpointedAdjoint driver(
      stepper, rwd::training::window_misfit(data, starts, options.window, options.substeps));
  const auto batched = driver.run(rwd::training::window_initial_states(data, starts), theta,
                                  rwd::store_all_schedule());
  EXPECT_NEAR(result.loss, batched.loss, 1e-15 * batched.loss);
  EXPECT_LT((result.grad_theta - batched.grad_theta).norm(), 1e-12 * batched.grad_theta.norm());

  Eigen::VectorXd direction(theta.size());
  for (Index i = 0; i < direction.size(); ++i)
    direction[i] = std::cos(0.61 * static_cast<double>(i) + 0.2);
  const double h = 1e-6;
  const double fd = (trainer.gradient(theta + h * direction, starts).loss -
                     trainer.gradient(theta - h * direction, starts).loss) /
                    (2 * h);
  EXPECT_NEAR(result.grad_theta.dot(direction), fd, 1e-6 * std::abs(fd));
}

TEST(BatchSplit, PerSampleCopiesMustBeEqual) {
  rwd::nn::NeuralOde model(kMlp, 3, rwd::nn::InputFeatures::cube,
                           rwd::nn::ParameterCopies::per_sample);
  ASSERT_EQ(model.parameter_size(), 3 * kMlp.parameter_size());
  Eigen::VectorXd copies = kMlp.initial_parameters(1).replicate(3, 1);
  const Eigen::VectorXd y = Eigen::VectorXd::Constant(6, 0.3);
  Eigen::VectorXd f(6);
  model.rhs(0.0, y, copies, f);
  double& one = copies[kMlp.parameter_size() + 5];
  one = std::nextafter(one, 1.0);  // one bit
  expect_message(invalid_argument_message([&] { model.rhs(0.0, y, copies, f); }),
                 "parameter copy 1 differs from copy 0");
}

TEST(BatchSplit, FailureOnOneRankStopsEveryRank) {
  // A window whose state is not finite on one rank: that rank reports it, the others learn
  // which rank failed — nobody waits in the gather.
  TimeSeries data = spiral_series();
  TrainerOptions options = options_of(rwd::training::GradientMethod::discrete);
  options.batch = 4;
  std::vector<Index> starts = {10, 20, 30, 40};
  data.values.col(30).setConstant(std::nan(""));  // window 2's initial state: rank 1's
  ThreadGroup group(2);
  std::vector<std::string> messages(2);
  group.run([&](int rank, const BatchExchange& exchange) {
    NeuralOdeTrainer trainer(kMlp, rwd::nn::InputFeatures::cube, data, options, exchange);
    try {
      trainer.gradient(kMlp.initial_parameters(1), starts);
    } catch (const std::exception& e) {
      messages[static_cast<std::size_t>(rank)] = e.what();
    }
  });
  EXPECT_NE(messages[1], "");
  expect_message(messages[0], "failed on rank 1");
}

}  // namespace
