// Shipped tableaux satisfy their order conditions; malformed ones are refused with a message
// that names the rule.
#include "rewind/integrators/butcher_tableau.hpp"

#include <gtest/gtest.h>

#include "rewind/error.hpp"

namespace rwd {
namespace {

std::string refusal(const ButcherTableau& t) {
  try {
    t.validate();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

TEST(ButcherTableau, ShippedMethodsValidate) {
  for (const auto& name : ButcherTableau::names()) {
    SCOPED_TRACE(name);
    const ButcherTableau t = ButcherTableau::by_name(name);
    EXPECT_NO_THROW(t.validate());
    // Exactly the claimed order: the next order's conditions fail.
    EXPECT_GT(order_condition_defect(t, t.b, t.order + 1), 1e-6);
    if (t.has_embedded()) {
      EXPECT_GT(order_condition_defect(t, t.b_embedded, t.embedded_order + 1), 1e-6);
    }
  }
}

TEST(ButcherTableau, KnownOrders) {
  EXPECT_EQ(ButcherTableau::euler().order, 1);
  EXPECT_EQ(ButcherTableau::heun().order, 2);
  EXPECT_EQ(ButcherTableau::rk4().order, 4);
  EXPECT_EQ(ButcherTableau::bogacki_shampine().order, 3);
  EXPECT_EQ(ButcherTableau::dormand_prince().order, 5);
  EXPECT_EQ(ButcherTableau::tsitouras().order, 5);
  EXPECT_EQ(ButcherTableau::tsitouras().embedded_order, 4);
}

TEST(ButcherTableau, RefusesImplicitEntries) {
  ButcherTableau t = ButcherTableau::rk4();
  t.a[0] = 0.5;  // a_00 ≠ 0
  EXPECT_NE(refusal(t).find("explicit method needs a_ij = 0"), std::string::npos) << refusal(t);
}

TEST(ButcherTableau, RefusesRowSumViolation) {
  ButcherTableau t = ButcherTableau::rk4();
  t.c[1] = 0.4;
  EXPECT_NE(refusal(t).find("row-sum condition"), std::string::npos) << refusal(t);
}

TEST(ButcherTableau, RefusesOverclaimedOrder) {
  ButcherTableau t = ButcherTableau::heun();
  t.order = 3;
  EXPECT_NE(refusal(t).find("violates the order-3 conditions"), std::string::npos) << refusal(t);
}

TEST(ButcherTableau, RefusesWrongDigit) {
  ButcherTableau t = ButcherTableau::dormand_prince();
  t.b[2] += 1e-9;  // one wrong digit in a weight breaks order 1 already
  EXPECT_NE(refusal(t).find("violates the order-1 conditions"), std::string::npos) << refusal(t);
}

TEST(ButcherTableau, RefusesBadEmbedded) {
  ButcherTableau t = ButcherTableau::bogacki_shampine();
  t.b_embedded = t.b;
  EXPECT_FALSE(refusal(t).empty());
  t = ButcherTableau::bogacki_shampine();
  t.embedded_order = 3;
  EXPECT_NE(refusal(t).find("embedded_order = 3"), std::string::npos) << refusal(t);
  t = ButcherTableau::bogacki_shampine();
  t.b_embedded.pop_back();
  EXPECT_NE(refusal(t).find("embedded weights have 3 entries"), std::string::npos) << refusal(t);
}

TEST(ButcherTableau, RefusesShapeAndNonFinite) {
  ButcherTableau t = ButcherTableau::rk4();
  t.b.push_back(0.0);
  EXPECT_NE(refusal(t).find("b has 5 entries"), std::string::npos) << refusal(t);
  t = ButcherTableau::rk4();
  t.a[4] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(refusal(t).find("finite"), std::string::npos) << refusal(t);
  t = ButcherTableau::rk4();
  t.stages = 0;
  EXPECT_NE(refusal(t).find("stages = 0"), std::string::npos) << refusal(t);
}

TEST(ButcherTableau, UnknownNameListsKnownOnes) {
  try {
    ButcherTableau::by_name("rk45");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("known: euler"), std::string::npos);
  }
}

TEST(ButcherTableau, UserTableauValidates) {
  // The explicit midpoint rule, written by hand.
  ButcherTableau mid{"midpoint", 2, {0, 0, 0.5, 0}, {0, 1}, {0, 0.5}, {}, 2, 0, false};
  EXPECT_NO_THROW(mid.validate());
}

}  // namespace
}  // namespace rwd
