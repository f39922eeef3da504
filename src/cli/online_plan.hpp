// src/cli/online_plan.hpp — `rewind plan --online --steps L --snapshots C [--json]`: what the
// online schedule (rwd::OnlineSchedule, for runs whose length is known only when they stop)
// costs for a run that happens to end at L, against offline revolve's minimum p(L, C).
//
//   rwd::cli::OnlinePlan plan = rwd::cli::online_plan_for_flags(flags, others);  // or refuses
//   rwd::cli::print_online_plan(std::cout, plan);   // or online_plan_json(plan).dump(2)
//
// The comparison is the library's (rwd::compare_online_with_offline,
// rewind/schedule/online_plan.hpp: the run simulated action by action, so the counts are exact,
// and the region of guarantees); this file checks the flags and prints.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "checkpoint_flags.hpp"
#include "rewind/schedule/online_plan.hpp"

namespace rwd::cli {

struct OnlinePlan {
  OnlineComparison comparison;                // the online schedule against offline revolve
  double adjoint_cost = kDefaultAdjointCost;  // --adjoint-cost, for the predicted time
};

// Checks that only --steps, --snapshots, --json and --adjoint-cost were given (plus
// `--schedule revolve`): `other_flags` names the plan-only flags given besides (e.g.
// "--state-bytes"), refused too. Then simulates. Throws InvalidArgument naming the flag.
OnlinePlan online_plan_for_flags(const CheckpointFlags& flags,
                                 const std::vector<std::string>& other_flags);

void print_online_plan(std::ostream& out, const OnlinePlan& plan);
nlohmann::ordered_json online_plan_json(const OnlinePlan& plan);

}  // namespace rwd::cli
