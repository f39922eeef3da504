// rewind/interrupt.hpp — stopping a long run cleanly when asked (SIGINT, SIGTERM).
//
//   rwd::StopOnSignals guard;          // SIGINT and SIGTERM now request a stop
//   try {
//     driver.run(y0, theta, planner);  // polls rwd::stop_requested() between actions
//   } catch (const rwd::Interrupted& stop) {
//     // the run stopped at an action boundary; a resumable one saved its progress first
//   }
//
// A signal handler may do almost nothing, so it only records the signal in a lock-free atomic;
// the adjoint driver looks at it between two actions of its schedule (every step boundary),
// and there it saves what a later process needs, waits for the background writes and throws
// rwd::Interrupted. A second signal while the first is pending is not polite any more: the
// handler restores the default action and re-raises it, ending the process at once. A library
// user may call request_stop() from any thread instead of sending a signal.
#pragma once

#include <atomic>
#include <csignal>
#include <string>

#include "rewind/error.hpp"

namespace rwd {

// The run stopped at a step boundary because a stop was requested (signal() says which signal,
// 0 for request_stop(0)). Its message says where and how to continue.
class Interrupted : public Error {
 public:
  Interrupted(const std::string& what, int signal) : Error(what), signal_(signal) {}
  int signal() const { return signal_; }

 private:
  int signal_;
};

namespace detail {
// −1: no request; otherwise the signal (0 for a request without one).
inline std::atomic<int> stop_signal{-1};
static_assert(std::atomic<int>::is_always_lock_free, "a signal handler needs a lock-free atomic");

extern "C" inline void stop_on_signal(int signal) {
  int none = -1;
  if (!stop_signal.compare_exchange_strong(none, signal)) {
    std::signal(signal, SIG_DFL);  // asked twice: stop now
    std::raise(signal);
  }
}
}  // namespace detail

// Asks every driver that polls to stop at its next step boundary.
inline void request_stop(int signal = 0) noexcept {
  detail::stop_signal.store(signal);
}
// Whether a stop was requested, and by which signal (0: by request_stop()).
inline bool stop_requested() noexcept {
  return detail::stop_signal.load() >= 0;
}
inline int stop_signal() noexcept {
  return detail::stop_signal.load();
}
inline void clear_stop_request() noexcept {
  detail::stop_signal.store(-1);
}

// "SIGINT", "SIGTERM", or the number.
inline std::string signal_name(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  if (signal == 0) return "a stop request";
  return "signal " + std::to_string(signal);
}

// While alive, SIGINT and SIGTERM request a stop instead of ending the process; the previous
// handlers come back when it is destroyed. Clears any earlier request.
class StopOnSignals {
 public:
  StopOnSignals() {
    clear_stop_request();
    previous_int_ = std::signal(SIGINT, detail::stop_on_signal);
    previous_term_ = std::signal(SIGTERM, detail::stop_on_signal);
  }
  ~StopOnSignals() {
    std::signal(SIGINT, previous_int_ == SIG_ERR ? SIG_DFL : previous_int_);
    std::signal(SIGTERM, previous_term_ == SIG_ERR ? SIG_DFL : previous_term_);
  }
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

 private:
  void (*previous_int_)(int) = SIG_DFL;
  void (*previous_term_)(int) = SIG_DFL;
};

}  // namespace rwd
