// rewind/edit_distance.hpp — how far apart two names are, for the "did you mean" of an error
// that refuses a name (an unknown schedule family, an unknown flag of the command line).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <vector>

namespace rwd {

// The Levenshtein distance between a and b: the fewest insertions, deletions and substitutions
// of one character (each counting 1) that turn a into b. O(|a|·|b|) time, O(|b|) memory.
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace rwd
