// rewind's online schedule against the published dynamic checkpointing of Wang, Moin &
// Iaccarino (SIAM J. Sci. Comput. 31(4), 2009; rwd::DynamicCheckpointingSchedule), in advances:
// for every l ≤ 2000 and c = 2 … 20, and sampled l from 10^4 to a limit, the worst ratio
// rewind-online / WMI and the number of l where rewind does more — the tables of
// bench/results/online_checkpointing.md ("Against the published online algorithm").
//
//   online_dynamic_table [max_l = 1000000]
//
// rewind: OnlinePlacement::advances_if_ended_here (equal to rwd::simulate_online on the validated
// stream, online_schedule_test). WMI: for l ≤ 2000 the validated action stream (rwd::simulate,
// which throws on a broken rule) with the probe, checked equal to dynamic_checkpointing_advances;
// without the probe and for the sampled l, dynamic_checkpointing_advances (checked equal to the
// validated stream for l ≤ 400 by dynamic_checkpointing_schedule_test).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "rewind/schedule/dynamic_checkpointing_schedule.hpp"
#include "rewind/schedule/online_placement.hpp"
#include "rewind/schedule/revolve_cost.hpp"
#include "rewind/schedule/schedule_simulator.hpp"

namespace {

// The worst ratio a / b over the l seen, where, and how many l had a > b (and by how much at most).
struct Compare {
  double ratio = 0.0;
  rwd::Index at = 0;
  rwd::Index more = 0, seen = 0, most_extra = 0;
  void see(rwd::Index a, rwd::Index b, rwd::Index l) {
    ++seen;
    const double r = b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 1.0;
    if (a > b) {
      ++more;
      if (a - b > most_extra) most_extra = a - b;
    }
    if (r > ratio) {
      ratio = r;
      at = l;
    }
  }
  std::string cell() const {
    if (seen == 0) return "—";
    char text[96];
    std::snprintf(text, sizeof text, "%.4f (l = %lld)", ratio, static_cast<long long>(at));
    return text;
  }
  std::string count() const {
    char text[64];
    std::snprintf(text, sizeof text, "%lld / %lld", static_cast<long long>(more),
                  static_cast<long long>(seen));
    return text;
  }
};

}  // namespace

int main(int argc, char** argv) {
  const rwd::Index max_l = argc > 1 ? std::atoll(argv[1]) : 1000000;
  if (max_l < 10000) {
    std::fprintf(stderr, "max_l = %lld must be >= 10000\n", static_cast<long long>(max_l));
    return 2;
  }
  // Sampled lengths: 10^4 · 10^(k/4) up to max_l.
  std::vector<rwd::Index> samples;
  for (int k = 0;; ++k) {
    const auto l = static_cast<rwd::Index>(std::llround(1e4 * std::pow(10.0, k / 4.0)));
    if (l > max_l) break;
    samples.push_back(l);
  }
  const rwd::SimulatorOptions no_limit{.max_actions = rwd::Index{1} << 60};

  std::printf(
      "| c | β(c,3) | online / WMI, l ≤ β(c,3) | online > WMI | online / WMI, β(c,3) < l ≤ 2000 | "
      "online > WMI | online / WMI, %zu sampled l in [10^4, %lld] | online > WMI | "
      "online / WMI without probe, l ≤ 2000 | online > it | WMI / revolve, l ≤ β(c,3) |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n",
      samples.size(), static_cast<long long>(max_l));
  Compare all, all_no_probe;
  for (int c = 2; c <= 20; ++c) {
    const rwd::Index beta3 = rwd::revolve_beta(c, 3);
    Compare low, mid, large, no_probe, wmi_offline;
    rwd::OnlinePlacement placement(c);
    for (rwd::Index l = 1; l <= 2000; ++l) {
      if (l >= 2) placement.decide(l - 2);
      const rwd::Index online = l >= 2 ? placement.advances_if_ended_here() : 0;
      rwd::DynamicCheckpointingSchedule wmi(l, c);
      const rwd::Index dynamic = rwd::simulate(wmi, no_limit).advances;  // validated
      if (dynamic != rwd::dynamic_checkpointing_advances(l, c)) {
        std::fprintf(stderr, "l = %lld, c = %d: the counter disagrees with the stream\n",
                     static_cast<long long>(l), c);
        return 1;
      }
      const rwd::Index dynamic_no_probe = rwd::dynamic_checkpointing_advances(l, c, false);
      (l <= beta3 ? low : mid).see(online, dynamic, l);
      if (l <= beta3) wmi_offline.see(dynamic, rwd::revolve_advances(l, c), l);
      no_probe.see(online, dynamic_no_probe, l);
      all.see(online, dynamic, l);
      all_no_probe.see(online, dynamic_no_probe, l);
    }
    // Sampled lengths: the placement runs on to each in turn.
    rwd::Index n = 1998;  // the last step decided above
    for (const rwd::Index l : samples) {
      while (n < l - 2) placement.decide(++n);
      large.see(placement.advances_if_ended_here(), rwd::dynamic_checkpointing_advances(l, c), l);
    }
    std::printf("| %d | %lld | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", c,
                static_cast<long long>(beta3), low.cell().c_str(), low.count().c_str(),
                mid.cell().c_str(), mid.count().c_str(), large.cell().c_str(),
                large.count().c_str(), no_probe.cell().c_str(), no_probe.count().c_str(),
                wmi_offline.cell().c_str());
    std::fflush(stdout);
  }
  std::printf(
      "\nAll l ≤ 2000, c = 2 … 20: online does more than WMI at %lld of %lld (l, c), at most %lld "
      "advances more, worst ratio %s; more than WMI without the probe at %lld, worst %s.\n",
      static_cast<long long>(all.more), static_cast<long long>(all.seen),
      static_cast<long long>(all.most_extra), all.cell().c_str(),
      static_cast<long long>(all_no_probe.more), all_no_probe.cell().c_str());
  return 0;
}
