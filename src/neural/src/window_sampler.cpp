// src/neural/src/window_sampler.cpp — see rewind/neural/window_sampler.hpp.
#include "rewind/neural/window_sampler.hpp"

#include <limits>

#include "rewind/error.hpp"

namespace rwd::training {

using rwd::detail::fail;

WindowSampler::WindowSampler(Index points, Index window_intervals, Index batch_size,
                             std::uint64_t seed)
    : points_(points),
      window_(window_intervals),
      batch_(batch_size),
      seed_(seed),
      generator_(seed) {
  if (window_intervals < 1)
    fail<InvalidArgument>("WindowSampler: window_intervals = ", window_intervals, " must be >= 1");
  if (batch_size < 1)
    fail<InvalidArgument>("WindowSampler: batch_size = ", batch_size, " must be >= 1");
  if (points <= window_intervals)
    fail<InvalidArgument>("WindowSampler: a window of ", window_intervals, " intervals needs ",
                          window_intervals, " + 1 points, but the series has ", points);
  starts_ = points - window_intervals;
}

Index WindowSampler::uniform_below(Index bound) {
  // Rejection sampling: of the 2^64 outputs, accept the 2^64 − r lowest, r = 2^64 mod bound, a
  // multiple of bound, so every residue is hit by the same number of outputs.
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  const auto n = static_cast<std::uint64_t>(bound);
  const std::uint64_t r = (kMax % n + 1) % n;  // 2^64 mod n without overflow
  const std::uint64_t limit = kMax - r;
  std::uint64_t x = generator_();
  while (x > limit) x = generator_();
  return static_cast<Index>(x % n);
}

void WindowSampler::next_batch(std::vector<Index>& starts) {
  starts.resize(static_cast<std::size_t>(batch_));
  for (Index& s : starts) s = uniform_below(starts_);
  ++drawn_;
}

std::vector<Index> WindowSampler::next_batch() {
  std::vector<Index> starts;
  next_batch(starts);
  return starts;
}

std::vector<Window> WindowSampler::next_windows() {
  std::vector<Window> windows;
  windows.reserve(static_cast<std::size_t>(batch_));
  for (Index s : next_batch()) windows.push_back(Window{s});
  return windows;
}

namespace {

Eigen::MatrixXd gather(const TimeSeries& series, const std::vector<Index>& starts, Index offset,
                       const char* what) {
  if (series.points() < 1 || series.dimension() < 1)
    fail<InvalidArgument>(what, ": the time series is empty (", series.dimension(), " x ",
                          series.points(), ")");
  if (starts.empty())
    fail<InvalidArgument>(what, ": no window starts given (a batch needs at least one)");
  if (offset < 0) fail<InvalidArgument>(what, ": offset = ", offset, " must be >= 0");
  Eigen::MatrixXd gathered(series.dimension(), static_cast<Index>(starts.size()));
  for (std::size_t b = 0; b < starts.size(); ++b) {
    const Index s = starts[b];
    if (s < 0 || s >= series.points() || offset >= series.points() - s)
      fail<InvalidArgument>(what, ": window ", b, " starts at point ", s, "; with offset ", offset,
                            " it needs point ", s, " + ", offset, " of a series of ",
                            series.points(), " points (0 to ", series.points() - 1, ")");
    gathered.col(static_cast<Index>(b)) = series.values.col(s + offset);
  }
  return gathered;
}

}  // namespace

Eigen::MatrixXd gather_initial_states(const TimeSeries& series, const std::vector<Index>& starts) {
  return gather(series, starts, 0, "gather_initial_states");
}

Eigen::MatrixXd gather_targets(const TimeSeries& series, const std::vector<Index>& starts,
                               Index offset) {
  return gather(series, starts, offset, "gather_targets");
}

}  // namespace rwd::training
