// A GPU's snapshot costs in forward steps, for tests of three-level plans: device copies almost
// free, pinned host copies (PCIe) dearer, disk dearest; the adjoint part of a reverse step 1.5.
#pragma once

#include "rewind/schedule/schedule_simulator.hpp"

namespace rwd::testing {

inline CostModel gpu_like_costs() {
  CostModel c;
  c.adjoint_cost_factor = 1.5;
  c.write_time = 0.02;
  c.read_time = 0.02;
  c.host_write_time = 0.4;
  c.host_read_time = 0.3;
  c.disk_write_time = 4.0;
  c.disk_read_time = 3.0;
  return c;
}

}  // namespace rwd::testing
