// rewind/schedule/schedule_registry.hpp — the schedule families known by name: rewind's own
// (rewind/schedule/builtin_schedule_families.hpp) and any a program registers. A command line or
// a configuration file finds a family by the name a person typed; plan_checkpoints itself needs
// no registry (a request holds the family's address).
//
//   const rwd::ScheduleFamily& f = rwd::find_schedule_family("two_level");   // "two-level"
//   rwd::find_schedule_family("revolv");
//       // InvalidArgument: "'revolv' is not a schedule; did you mean revolve? (registered:
//       //                   revolve, uniform, store-all, two-level, three-level, custom, online)"
//   rwd::register_schedule_family(std::make_shared<MyFamily>());   // found from now on
//   for (const rwd::ScheduleFamily* family : rwd::schedule_families()) ...   // in order
//
// Names are matched in lower case with '_' read as '-'. A family is registered for the rest of
// the program (never removed, so its address stays valid); registering is thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rewind/schedule/schedule_family.hpp"

namespace rwd {

// Registers `family` under its name and aliases, after those registered before. Throws
// InvalidArgument for a null family, an empty or malformed name (lower-case letters, digits and
// '-'), or a name or alias some family already has.
void register_schedule_family(std::shared_ptr<const ScheduleFamily> family);

// The family registered under `name` or one of its aliases; nullptr when none.
const ScheduleFamily* schedule_family_named(std::string_view name);

// The family registered under `name` or one of its aliases. Throws InvalidArgument naming the
// text, the closest registered name when one is near ("did you mean"), and every registered name.
const ScheduleFamily& find_schedule_family(std::string_view name);

// Every registered family, rewind's own first, in the order registered.
std::vector<const ScheduleFamily*> schedule_families();

// The registered names, in order, joined by ", " (for a help text). only_plannable: leave out
// the families that are not planned from requests (ScheduleFamily::not_planned_from_requests).
std::string schedule_family_names(bool only_plannable = false);

}  // namespace rwd
