// Checking what an error says, for the tests of refusals ("nothing silent": bad input is refused
// with a message that names the value and the rule).
//
//   const std::string message = rwd::testing::error_message<rwd::InvalidArgument>(
//       [] { rwd::revolve_advances(10, 0); });
//   EXPECT_TRUE(rwd::testing::contains(message, "snapshots c = 0")) << message;
//   rwd::testing::expect_message(message, "must be >= 1");   // the same, with its own failure text
//
// error_message adds a test failure when the call throws nothing or throws an exception of
// another type, so a wrong type is never mistaken for the right refusal.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <string>
#include <utility>

namespace rwd::testing {

// The message of the E that `call` throws; "" (and a test failure) if it throws nothing, or the
// other exception's message (and a test failure) if it throws something else.
template <class E, class Call>
std::string error_message(Call&& call) {
  try {
    std::forward<Call>(call)();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "the call threw an exception of another type: " << e.what();
    return e.what();
  }
  ADD_FAILURE() << "the call threw nothing";
  return "";
}

// Whether `text` contains `part`.
inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Expects `message` to contain `part`, saying which is missing from what.
inline void expect_message(const std::string& message, const std::string& part) {
  EXPECT_TRUE(contains(message, part)) << "'" << message << "' lacks '" << part << "'";
}

}  // namespace rwd::testing
