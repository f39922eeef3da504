#include "rewind/adjoint/summary.hpp"

#include <cstdio>
#include <sstream>
#include <string>

#include "rewind/format.hpp"

namespace rwd {
namespace {

std::string seconds(double s) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.4g s", s);
  return buffer;
}

}  // namespace

std::string Summary::brief() const {
  std::ostringstream out;
  out << method << " | " << schedule << " | " << steps << " steps";
  if (recomputed_steps > 0) out << ", " << recomputed_steps << " recomputed";
  out << " | f " << (rhs_evaluations_forward + rhs_evaluations_reverse) << ", vjp "
      << vjp_evaluations << " | stored " << format_bytes(storage.peak_bytes_on(LevelKind::memory))
      << " | " << seconds(total_seconds());
  if (storage.stores_on(LevelKind::disk) > 0) {
    const double io = storage.io.write_seconds + storage.io.read_seconds;
    char hidden[96];
    std::snprintf(hidden, sizeof hidden, "%.0f%% of %.3g s hidden",
                  io > 0.0 ? 100.0 * disk_hidden_seconds() / io : 100.0, io);
    out << " | disk " << storage.stores_on(LevelKind::disk) << " writes, "
        << storage.restores_on(LevelKind::disk) << " reads, " << hidden;
  }
  if (storage.stores_on(LevelKind::host) > 0)
    out << " | device " << storage.stores_on(LevelKind::memory) << " / host "
        << storage.stores_on(LevelKind::host) << " writes, "
        << storage.restores_on(LevelKind::memory) << " / " << storage.restores_on(LevelKind::host)
        << " reads";
  if (forward_seconds > 0.0) {
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.2f", gradient_cost_ratio());
    out << " (" << ratio << "x forward)";
  }
  if (health.degenerate()) out << " | " << health.describe();
  return out.str();
}

std::string Summary::full() const {
  std::ostringstream out;
  auto row = [&](const char* name, const std::string& value) {
    char label[40];
    std::snprintf(label, sizeof label, "  %-28s", name);
    out << label << value << "\n";
  };
  out << "rewind gradient summary\n";
  row("method", method);
  row("schedule", schedule);
  if (ranks > 1)
    row("backend (ranks x threads)",
        backend + " (" + std::to_string(ranks) + " x " + std::to_string(threads) + ")");
  else
    row("backend (threads)", backend + " (" + std::to_string(threads) + ")");
  row("state / parameters", std::to_string(state_size) + " / " + std::to_string(parameter_size));
  row("steps (t_final)", std::to_string(steps) + " (" + std::to_string(t_final) + ")");
  row("rejected steps", std::to_string(rejected_steps));
  row("forward steps", std::to_string(forward_steps));
  row("recomputed steps", std::to_string(recomputed_steps));
  row("reversed steps", std::to_string(reversed_steps));
  row("rhs evaluations fwd / rev",
      std::to_string(rhs_evaluations_forward) + " / " + std::to_string(rhs_evaluations_reverse));
  row("vjp evaluations", std::to_string(vjp_evaluations));
  row("stores / restores", std::to_string(stores) + " / " + std::to_string(restores));
  row(ranks > 1 ? "peak stored (per rank)" : "peak stored",
      format_bytes(storage.peak_bytes_on(LevelKind::memory)));
  if (storage.stores_on(LevelKind::host) > 0 ||
      storage.peak_bytes_on(LevelKind::host) > 0) {  // three levels: device, host
    row("device stores / restores", std::to_string(storage.stores_on(LevelKind::memory)) + " / " +
                                        std::to_string(storage.restores_on(LevelKind::memory)));
    row("host stores / restores", std::to_string(storage.stores_on(LevelKind::host)) + " / " +
                                      std::to_string(storage.restores_on(LevelKind::host)) + " (" +
                                      std::to_string(storage.prefetches_on(LevelKind::host)) +
                                      " prefetched)");
    row("peak in host memory", format_bytes(storage.peak_bytes_on(LevelKind::host)));
  }
  if (storage.stores_on(LevelKind::disk) > 0 || !storage.file.empty()) {
    row("snapshot file", storage.file);
    row("disk stores / restores", std::to_string(storage.stores_on(LevelKind::disk)) + " / " +
                                      std::to_string(storage.restores_on(LevelKind::disk)) + " (" +
                                      std::to_string(storage.io.prefetch_hits) + " prefetched)");
    row("peak on disk", format_bytes(storage.peak_bytes_on(LevelKind::disk)));
    row("disk written / read",
        format_bytes(storage.io.bytes_written) + " / " + format_bytes(storage.io.bytes_read));
    row("staging buffers", format_bytes(storage.io.staging_bytes));
    row("disk write / read time",
        seconds(storage.io.write_seconds) + " / " + seconds(storage.io.read_seconds) +
            (storage.asynchronous ? " (background thread)" : " (inline)"));
    row("waited for disk",
        seconds(storage.io.wait_seconds) + " (hidden " + seconds(disk_hidden_seconds()) + ")");
  }
  row("time setup", seconds(setup_seconds));
  row("time forward", seconds(forward_seconds));
  row("time recompute", seconds(recompute_seconds));
  row("time reverse", seconds(reverse_seconds));
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.3f", gradient_cost_ratio());
  row("gradient / forward time", ratio);
  if (health.assessed) {
    char text[96];
    std::snprintf(text, sizeof text, "%.3g (negligible <= %.0e)", health.sensitivity,
                  GradientHealth::kNegligibleSensitivity);
    row("relative sensitivity", text);
    std::snprintf(text, sizeof text, "%.3g (stationary <= %.0e)", health.final_step_change,
                  GradientHealth::kStationaryChange);
    row("last step |dy| / |y_N|", text);
    if (health.degenerate()) out << "  " << health.describe() << "\n";
  }
  return out.str();
}

}  // namespace rwd
