// rewind/training/window_sampler.hpp — seeded minibatches of windows of a time series.
//
//   rwd::training::WindowSampler sampler(/*points=*/1000, /*window=*/10, /*batch=*/20, /*seed=*/1);
//   std::vector<rwd::Index> starts = sampler.next_batch();   // 20 starts in [0, 989]
//
// A window of W intervals starting at s covers points s, …, s + W. Starts are uniform on
// [0, points − 1 − W], drawn with replacement. The sequence is the same on every platform for a
// seed: the generator is std::mt19937_64 (its output is fixed by the standard) and the mapping to
// a range is done here by rejection (unbiased), not by std::uniform_int_distribution (whose
// algorithm is left to the library).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "rewind/types.hpp"

namespace rwd::training {

class WindowSampler {
 public:
  WindowSampler(Index points, Index window, Index batch, std::uint64_t seed);
  std::vector<Index> next_batch();
  Index batches_drawn() const { return drawn_; }
  Index batch() const { return batch_; }
  Index window() const { return window_; }

 private:
  Index uniform_below(Index bound);  // uniform on [0, bound)
  Index starts_ = 0;                 // number of admissible starts
  Index window_ = 0;
  Index batch_ = 0;
  Index drawn_ = 0;
  std::mt19937_64 generator_;
};

}  // namespace rwd::training
