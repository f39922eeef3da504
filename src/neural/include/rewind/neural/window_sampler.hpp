// rewind/neural/window_sampler.hpp — seeded minibatches of windows of a time series, and the
// gathering of their initial states and targets.
//
//   rwd::training::WindowSampler sampler(data.points(), /*window_intervals=*/10, /*batch_size=*/20,
//                                        /*seed=*/1);
//   std::vector<rwd::Index> starts = sampler.next_batch();         // 20 starts in [0, points − 11]
//   Eigen::MatrixXd y0 = rwd::training::gather_initial_states(data, starts);   // D × 20
//   Eigen::MatrixXd y3 = rwd::training::gather_targets(data, starts, 3);       // y(t_{s_b + 3})
//
// A window of W intervals starting at s covers the W + 1 points s, s + 1, …, s + W. Starts are
// drawn uniformly on [0, points − 1 − W], independently (with replacement).
//
// The sequence is the same on every platform and standard library for a seed: the generator is
// std::mt19937_64 seeded with `seed` (its output is fixed by the C++ standard), and the mapping
// to [0, n) is done here, not by std::uniform_int_distribution (whose algorithm each library
// chooses). The mapping, to reproduce elsewhere: draw x = next 64-bit output; with
// r = 2^64 mod n, reject x > 2^64 − 1 − r and draw again; else the start is x mod n. Accepted
// x are equally many for every residue, so the result is exactly uniform.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include <Eigen/Dense>

#include "rewind/neural/time_series.hpp"
#include "rewind/types.hpp"

namespace rwd::training {

// One window of a minibatch: points start, …, start + W (W = the sampler's window_intervals()).
struct Window {
  Index start = 0;
};

class WindowSampler {
 public:
  // points: of the series (>= window_intervals + 1); window_intervals: W >= 1;
  // batch_size: B >= 1 windows per minibatch. Throws rwd::InvalidArgument otherwise.
  WindowSampler(Index points, Index window_intervals, Index batch_size, std::uint64_t seed);

  // B start indices, uniform on [0, points − 1 − W], with replacement.
  std::vector<Index> next_batch();
  // The same into `starts` (resized to B): no allocation once it has the capacity.
  void next_batch(std::vector<Index>& starts);
  // The same as windows.
  std::vector<Window> next_windows();

  Index batches_drawn() const { return drawn_; }
  Index points() const { return points_; }
  Index window_intervals() const { return window_; }
  Index batch_size() const { return batch_; }
  Index start_count() const { return starts_; }  // points − W: the number of possible starts
  std::uint64_t seed() const { return seed_; }

  // Shorter names, as the trainer uses them.
  Index window() const { return window_; }
  Index batch() const { return batch_; }

 private:
  Index uniform_below(Index bound);  // uniform on [0, bound), bound >= 1

  Index points_ = 0;
  Index window_ = 0;
  Index batch_ = 0;
  Index starts_ = 0;
  std::uint64_t seed_ = 0;
  Index drawn_ = 0;
  std::mt19937_64 generator_;
};

// dimension × B: column b is the series' value at point starts[b].
Eigen::MatrixXd gather_initial_states(const TimeSeries& series, const std::vector<Index>& starts);

// dimension × B: column b is the series' value at point starts[b] + offset (offset = k gives the
// k-th target of every window; offset 0 is the initial state). Every starts[b] + offset must be
// a point of the series.
Eigen::MatrixXd gather_targets(const TimeSeries& series, const std::vector<Index>& starts,
                               Index offset);

}  // namespace rwd::training
