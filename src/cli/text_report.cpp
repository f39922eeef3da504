// src/cli/text_report.cpp — see text_report.hpp.
#include "text_report.hpp"

#include <cstdio>
#include <ostream>
#include <string>

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
  row(out, "relative error", format("%.2e", fd.rel_error) + "  (" + fd.verdict + ")");
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

}  // namespace

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
  out << "\n";

  if (r.fd_checked) {
    print_spot_check(out, r.fd);
  } else {
    out << "finite-difference spot check: skipped (--no-fd-check)\n\n";
  }
  out << r.summary.full();
}

}  // namespace rwd::cli
