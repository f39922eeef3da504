// src/cli/progress.hpp — a one-line progress bar on stderr for long runs of `rewind run`:
// "rewind: forward 100% | reverse  45%".
//
//   rwd::cli::ProgressBar bar(rwd::cli::stderr_is_terminal());
//   rwd::cli::ProgressStepper watched(stepper, bar);      // any stepper; forwards every call
//   rwd::StoreAllAdjoint driver(watched, objective);      // or CheckpointedAdjoint, forward_loss
//   driver.run(y0, theta);                                // the bar moves; erased at the end
//
// The drivers have no progress hook, and need none: ProgressStepper wraps the stepper they call
// for every forward step and every adjoint step, passes each call through unchanged (the same
// steps on the same bits, so every number is exactly that of the bare stepper) and counts. The
// forward part is the furthest step reached (for adaptive runs the fraction of [t0, t_final]);
// replays from snapshots do not move it. The reverse part is adjoint steps over steps.
//
// Nothing is drawn when the bar is disabled (stderr not a terminal), nor during the first
// kFirstDraw seconds (a short run shows nothing); afterwards it is redrawn at most every
// kRedraw seconds. The clock is read about once per millisecond of work, not once per step,
// so the bar costs nothing measurable even for the smallest problems. The line is erased when
// the bar is destroyed or cleared, before anything else is printed.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <span>
#include <string>
#include <utility>

#include "rewind/carry.hpp"
#include "rewind/types.hpp"

namespace rwd::cli {

inline bool stderr_is_terminal() {
  return ::isatty(STDERR_FILENO) == 1;
}

class ProgressBar {
 public:
  static constexpr double kFirstDraw = 0.2;  // seconds before the first draw
  static constexpr double kRedraw = 0.1;     // seconds between draws (at most 10 per second)

  explicit ProgressBar(bool enabled) : enabled_(enabled) {}
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  ~ProgressBar() { clear(); }

  bool enabled() const { return enabled_; }

  // Called once per unit of work; true when the caller should draw now. Cheap: a counter, and
  // a clock read only every `stride_` calls (adapted so that reads are ~1 ms apart).
  bool due() {
    if (!enabled_ || --countdown_ > 0) return false;
    const Clock::time_point now = Clock::now();
    const double since_check = seconds(now - last_check_);
    if (since_check < 0.5e-3 && stride_ < (1 << 20)) stride_ *= 2;
    if (since_check > 4e-3 && stride_ > 1) stride_ /= 2;
    countdown_ = stride_;
    last_check_ = now;
    if (seconds(now - start_) < kFirstDraw || seconds(now - last_draw_) < kRedraw) return false;
    last_draw_ = now;
    return true;
  }

  void draw(const std::string& text) {
    if (!enabled_) return;
    std::fprintf(stderr, "\r%s\x1b[K", text.c_str());
    std::fflush(stderr);
    drawn_ = true;
  }

  // Erases the line if anything was drawn.
  void clear() {
    if (!drawn_) return;
    std::fputs("\r\x1b[K", stderr);
    std::fflush(stderr);
    drawn_ = false;
  }

 private:
  using Clock = std::chrono::steady_clock;
  static double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

  bool enabled_;
  bool drawn_ = false;
  long stride_ = 1;
  long countdown_ = 1;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_check_ = start_;
  Clock::time_point last_draw_ = start_;
};

// "  7%" — whole percent, never 100 before the end.
inline std::string percent(double fraction) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  int p = static_cast<int>(fraction * 100.0);
  if (p == 100 && fraction < 1.0) p = 99;
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%3d%%", p);
  return buffer;
}

// A stepper that forwards every call to `inner` and reports progress on `bar`. `label` says what
// the runs are: "" for the gradient ("forward  45% | reverse   0%"), or e.g. "finite-difference
// check" for repeated forward runs ("finite-difference check: run 3, 45%").
template <class Inner>
class ProgressStepper {
 public:
  using Backend = typename Inner::Backend;
  using Vector = typename Backend::Vector;
  using B = Backend;

  // `sample`, when given, is called every kSampleEvery forward and reverse steps (e.g. to watch
  // device memory during a --backend cuda run).
  ProgressStepper(Inner& inner, ProgressBar& bar, std::string label = "",
                  std::function<void()> sample = {})
      : inner_(inner), bar_(bar), label_(std::move(label)), sample_(std::move(sample)) {}
  static constexpr Index kSampleEvery = 32;

