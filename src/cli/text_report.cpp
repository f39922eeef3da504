// src/cli/text_report.cpp — see text_report.hpp.
#include "text_report.hpp"

#include <cstdio>
#include <ostream>
#include <string>

#include "byte_size.hpp"

namespace rwd::cli {
namespace {

std::string format(const char* spec, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, spec, value);
  return buffer;
}

// Same layout as Summary::full(): a label padded to 28 characters, then the value.
void row(std::ostream& out, const std::string& label, const std::string& value) {
  char padded[64];
  std::snprintf(padded, sizeof padded, "  %-28s", label.c_str());
  out << padded << value << "\n";
}

std::string describe_run(const RunReport& report) {
  const RunSettings& settings = report.settings;
  std::string text = settings.problem->name;
  if (settings.problem->sized())
    text += " (" + std::string(settings.problem->size_meaning) + " = " +
            std::to_string(settings.n) + ")";
  text += ", " + method_name(settings.method);
  if (settings.control.is_adaptive()) {
    text += ", adaptive to t = " + format("%g", settings.control.t_final) + " (rtol " +
            format("%g", settings.control.rtol) + ", atol " + format("%g", settings.control.atol) +
            "), " + std::to_string(report.summary.steps) + " steps";
  } else {
    text += ", dt = " + format("%g", settings.control.dt) + ", " +
            std::to_string(settings.control.steps) +
            " steps to t = " + format("%g", report.summary.t_final);
  }
  return text;
}

void print_spot_check(std::ostream& out, const FiniteDifferenceCheck& fd) {
  out << "finite-difference spot check of dJ/dy0 along a random unit direction d (seed " << fd.seed
      << "):\n"
      << "  central differences (J(y0 + eps d) - J(y0 - eps d)) / (2 eps), eps halved from "
      << format("%.3g", fd.first_epsilon) << ",\n"
      << "  extrapolated to eps -> 0 (Ridders)";
  if (fd.steps_frozen) out << "; the accepted steps of the adaptive run are replayed";
  out << "\n";
  row(out, "finite differences",
      format("%.15g", fd.directional_fd) + " +- " + format("%.2g", fd.fd_error_estimate));
  row(out, "adjoint <dJ/dy0, d>", format("%.15g", fd.directional_adjoint));
  row(out, "relative error",
      format("%.2e", fd.rel_error) + "  (" + fd.verdict + ", within " +
          format("%.0e", fd.agreement) + ")");
  row(out, "forward runs, smallest eps",
      std::to_string(fd.loss_evaluations) + ", " + format("%.3g", fd.epsilon));
  if (fd.verdict == "inconclusive")
    out << "  The finite differences did not converge: J is too rough along d at every step they\n"
           "  can resolve (typical of chaotic runs over long horizons). Shorten the run to "
           "check.\n";
  else if (fd.verdict == "disagree")
    out << "  The adjoint and the converged finite differences disagree: for a built-in problem\n"
           "  this is a bug in rewind; please report it with this command line.\n";
  out << "\n";
}

std::string drift_verdict(const CheckpointReport& checkpointing) {
  const DriftReport& drift = checkpointing.drift;
  std::string stride;
  if (drift.sampling_stride > 1)
    stride = ", one step in " + std::to_string(drift.sampling_stride) + " fingerprinted";
  if (drift.replayed_steps_checked == 0) return "no replays to check (nothing was recomputed)";
  if (drift.bitwise_identical())
    return "replays bitwise identical to the first sweep (" +
           std::to_string(drift.replayed_steps_checked) + " states checked" + stride + ")";
  return "max relative drift " + format("%.3g", drift.max_rel_drift) + ", first at step " +
         std::to_string(drift.first_drift_step) + " (" + std::to_string(drift.mismatched_steps) +
         " of " + std::to_string(drift.replayed_steps_checked) + " replayed states differ" +
         stride + "; --drift " + drift_policy_name(checkpointing.drift_policy) + ")";
}

void print_checkpointing(std::ostream& out, const RunReport& report) {
  const CheckpointReport& checkpointing = report.checkpoint;
  const CheckpointPlan& plan = checkpointing.plan;
  const Summary& summary = report.summary;
  // Across ranks a snapshot is one rank's slice (the largest): memory figures are per rank.
  out << "checkpointing: " << plan.name << ", snapshots of " << checkpointing.snapshot_bytes
      << " bytes (state " << checkpointing.snapshot_bytes - kCarryBytes << " + carry "
      << kCarryBytes << ")" << (summary.ranks > 1 ? " per rank" : "") << "\n";
  // Summary's counts follow Griewank-Walther, as `rewind plan`: p = the schedule's advances.
  row(out, "forward steps l + p",
      std::to_string(summary.forward_steps) + " (predicted " +
          std::to_string(plan.forward_steps()) + ")");
  row(out, "recomputed steps p",
      std::to_string(summary.recomputed_steps) + " (advances, the first sweep's " +
          std::to_string(summary.steps > 0 ? summary.steps - 1 : 0) + " included)");
  if (checkpointing.counting_steps > 0)
    row(out, "counting sweep",
        std::to_string(checkpointing.counting_steps) +
            " steps (adaptive: one forward run to learn l first)");
  if (checkpointing.resumed_at_action >= 0)
    row(out, "resumed",
        "from action " + std::to_string(checkpointing.resumed_at_action) + " of a killed run: " +
            std::to_string(checkpointing.adopted_snapshots) + " disk snapshots intact, " +
            std::to_string(checkpointing.resume_replayed_steps) + " steps recomputed to rebuild");
  row(out, "stores / restores",
      std::to_string(summary.stores) + " / " + std::to_string(summary.restores));
  const double peak = static_cast<double>(summary.storage.peak_bytes_on(LevelKind::memory));
  row(out, "snapshot memory",
      "peak " + format_bytes(peak) + " (" +
          std::to_string(checkpointing.snapshot_bytes > 0
                             ? summary.storage.peak_bytes_on(LevelKind::memory) /
                                   checkpointing.snapshot_bytes
                             : 0) +
          " snapshots)" +
          (checkpointing.memory_budget
               ? ", budget " + format_bytes(static_cast<double>(*checkpointing.memory_budget))
               : std::string()));
  row(out, "store-all would need",
      format_bytes(checkpointing.store_all_bytes) +
          " (l + 1 = " + std::to_string(summary.steps + 1) + " states); checkpointing uses " +
          format("%.3g%%", 100.0 * peak / checkpointing.store_all_bytes));
  row(out, "recompute ratio (l+p)/l",
      format("%.4g", summary.steps > 0 ? static_cast<double>(summary.forward_steps) /
                                             static_cast<double>(summary.steps)
                                       : 0.0) +
          " (predicted " + format("%.4g", plan.recompute_ratio()) + ")");
  // A resumed run's attempt timed only the part it ran (its forward sweep may be none of it).
  row(out, "time / forward run",
      (checkpointing.resumed_at_action >= 0
           ? std::string("not measured (a resumed run times only its last attempt), ")
           : format("%.3g", summary.gradient_cost_ratio()) + " measured, ") +
          format("%.3g", plan.predicted_time_ratio(checkpointing.adjoint_cost)) +
          " predicted (F = " + format("%g", checkpointing.adjoint_cost) + ")");
  if (plan.uses_disk()) {
    row(out, "disk level",
        std::to_string(summary.storage.stores_on(LevelKind::disk)) + " writes, " +
            std::to_string(summary.storage.restores_on(LevelKind::disk)) + " reads (" +
            std::to_string(summary.storage.io.prefetch_hits) + " read ahead), peak " +
            format_bytes(static_cast<double>(summary.storage.peak_bytes_on(LevelKind::disk))) +
            " on disk");
    const double io = summary.storage.io.write_seconds + summary.storage.io.read_seconds;
    row(out, "disk time hidden",
        format("%.3g s", summary.disk_hidden_seconds()) + " of " + format("%.3g s", io) +
            (io > 0.0 ? format(" (%.0f%%)", 100.0 * summary.disk_hidden_seconds() / io)
                      : std::string()) +
            (summary.storage.asynchronous ? ", background I/O" : ", inline I/O"));
  }
  row(out, "drift", drift_verdict(checkpointing));
  out << "\n";
}

}  // namespace

