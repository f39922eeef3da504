// The warning sink (rewind/warning.hpp): by default a warning is one "rewind: warning: ..." line
// on stderr; a handler redirects warnings and hands back the one it replaced; a scoped handler
// restores it, also when nested; and handlers installed and called from many threads at once
// lose no warning, never run two at a time, and are not called once replaced.
#include "rewind/warning.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace rwd {
namespace {

// Every test leaves the default handler installed, as it found it.
class WarningSink : public ::testing::Test {
 protected:
  void TearDown() override { set_warning_handler(nullptr); }
};

std::string stderr_of_warning(const std::string& message) {
  ::testing::internal::CaptureStderr();
  warn("test", message);
  return ::testing::internal::GetCapturedStderr();
}

TEST_F(WarningSink, DefaultWritesOneLineToStderr) {
  EXPECT_EQ(stderr_of_warning("step 3 drifted"), "rewind: warning: step 3 drifted\n");
}

TEST_F(WarningSink, MessageIsBuiltFromPiecesWithDefaultPrecision) {
  std::vector<Warning> seen;
  ScopedWarningHandler capture([&](const Warning& w) { seen.push_back(w); });
  warn("drift monitor", "step ", 21, " (t = ", 0.21000000000000002, ") drift ", 1.234567891e-13);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].source, "drift monitor");
  EXPECT_EQ(seen[0].message, "step 21 (t = 0.21) drift 1.23457e-13");
}

TEST_F(WarningSink, HandlerRedirectsAndSetReturnsThePrevious) {
  std::vector<std::string> first, second;
  const WarningHandler original =
      set_warning_handler([&](const Warning& w) { first.push_back(w.message); });
  ASSERT_TRUE(original);
  EXPECT_EQ(stderr_of_warning("a"), "");
  const WarningHandler replaced =
      set_warning_handler([&](const Warning& w) { second.push_back(w.message); });
  warn("test", "b");
  replaced(Warning{"test", "c"});  // the handler handed back is the first one
  EXPECT_EQ(first, (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(second, (std::vector<std::string>{"b"}));

  set_warning_handler(original);  // the default, as handed back at first
  EXPECT_EQ(stderr_of_warning("d"), "rewind: warning: d\n");
}

TEST_F(WarningSink, EmptyHandlerMeansTheDefault) {
  set_warning_handler([](const Warning&) {});
  EXPECT_EQ(stderr_of_warning("dropped"), "");
  set_warning_handler(nullptr);
  EXPECT_EQ(stderr_of_warning("shown"), "rewind: warning: shown\n");
}

TEST_F(WarningSink, ScopedHandlersNestAndRestore) {
  std::vector<std::string> outer, inner;
  {
    ScopedWarningHandler a([&](const Warning& w) { outer.push_back(w.message); });
    warn("test", 1);
    {
      ScopedWarningHandler b([&](const Warning& w) { inner.push_back(w.message); });
      warn("test", 2);
    }
    warn("test", 3);
  }
  EXPECT_EQ(outer, (std::vector<std::string>{"1", "3"}));
  EXPECT_EQ(inner, (std::vector<std::string>{"2"}));
  EXPECT_EQ(stderr_of_warning("4"), "rewind: warning: 4\n");
}

TEST_F(WarningSink, ScopedHandlerRestoresWhenTheHandlerThrows) {
  try {
    ScopedWarningHandler strict([](const Warning& w) { throw std::runtime_error(w.message); });
    warn("test", "now an error");
    ADD_FAILURE() << "the handler's exception did not leave warn";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "now an error");
  }
  EXPECT_EQ(stderr_of_warning("back"), "rewind: warning: back\n");
}

TEST_F(WarningSink, HandlerMayReplaceItselfAndWarn) {
  std::vector<std::string> seen;
  set_warning_handler([&](const Warning& w) {
    seen.push_back("first: " + w.message);
    set_warning_handler([&](const Warning& v) { seen.push_back("second: " + v.message); });
    warn("test", "from inside");  // goes to the new handler; no deadlock
  });
  warn("test", "x");
  warn("test", "y");
  EXPECT_EQ(seen, (std::vector<std::string>{"first: x", "second: from inside", "second: y"}));
}

TEST_F(WarningSink, InstallingAndWarningFromManyThreads) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 2000;
  std::atomic<int> delivered{0};
  std::atomic<int> running{0};
  std::atomic<bool> overlapped{false};
  // Counts the warning and notices if another handler call is running at the same time.
  const auto counting = [&](const Warning&) {
    if (running.fetch_add(1) != 0) overlapped = true;
    delivered.fetch_add(1);
    running.fetch_sub(1);
  };
  set_warning_handler(counting);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      for (int r = 0; r < kRounds; ++r) {
        if (i % 2 == 0 && r % 10 == 0) {
          ScopedWarningHandler scoped(counting);
          warn("thread", i, " round ", r);
        } else if (r % 50 == 0) {
          set_warning_handler(counting);
        } else {
          warn("thread", i, " round ", r);
        }
      }
    });
  for (std::thread& thread : threads) thread.join();
  // Only the rounds that install without a scope do not warn.
  int expected = 0;
  for (int i = 0; i < kThreads; ++i)
    for (int r = 0; r < kRounds; ++r) expected += (i % 2 == 0 && r % 10 == 0) || r % 50 != 0;
  EXPECT_EQ(delivered.load(), expected);
  EXPECT_FALSE(overlapped.load()) << "two handler calls ran at the same time";
}

TEST_F(WarningSink, ReplacedHandlerIsNotCalledOnceSetReturns) {
  std::atomic<bool> replaced{false};
  std::atomic<bool> late_call{false};
  std::atomic<int> old_calls{0};
  set_warning_handler([&](const Warning&) {
    if (replaced.load()) late_call = true;
    old_calls.fetch_add(1);
  });
  std::atomic<bool> stop{false};
  std::thread warner([&] {
    while (!stop.load()) warn("thread", "tick");
  });
  while (old_calls.load() < 100) std::this_thread::yield();
  set_warning_handler([](const Warning&) {});
  replaced = true;
  for (int i = 0; i < 1000; ++i) std::this_thread::yield();
  stop = true;
  warner.join();
  EXPECT_FALSE(late_call.load()) << "the replaced handler ran after set_warning_handler returned";
}

}  // namespace
}  // namespace rwd
