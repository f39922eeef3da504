// The online schedule's advances against offline revolve's minimum p(l, c), for every run length
// l up to a limit and c = 2 … 20: the worst ratio in each region of l (β(c, r) = C(c + r, c)),
// as the markdown table of bench/results/online_checkpointing.md.
//
//   online_checkpointing_table [max_l = 1000000]
//
// One forward pass per c gives every l ≥ 2: OnlinePlacement::advances_if_ended_here() after
// deciding step n is the cost of the run that stops at l = n + 2, which online_schedule_test checks
// equal to what rwd::simulate_online counts on the validated action stream.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "rewind/schedule/online_placement.hpp"
#include "rewind/schedule/revolve_cost.hpp"

namespace {

struct Worst {
  double ratio = 0.0;
  rwd::Index at = 0;
  rwd::Index extra = 0;  // most advances above p(l, c)
  bool seen = false;
  void see(rwd::Index advances, rwd::Index optimum, rwd::Index l) {
    const double r =
        optimum > 0 ? static_cast<double>(advances) / static_cast<double>(optimum) : 1.0;
    seen = true;
    if (advances - optimum > extra) extra = advances - optimum;
    if (r > ratio) {
      ratio = r;
      at = l;
    }
  }
  std::string cell(bool with_extra) const {
    if (!seen) return "—";
    char text[96];
    if (with_extra)
      std::snprintf(text, sizeof text, "%.4f (l = %lld; +%lld)", ratio, static_cast<long long>(at),
                    static_cast<long long>(extra));
    else
      std::snprintf(text, sizeof text, "%.4f (l = %lld)", ratio, static_cast<long long>(at));
    return text;
  }
};

}  // namespace

int main(int argc, char** argv) {
  const rwd::Index max_l = argc > 1 ? std::atoll(argv[1]) : 1000000;
  if (max_l < 2000) {
    std::fprintf(stderr, "max_l = %lld must be >= 2000\n", static_cast<long long>(max_l));
    return 2;
  }
  std::printf(
      "| c | β(c,2) | l ≤ β(c,2) | β(c,3) | β(c,2) < l ≤ β(c,3) | β(c,3) < l ≤ 2000 | "
      "10^5 ≤ l ≤ %lld |\n|---|---|---|---|---|---|---|\n",
      static_cast<long long>(max_l));
  for (int c = 2; c <= 20; ++c) {
    const rwd::Index beta2 = rwd::revolve_beta(c, 2), beta3 = rwd::revolve_beta(c, 3);
    Worst r2, r3, to2000, large;
    rwd::OnlinePlacement placement(c);
    for (rwd::Index n = 0; n < max_l; ++n) {
      placement.decide(n);
      const rwd::Index l = n + 2;
      const rwd::Index advances = placement.advances_if_ended_here();
      const rwd::Index optimum = rwd::revolve_advances(l, c);
      if (l <= beta2)
        r2.see(advances, optimum, l);
      else if (l <= beta3)
        r3.see(advances, optimum, l);
      else if (l <= 2000)
        to2000.see(advances, optimum, l);
      if (l >= 100000) large.see(advances, optimum, l);
    }
    std::printf("| %d | %lld | %s | %lld | %s | %s | %s |\n", c, static_cast<long long>(beta2),
                r2.cell(true).c_str(), static_cast<long long>(beta3), r3.cell(true).c_str(),
                to2000.cell(false).c_str(), large.cell(false).c_str());
  }
  return 0;
}
