// rewind/warning.hpp — where rewind's warnings go. Library code never writes to std::cerr: it
// calls rwd::warn, which hands a rwd::Warning to one process-wide, replaceable handler. The
// default handler writes the line "rewind: warning: <message>" to std::cerr, so a program that
// does nothing sees what it always saw; a program that wants its warnings elsewhere (a log file,
// a GUI, a test's vector, nowhere) installs its own handler.
//
//   {
//     rwd::ScopedWarningHandler to_log([&](const rwd::Warning& w) { log << w.message << "\n"; });
//     driver.run(y0, theta, schedule);     // a drift warning lands in `log`, not on stderr
//   }                                      // the previous handler is back
//
//   rwd::set_warning_handler(my_handler);  // for the rest of the process; returns the previous
//   rwd::set_warning_handler(nullptr);     // back to the default (stderr)
//
// Why one process-wide handler and not a callback in each driver's options: warnings arise deep
// inside (the drift monitor a checkpointed run owns, the backsolve driver) and in drivers that
// other code builds (training builds a checkpointed adjoint per window, the command-line tool
// one per run); a callback would have to be threaded through every options struct and every
// layer in between, and a program wants all of its warnings in one place anyway. A scoped
// handler covers what a per-run callback would (a test, one run of a tool).
//
// Threads. set_warning_handler, warn and ScopedWarningHandler may be used from any thread.
// Handler calls are serialised (a handler needs no lock of its own), and once
// set_warning_handler returns, the handler it replaced is neither running nor called again
// (unless it was called from inside that handler). A handler may itself warn or replace the
// handler; it must not wait for another thread that warns. An exception thrown by a handler
// leaves rwd::warn, and so the library call that warned: a way to turn warnings into errors.
#pragma once

#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>

namespace rwd {

struct Warning {
  std::string source;   // what warns: "drift monitor", "backsolve"
  std::string message;  // one line, without the "rewind: warning: " prefix or a newline
};

using WarningHandler = std::function<void(const Warning&)>;

// The default handler: "rewind: warning: <message>" and a newline on std::cerr, in one write
// so that lines from several threads do not interleave.
inline void write_warning_to_stderr(const Warning& warning) {
  std::string line = "rewind: warning: ";
  line += warning.message;
  line += '\n';
  std::cerr << line;
}

namespace detail {

struct WarningSink {
  std::recursive_mutex mutex;
  // Never null. Shared so that a handler replaced from inside itself lives until it returns.
  std::shared_ptr<const WarningHandler> handler =
      std::make_shared<const WarningHandler>(write_warning_to_stderr);
};

// One sink per process (an inline function's static is one object across translation units).
// Never destroyed, so that a warning during static destruction still finds it.
inline WarningSink& warning_sink() {
  static WarningSink* sink = new WarningSink();
  return *sink;
}

}  // namespace detail

// Installs `handler` for every later warning of the process and returns the one it replaces.
// An empty handler (nullptr) installs the default, write_warning_to_stderr.
inline WarningHandler set_warning_handler(WarningHandler handler) {
  auto next = std::make_shared<const WarningHandler>(
      handler ? std::move(handler) : WarningHandler(write_warning_to_stderr));
  detail::WarningSink& sink = detail::warning_sink();
  std::shared_ptr<const WarningHandler> previous;
  {
    std::lock_guard<std::recursive_mutex> lock(sink.mutex);
    previous = std::exchange(sink.handler, std::move(next));
  }
  return *previous;
}

// Hands `warning` to the current handler.
inline void warn(const Warning& warning) {
  detail::WarningSink& sink = detail::warning_sink();
  std::lock_guard<std::recursive_mutex> lock(sink.mutex);
  const std::shared_ptr<const WarningHandler> handler = sink.handler;
  (*handler)(warning);
}

// Builds the message from streamable pieces, formatted as std::cerr would by default (six
// significant digits): warn("drift monitor", "replayed state at step ", step, " differs").
template <class... Parts>
void warn(std::string source, const Parts&... parts) {
  std::ostringstream message;
  (message << ... << parts);
  warn(Warning{std::move(source), message.str()});
}

// Installs a handler for the lifetime of the object, then puts back the one it replaced.
// Guards are meant to nest (the innermost ends first), as scopes do.
class ScopedWarningHandler {
 public:
  explicit ScopedWarningHandler(WarningHandler handler)
      : previous_(set_warning_handler(std::move(handler))) {}
  ~ScopedWarningHandler() { set_warning_handler(std::move(previous_)); }
  ScopedWarningHandler(const ScopedWarningHandler&) = delete;
  ScopedWarningHandler& operator=(const ScopedWarningHandler&) = delete;

 private:
  WarningHandler previous_;
};

}  // namespace rwd
