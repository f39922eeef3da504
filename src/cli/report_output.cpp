// src/cli/report_output.cpp — see report_output.hpp.
#include "report_output.hpp"

#include <iostream>
#include <utility>

namespace rwd::cli {
namespace {

thread_local ReportReceiver* g_receiver = nullptr;

}  // namespace

ReceiveReports::ReceiveReports(ReportReceiver& receiver) : previous_(g_receiver) {
  g_receiver = &receiver;
}

ReceiveReports::~ReceiveReports() {
  g_receiver = previous_;
}

void emit_json_report(const nlohmann::ordered_json& report) {
  if (g_receiver != nullptr)
    g_receiver->json(report);
  else
    std::cout << report.dump(2) << std::endl;
}

void emit_report_vector(std::string_view name, std::vector<double> values) {
  if (g_receiver != nullptr) g_receiver->vector(name, std::move(values));
}

bool reports_received() {
  return g_receiver != nullptr;
}

}  // namespace rwd::cli
