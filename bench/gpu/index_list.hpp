// bench/gpu/index_list.hpp — "256,1024,4096" as {256, 1024, 4096}, for the GPU benchmarks'
// list options (--sizes, --batches, --layers).
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "rewind/types.hpp"

namespace rwd::bench {

inline std::vector<Index> parse_index_list(const std::string& text) {
  std::vector<Index> values;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) values.push_back(std::stoll(item));
  return values;
}

}  // namespace rwd::bench
