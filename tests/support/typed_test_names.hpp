// Names for the instances of a GoogleTest typed suite, from each type's `name` member made
// identifier-like ("gray-scott" -> "gray_scott", "thrust-cpp" -> "thrust_cpp"):
//
//   TYPED_TEST_SUITE(ProblemContract, Problems, rwd::testing::NameMember);
//   // ProblemContract/gray_scott.OutputsAreOverwrittenNotAccumulated, …
#pragma once

#include <algorithm>
#include <string>

namespace rwd::testing {

struct NameMember {
  template <class T>
  static std::string GetName(int) {
    std::string s = T::name;
    std::replace(s.begin(), s.end(), '-', '_');
    return s;
  }
};

}  // namespace rwd::testing
