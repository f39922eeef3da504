// src/neural/src/batch_exchange.cpp — see rewind/neural/batch_exchange.hpp.
#include "rewind/neural/batch_exchange.hpp"

#include <algorithm>

#include "rewind/error.hpp"

namespace rwd::training {

void SingleProcessExchange::all_gather(std::span<const double> mine, std::span<const int> counts,
                                       std::span<double> all) const {
  if (counts.size() != 1 || counts[0] != static_cast<int>(mine.size()) || all.size() != mine.size())
    rwd::detail::fail<InvalidArgument>("one-process all_gather: ", mine.size(),
                                       " values, counts for ", counts.size(),
                                       " processes and room for ", all.size(), " do not agree");
  std::copy(mine.begin(), mine.end(), all.begin());
}

const BatchExchange& single_process() {
  static const SingleProcessExchange exchange;
  return exchange;
}

WindowRange windows_of_process(Index batch, int rank, int size) {
  if (size < 1) rwd::detail::fail<InvalidArgument>("a process group of ", size, " processes");
  if (rank < 0 || rank >= size)
    rwd::detail::fail<InvalidArgument>("process ", rank, " is not one of 0 to ", size - 1);
  if (batch < 1) rwd::detail::fail<InvalidArgument>("batch = ", batch, " must be >= 1");
  if (batch < size)
    rwd::detail::fail<InvalidArgument>("batch ", batch, " windows cannot be split over ", size,
                                       " ranks: every rank needs at least one window (use a "
                                       "batch of at least ",
                                       size, " or fewer ranks)");
  const Index q = batch / size, r = batch % size;
  const Index begin = rank * q + std::min<Index>(rank, r);
  return {begin, begin + q + (rank < r ? 1 : 0)};
}

}  // namespace rwd::training
