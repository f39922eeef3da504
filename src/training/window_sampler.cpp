// src/training/window_sampler.cpp — see rewind/training/window_sampler.hpp.
#include "rewind/training/window_sampler.hpp"

#include "rewind/error.hpp"

namespace rwd::training {

WindowSampler::WindowSampler(Index points, Index window, Index batch, std::uint64_t seed)
    : starts_(points - window), window_(window), batch_(batch), generator_(seed) {
  if (window < 1) rwd::detail::fail<InvalidArgument>("window = ", window, " intervals must be >= 1");
  if (batch < 1) rwd::detail::fail<InvalidArgument>("batch = ", batch, " must be >= 1");
  if (starts_ < 1)
    rwd::detail::fail<InvalidArgument>("a window of ", window, " intervals needs at least ", window + 1,
                                       " points; the series has ", points);
}

Index WindowSampler::uniform_below(Index bound) {
  // Rejection sampling: accept x < limit, the largest multiple of bound representable, so every
  // residue is equally likely (Lemire 2019 discusses faster variants; this one is simple).
  const std::uint64_t b = static_cast<std::uint64_t>(bound);
  const std::uint64_t limit = UINT64_MAX - (UINT64_MAX % b + 1) % b;
  std::uint64_t x;
  do x = generator_();
  while (x > limit);
  return static_cast<Index>(x % b);
}

std::vector<Index> WindowSampler::next_batch() {
  std::vector<Index> starts(static_cast<std::size_t>(batch_));
  for (Index& s : starts) s = uniform_below(starts_);
  ++drawn_;
  return starts;
}

}  // namespace rwd::training