void print_plan_prediction(std::ostream& out, const CheckpointReport& checkpointing) {
  const CheckpointPlan& plan = checkpointing.plan;
  if (checkpointing.costs_from_earlier_attempt)
    out << "costs: as measured by the attempt that left the snapshot file (the same plan)\n";
  if (checkpointing.disk_costs_measured)
    out << "measured: one step " << format("%.3g ms", 1e3 * checkpointing.step_seconds)
        << ", one snapshot write "
        << format("%.3g ms", 1e3 * checkpointing.disk_costs.write_seconds) << " / read "
        << format("%.3g ms", 1e3 * checkpointing.disk_costs.read_seconds) << " ("
        << format("%.0f MB/s", checkpointing.disk_costs.write_bytes_per_second() / 1e6) << " / "
        << format("%.0f MB/s", checkpointing.disk_costs.read_bytes_per_second() / 1e6) << ")\n";
  if (checkpointing.level_costs_measured && !checkpointing.disk_costs_measured)
    out << "measured: one step " << format("%.3g ms", 1e3 * checkpointing.step_seconds)
        << ", one snapshot copy into memory "
        << format("%.3g ms", 1e3 * checkpointing.level_costs.device_write_seconds) << " / out "
        << format("%.3g ms", 1e3 * checkpointing.level_costs.device_read_seconds) << " ("
        << format("%.3g", plan.costs.write_time) << " / " << format("%.3g", plan.costs.read_time)
        << " steps)\n";
  if (const std::string note = plan.family->run_note(plan); !note.empty()) out << note << "\n";
  out << "checkpointing: " << plan.name << " for " << plan.steps << " steps";
  if (checkpointing.memory_budget)
    out << ",\n  c = floor(--memory " << *checkpointing.memory_budget << " / (state "
        << checkpointing.snapshot_bytes - kCarryBytes << " + carry " << kCarryBytes
        << ")) = " << plan.budget.value_or(0) << " snapshots (the carry is sizeof(rwd::Carry))";
  out << "\n";
  row(out, "predicted recompute ratio",
      format("%.4g", plan.recompute_ratio()) +
          " = (l + p) / l, p = " + std::to_string(plan.advances) + " steps advanced");
  row(out, "predicted time",
      format("%.4g", plan.predicted_time_ratio(checkpointing.adjoint_cost)) +
          " forward runs (adjoint cost F = " + format("%g", checkpointing.adjoint_cost) + ")");
  out << "\n";
  out.flush();
}

