// PlanRequest::validate names the field it refuses: an InvalidPlanRequest whose field() is the
// member, whose message starts with that member's name and goes on with the value and the rule,
// and whose rule() is that message less the name (what a command line puts its flag in front of).
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "rewind/error.hpp"
#include "rewind/schedule/checkpoint_plan.hpp"
#include "rewind/schedule/invalid_plan_request.hpp"

namespace rwd {
namespace {

struct Refusal {
  PlanField field;
  std::string message;
  std::string rule;
};

// The refusal of `request`; a test failure when it is accepted.
Refusal refusal_of(const PlanRequest& request) {
  try {
    request.validate();
  } catch (const InvalidPlanRequest& e) {
    return {e.field(), e.what(), e.rule()};
  }
  ADD_FAILURE() << "accepted";
  return {PlanField::family, "", ""};
}

void expect_refusal(const PlanRequest& request, PlanField field, const std::string& says) {
  const Refusal r = refusal_of(request);
  EXPECT_EQ(r.field, field) << r.message;
  EXPECT_EQ(r.message, std::string(plan_field_name(field)) + r.rule);
  EXPECT_EQ(r.message.rfind(plan_field_name(field), 0), 0u) << r.message;
  EXPECT_NE(r.message.find(says), std::string::npos)
      << "'" << r.message << "' lacks '" << says << "'";
}

TEST(PlanRequestValidate, NamesEveryFieldItRefuses) {
  PlanRequest custom;
  custom.family = &custom_family();
  expect_refusal(custom, PlanField::family, "family = custom is planned with CheckpointPlan::of");
  PlanRequest online = PlanRequest::revolve(3);
  online.family = &online_family();
  expect_refusal(online, PlanField::family, "family = online needs no plan");
  PlanRequest none;
  none.family = nullptr;
  expect_refusal(none, PlanField::family, "family is missing");

  expect_refusal(PlanRequest::revolve(0), PlanField::budget, "budget = 0 must be >= 1");
  expect_refusal(PlanRequest::revolve(Index{1} << 31), PlanField::budget,
                 "budget = 2147483648 must be <= 2147483647");
  expect_refusal(PlanRequest{}, PlanField::budget, "budget is missing: revolve needs a snapshot");
  PlanRequest uniform;
  uniform.family = &uniform_family();
  expect_refusal(uniform, PlanField::budget, "needs an interval, or a budget");

  PlanRequest interval = PlanRequest::revolve(3);
  interval.interval = 4;
  expect_refusal(interval, PlanField::interval,
                 "interval does not apply to the revolve schedule (it applies to uniform)");
  expect_refusal(PlanRequest::uniform(0), PlanField::interval, "interval = 0 must be >= 1");

  const CostModel costs;
  PlanRequest two = PlanRequest::two_level(4, 8, costs);
  two.memory_slots.reset();
  expect_refusal(two, PlanField::memory_slots, "memory_slots is missing");
  two = PlanRequest::two_level(4, 8, costs);
  two.disk_slots.reset();
  expect_refusal(two, PlanField::disk_slots, "disk_slots is missing");
  expect_refusal(PlanRequest::two_level(0, 8, costs), PlanField::memory_slots,
                 "memory_slots = 0 must lie in [1, 1048576] for the two-level schedule");
  expect_refusal(PlanRequest::two_level(4, -1, costs), PlanField::disk_slots,
                 "disk_slots = -1 must lie in [0, 16777216]");
  two = PlanRequest::two_level(4, 8, costs);
  two.budget = 5;
  expect_refusal(two, PlanField::budget, "budget does not apply to the two-level schedule");
  CostModel negative;
  negative.disk_write_time = -1.0;
  expect_refusal(PlanRequest::two_level(4, 8, negative), PlanField::costs,
                 "costs: cost model: disk_write_time = -1 must be finite and >= 0");

  expect_refusal(PlanRequest::three_level(Index{1} << 21, 1, 0, costs), PlanField::memory_slots,
                 "memory_slots = 2097152 must lie in [0, 1048576] for the three-level");
  expect_refusal(PlanRequest::three_level(1, (Index{1} << 20) + 1, 0, costs), PlanField::host_slots,
                 "host_slots = 1048577 must lie in [0, 1048576]");
  expect_refusal(PlanRequest::three_level(1, 1, (Index{1} << 24) + 1, costs), PlanField::disk_slots,
                 "disk_slots = 16777217 must lie in [0, 16777216]");
  expect_refusal(PlanRequest::three_level(0, 0, 5, costs), PlanField::memory_slots,
                 "needs a device or host slot");
  PlanRequest three = PlanRequest::three_level(1, 1, 0, costs);
  three.host_slots.reset();
  expect_refusal(three, PlanField::host_slots, "host_slots is missing");
  three = PlanRequest::three_level(1, 1, 0, costs);
  three.budget = 3;
  expect_refusal(three, PlanField::budget, "does not apply to the three-level schedule");
  three = PlanRequest::three_level(1, 1, 0, costs);
  three.all_on_disk = true;
  expect_refusal(three, PlanField::all_on_disk, "places its own disk snapshots");

  PlanRequest host = PlanRequest::revolve(3);
  host.host_slots = 2;
  expect_refusal(host, PlanField::host_slots,
                 "host_slots does not apply to the revolve schedule (it applies to three-level)");
  PlanRequest disk = PlanRequest::revolve(3);
  disk.disk_slots = 2;
  expect_refusal(disk, PlanField::disk_slots,
                 "disk_slots does not apply to the revolve schedule (it applies to two-level or "
                 "three-level)");
  PlanRequest on_disk = PlanRequest::revolve(3);
  on_disk.all_on_disk = true;
  on_disk.costs.disk_read_time = std::numeric_limits<double>::infinity();
  expect_refusal(on_disk, PlanField::costs, "disk_read_time = inf");
}

TEST(PlanRequestValidate, AcceptsTheLimitsAndIsAnInvalidArgument) {
  const CostModel costs;
  EXPECT_NO_THROW(PlanRequest::revolve(std::numeric_limits<int>::max()).validate());
  EXPECT_NO_THROW(PlanRequest::two_level(1 << 20, 1 << 24, costs).validate());
  EXPECT_NO_THROW(PlanRequest::three_level(1 << 20, 1 << 20, 1 << 24, costs).validate());
  EXPECT_NO_THROW(PlanRequest::three_level(0, 1, 0, costs).validate());
  EXPECT_NO_THROW(PlanRequest::uniform(1).validate());
  EXPECT_NO_THROW(PlanRequest::store_all().validate());
  EXPECT_THROW(PlanRequest::revolve(0).validate(), InvalidArgument);  // one catch for all errors
  const std::vector<PlanField> fields = {
      PlanField::family,     PlanField::budget,     PlanField::interval, PlanField::memory_slots,
      PlanField::disk_slots, PlanField::host_slots, PlanField::costs,    PlanField::all_on_disk};
  const std::vector<std::string> names = {"family",     "budget",     "interval", "memory_slots",
                                          "disk_slots", "host_slots", "costs",    "all_on_disk"};
  for (std::size_t i = 0; i < fields.size(); ++i) EXPECT_EQ(plan_field_name(fields[i]), names[i]);
}

}  // namespace
}  // namespace rwd
