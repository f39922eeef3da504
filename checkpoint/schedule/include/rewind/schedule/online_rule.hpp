// rewind/schedule/online_rule.hpp — how the online schedule places its snapshots once a run of
// unknown length has gone past β(c, 3) steps (rewind/schedule/online_placement.hpp, phase 4).
//
//   rwd::OnlineSchedule schedule(20, rwd::OnlineRule::never_above_dynamic);
//   rwd::Planner planner = rwd::with_online_rule(rwd::revolve_schedule(20),
//                                                rwd::OnlineRule::never_above_dynamic);
#pragma once

#include <string>
#include <string_view>

#include "rewind/error.hpp"

namespace rwd {

// What the placement does once the run is longer than β(c, 3) (phase 4 above).
enum class OnlineRule {
  // Keep choosing by the look-ahead of phase 3, with nothing protected: the lower worst case
  // (beyond β(c, 3) at most 1.1385 (c = 2), 1.0825 (c = 3), 1.06 (c ≥ 4) × offline revolve;
  // within 2.4 % of it from 10^5 steps on), but not pointwise below Wang et al.: more advances
  // than theirs at some l past β(c, 3).
  least_worst_case,
  // Make Wang, Moin & Iaccarino's moves: never more advances than their published schedule at
  // any l, at the price of their worst case just past each β(c, t) (up to 1.34 × offline
  // revolve).
  never_above_dynamic,
};

// "least-worst-case" | "never-above-dynamic", as the command line spells them.
inline const char* online_rule_name(OnlineRule rule) {
  return rule == OnlineRule::never_above_dynamic ? "never-above-dynamic" : "least-worst-case";
}

// The inverse of online_rule_name; InvalidArgument naming `flag` and the choices otherwise.
inline OnlineRule parse_online_rule(std::string_view text, const char* flag = "--online-rule") {
  if (text == "least-worst-case") return OnlineRule::least_worst_case;
  if (text == "never-above-dynamic") return OnlineRule::never_above_dynamic;
  detail::fail<InvalidArgument>(flag, " = '", std::string(text),
                                "' is not a rule; choose least-worst-case or never-above-dynamic");
}

}  // namespace rwd