namespace {
// The name of θ[i], or "theta[i]" when the problem gives none.
std::string parameter_name(const RunReport& report, std::size_t i) {
  return i < report.parameter_names.size() ? report.parameter_names[i]
                                           : "theta[" + std::to_string(i) + "]";
}
}  // namespace

void print_text_report(std::ostream& out, const RunReport& report) {
  out << "rewind run " << describe_run(report) << "\n";
  row(out, "state size / parameters",
      std::to_string(report.state_size) + " / " + std::to_string(report.parameter_size));
  if (report.summary.ranks > 1)
    row(out, "ranks x threads",
        std::to_string(report.summary.ranks) + " x " + std::to_string(report.summary.threads) +
            " (each rank holds its rows of every state and snapshot)");
  if (report.device)
    row(out, "device",
        report.device->name + ", " + format_bytes(static_cast<double>(report.device->used_bytes)) +
            " of " + format_bytes(static_cast<double>(report.device->total_bytes)) +
            " used by the run (largest of " + std::to_string(report.device->samples) + " samples)");
  out << "\n";

  row(out, "J = 0.5*|y_N|^2", format("%.15g", report.loss));
  row(out, "|dJ/dy0|", format("%.15g", report.grad_y0_norm));
  row(out, "|dJ/dtheta|", format("%.15g", report.grad_theta_norm));
  if (report.parameter_size > 0 && report.parameter_size <= kMaxListedParameters) {
    std::string theta;
    for (std::size_t i = 0; i < report.parameters.size(); ++i)
      theta += (i ? ", " : "") + parameter_name(report, i) + " = " +
               format("%.6g", report.parameters[i]);
    row(out, "theta", theta);
    out << "  dJ/dtheta\n";
    for (std::size_t i = 0; i < report.grad_theta.size(); ++i) {
      row(out, "  " + parameter_name(report, i), format("%.15g", report.grad_theta[i]));
    }
  } else if (report.parameter_size > kMaxListedParameters) {
    out << "  (dJ/dtheta has " << report.parameter_size << " entries; --json lists them all)\n";
  }
  // A gradient that says nothing is said so, never left to look like a small number.
  if (report.summary.health.degenerate()) out << "  " << report.summary.health.describe() << "\n";
  out << "\n";

  if (report.fd_checked) {
    print_spot_check(out, report.fd);
  } else {
    out << "finite-difference spot check: skipped (--no-fd-check)\n\n";
  }
  if (report.checkpointed) print_checkpointing(out, report);
  out << report.summary.full();
}

}  // namespace rwd::cli
