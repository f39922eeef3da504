// src/cli/report_output.hpp — where a subcommand's --json report goes: standard output, unless an
// embedding of the command line (the Python module rewind._commands) receives it instead.
//
//   emit_json_report(fit_json(report));          // the tool: printed as one indented object
//   emit_report_vector("grad_y0", values);       // the tool: dropped (its JSON has the norm)
//
//   struct Keep : rwd::cli::ReportReceiver { ... };   // an embedding:
//   Keep keep;
//   rwd::cli::ReceiveReports receiving(keep);        // this thread's reports go to `keep`
//   app.parse(args);                                 // until `receiving` goes out of scope
//
// A receiver is per thread, so two embedded commands on two threads do not mix their reports.
#pragma once

#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace rwd::cli {

// Takes the reports of the commands run on the thread that installed it (ReceiveReports).
class ReportReceiver {
 public:
  virtual ~ReportReceiver() = default;
  // The command's JSON report: what `--json` prints on standard output.
  virtual void json(const nlohmann::ordered_json& report) = 0;
  // A whole vector the printed report gives only in summary (its norm), e.g. run's dJ/dy0.
  virtual void vector(std::string_view name, std::vector<double> values) = 0;
};

// Installs `receiver` for the calling thread for this object's lifetime (the previous one, if
// any, comes back after).
class ReceiveReports {
 public:
  explicit ReceiveReports(ReportReceiver& receiver);
  ~ReceiveReports();
  ReceiveReports(const ReceiveReports&) = delete;
  ReceiveReports& operator=(const ReceiveReports&) = delete;

 private:
  ReportReceiver* previous_;
};

// Prints `report` indented by 2 on standard output, followed by a newline — or hands it to this
// thread's receiver.
void emit_json_report(const nlohmann::ordered_json& report);

// Hands `values` to this thread's receiver under `name`; without a receiver it is dropped.
void emit_report_vector(std::string_view name, std::vector<double> values);

// Whether a receiver is installed on this thread (the command runs embedded).
bool reports_received();

}  // namespace rwd::cli
