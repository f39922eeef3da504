// src/cli/progress.hpp — a one-line progress bar on stderr for long runs of `rewind run`:
// "rewind: forward 100% | reverse  45%".
//
//   rwd::cli::ProgressBar bar(rwd::cli::stderr_is_terminal());
//   rwd::cli::StepProgress progress(stepper, bar);
//   rwd::StoreAllOptions options;                         // or CheckpointOptions, or the
//   options.observer = progress.observer();               // observer argument of forward_loss
//   rwd::StoreAllAdjoint driver(stepper, objective, options);
//   driver.run(y0, theta);                                // the bar moves; erased at the end
//
// The drivers tell the observer of every forward, recomputed and reverse step
// (rewind/adjoint/step_observer.hpp); the driver runs the bare stepper, so every capability of
// the stepper stays and every number is exactly that of a run without progress. The forward
// part is the furthest step reached (for adaptive runs the fraction of [t0, t_final]); replays
// from snapshots do not move it. The reverse part is adjoint steps over steps.
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
#include <optional>
#include <string>
#include <utility>

#include "rewind/adjoint/step_observer.hpp"
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

// Progress of the runs of one stepper on `bar`, from the drivers' step observer
// (rewind/adjoint/step_observer.hpp). `label` says what the runs are: "" for the gradient
// ("forward  45% | reverse   0%"), or e.g. "finite-difference check" for repeated forward runs
// ("finite-difference check: run 3, 45%"). The stepper is read once, for the run's span: its
// planned steps, or for adaptive steps [t0, t_final].
class StepProgress {
 public:
  // `sample`, when given, is called every kSampleEvery forward, recomputed and reverse steps
  // (e.g. to watch device memory during a --backend cuda run).
  template <class Stepper>
  StepProgress(const Stepper& stepper, ProgressBar& bar, std::string label = "",
               std::function<void()> sample = {})
      : bar_(bar),
        label_(std::move(label)),
        sample_(std::move(sample)),
        planned_(stepper.planned_steps()) {
    if constexpr (requires { stepper.control().is_adaptive(); }) {
      if (stepper.control().is_adaptive()) t_final_ = stepper.control().t_final;
    }
  }
  StepProgress(const StepProgress&) = delete;
  StepProgress& operator=(const StepProgress&) = delete;
  static constexpr Index kSampleEvery = 32;

  // The observer to set in a driver's options (or pass to rwd::forward_loss); it refers to this
  // object, which must outlive the runs.
  StepObserver observer() {
    return [this](StepKind kind, Index step, double t) { seen(kind, step, t); };
  }

  // Forward sweeps begun so far (a driver's sweep, an adaptive run's counting sweep, a perturbed
  // run of the spot check); each starts the forward part again from 0.
  Index runs() const { return runs_; }
  // The furthest step reached in the current sweep, and the adjoint steps taken since it began.
  Index reached() const { return reached_; }
  Index reversed() const { return reversed_; }

  // The forward part: the furthest step over the planned steps, or for adaptive runs the
  // furthest time over [t0, t_final].
  double forward_fraction() const {
    if (t_final_) {
      const double span = *t_final_ - t0_;
      return span > 0.0 ? (reached_t_ - t0_) / span : 1.0;
    }
    return planned_ > 0 ? static_cast<double>(reached_) / static_cast<double>(planned_) : 1.0;
  }

 private:
  void seen(StepKind kind, Index step, double t) {
    switch (kind) {
      case StepKind::start:
        t0_ = t;
        reached_ = 0;
        reached_t_ = t;
        reversed_ = 0;
        ++runs_;
        return;
      case StepKind::forward:
      case StepKind::recompute:
        if (step > reached_) {
          reached_ = step;
          reached_t_ = t;
        }
        break;
      case StepKind::reverse:
        ++reversed_;
        break;
    }
    if (sample_ && ++calls_ % kSampleEvery == 0) sample_();
    if (bar_.due()) bar_.draw(text());
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

  ProgressBar& bar_;
  std::string label_;
  std::function<void()> sample_;
  Index planned_ = -1;
  std::optional<double> t_final_;  // adaptive runs
  Index calls_ = 0;
  double t0_ = 0.0;
  Index reached_ = 0;
  double reached_t_ = 0.0;
  Index reversed_ = 0;
  Index runs_ = 0;
};

}  // namespace rwd::cli
