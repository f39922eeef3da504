// The window sampler: the same starts on every platform for a seed (hard-coded values, computed
// independently from the MT19937-64 definition and the documented rejection rule), starts in
// range and roughly uniform, refusals; and gathering initial states and targets of a batch.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/neural/time_series.hpp"
#include "rewind/neural/window_sampler.hpp"

namespace {

using rwd::Index;
using rwd::training::TimeSeries;
using rwd::training::WindowSampler;

TEST(WindowSampler, GeneratorIsTheStandardMt19937_64) {
  // The standard fixes the 10000th output of a default-constructed std::mt19937_64.
  std::mt19937_64 generator;
  generator.discard(9999);
  EXPECT_EQ(generator(), 9981545732273789042ull);
}

TEST(WindowSampler, SameSeedSameStartsOnEveryPlatform) {
  // Computed outside C++ (a Python transcription of MT19937-64 and of the rule in
  // window_sampler.hpp): 1000 points, W = 10, so 990 possible starts.
  WindowSampler sampler(1000, 10, 8, 42);
  EXPECT_EQ(sampler.next_batch(), (std::vector<Index>{156, 374, 130, 42, 401, 158, 436, 204}));
  EXPECT_EQ(sampler.next_batch(), (std::vector<Index>{100, 757, 115, 522, 72, 946, 519, 2}));
  EXPECT_EQ(sampler.batches_drawn(), 2);

  WindowSampler other(101, 10, 6, 2024);
  EXPECT_EQ(other.next_batch(), (std::vector<Index>{18, 72, 46, 54, 22, 42}));

  // 2^62 + 1 starts: about a quarter of the outputs fall in the rejected top range; for seed 7
  // the first six outputs are all accepted only after six rejections.
  const Index huge = (Index{1} << 62) + 2;
  WindowSampler rejecting(huge, 1, 6, 7);
  EXPECT_EQ(rejecting.next_batch(),
            (std::vector<Index>{2165911192842364878, 2606000371313139421, 1016289395134552428,
                                132043062551466976, 4019650396926626530, 1774369821781910255}));
}

TEST(WindowSampler, SameSeedSameSequenceOtherSeedOtherSequence) {
  WindowSampler a(1000, 10, 20, 42), b(1000, 10, 20, 42), c(1000, 10, 20, 43);
  for (int i = 0; i < 5; ++i) {
    const auto first = a.next_batch();
    EXPECT_EQ(first, b.next_batch());
    EXPECT_NE(first, c.next_batch());
  }
  // The vector-filling form draws the same sequence.
  WindowSampler d(1000, 10, 20, 42), e(1000, 10, 20, 42);
  std::vector<Index> starts(3, -1);
  d.next_batch(starts);
  EXPECT_EQ(starts, e.next_batch());
  const auto windows = d.next_windows();
  const auto expected = e.next_batch();
  ASSERT_EQ(windows.size(), expected.size());
  for (std::size_t i = 0; i < windows.size(); ++i) EXPECT_EQ(windows[i].start, expected[i]);
  EXPECT_EQ(d.batches_drawn(), 2);
}

TEST(WindowSampler, StartsCoverTheRangeUniformly) {
  // 15 points, W = 5: starts 0..9, each window's last point 5..14 inside the series.
  WindowSampler sampler(15, 5, 1000, 7);
  EXPECT_EQ(sampler.start_count(), 10);
  EXPECT_EQ(sampler.points(), 15);
  EXPECT_EQ(sampler.window_intervals(), 5);
  EXPECT_EQ(sampler.batch_size(), 1000);
  EXPECT_EQ(sampler.seed(), 7u);
  std::vector<int> counts(10, 0);
  for (int i = 0; i < 10; ++i)
    for (Index s : sampler.next_batch()) {
      ASSERT_GE(s, 0);
      ASSERT_LE(s + 5, 14);
      ++counts[static_cast<std::size_t>(s)];
    }
  double chi2 = 0.0;
  for (int c : counts) chi2 += (c - 1000.0) * (c - 1000.0) / 1000.0;
  EXPECT_LT(chi2, 27.9) << "9 degrees of freedom: P(chi2 > 27.9) = 0.001";

  // A window as long as the series allows: only start 0.
  WindowSampler tight(11, 10, 50, 1);
  for (Index s : tight.next_batch()) EXPECT_EQ(s, 0);
}

TEST(WindowSampler, RefusesImpossibleWindows) {
  EXPECT_THROW(WindowSampler(10, 10, 1, 1), rwd::InvalidArgument);  // needs 11 points
  EXPECT_THROW(WindowSampler(5, 10, 1, 1), rwd::InvalidArgument);
  EXPECT_THROW(WindowSampler(0, 1, 1, 1), rwd::InvalidArgument);
  EXPECT_THROW(WindowSampler(-5, 1, 1, 1), rwd::InvalidArgument);
  EXPECT_THROW(WindowSampler(100, 0, 1, 1), rwd::InvalidArgument);
  EXPECT_THROW(WindowSampler(100, -3, 1, 1), rwd::InvalidArgument);
  EXPECT_THROW(WindowSampler(100, 5, 0, 1), rwd::InvalidArgument);
  EXPECT_THROW(WindowSampler(100, 5, -1, 1), rwd::InvalidArgument);
  try {
    WindowSampler(10, 10, 4, 1);
  } catch (const rwd::InvalidArgument& e) {
    const std::string m = e.what();
    EXPECT_TRUE(m.find("10 intervals") != std::string::npos &&
                m.find("has 10") != std::string::npos)
        << m;
  }
}

TimeSeries ramp(Index dimension, Index points) {
  TimeSeries s;
  s.values.resize(dimension, points);
  for (Index k = 0; k < points; ++k) {
    s.times.push_back(0.5 * static_cast<double>(k));
    for (Index i = 0; i < dimension; ++i)
      s.values(i, k) = 100.0 * static_cast<double>(i) + static_cast<double>(k);
  }
  return s;
}

TEST(Gather, InitialStatesAndTargetsAreColumnsOfTheSeries) {
  const TimeSeries s = ramp(3, 20);
  const std::vector<Index> starts = {4, 0, 9, 4};
  const Eigen::MatrixXd y0 = rwd::training::gather_initial_states(s, starts);
  ASSERT_EQ(y0.rows(), 3);
  ASSERT_EQ(y0.cols(), 4);
  for (Index b = 0; b < 4; ++b)
    EXPECT_EQ(y0.col(b), s.values.col(starts[static_cast<std::size_t>(b)]));
  EXPECT_EQ(y0(2, 2), 209.0);
  for (Index offset : {0, 1, 10}) {
    const Eigen::MatrixXd y = rwd::training::gather_targets(s, starts, offset);
    ASSERT_EQ(y.cols(), 4);
    for (Index b = 0; b < 4; ++b)
      EXPECT_EQ(y.col(b), s.values.col(starts[static_cast<std::size_t>(b)] + offset))
          << "offset " << offset;
  }
  EXPECT_EQ(rwd::training::gather_targets(s, starts, 0), y0);
}

TEST(Gather, WorksWithTheSampler) {
  const TimeSeries s = ramp(2, 50);
  WindowSampler sampler(s.points(), 7, 16, 3);
  for (int i = 0; i < 20; ++i) {
    const auto starts = sampler.next_batch();
    EXPECT_NO_THROW(rwd::training::gather_targets(s, starts, 7))
        << "the last point of every window";
    EXPECT_EQ(rwd::training::gather_targets(s, starts, 7) -
                  rwd::training::gather_initial_states(s, starts),
              Eigen::MatrixXd::Constant(2, 16, 7.0));
  }
}

TEST(Gather, RefusesStartsAndOffsetsOutsideTheSeries) {
  const TimeSeries s = ramp(2, 10);
  EXPECT_THROW(rwd::training::gather_initial_states(s, {}), rwd::InvalidArgument);
  EXPECT_THROW(rwd::training::gather_initial_states(s, {0, 10}), rwd::InvalidArgument);
  EXPECT_THROW(rwd::training::gather_initial_states(s, {-1}), rwd::InvalidArgument);
  EXPECT_NO_THROW(rwd::training::gather_initial_states(s, {9}));
  EXPECT_NO_THROW(rwd::training::gather_targets(s, {5}, 4));
  try {
    rwd::training::gather_targets(s, {2, 5}, 5);
    ADD_FAILURE() << "point 10 of 10 gathered";
  } catch (const rwd::InvalidArgument& e) {
    const std::string m = e.what();
    EXPECT_TRUE(m.find("window 1") != std::string::npos && m.find("point 5") != std::string::npos)
        << m;
  }
  EXPECT_THROW(rwd::training::gather_targets(s, {0}, -1), rwd::InvalidArgument);
  EXPECT_THROW(rwd::training::gather_targets(s, {0}, std::numeric_limits<Index>::max()),
               rwd::InvalidArgument);
  EXPECT_THROW(rwd::training::gather_targets(TimeSeries{}, {0}, 0), rwd::InvalidArgument);
}

}  // namespace
