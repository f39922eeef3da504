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

std::string describe_run(const RunReport& r) {
  const RunSettings& s = r.settings;
  std::string text = s.problem->name;
  if (s.problem->sized())
    text += " (" + std::string(s.problem->size_meaning) + " = " + std::to_string(s.n) + ")";
  text += ", " + s.tableau.name;
  if (s.control.is_adaptive()) {
    text += ", adaptive to t = " + format("%g", s.control.t_final) + " (rtol " +
            format("%g", s.control.rtol) + ", atol " + format("%g", s.control.atol) + "), " +
            std::to_string(r.summary.steps) + " steps";
  } else {
    text += ", dt = " + format("%g", s.control.dt) + ", " + std::to_string(s.control.steps) +
            " steps to t = " + format("%g", r.summary.t_final);
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
  row(out, "relative error", format("%.2e", fd.rel_error) + "  (" + fd.verdict + ", within " +
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

std::string drift_verdict(const CheckpointReport& cp) {
  const DriftReport& d = cp.drift;
  std::string stride;
  if (d.sampling_stride > 1)
    stride = ", one step in " + std::to_string(d.sampling_stride) + " fingerprinted";
  if (d.replayed_steps_checked == 0) return "no replays to check (nothing was recomputed)";
  if (d.bitwise_identical())
    return "replays bitwise identical to the first sweep (" +
           std::to_string(d.replayed_steps_checked) + " states checked" + stride + ")";
  return "max relative drift " + format("%.3g", d.max_rel_drift) + ", first at step " +
         std::to_string(d.first_drift_step) + " (" + std::to_string(d.mismatched_steps) + " of " +
         std::to_string(d.replayed_steps_checked) + " replayed states differ" + stride +
         "; --drift " + drift_policy_name(cp.drift_policy) + ")";
}

void print_checkpointing(std::ostream& out, const RunReport& r) {
  const CheckpointReport& cp = r.checkpoint;
  const CheckpointPlan& p = cp.plan;
  const Summary& s = r.summary;
  out << "checkpointing: " << p.name << ", snapshots of " << cp.snapshot_bytes << " bytes (state "
      << cp.snapshot_bytes - kCarryBytes << " + carry " << kCarryBytes << ")\n";
  // Summary's counts follow Griewank-Walther, as `rewind plan`: p = the schedule's advances.
  row(out, "forward steps l + p",
      std::to_string(s.forward_steps) + " (predicted " + std::to_string(p.forward_steps()) + ")");
  row(out, "recomputed steps p",
      std::to_string(s.recomputed_steps) + " (advances, the first sweep's " +
          std::to_string(s.steps > 0 ? s.steps - 1 : 0) + " included)");
  if (cp.counting_steps > 0)
    row(out, "counting sweep", std::to_string(cp.counting_steps) +
                                   " steps (adaptive: one forward run to learn l first)");
  row(out, "stores / restores", std::to_string(s.stores) + " / " + std::to_string(s.restores));
  const double peak = static_cast<double>(s.storage.peak_memory_bytes);
  row(out, "snapshot memory",
      "peak " + format_bytes(peak) + " (" +
          std::to_string(cp.snapshot_bytes > 0 ? s.storage.peak_memory_bytes / cp.snapshot_bytes : 0) +
          " snapshots)" + (cp.memory_budget ? ", budget " + format_bytes(static_cast<double>(
                                                                 *cp.memory_budget))
                                            : std::string()));
  row(out, "store-all would need",
      format_bytes(cp.store_all_bytes) + " (l + 1 = " + std::to_string(s.steps + 1) +
          " states); checkpointing uses " +
          format("%.3g%%", 100.0 * peak / cp.store_all_bytes));
  row(out, "recompute ratio (l+p)/l",
      format("%.4g", s.steps > 0 ? static_cast<double>(s.forward_steps) /
                                       static_cast<double>(s.steps)
                                 : 0.0) +
          " (predicted " + format("%.4g", p.recompute_ratio()) + ")");
  row(out, "time / forward run",
      format("%.3g", s.gradient_cost_ratio()) + " measured, " +
          format("%.3g", p.predicted_time_ratio(cp.adjoint_cost)) + " predicted (F = " +
          format("%g", cp.adjoint_cost) + ")");
  if (p.uses_disk()) {
    row(out, "disk level", std::to_string(s.storage.disk_stores) + " writes, " +
                               std::to_string(s.storage.disk_restores) + " reads (" +
                               std::to_string(s.storage.io.prefetch_hits) + " read ahead), peak " +
                               format_bytes(static_cast<double>(s.storage.peak_disk_bytes)) + " on disk");
    const double io = s.storage.io.write_seconds + s.storage.io.read_seconds;
    row(out, "disk time hidden",
        format("%.3g s", s.disk_hidden_seconds()) + " of " + format("%.3g s", io) +
            (io > 0.0 ? format(" (%.0f%%)", 100.0 * s.disk_hidden_seconds() / io) : std::string()) +
            (s.storage.asynchronous ? ", background I/O" : ", inline I/O"));
  }
  row(out, "drift", drift_verdict(cp));
  out << "\n";
}

}  // namespace

void print_plan_prediction(std::ostream& out, const CheckpointReport& cp) {
  const CheckpointPlan& p = cp.plan;
  if (cp.disk_costs_measured)
    out << "measured: one step " << format("%.3g ms", 1e3 * cp.step_seconds)
        << ", one snapshot write " << format("%.3g ms", 1e3 * cp.disk_costs.write_seconds)
        << " / read " << format("%.3g ms", 1e3 * cp.disk_costs.read_seconds) << " ("
        << format("%.0f MB/s", cp.disk_costs.write_bytes_per_second() / 1e6) << " / "
        << format("%.0f MB/s", cp.disk_costs.read_bytes_per_second() / 1e6) << ")\n";
  if (p.kind == ScheduleKind::two_level)
    out << "two-level: " << p.memory_snapshots << " in memory, " << p.disk_snapshots
        << " on disk; a disk write costs " << format("%.3g", p.costs.disk_write_time)
        << " steps, a read " << format("%.3g", p.costs.disk_read_time) << " steps; "
        << (p.disk_stores ? std::to_string(*p.disk_stores) : std::string("?")) << " disk writes, "
        << (p.disk_restores ? std::to_string(*p.disk_restores) : std::string("?"))
        << " disk reads planned\n";
  out << "checkpointing: " << p.name << " for " << p.steps << " steps";
  if (cp.memory_budget)
    out << ",\n  c = floor(--memory " << *cp.memory_budget << " / (state " << cp.snapshot_bytes - kCarryBytes
        << " + carry " << kCarryBytes << ")) = " << p.budget.value_or(0)
        << " snapshots (the carry is sizeof(rwd::Carry))";
  out << "\n";
  row(out, "predicted recompute ratio",
      format("%.4g", p.recompute_ratio()) + " = (l + p) / l, p = " + std::to_string(p.advances) +
          " steps advanced");
  row(out, "predicted time",
      format("%.4g", p.predicted_time_ratio(cp.adjoint_cost)) +
          " forward runs (adjoint cost F = " + format("%g", cp.adjoint_cost) + ")");
  out << "\n";
  out.flush();
}

void print_text_report(std::ostream& out, const RunReport& r) {
  out << "rewind run " << describe_run(r) << "\n";
  row(out, "state size / parameters",
      std::to_string(r.state_size) + " / " + std::to_string(r.parameter_size));
  out << "\n";

  row(out, "J = 0.5*|y_N|^2", format("%.15g", r.loss));
  row(out, "|dJ/dy0|", format("%.15g", r.grad_y0_norm));
  row(out, "|dJ/dtheta|", format("%.15g", r.grad_theta_norm));
  if (r.parameter_size > 0 && r.parameter_size <= kMaxListedParameters) {
    out << "  dJ/dtheta\n";
    for (std::size_t i = 0; i < r.grad_theta.size(); ++i) {
      const std::string name =
          r.parameter_names.empty() ? "theta[" + std::to_string(i) + "]" : r.parameter_names[i];
      row(out, "  " + name, format("%.15g", r.grad_theta[i]));
    }
  } else if (r.parameter_size > kMaxListedParameters) {
    out << "  (dJ/dtheta has " << r.parameter_size << " entries; --json lists them all)\n";
  }
  // A gradient that says nothing is said so, never left to look like a small number.
  if (r.summary.health.degenerate()) out << "  " << r.summary.health.describe() << "\n";
  out << "\n";

  if (r.fd_checked) {
    print_spot_check(out, r.fd);
  } else {
    out << "finite-difference spot check: skipped (--no-fd-check)\n\n";
  }
  if (r.checkpointed) print_checkpointing(out, r);
  out << r.summary.full();
}

}  // namespace rwd::cli
