// The action vocabulary: factories fill kind/step/slot as the driver expects, and to_string()
// reads well in diagnostics.
#include "rewind/schedule/action.hpp"

#include <gtest/gtest.h>

namespace rwd {
namespace {

TEST(Action, FactoriesFillTheFields) {
  EXPECT_EQ(Action::advance(17), (Action{ActionKind::advance, 17, -1}));
  EXPECT_EQ(Action::store(2, 17), (Action{ActionKind::store, 17, 2}));
  EXPECT_EQ(Action::restore(1, 5), (Action{ActionKind::restore, 5, 1}));
  EXPECT_EQ(Action::reverse(4), (Action{ActionKind::reverse, 4, -1}));
  EXPECT_EQ(Action::free(2, 17), (Action{ActionKind::free, 17, 2}));
  EXPECT_EQ(Action::done(), (Action{ActionKind::done, -1, -1}));
  EXPECT_EQ(Action{}, Action::done());
  EXPECT_NE(Action::store(2, 17), Action::store(3, 17));
}

TEST(Action, ToString) {
  EXPECT_EQ(Action::advance(17).to_string(), "advance to 17");
  EXPECT_EQ(Action::store(2, 17).to_string(), "store y_17 in slot 2");
  EXPECT_EQ(Action::restore(1, 5).to_string(), "restore y_5 from slot 1");
  EXPECT_EQ(Action::reverse(4).to_string(), "reverse step 4");
  EXPECT_EQ(Action::free(2, 17).to_string(), "free slot 2 (y_17)");
  EXPECT_EQ(Action::done().to_string(), "done");
  EXPECT_EQ(Action::advance(Index{1} << 40).to_string(), "advance to 1099511627776");
  EXPECT_EQ(to_string(ActionKind::restore), "restore");
  EXPECT_EQ(to_string(ActionKind::free), "free");
  const Action bogus{static_cast<ActionKind>(42), 3, 1};
  EXPECT_NE(bogus.to_string().find("unknown"), std::string::npos);
}

}  // namespace
}  // namespace rwd
