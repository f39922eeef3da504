// checkpoint/schedule/src/cost_needs.cpp — see rewind/schedule/cost_needs.hpp.
#include "rewind/schedule/cost_needs.hpp"

#include "rewind/schedule/checkpoint_plan.hpp"

namespace rwd {

CostNeeds costs_to_measure(const PlanRequest& request, const GivenCosts& given, bool stage_aware) {
  CostNeeds needs = request.family->costs_to_measure(request, given);
  // The stage chooser weighs a snapshot copy against the step (rwd::choose_stage_plan).
  if (stage_aware && !given.copy) needs.memory_copies = true;
  return needs;
}

CostModel with_given_costs(CostModel base, const CostNeeds& measured_fields,
                           const CostModel& measured, const GivenCosts& given) {
  if (measured_fields.any()) base.step_time = 1.0;  // measured costs are in forward steps
  if (measured_fields.memory_copies) {
    base.write_time = measured.write_time;
    base.read_time = measured.read_time;
  }
  if (measured_fields.host_copies) {
    base.host_write_time = measured.host_write_time;
    base.host_read_time = measured.host_read_time;
  }
  if (measured_fields.disk) {
    base.disk_write_time = measured.disk_write_time;
    base.disk_read_time = measured.disk_read_time;
  }
  if (given.copy) base.write_time = base.read_time = *given.copy;
  if (given.disk_write) base.disk_write_time = *given.disk_write;
  if (given.disk_read) base.disk_read_time = *given.disk_read;
  return base;
}

}  // namespace rwd
