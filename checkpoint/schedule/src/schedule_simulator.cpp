// ScheduleValidator, simulate() and the cost model (rewind/schedule/schedule_simulator.hpp).
#include "rewind/schedule/schedule_simulator.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>

#include "rewind/schedule/checked_arithmetic.hpp"

namespace rwd {

std::string ScheduleCost::to_string() const {
  std::ostringstream out;
  out << "l = " << steps << ", c = " << slots << ": " << advances << " advances ("
      << first_sweep_advances << " first sweep, " << recomputed_steps << " recomputed), "
      << reverses << " reverses, " << stores << " stores, " << restores << " restores, " << frees
      << " frees, peak " << peak_slots << " slots, " << actions << " actions";
  if (stage_units > 0 || stage_stores > 0)
    out << "; stages (" << stage_units << " slots each): " << stage_stores << " stores, "
        << stage_reverses << " reverses, " << forward_evaluations() << " forward evaluations";
  if (disk_slots > 0 || disk_stores > 0 || disk_restores > 0 || peak_disk_slots > 0)
    out << "; disk level (" << disk_slots << " slots): " << disk_stores << " stores, "
        << disk_restores << " restores, peak " << peak_disk_slots << " slots";
  if (host_slots > 0 || host_stores > 0 || host_restores > 0 || peak_host_slots > 0)
    out << "; host level (" << host_slots << " slots): " << host_stores << " stores, "
        << host_restores << " restores, peak " << peak_host_slots << " slots";
  return out.str();
}

ScheduleValidator::ScheduleValidator(Index steps, int slots, std::string name, int memory_slots,
                                     int host_slots)
    : name_(std::move(name)),
      steps_(steps),
      slots_(slots),
      memory_slots_(memory_slots < 0 ? slots : memory_slots),
      first_host_(memory_slots_ - host_slots),
      adjoint_(steps) {
  if (steps < 1) detail::fail<InvalidArgument>(name_, ": steps l = ", steps, " must be >= 1");
  if (slots < 1) detail::fail<InvalidArgument>(name_, ": slots c = ", slots, " must be >= 1");
  if (memory_slots < -1 || memory_slots > slots)
    detail::fail<InvalidArgument>(name_, ": memory slots = ", memory_slots,
                                  " must lie in [0, c = ", slots, "] (or be -1: all memory)");
  if (host_slots < 0 || host_slots > memory_slots_)
    detail::fail<InvalidArgument>(name_, ": host slots = ", host_slots, " must lie in [0, ",
                                  memory_slots_, "] (the memory slots)");
  cost_.host_slots = host_slots;
  cost_.steps = steps;
  cost_.slots = slots;
  cost_.disk_slots = slots - memory_slots_;
}

void ScheduleValidator::set_stage_units(int units) {
  if (units < 0) detail::fail<InvalidArgument>(name_, ": stage units = ", units, " must be >= 0");
  if (cost_.actions > 0)
    detail::fail<InvalidArgument>(name_, ": stage units set after the first action");
  cost_.stage_units = units;
}

void ScheduleValidator::violation(const Action& action, const std::string& what) const {
  std::ostringstream out;
  out << name_ << " (l = " << steps_ << ", c = " << slots_ << "): action #" << cost_.actions << " '"
      << action.to_string() << "': " << what;
  throw ScheduleViolation(out.str(), cost_.actions, action);
}

void ScheduleValidator::check_slot(const Action& action) const {
  if (action.slot < 0 || action.slot >= slots_)
    violation(action, "slot " + std::to_string(action.slot) + " is outside [0, " +
                          std::to_string(slots_) + ")");
}

Index ScheduleValidator::held(int slot) const {
  const auto s = static_cast<std::size_t>(slot);
  return s < slot_step_.size() ? slot_step_[s] : -1;
}

void ScheduleValidator::apply(const Action& action) {
  if (finished_) violation(action, "action after done");
  const auto n = [&action] { return std::to_string(action.step); };  // for messages only
  switch (action.kind) {
    case ActionKind::advance: {
      if (action.step <= current_)
        violation(action,
                  "does not move forward from the current step " + std::to_string(current_));
      if (action.step > steps_)
        violation(action, "goes past the last step l = " + std::to_string(steps_));
      const Index fresh = action.step - std::max(current_, reached_);
      const Index first = fresh > 0 ? fresh : 0;
      cost_.advances = detail::checked_add(cost_.advances, action.step - current_, "advances");
      cost_.first_sweep_advances += first;
      cost_.recomputed_steps = cost_.advances - cost_.first_sweep_advances;
      current_ = action.step;
      reached_ = std::max(reached_, current_);
      break;
    }
    case ActionKind::store: {
      check_slot(action);
      const Index holds = held(action.slot);
      if (holds >= 0)
        violation(action, "slot " + std::to_string(action.slot) + " is occupied by y_" +
                              std::to_string(holds));
      if (action.step != current_)
        violation(action,
                  "names y_" + n() + " but the current state is y_" + std::to_string(current_));
      const auto s = static_cast<std::size_t>(action.slot);
      if (s >= slot_step_.size()) slot_step_.resize(s + 1, -1);
      slot_step_[s] = current_;
      ++in_use_;
      if (in_use_ > cost_.peak_slots) cost_.peak_slots = in_use_;
      ++cost_.stores;
      if (action.slot >= memory_slots_)
        cost_.disk_slots_used = std::max(cost_.disk_slots_used, action.slot - memory_slots_ + 1);
      else if (action.slot >= first_host_)
        cost_.host_slots_used = std::max(cost_.host_slots_used, action.slot - first_host_ + 1);
      else
        cost_.memory_slots_used = std::max(cost_.memory_slots_used, action.slot + 1);
      if (action.slot >= first_host_ && action.slot < memory_slots_) {
        ++cost_.host_stores;
        if (++host_in_use_ > cost_.peak_host_slots) cost_.peak_host_slots = host_in_use_;
      }
      if (action.slot >= memory_slots_) {
        ++cost_.disk_stores;
        ++disk_in_use_;
        if (disk_in_use_ > cost_.peak_disk_slots) cost_.peak_disk_slots = disk_in_use_;
      }
      break;
    }
    case ActionKind::restore: {
      check_slot(action);
      const Index holds = held(action.slot);
      if (holds < 0) violation(action, "slot " + std::to_string(action.slot) + " is empty");
      if (stage_of(action.slot) >= 0)
        violation(action, "slot " + std::to_string(action.slot) + " holds the stages of step " +
                              std::to_string(holds) + ", not a state");
      if (action.step != holds)
        violation(action, "names y_" + n() + " but the slot holds y_" + std::to_string(holds));
      current_ = holds;
      ++cost_.restores;
      if (action.slot >= memory_slots_) ++cost_.disk_restores;
      if (action.slot >= first_host_ && action.slot < memory_slots_) ++cost_.host_restores;
      break;
    }
    case ActionKind::reverse: {
      if (action.uses_stages()) {
        reverse_from_stages(action);
        break;
      }
      if (action.step >= adjoint_)
        violation(action, "step " + n() + " is already reversed (the adjoint is at step " +
                              std::to_string(adjoint_) + ")");
      if (action.step != adjoint_ - 1)
        violation(action, "skips step " + std::to_string(adjoint_ - 1) +
                              " (the adjoint is at step " + std::to_string(adjoint_) +
                              "; steps are reversed in the order l-1, ..., 0)");
      if (action.step != current_)
        violation(action,
                  "needs the current state y_" + n() + " but it is y_" + std::to_string(current_));
      adjoint_ = action.step;
      ++cost_.reverses;
      break;
    }
    case ActionKind::free: {
      check_slot(action);
      const Index holds = held(action.slot);
      if (holds < 0) violation(action, "slot " + std::to_string(action.slot) + " is already empty");
      if (action.step != holds)
        violation(action, "names y_" + n() + " but the slot holds y_" + std::to_string(holds));
      if (stage_of(action.slot) >= 0) {
        free_stages(action);
        break;
      }
      slot_step_[static_cast<std::size_t>(action.slot)] = -1;
      --in_use_;
      if (action.slot >= memory_slots_) --disk_in_use_;
      if (action.slot >= first_host_ && action.slot < memory_slots_) --host_in_use_;
      ++cost_.frees;
      break;
    }
    case ActionKind::done: {
      if (adjoint_ != 0)
        violation(action, "steps 0 .. " + std::to_string(adjoint_ - 1) + " were never reversed");
      if (in_use_ != 0) {
        std::string which;
        for (std::size_t s = 0; s < slot_step_.size(); ++s)
          if (slot_step_[s] >= 0) {
            which = "slot " + std::to_string(s) + " holds y_" + std::to_string(slot_step_[s]);
            break;
          }
        violation(action, std::to_string(in_use_) + " slot(s) never freed (" + which + ")");
      }
      finished_ = true;
      break;
    }
    case ActionKind::store_stages:
      store_stages(action);
      break;
    default:
      violation(action, "unknown action kind " + std::to_string(static_cast<int>(action.kind)));
  }
  ++cost_.actions;
}

Index ScheduleValidator::stage_of(int slot) const {
  const auto s = static_cast<std::size_t>(slot);
  return s < stage_head_.size() ? stage_head_[s] : -1;
}

void ScheduleValidator::store_stages(const Action& action) {
  const int u = cost_.stage_units;
  if (u < 1) violation(action, "this schedule declares no stage snapshots (stage units 0)");
  check_slot(action);
  if (action.slot + u > slots_)
    violation(action, "the stage snapshot needs slots " + std::to_string(action.slot) + " .. " +
                          std::to_string(action.slot + u - 1) + ", beyond the budget of " +
                          std::to_string(slots_));
  if ((action.slot < memory_slots_) != (action.slot + u - 1 < memory_slots_))
    violation(action, "the stage snapshot straddles the memory and disk levels");
  for (int k = action.slot; k < action.slot + u; ++k)
    if (const Index holds = held(k); holds >= 0)
      violation(action, "slot " + std::to_string(k) + " is occupied by y_" + std::to_string(holds));
  if (action.step != current_)
    violation(action, "names step " + std::to_string(action.step) + " but the current state is y_" +
                          std::to_string(current_));
  if (action.step >= steps_)
    violation(action, "step " + std::to_string(action.step) +
                          " is past the last step l - 1 = " + std::to_string(steps_ - 1));
  const auto end = static_cast<std::size_t>(action.slot + u);
  if (end > slot_step_.size()) slot_step_.resize(end, -1);
  if (end > stage_head_.size()) stage_head_.resize(end, -1);
  for (std::size_t k = static_cast<std::size_t>(action.slot); k < end; ++k) {
    slot_step_[k] = action.step;
    stage_head_[k] = action.slot;
  }
  // The step itself is a forward step, counted as an advance to n + 1.
  const Index fresh = action.step + 1 - std::max(current_, reached_);
  cost_.advances = detail::checked_add(cost_.advances, Index{1}, "advances");
  cost_.first_sweep_advances += fresh > 0 ? fresh : 0;
  cost_.recomputed_steps = cost_.advances - cost_.first_sweep_advances;
  current_ = action.step + 1;
  reached_ = std::max(reached_, current_);
  in_use_ += u;
  cost_.peak_slots = std::max(cost_.peak_slots, in_use_);
  ++cost_.stage_stores;
  if (action.slot >= memory_slots_) {
    cost_.disk_slots_used = std::max(cost_.disk_slots_used, action.slot + u - memory_slots_);
    disk_in_use_ += u;
    cost_.peak_disk_slots = std::max(cost_.peak_disk_slots, disk_in_use_);
  } else {
    cost_.memory_slots_used = std::max(cost_.memory_slots_used, action.slot + u);
  }
}

void ScheduleValidator::reverse_from_stages(const Action& action) {
  check_slot(action);
  const Index holds = held(action.slot);
  if (holds < 0 || stage_of(action.slot) != action.slot)
    violation(action, "slot " + std::to_string(action.slot) +
                          (holds < 0 ? " is empty" : " does not begin a stage snapshot"));
  if (action.step != holds)
    violation(action, "needs the stages of step " + std::to_string(action.step) +
                          " but the slot holds those of step " + std::to_string(holds));
  if (action.step >= adjoint_)
    violation(action, "step " + std::to_string(action.step) +
                          " is already reversed (the adjoint is at step " +
                          std::to_string(adjoint_) + ")");
  if (action.step != adjoint_ - 1)
    violation(action, "skips step " + std::to_string(adjoint_ - 1) + " (the adjoint is at step " +
                          std::to_string(adjoint_) +
                          "; steps are reversed in the order l-1, ..., 0)");
  adjoint_ = action.step;
  ++cost_.reverses;
  ++cost_.stage_reverses;
}

void ScheduleValidator::free_stages(const Action& action) {
  if (stage_of(action.slot) != action.slot)
    violation(action, "slot " + std::to_string(action.slot) +
                          " is inside a stage snapshot; free it by its first slot " +
                          std::to_string(stage_of(action.slot)));
  const int u = cost_.stage_units;
  for (int k = action.slot; k < action.slot + u; ++k) {
    slot_step_[static_cast<std::size_t>(k)] = -1;
    stage_head_[static_cast<std::size_t>(k)] = -1;
  }
  in_use_ -= u;
  if (action.slot >= memory_slots_) disk_in_use_ -= u;
  ++cost_.frees;
}

ScheduleCost simulate(Schedule& schedule, const SimulatorOptions& options) {
  if (options.max_actions < 0)
    detail::fail<InvalidArgument>("max_actions = ", options.max_actions,
                                  " must be >= 0 (0 = automatic)");
  const Index l = schedule.steps();
  const int c = schedule.slots();
  ScheduleValidator validator(l, c, "schedule '" + schedule.name() + "'", schedule.memory_slots(),
                              schedule.host_slots());
  validator.set_stage_units(schedule.stage_units());
  Index limit = options.max_actions;
  if (limit == 0) {
    Index scaled = 0;
    limit = detail::try_mul(l, 16, scaled) &&
                    detail::try_add(scaled, 4 * static_cast<Index>(c) + 64, scaled)
                ? scaled
                : detail::kIndexMax;
  }
  schedule.reset();
  for (;;) {
    const Action action = schedule.next();
    validator.apply(action);
    if (action.kind == ActionKind::done) break;
    if (validator.cost().actions >= limit)
      throw ScheduleViolation("schedule '" + schedule.name() + "' (l = " + std::to_string(l) +
                                  ", c = " + std::to_string(c) + "): no done after " +
                                  std::to_string(limit) + " actions",
                              validator.cost().actions, action);
  }
  return validator.cost();
}

void CostModel::validate() const {
  const auto check = [](double value, const char* field, bool positive) {
    if (!std::isfinite(value) || value < 0.0 || (positive && value == 0.0))
      detail::fail<InvalidArgument>("cost model: ", field, " = ", value, " must be finite and ",
                                    positive ? "> 0" : ">= 0");
  };
  check(step_time, "step_time", true);
  check(adjoint_cost_factor, "adjoint_cost_factor", false);
  check(write_time, "write_time", false);
  check(read_time, "read_time", false);
  check(disk_write_time, "disk_write_time", false);
  check(disk_read_time, "disk_read_time", false);
  check(host_write_time, "host_write_time", false);
  check(host_read_time, "host_read_time", false);
}

double predicted_time(const ScheduleCost& cost, const CostModel& model) {
  model.validate();
  const double stage_units = static_cast<double>(cost.stage_units);
  const double stage_writes = model.stage_values_copied ? stage_units : 1.0;
  const double stage_reads = model.stage_values_copied ? stage_units : 0.0;
  return model.step_time * (static_cast<double>(cost.advances) +
                            static_cast<double>(cost.reverses) * (1.0 + model.adjoint_cost_factor) -
                            static_cast<double>(cost.stage_reverses)) +
         model.write_time *
             (static_cast<double>(cost.stores - cost.disk_stores - cost.host_stores) +
              stage_writes * static_cast<double>(cost.stage_stores)) +
         model.read_time *
             (static_cast<double>(cost.restores - cost.disk_restores - cost.host_restores) +
              stage_reads * static_cast<double>(cost.stage_reverses)) +
         model.host_write_time * static_cast<double>(cost.host_stores) +
         model.host_read_time * static_cast<double>(cost.host_restores) +
         model.disk_write_time * static_cast<double>(cost.disk_stores) +
         model.disk_read_time * static_cast<double>(cost.disk_restores);
}

double predicted_time_ratio(const ScheduleCost& cost, const CostModel& model) {
  if (cost.steps < 1)
    detail::fail<InvalidArgument>("predicted_time_ratio: the cost has l = ", cost.steps,
                                  " steps (must be >= 1)");
  return predicted_time(cost, model) / (model.step_time * static_cast<double>(cost.steps));
}

}  // namespace rwd
