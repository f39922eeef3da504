// src/neural/src/data_trainer.cpp — see rewind/neural/data_trainer.hpp.
#include "rewind/neural/data_trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <utility>

#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/error.hpp"
#include "rewind/format.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/objective.hpp"

namespace rwd::training {

using rwd::detail::fail;

ValidationMeasure parse_validation_measure(const std::string& text) {
  if (text == "trajectory") return ValidationMeasure::trajectory;
  if (text == "windows") return ValidationMeasure::windows;
  fail<InvalidArgument>("validation measure '", text, "' is not known (trajectory, windows)");
}

void DataTrainerOptions::validate() const {
  if (window < 1) fail<InvalidArgument>("window = ", window, " intervals must be >= 1");
  if (batch < 1) fail<InvalidArgument>("batch = ", batch, " must be >= 1");
  if (substeps < 1) fail<InvalidArgument>("substeps = ", substeps, " must be >= 1");
  if (augment < 0) fail<InvalidArgument>("augment = ", augment, " must be >= 0");
  if (!(clip_norm >= 0.0 && std::isfinite(clip_norm)))
    fail<InvalidArgument>("clip norm = ", clip_norm, " must be finite and >= 0 (0: no clipping)");
  if (!schedule) fail<InvalidArgument>("the trainer needs a schedule");
  if (adaptive) {
    if (!tableau.has_embedded())
      fail<InvalidArgument>("method '", tableau.name,
                            "' has no embedded error estimate, so it cannot take adaptive steps; "
                            "use dopri5, tsit5, bs3 or heun");
    if (!(adaptive->rtol >= 1e-15 && std::isfinite(adaptive->rtol)))
      fail<InvalidArgument>("rtol = ", adaptive->rtol, " must be finite and >= 1e-15");
    if (!(adaptive->atol > 0.0 && std::isfinite(adaptive->atol)))
      fail<InvalidArgument>("atol = ", adaptive->atol, " must be finite and > 0");
  }
}

namespace {

// substeps equal steps inside each interval of times[first .. first + intervals].
std::vector<double> step_sizes(const std::vector<double>& times, Index first, Index intervals,
                               Index substeps) {
  std::vector<double> sizes;
  sizes.reserve(static_cast<std::size_t>(intervals * substeps));
  for (Index k = first; k < first + intervals; ++k) {
    const auto i = static_cast<std::size_t>(k);
    const double h = (times[i + 1] - times[i]) / static_cast<double>(substeps);
    for (Index s = 0; s < substeps; ++s) sizes.push_back(h);
  }
  return sizes;
}

// Row `row` of a batch's step rates (nn::NeuralOde::set_step_rates) for a window over
// times[first ..]: `substeps` equal steps in each of its `window` intervals, with their start
// times summed as a prescribed stepper sums them. Intervals from `available` on (a window the
// data's end cut short) repeat the last size; their states are not scored.
void fill_step_rates(const std::vector<double>& times, Index first, Index available, Index window,
                     Index substeps, Eigen::Index row, Eigen::MatrixXd& sizes,
                     Eigen::MatrixXd& starts) {
  double t = times[static_cast<std::size_t>(first)], h = 0.0;
  for (Index k = 0; k < window; ++k) {
    if (k < available) {
      const auto at = static_cast<std::size_t>(first + k);
      h = (times[at + 1] - times[at]) / static_cast<double>(substeps);
    }
    for (Index s = 0; s < substeps; ++s) {
      sizes(row, k * substeps + s) = h;
      starts(row, k * substeps + s) = t;
      t += h;
    }
  }
}

// The mean spacing of `times` when every interval agrees with it to 1e-9 relative (a uniform
// grid, written as text or not); 0 otherwise.
double mean_uniform_spacing(const std::vector<double>& times) {
  if (times.size() < 2) return 0.0;
  const double spacing = (times.back() - times.front()) / static_cast<double>(times.size() - 1);
  for (std::size_t k = 0; k + 1 < times.size(); ++k)
    if (std::abs((times[k + 1] - times[k]) - spacing) > 1e-9 * spacing) return 0.0;
  return spacing;
}

}  // namespace

StepControl window_step_control(const std::vector<double>& times, Index first, Index intervals,
                                Index substeps, const std::optional<AdaptiveTolerances>& adaptive) {
  const auto begin = static_cast<std::size_t>(first);
  const auto end = static_cast<std::size_t>(first + intervals);
  if (!adaptive)
    return StepControl::prescribed(times[begin], step_sizes(times, first, intervals, substeps));
  StepControl control =
      StepControl::adaptive(times[begin], times[end], adaptive->rtol, adaptive->atol);
  control.stop_times.assign(times.begin() + static_cast<std::ptrdiff_t>(begin + 1),
                            times.begin() + static_cast<std::ptrdiff_t>(end));
  return control;
}

Eigen::MatrixXd integrate_on_grid(const nn::NeuralField& field, const ButcherTableau& tableau,
                                  Index substeps, const Eigen::VectorXd& theta,
                                  const Eigen::VectorXd& y0, const std::vector<double>& times,
                                  const std::optional<AdaptiveTolerances>& adaptive,
                                  Index* steps_taken) {
  if (times.empty()) fail<InvalidArgument>("integrate_on_grid: no times");
  if (substeps < 1) fail<InvalidArgument>("substeps = ", substeps, " must be >= 1");
  if (y0.size() != field.state_size())
    fail<InvalidArgument>("the initial state has ", y0.size(), " values but the model has ",
                          field.state_size(), " state components");
  for (std::size_t k = 1; k < times.size(); ++k)
    if (!(times[k] > times[k - 1]))
      fail<InvalidArgument>("times must increase strictly, but t[", k, "] = ", times[k],
                            " follows t[", k - 1, "] = ", times[k - 1]);
  const auto points = static_cast<Index>(times.size());
  Eigen::MatrixXd path(y0.size(), points);
  path.col(0) = y0;
  if (steps_taken) *steps_taken = 0;
  if (points == 1) return path;
  ExplicitRungeKutta stepper(field, tableau,
                             window_step_control(times, 0, points - 1, substeps, adaptive));
  Eigen::VectorXd y = y0;
  Carry carry = stepper.initial_carry(y, theta);
  for (Index k = 1; k < points; ++k) {
    // Adaptive steps land on every time (stop times): step until the state is at times[k].
    const double t_k = times[static_cast<std::size_t>(k)];
    if (adaptive) {
      while (carry.t != t_k) stepper.step(y, carry, theta);
    } else {
      for (Index s = 0; s < substeps; ++s) stepper.step(y, carry, theta);
    }
    path.col(k) = y;
  }
  if (steps_taken) *steps_taken = carry.step;
  return path;
}

DataTrainer::DataTrainer(nn::NeuralField field, std::vector<TimeSeries> trajectories,
                         std::vector<Index> training_points, DataTrainerOptions options,
                         const BatchExchange& exchange)
    : field_(std::move(field)),
      trajectories_(std::move(trajectories)),
      training_points_(std::move(training_points)),
      options_((options.validate(), std::move(options))),
      exchange_(&exchange),
      mine_(windows_of_process(options_.batch, exchange.rank(), exchange.size())),
      // Placeholder: replaced below once the windows are counted.
      sampler_(2, 1, 1, 0) {
  if (field_.batch() != 1) fail<InvalidArgument>("DataTrainer: the field must have batch 1");
  if (trajectories_.empty()) fail<InvalidArgument>("DataTrainer: no trajectories");
  if (training_points_.size() != trajectories_.size())
    fail<InvalidArgument>("DataTrainer: ", training_points_.size(), " training point counts for ",
                          trajectories_.size(), " trajectories");
  observed_ = trajectories_.front().dimension();
  if (field_.dimension() != observed_ + options_.augment)
    fail<InvalidArgument>("the data have ", observed_, " components and ", options_.augment,
                          " are augmented, so the state has ", observed_ + options_.augment,
                          ", but the network ", field_.network().describe(), " gives ",
                          field_.dimension());
  for (std::size_t j = 0; j < trajectories_.size(); ++j) {
    const TimeSeries& t = trajectories_[j];
    if (t.dimension() != observed_)
      fail<InvalidArgument>("trajectory ", j, " has ", t.dimension(), " components, not ",
                            observed_);
    if (training_points_[j] < 1 || training_points_[j] > t.points())
      fail<InvalidArgument>("trajectory ", j, ": ", training_points_[j], " training points of its ",
                            t.points());
    for (Index s = 0; s + options_.window < training_points_[j]; ++s) windows_.push_back({j, s});
  }
  if (windows_.empty())
    fail<InvalidArgument>("no trajectory has the ", options_.window + 1,
                          " training points a window of ", options_.window,
                          " intervals needs; use a smaller --window");
  sampler_ = WindowSampler(window_count() + options_.window, options_.window, options_.batch,
                           options_.seed);
  for (const TimeSeries& t : trajectories_)
    uniform_spacing_.push_back(mean_uniform_spacing(t.times));
  const Index p = field_.parameter_size();
  counts_.resize(static_cast<std::size_t>(exchange.size()));
  for (int r = 0; r < exchange.size(); ++r)
    counts_[static_cast<std::size_t>(r)] = static_cast<int>(
        1 + windows_of_process(options_.batch, r, exchange.size()).size() * (p + 1));
  mine_values_.resize(1 + static_cast<std::size_t>(mine_.size() * (p + 1)));
  all_values_.resize(static_cast<std::size_t>(exchange.size() + options_.batch * (p + 1)));
}

void DataTrainer::fast_forward(Index iterations) {
  if (iterations < 0) fail<InvalidArgument>("fast_forward: ", iterations, " iterations < 0");
  std::vector<Index> starts;
  for (Index i = 0; i < iterations; ++i) sampler_.next_batch(starts);
  iterations_ += iterations;
}

GradientResult<Eigen::VectorXd> DataTrainer::adaptive_window_gradient(const Eigen::VectorXd& theta,
                                                                      WindowStart w) {
  const TimeSeries& series = trajectories_[w.trajectory];
  const Index window = options_.window, substeps = options_.substeps;
  const Index d = observed_, s_dim = field_.dimension();
  ExplicitRungeKutta stepper(
      field_, options_.tableau,
      window_step_control(series.times, w.start, window, substeps, options_.adaptive));
  const double scale = 1.0 / static_cast<double>(options_.batch * window * d);
  const Index start = w.start;
  // Observation k of the window: the data point whose time the adaptive run landed on.
  auto term = [&series, scale, d](Index, double t, const Eigen::VectorXd& y,
                                  Eigen::VectorXd& grad) {
    const auto point =
        std::lower_bound(series.times.begin(), series.times.end(), t) - series.times.begin();
    const auto target = series.values.col(point);
    grad.setZero(y.size());  // the augmented components are not observed
    double squares = 0.0;
    for (Index i = 0; i < d; ++i) {
      const double r = y[i] - target[i];
      squares += r * r;
      grad[i] = 2.0 * scale * r;
    }
    return scale * squares;
  };
  Eigen::VectorXd y0 = Eigen::VectorXd::Zero(s_dim);
  y0.head(d) = series.values.col(start);
  const auto first = series.times.begin() + static_cast<std::ptrdiff_t>(start + 1);
  auto objective = Objective<EigenBackend>::at_times(Objective<EigenBackend>::TerminalFn{},
                                                     std::vector<double>(first, first + window),
                                                     std::move(term));
  // A revolve budget runs online; store-all needs no plan at all (the store grows with the run).
  if (options_.schedule.online_snapshots()) {
    CheckpointedAdjoint driver(stepper, std::move(objective), options_.checkpoint);
    return driver.run(y0, theta, options_.schedule);
  }
  StoreAllOptions store_all;
  store_all.check_finite = options_.checkpoint.check_finite;
  StoreAllAdjoint driver(stepper, std::move(objective), store_all);
  return driver.run(y0, theta);
}

GradientResult<Eigen::VectorXd> DataTrainer::gradient(const Eigen::VectorXd& theta,
                                                      const std::vector<Index>& starts) {
  if (static_cast<Index>(starts.size()) != options_.batch)
    fail<InvalidArgument>("gradient: ", starts.size(), " window starts given, the batch is ",
                          options_.batch);
  const Index p = field_.parameter_size();
  if (theta.size() != p)
    fail<InvalidArgument>("gradient: theta has ", theta.size(), " values but the network has ", p);
  for (Index s : starts)
    if (s < 0 || s >= window_count())
      fail<InvalidArgument>("gradient: window ", s, " is not one of the ", window_count());

  // This process's windows: a status, then per window its loss and gradient.
  std::exception_ptr failure;
  Summary summary;
  steps_ = rejected_ = 0;
  try {
    if (!options_.adaptive) {
      // Groups of windows on one grid: uniform trajectories by their spacing (equal spacings
      // share a group), and the windows of the others in one group of their own.
      std::vector<std::pair<double, std::vector<Index>>> groups;
      std::vector<Index> irregular;
      for (Index w = mine_.begin; w < mine_.end; ++w) {
        const double spacing =
            uniform_spacing_[windows_[static_cast<std::size_t>(starts[w])].trajectory];
        if (spacing == 0.0) {
          irregular.push_back(w);
          continue;
        }
        auto group = std::find_if(groups.begin(), groups.end(),
                                  [spacing](const auto& g) { return g.first == spacing; });
        if (group == groups.end()) group = groups.insert(groups.end(), {spacing, {}});
        group->second.push_back(w);
      }
      std::vector<double> losses;
      Eigen::MatrixXd grads;
      const Index steps = options_.window * options_.substeps;
      // A uniform group runs on a local clock from 0, each window offset by its start time (what
      // a time input sees). The irregular windows run together on a clock of unit steps, each
      // step of each window rescaled to its own true size (nn::NeuralOde's step rates).
      const auto run_group = [&](const std::vector<Index>& members, const StepControl& control,
                                 bool rated) {
        const auto b = static_cast<Eigen::Index>(members.size());
        std::vector<Index> numbers;
        Eigen::VectorXd offsets = Eigen::VectorXd::Zero(b);
        StepRates rates;
        if (rated) {
          rates.sizes.resize(b, steps);
          rates.starts.resize(b, steps);
        }
        for (Eigen::Index i = 0; i < b; ++i) {
          numbers.push_back(starts[members[static_cast<std::size_t>(i)]]);
          const WindowStart at = windows_[static_cast<std::size_t>(numbers.back())];
          const std::vector<double>& times = trajectories_[at.trajectory].times;
          if (!rated) {
            offsets[i] = times[static_cast<std::size_t>(at.start)];
            continue;
          }
          // The steps a prescribed control on the window's own intervals would take.
          fill_step_rates(times, at.start, options_.window, options_.window, options_.substeps, i,
                          rates.sizes, rates.starts);
        }
        Summary group_summary = batched_gradient(theta, numbers, control, offsets,
                                                 rated ? &rates : nullptr, losses, grads);
        steps_ += group_summary.steps * static_cast<Index>(members.size());
        for (std::size_t i = 0; i < members.size(); ++i) {
          double* out = mine_values_.data() + 1 + (members[i] - mine_.begin) * (p + 1);
          out[0] = losses[i];
          Eigen::Map<Eigen::VectorXd>(out + 1, p) = grads.col(static_cast<Eigen::Index>(i));
          if (members[i] == mine_.begin) summary = group_summary;
        }
      };
      for (const auto& [spacing, members] : groups)
        run_group(members,
                  StepControl::fixed(0.0, spacing / static_cast<double>(options_.substeps), steps),
                  /*rated=*/false);
      if (!irregular.empty())
        run_group(irregular, StepControl::fixed(0.0, 1.0, steps), /*rated=*/true);
    } else {
      for (Index w = mine_.begin; w < mine_.end; ++w) {
        GradientResult<Eigen::VectorXd> r =
            adaptive_window_gradient(theta, windows_[static_cast<std::size_t>(starts[w])]);
        steps_ += r.summary.steps;
        rejected_ += r.summary.rejected_steps;
        double* out = mine_values_.data() + 1 + (w - mine_.begin) * (p + 1);
        out[0] = r.loss;
        Eigen::Map<Eigen::VectorXd>(out + 1, p) = r.grad_theta;
        if (w == mine_.begin) summary = std::move(r.summary);
      }
    }
  } catch (...) {
    failure = std::current_exception();  // still take part in the gather: nobody waits
  }
  mine_values_[0] = failure ? 1.0 : 0.0;
  exchange_->all_gather(mine_values_, counts_, all_values_);
  if (failure) std::rethrow_exception(failure);

  GradientResult<Eigen::VectorXd> result;
  result.loss = 0.0;
  result.grad_theta = Eigen::VectorXd::Zero(p);
  const double* at = all_values_.data();
  for (int r = 0; r < exchange_->size(); ++r) {
    const WindowRange range = windows_of_process(options_.batch, r, exchange_->size());
    if (at[0] != 0.0)
      fail<Error>("the gradient of windows [", range.begin, ", ", range.end, ") failed on rank ", r,
                  " (that rank reports why); rank ", exchange_->rank(), " stops too");
    ++at;
    for (Index w = range.begin; w < range.end; ++w, at += p + 1) {
      result.loss += at[0];
      result.grad_theta += Eigen::Map<const Eigen::VectorXd>(at + 1, p);
    }
  }
  result.summary = std::move(summary);
  return result;
}

nn::NeuralOde& DataTrainer::batch_model(Index batch) {
  const Index use = ++batch_model_uses_;
  for (BatchModel& kept : batch_models_)
    if (kept.batch == batch) {
      kept.last_used = use;
      return *kept.model;
    }
  if (batch_models_.size() == kKeptBatchModels) {  // the least recently used one goes first
    const auto oldest = std::min_element(
        batch_models_.begin(), batch_models_.end(),
        [](const BatchModel& a, const BatchModel& b) { return a.last_used < b.last_used; });
    batch_models_.erase(oldest);
  }
  BatchModel& made = batch_models_.emplace_back();
  // The copies are written by batched_gradient alone: the model need not compare them.
  made.model = std::make_unique<nn::NeuralOde>(
      field_.network(), batch, field_.features(), nn::ParameterCopies::per_sample,
      nn::CopyCheck::by_owner,
      nn::NeuralOdeTime{field_.time_input(), field_.time_shift(), field_.time_scale()});
  // Every stage of a window keeps its forward pass for the VJP there, and a step's
  // per-window parameter gradients are added in one pass (the same bits, less work).
  made.model->keep_forward_passes(options_.window * options_.substeps * options_.tableau.stages);
  made.model->defer_parameter_gradients(options_.tableau.stages);
  made.batch = batch;
  made.last_used = use;
  return *made.model;
}

Summary DataTrainer::batched_gradient(const Eigen::VectorXd& theta,
                                      const std::vector<Index>& numbers, const StepControl& control,
                                      const Eigen::VectorXd& time_offsets, const StepRates* rates,
                                      std::vector<double>& losses, Eigen::MatrixXd& grads) {
  const auto b = static_cast<Index>(numbers.size());
  const Index d = observed_, s_dim = field_.dimension(), window = options_.window;
  const Index substeps = options_.substeps, p = theta.size();
  nn::NeuralOde& model = batch_model(b);
  if (rates) {
    model.set_step_rates(rates->sizes, rates->starts);
  } else {
    model.clear_step_rates();
    if (model.time_input()) model.set_time_offsets(time_offsets);
  }
  ExplicitRungeKutta stepper(model, options_.tableau, control);
  std::vector<WindowStart> at;
  for (Index n : numbers) at.push_back(windows_[static_cast<std::size_t>(n)]);
  Eigen::VectorXd y0 = Eigen::VectorXd::Zero(s_dim * b);
  for (Index i = 0; i < b; ++i)
    y0.segment(i * s_dim, d) = trajectories_[at[static_cast<std::size_t>(i)].trajectory].values.col(
        at[static_cast<std::size_t>(i)].start);
  // Observation k: each window's squared misfit over its observed components, kept per window
  // (terms) so that a window's loss is its own terms added in k order, whatever its group.
  const double scale = 1.0 / static_cast<double>(options_.batch * window * d);
  Eigen::MatrixXd terms = Eigen::MatrixXd::Zero(b, window);
  auto term = [&](Index step, double, const Eigen::VectorXd& y, Eigen::VectorXd& grad) {
    const Index k = step / substeps;
    grad.setZero(y.size());  // the augmented components are not observed
    double value = 0.0;
    for (Index i = 0; i < b; ++i) {
      const WindowStart& w = at[static_cast<std::size_t>(i)];
      const auto target = trajectories_[w.trajectory].values.col(w.start + k);
      double squares = 0.0;
      for (Index c = 0; c < d; ++c) {
        const double r = y[i * s_dim + c] - target[c];
        squares += r * r;
        grad[i * s_dim + c] = 2.0 * scale * r;
      }
      terms(i, k - 1) = scale * squares;
      value += terms(i, k - 1);
    }
    return value;
  };
  std::vector<Index> steps;
  for (Index k = 1; k <= window; ++k) steps.push_back(k * substeps);
  const Eigen::VectorXd copies = theta.replicate(b, 1);
  // The health of a gradient over per-window copies says nothing a trainer reads.
  CheckpointOptions checkpoint = options_.checkpoint;
  checkpoint.assess_health = false;
  CheckpointedAdjoint driver(stepper,
                             Objective<EigenBackend>(Objective<EigenBackend>::TerminalFn{},
                                                     std::move(steps), std::move(term)),
                             checkpoint);
  auto result = driver.run(y0, copies, options_.schedule);
  losses.assign(static_cast<std::size_t>(b), 0.0);
  grads.resize(p, b);
  for (Index i = 0; i < b; ++i) {
    for (Index k = 0; k < window; ++k) losses[static_cast<std::size_t>(i)] += terms(i, k);
    grads.col(i) = result.grad_theta.segment(i * p, p);
  }
  return std::move(result.summary);
}

Index DataTrainer::add_held_out_window_errors(const Eigen::VectorXd& theta, std::size_t j,
                                              double& sum) const {
  const TimeSeries& series = trajectories_[j];
  const Index points = series.points();
  const Index s_dim = field_.dimension(), window = options_.window, m = options_.substeps;
  // From the last training point on (the first held-out point's one-step-ahead prediction) to
  // the second-to-last point, each window as long as W or as the data that is left.
  std::vector<Index> starts;
  for (Index start = std::max<Index>(training_points_[j] - 1, 0); start + 1 < points; ++start)
    starts.push_back(start);
  const auto intervals_of = [&](Index start) { return std::min(window, points - 1 - start); };
  Index count = 0;
  if (options_.adaptive) {  // each window takes its own steps: one at a time
    for (Index start : starts) {
      const Index intervals = intervals_of(start);
      const auto first = series.times.begin() + static_cast<std::ptrdiff_t>(start);
      const std::vector<double> times(first, first + static_cast<std::ptrdiff_t>(intervals + 1));
      Eigen::VectorXd y0 = Eigen::VectorXd::Zero(s_dim);
      y0.head(observed_) = series.values.col(start);
      const Eigen::MatrixXd path =
          integrate_on_grid(field_, options_.tableau, m, theta, y0, times, options_.adaptive);
      for (Index k = 1; k <= intervals; ++k) {
        sum += (path.col(k).head(observed_) - series.values.col(start + k)).squaredNorm();
        count += observed_;
      }
    }
    return count;
  }
  if (starts.empty()) return 0;
  // Fixed steps: every window at once, each step rescaled to its own size (nn::NeuralOde's step
  // rates, as in training).
  const auto b = static_cast<Index>(starts.size());
  const Index steps = window * m;
  nn::NeuralOde model(
      field_.network(), b, field_.features(), nn::ParameterCopies::shared,
      nn::CopyCheck::every_call,
      nn::NeuralOdeTime{field_.time_input(), field_.time_shift(), field_.time_scale()});
  Eigen::MatrixXd sizes(b, steps), begins(b, steps);
  Eigen::VectorXd y = Eigen::VectorXd::Zero(s_dim * b);
  for (Index i = 0; i < b; ++i) {
    const Index start = starts[static_cast<std::size_t>(i)];
    y.segment(i * s_dim, observed_) = series.values.col(start);
    fill_step_rates(series.times, start, intervals_of(start), window, m, i, sizes, begins);
  }
  model.set_step_rates(std::move(sizes), std::move(begins));
  ExplicitRungeKutta stepper(model, options_.tableau, StepControl::fixed(0.0, 1.0, steps));
  Carry carry = stepper.initial_carry(y, theta);
  for (Index k = 1; k <= window; ++k) {
    for (Index s = 0; s < m; ++s) stepper.step(y, carry, theta);
    for (Index i = 0; i < b; ++i) {
      const Index start = starts[static_cast<std::size_t>(i)];
      if (k > intervals_of(start)) continue;
      sum += (y.segment(i * s_dim, observed_) - series.values.col(start + k)).squaredNorm();
      count += observed_;
    }
  }
  return count;
}

DataIteration DataTrainer::step(Eigen::VectorXd& theta, Optimizer& optimizer) {
  using Clock = std::chrono::steady_clock;
  DataIteration record;
  record.iteration = ++iterations_;
  const auto start = Clock::now();
  auto result = gradient(theta, sampler_.next_batch());
  const auto computed = Clock::now();
  record.loss = result.loss;
  record.steps = steps_;
  record.rejected = rejected_;
  record.gradient_norm = result.grad_theta.norm();
  if (options_.clip_norm > 0.0 && record.gradient_norm > options_.clip_norm) {
    result.grad_theta *= options_.clip_norm / record.gradient_norm;
    record.clipped = true;
  }
  optimizer.step(theta, result.grad_theta);
  record.update_seconds = seconds_since(computed);
  record.gradient_seconds = std::chrono::duration<double>(computed - start).count();
  return record;
}

Eigen::MatrixXd DataTrainer::predict(const Eigen::VectorXd& theta, std::size_t j) const {
  const TimeSeries& series = trajectories_.at(j);
  Eigen::VectorXd y0 = Eigen::VectorXd::Zero(field_.dimension());
  y0.head(observed_) = series.values.col(0);
  return integrate_on_grid(field_, options_.tableau, options_.substeps, theta, y0, series.times,
                           options_.adaptive);
}

Evaluation DataTrainer::evaluate(const Eigen::VectorXd& theta) const {
  const bool windows = options_.validation == ValidationMeasure::windows;
  double train = 0.0, held = 0.0;
  Index train_count = 0, held_count = 0;
  for (std::size_t j = 0; j < trajectories_.size(); ++j) {
    const Eigen::MatrixXd path = predict(theta, j);
    const TimeSeries& series = trajectories_[j];
    for (Index k = 1; k < series.points(); ++k) {
      const double e = (path.col(k).head(observed_) - series.values.col(k)).squaredNorm();
      if (k < training_points_[j]) {
        train += e;
        train_count += observed_;
      } else if (!windows) {
        held += e;
        held_count += observed_;
      }
    }
    if (windows) held_count += add_held_out_window_errors(theta, j, held);
  }
  Evaluation result;
  result.train_mse = train_count > 0 ? train / static_cast<double>(train_count) : 0.0;
  result.validation_mse = held_count > 0 ? held / static_cast<double>(held_count)
                                         : std::numeric_limits<double>::quiet_NaN();
  return result;
}

}  // namespace rwd::training