  decltype(auto) problem() const { return inner_.problem(); }
  // Steppers that are not Runge–Kutta describe themselves (rwd::CvodesIntervalStepper).
  std::string describe() const requires requires(const Inner& i) { i.describe(); }
  { return inner_.describe(); }
  decltype(auto) tableau() const { return inner_.tableau(); }
  decltype(auto) control() const { return inner_.control(); }
  Index state_size() const { return inner_.state_size(); }
  Index parameter_size() const { return inner_.parameter_size(); }
  Index planned_steps() const { return inner_.planned_steps(); }
  double last_step_size() const { return inner_.last_step_size(); }
  decltype(auto) counters() const { return inner_.counters(); }
  void reset_counters() { inner_.reset_counters(); }
  bool finished(const Carry& c) const { return inner_.finished(c); }

  // A new forward run starts (a driver's sweep, an adaptive run's counting sweep, a perturbed
  // run of the spot check): the forward part starts again from 0.
  Carry initial_carry(const Vector& y0, const Vector& theta) {
    Carry c = inner_.initial_carry(y0, theta);
    t0_ = c.t;
    reached_ = 0;
    reached_t_ = c.t;
    reversed_ = 0;
    ++runs_;
    return c;
  }

  void step(Vector& y, Carry& carry, const Vector& theta) {
    inner_.step(y, carry, theta);
    if (sample_ && ++calls_ % kSampleEvery == 0) sample_();
    if (carry.step > reached_) {
      reached_ = carry.step;
      reached_t_ = carry.t;
    }
    if (bar_.due()) bar_.draw(text());
  }

  void adjoint_step(const Vector& y_n, const Carry& carry_n, const Vector& theta, Vector& lambda,
                    Vector& mu) {
    inner_.adjoint_step(y_n, carry_n, theta, lambda, mu);
    ++reversed_;
    if (sample_ && ++calls_ % kSampleEvery == 0) sample_();
    if (bar_.due()) bar_.draw(text());
  }

  // Stage snapshots (stage-aware plans), for steppers that offer them.
  int stage_count() const requires requires(const Inner& i) { i.stage_count(); }
  { return inner_.stage_count(); }
  void step_keeping_stages(Vector& y, Carry& carry, const Vector& theta,
                           std::span<Vector> stages) requires requires(Inner& i) {
    i.step_keeping_stages(y, carry, theta, stages);
  }
  {
    inner_.step_keeping_stages(y, carry, theta, stages);
    if (carry.step > reached_) {
      reached_ = carry.step;
      reached_t_ = carry.t;
    }
    if (bar_.due()) bar_.draw(text());
  }
  void adjoint_step_from_stages(std::span<const Vector> stages, const Carry& carry_n,
                                const Vector& theta, Vector& lambda, Vector& mu) requires
      requires(Inner& i) {
    i.adjoint_step_from_stages(stages, carry_n, theta, lambda, mu);
  }
  {
    inner_.adjoint_step_from_stages(stages, carry_n, theta, lambda, mu);
    ++reversed_;
    if (bar_.due()) bar_.draw(text());
  }

 private:
  double forward_fraction() const {
    if constexpr (requires { inner_.control().is_adaptive(); }) {
      const auto& c = inner_.control();
      if (c.is_adaptive()) {
        const double span = c.t_final - t0_;
        return span > 0.0 ? (reached_t_ - t0_) / span : 1.0;
      }
    }
    const Index planned = inner_.planned_steps();
    return planned > 0 ? static_cast<double>(reached_) / static_cast<double>(planned) : 1.0;
  }

  std::string text() const {
    if (!label_.empty())
      return "rewind: " + label_ + ": run " + std::to_string(runs_) + "," +
             percent(forward_fraction());
    std::string line = "rewind: forward " + percent(forward_fraction());
    line += " | reverse " +
            percent(reached_ > 0 ? static_cast<double>(reversed_) / static_cast<double>(reached_)
                                 : 0.0);
    return line;
  }

  Inner& inner_;
  ProgressBar& bar_;
  std::string label_;
  std::function<void()> sample_;
  Index calls_ = 0;
  double t0_ = 0.0;
  Index reached_ = 0;
  double reached_t_ = 0.0;
  Index reversed_ = 0;
  Index runs_ = 0;
};

}  // namespace rwd::cli
