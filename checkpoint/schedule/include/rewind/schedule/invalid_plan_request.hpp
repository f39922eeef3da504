// rewind/schedule/invalid_plan_request.hpp — the error rwd::PlanRequest::validate throws: an
// InvalidArgument that also says, as a value, which field of the request broke which rule.
//
//   try {
//     request.validate();
//   } catch (const rwd::InvalidPlanRequest& e) {
//     e.field();   // rwd::PlanField::budget
//     e.what();    // "budget = 0 must be >= 1"
//     e.rule();    // " = 0 must be >= 1": the message after the field's name
//   }
//
// A program that knows the fields by other names (a command line's flags, a configuration file's
// keys) puts its own name in front of rule() and keeps the library's wording of the rule itself:
// every message starts with the field's name (plan_field_name), followed by the value where one
// is wrong and the rule it breaks.
#pragma once

#include <string>

#include "rewind/error.hpp"

namespace rwd {

// The fields of rwd::PlanRequest, by member name.
enum class PlanField {
  family,
  budget,
  interval,
  memory_slots,
  disk_slots,
  host_slots,
  costs,
  all_on_disk
};

// The member's name: "family", "budget", "interval", "memory_slots", "disk_slots", "host_slots",
// "costs", "all_on_disk".
const char* plan_field_name(PlanField field);

class InvalidPlanRequest : public InvalidArgument {
 public:
  // The message is plan_field_name(field) followed by `rule` (which starts with " = value" or a
  // space, or ": " for a field whose own check explains itself, as the cost model's does).
  InvalidPlanRequest(PlanField field, const std::string& rule)
      : InvalidArgument(plan_field_name(field) + rule), field_(field), rule_(rule) {}

  PlanField field() const { return field_; }
  // The message after the field's name.
  const std::string& rule() const { return rule_; }

 private:
  PlanField field_;
  std::string rule_;
};

}  // namespace rwd
