// src/cli/gradient_run.hpp — what `rewind run` computes: J = ½|y_N|², its gradient through
// rwd::differentiate (store-all, or checkpointing with the plan the flags ask for, its costs
// measured by rwd::measure_costs), and a finite-difference spot check of dJ/dy0.
//
//   rwd::cli::RunSettings settings = rwd::cli::resolve_run_settings(options);
//   rwd::cli::RunReport report = rwd::cli::run_gradient(settings);
//
// The spot check: d is a unit vector from a seeded, platform-independent hash
// (rwd::detail::hash_uniform); central differences (J(y0 + εd) − J(y0 − εd)) / 2ε
// (rwd::forward_loss runs) for ε = ε₀, ε₀/2, … are extrapolated to ε → 0
// (extrapolated_difference.hpp) and compared with the adjoint's ⟨dJ/dy0, d⟩. The adjoint of
// an adaptive run is exact for the steps that run accepted, so for adaptive runs the differences
// rerun those steps (StepControl::prescribed) rather than letting the controller move them.
// A perturbed run that becomes non-finite counts as "ε too large" and the sweep goes on below it.
// Cost: typically 10 to 30 forward runs, at most 80 (when the differences do not converge, as
// for chaotic runs over long horizons; the verdict is then "inconclusive").
//
// Generic over the problem's backend: the Eigen backend in one process, or a backend whose state
// is split across MPI ranks (distributed_run.hpp), where every rank runs this same code — every
// value that decides what to do next (a plan, a measured time, a norm) is agreed on all ranks
// through the backend's collectives (rwd::max_on_any_process, the reductions).
//
// Header-only and free of CLI11/JSON, so tests/cli/cli_test.cpp can use it with rewind alone.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "extrapolated_difference.hpp"
#include "problem_registry.hpp"
#include "progress.hpp"
#include "resume_costs.hpp"
#include "rewind/adjoint/differentiate.hpp"
#include "rewind/adjoint/forward_loss.hpp"
#include "rewind/adjoint/measure_costs.hpp"
#include "rewind/adjoint/plan_costs.hpp"
#include "rewind/backend/eigen_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/format.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/integrators/stochastic_stepper.hpp"
#include "rewind/interrupt.hpp"
#include "rewind/objective.hpp"
#include "rewind/problems/detail/problem_support.hpp"
#include "rewind/schedule/cost_needs.hpp"
#include "rewind/schedule/online_plan.hpp"
#include "rewind/warning.hpp"
#include "run_report.hpp"
#include "run_settings.hpp"

namespace rwd::cli {

// The first (largest) step of the finite-difference sweep: 1e-3 · max(1, |y0|_∞). The sweep
// halves it until the extrapolated differences agree (extrapolated_difference.hpp).
inline constexpr const char* kFdStepRule = "1e-3 * max(1, |y0|_inf), halved";
inline double default_fd_step(const Eigen::VectorXd& y0) {
  return 1e-3 * std::max(1.0, y0.size() ? y0.cwiseAbs().maxCoeff() : 0.0);
}
template <class B>
double default_fd_step(const typename B::Vector& y0) {
  if constexpr (std::is_same_v<B, EigenBackend>)
    return default_fd_step(y0);
  else
    return 1e-3 * std::max(1.0, B::max_norm(y0));
}

// A unit vector of size n from (seed, i) ↦ hash_uniform: the same on every platform.
inline Eigen::VectorXd spot_check_direction(Index n, std::uint64_t seed) {
  Eigen::VectorXd d(n);
  for (Index i = 0; i < n; ++i)
    d[i] = rwd::detail::hash_uniform(seed, static_cast<std::uint64_t>(i));
  const double norm = d.norm();
  if (norm > 0.0) {
    d /= norm;
  } else {
    d.setZero();
    d[0] = 1.0;
  }
  return d;
}

// The same direction on a backend split across processes: each holds the entries of its own
// global indices (B::global_index), normalised by the global norm.
template <class B>
typename B::Vector spot_check_direction_like(const typename B::Vector& y0, std::uint64_t seed) {
  if constexpr (std::is_same_v<B, EigenBackend>) {
    return spot_check_direction(static_cast<Index>(y0.size()), seed);
  } else {
    std::vector<double> host(static_cast<std::size_t>(host_size<B>(y0)));
    for (std::size_t j = 0; j < host.size(); ++j) {
      // A split vector holds a slice: key each entry by its global index.
      Index global = static_cast<Index>(j);
      if constexpr (requires { B::global_index(y0, global); })
        global = B::global_index(y0, static_cast<Index>(j));
      host[j] = rwd::detail::hash_uniform(seed, static_cast<std::uint64_t>(global));
    }
    typename B::Vector d = B::zeros(B::size(y0));
    B::copy_from_host(host, d);
    const double norm = std::sqrt(B::dot(d, d));
    if (!(norm > 0.0))
      rwd::detail::fail<InvalidArgument>("the finite-difference direction has no length");
    B::scale(1.0 / norm, d);
    return d;
  }
}

// |x|₂ without overflow for finite x: Eigen's stableNorm, or the max norm times the norm of x
// scaled by it.
template <class B>
double stable_norm(const typename B::Vector& x) {
  if constexpr (std::is_same_v<B, EigenBackend>) {
    return x.stableNorm();
  } else {
    const double scale = B::max_norm(x);
    if (!(scale > 0.0) || !std::isfinite(scale)) return scale;
    typename B::Vector scaled = B::zeros(B::size(x));
    B::copy(x, scaled);
    B::scale(1.0 / scale, scaled);
    return scale * std::sqrt(B::dot(scaled, scaled));
  }
}

// A replicated vector (θ, its gradient) as host values.
template <class B>
std::vector<double> host_values(const typename B::Vector& x) {
  std::vector<double> host(static_cast<std::size_t>(host_size<B>(x)));
  B::copy_to_host(x, host);
  return host;
}

// |a − b| / max(|a|, |b|, floor); 0 when all three are 0.
inline double relative_difference(double a, double b, double floor = 0.0) {
  const double scale = std::max({std::abs(a), std::abs(b), floor});
  return scale > 0.0 ? std::abs(a - b) / scale : 0.0;
}

// Agreement within kFdAgreement is "agree"; otherwise the check is "inconclusive" when the
// differences' own error estimate exceeds kFdConvergence of the value (they did not converge,
// as for long chaotic runs, where J is too rough at every resolvable ε), else "disagree".
inline constexpr double kFdAgreement = 1e-6;
inline constexpr double kFdConvergence = 1e-4;
inline const char* fd_verdict(const FiniteDifferenceCheck& fd) {
  if (fd.rel_error <= fd.agreement) return "agree";
  if (fd.fd_error_estimate > kFdConvergence * std::max(std::abs(fd.directional_fd), fd.resolution))
    return "inconclusive";
  return "disagree";
}

// Calls f with the stepper of the settings' method (rwd::with_stepper, the one factory) with
// `control` (the settings' own, or frozen steps for the spot check).
template <class P, class F>
decltype(auto) with_stepper(const P& problem, const RunSettings& settings,
                            const StepControl& control, F&& f) {
  return rwd::with_stepper(problem, settings.method, control, std::forward<F>(f));
}

// The sizes of the steps an adaptive run accepts (one forward sweep; adaptive runs are
// Runge–Kutta ones, explicit or implicit).
template <class P, class V>
std::vector<double> accepted_step_sizes(const P& problem, const RunSettings& settings, const V& y0,
                                        const V& theta) {
  return with_stepper(problem, settings, settings.control, [&](auto& probe) {
    std::vector<double> sizes;
    if constexpr (requires { probe.last_step_size(); }) {
      V y = y0;
      Carry carry = probe.initial_carry(y, theta);
      while (!probe.finished(carry)) {
        probe.step(y, carry, theta);
        sizes.push_back(probe.last_step_size());
      }
    } else {
      rwd::detail::fail<InvalidArgument>("method ", method_name(settings.method),
                                         " takes no adaptive steps");
    }
    return sizes;
  });
}

// The finite-difference spot check of dJ/dy0 (see the top of this file).
template <class P, class B = typename P::Backend>
FiniteDifferenceCheck spot_check(const P& problem, const RunSettings& settings,
                                 const Objective<B>& objective, const typename B::Vector& y0,
                                 const typename B::Vector& theta, const typename B::Vector& grad_y0,
                                 double loss, ProgressBar* bar = nullptr) {
  using V = typename B::Vector;
  FiniteDifferenceCheck fd;
  fd.seed = settings.seed;
  fd.epsilon_rule = settings.fd_epsilon ? "--fd-epsilon, halved" : kFdStepRule;
  const double first_step = settings.fd_epsilon.value_or(default_fd_step<B>(y0));
  fd.steps_frozen = settings.control.is_adaptive();
  const StepControl fd_control =
      fd.steps_frozen ? StepControl::prescribed(settings.control.t0,
                                                accepted_step_sizes(problem, settings, y0, theta))
                      : settings.control;
  return with_stepper(problem, settings, fd_control, [&](auto& fd_stepper) {
    ProgressBar quiet(false);
    StepProgress progress(fd_stepper, bar ? *bar : quiet, "finite-difference check");
    const V d = spot_check_direction_like<B>(y0, settings.seed);
    V y = y0;
    // A perturbed run that blows up means "step too large": NaN makes the sweep go smaller.
    auto loss_along_d = [&](double h) {
      if constexpr (std::is_same_v<B, EigenBackend>) {
        y = y0 + h * d;
      } else {
        B::copy(y0, y);
        B::axpy(h, d, y);
      }
      try {
        return forward_loss(fd_stepper, objective, y, theta, nullptr, progress.observer());
      } catch (const NumericalError&) {
        return std::numeric_limits<double>::quiet_NaN();
      } catch (const SolverError&) {  // an implicit solver that fails on the perturbed start, too
        return std::numeric_limits<double>::quiet_NaN();
      }
    };
    const ExtrapolatedDifference diff = extrapolated_central_difference(loss_along_d, first_step);
    fd.directional_fd = diff.value;
    fd.epsilon = diff.finest_step;
    fd.first_epsilon = diff.first_step;
    fd.loss_evaluations = diff.evaluations;
    fd.directional_adjoint = B::dot(grad_y0, d);
    // Differences of J cannot resolve derivatives below ~ machine ε · |J| / ε_finest, however well
    // their tableau entries happen to agree.
    fd.resolution = std::numeric_limits<double>::epsilon() * std::abs(loss) / fd.epsilon;
    fd.fd_error_estimate = std::max(diff.error_estimate, fd.resolution);
    fd.rel_error = relative_difference(fd.directional_fd, fd.directional_adjoint, fd.resolution);
    // BDF's adjoint is CVODES's continuous one, accurate to a multiple of the tolerance, not to
    // round-off: agreement within 10⁴ · rtol (measured: Robertson 7e-7 at rtol 1e-6, the
    // Brusselator 3e-3 at rtol 1e-6 and 3e-6 at 1e-9 — about 3000 · rtol).
    const auto* bdf = std::get_if<BdfMethod>(&settings.method);
    fd.agreement = bdf ? std::max(kFdAgreement, 1e4 * bdf->options.rtol) : kFdAgreement;
    fd.verdict = fd_verdict(fd);
    return fd;
  });
}

// What `probe` asks for, and one forward step, measured with a stepper of this problem and
// method made for the purpose (rwd::measure_costs; the run's own stepper is left untouched).
// Across ranks, the slowest rank's figures, so that every rank plans with the same costs.
template <class P, class V>
CostMeasurement measure_run_costs(const P& problem, const RunSettings& settings, const V& y0,
                                  const V& theta, const CostProbe& probe = {}) {
  return with_stepper(problem, settings, settings.control,
                      [&](auto& stepper) { return rwd::measure_costs(stepper, y0, theta, probe); });
}

#ifndef REWIND_VERSION
#define REWIND_VERSION "unknown"
#endif

// What a resumed run must share with the run that left its snapshot file, beyond what the
// driver adds itself (sizes, y0 and θ, method, schedule, steps): the tool's version, the problem
// (a model plugin's file by its bytes) and how it is run. Costs measured before planning follow
// (measured_costs_line).
inline std::string resume_identity(const RunSettings& settings) {
  const auto* sde = std::get_if<StochasticMethod>(&settings.method);
  std::ostringstream out;
  out << "rewind = " << REWIND_VERSION << "\nproblem = " << settings.problem->name;
  if (!settings.problem->identity.empty()) out << "\nmodel = " << settings.problem->identity;
  out << "\nn = " << settings.n << "\nbackend = " << static_cast<int>(settings.backend)
      << "\nnoise seed = " << (sde ? sde->noise_seed : 0)
      << "\nadjoint cost = " << settings.checkpoint.adjoint_cost
      << "\ndisk costs = " << settings.checkpoint.disk_write_cost.value_or(-1.0) << " "
      << settings.checkpoint.disk_read_cost.value_or(-1.0) << '\n';
  return out.str();
}

// Called with the plan of a checkpointed run before its scheduled sweep starts.
using PlanCallback = std::function<void(const CheckpointReport&)>;
// Called every few steps of the gradient run, forward and reverse (StepProgress::kSampleEvery).
using StepSampler = std::function<void()>;

// The costs the flags give (--disk-write-cost, --disk-read-cost, and --copy-cost with
// --stage-aware), each of which overrides a measured one (rwd::with_given_costs).
inline GivenCosts given_costs(const CheckpointSettings& flags) {
  GivenCosts given;
  given.disk_write = flags.disk_write_cost;
  given.disk_read = flags.disk_read_cost;
  if (flags.stage_aware) given.copy = flags.copy_cost;
  return given;
}

// What an earlier attempt of a resumed run measured, as a measurement, when it holds everything
// `needs` names (resume_costs.hpp); nullopt otherwise.
inline std::optional<CostMeasurement> earlier_measurement(
    const std::optional<MeasuredCosts>& earlier, const CostNeeds& needs) {
  if (!earlier || (needs.disk && !earlier->has_disk()) ||
      (needs.level_copies() && !earlier->has_levels()))
    return std::nullopt;
  CostMeasurement measured;
  measured.step_seconds = earlier->step_seconds;
  if (needs.disk) measured.disk = earlier->disk;
  if (needs.level_copies()) measured.levels = earlier->levels;
  return measured;
}

// The plan request and driver options of a checkpointed run of this problem: the budget from
// --memory in snapshots of this state size (rwd::snapshot_bytes), and the costs its plan weighs
// that the flags do not give — which ones is the library's answer (rwd::costs_to_measure: a
// two-level schedule's disk, every level of a three-level schedule, the --stage-aware chooser's
// snapshot copies) — measured against this problem's own step (rwd::cost_probe_for), the given
// ones over them (rwd::with_given_costs). A resumed attempt plans with the costs its first
// attempt measured (resume_costs.hpp). Records its inputs in `checkpointing`. Across ranks,
// sizes and costs are those of the rank holding the most values and the slowest rank (every rank
// derives the same plan from them): a snapshot is that rank's slice, --memory a budget per rank.
template <class P, class V>
std::pair<PlanRequest, CheckpointOptions> checkpoint_request(const P& problem,
                                                             const RunSettings& settings,
                                                             const V& y0, const V& theta,
                                                             CheckpointReport& checkpointing) {
  using B = typename P::Backend;
  const auto attempt_started = std::filesystem::file_time_type::clock::now();
  const CheckpointSettings& flags = settings.checkpoint;
  checkpointing.snapshot_bytes = rwd::snapshot_bytes<B>(y0);
  checkpointing.memory_budget = flags.memory_bytes;
  checkpointing.adjoint_cost = flags.adjoint_cost;
  checkpointing.drift_policy = flags.drift;
  PlanRequest request = flags.request;
  if (flags.memory_bytes)
    request.budget =
        snapshots_in_memory(*flags.memory_bytes, checkpointing.snapshot_bytes, "--memory");
  request.validate();
  if (flags.stage_aware && settings.control.is_adaptive())
    rwd::detail::fail<InvalidArgument>(
        "--stage-aware with a snapshot budget needs fixed steps (an adaptive run's length is "
        "not known before it ends); without a budget, store-all keeps every step's stages");

  CheckpointOptions options;
  options.drift_policy = flags.drift;
  if (!flags.disk_directory.empty()) {
    options.disk.directory = flags.disk_directory;
    options.disk.asynchronous = !flags.sync_io;
    options.disk.keep_file = flags.keep_snapshots;
    options.disk.compression_level = flags.compression;
    options.disk.resume = flags.resume;
    if (flags.resume) options.disk.identity = resume_identity(settings);
  }

  const GivenCosts given = given_costs(flags);
  // What the schedule family weighs is kept with a resumable run's snapshot file; the stage
  // chooser's copies are measured afresh.
  const CostNeeds family_needs = costs_to_measure(request, given);
  const CostNeeds needs = costs_to_measure(request, given, flags.stage_aware);
  if (needs.disk && flags.disk_directory.empty())
    rwd::detail::fail<InvalidArgument>(request.family->name(),
                                       " weighs the disk level's costs: add --disk DIR");
  std::optional<CostMeasurement> measured;
  if (flags.resume && family_needs.any()) {
    measured = earlier_measurement(costs_of_earlier_attempt<B>(flags.disk_directory, y0), needs);
    if (measured) checkpointing.costs_from_earlier_attempt = true;
  }
  if (needs.any() && !measured) {
    const Index state_bytes = snapshot_values<B>(y0) * static_cast<Index>(sizeof(double));
    measured = measure_run_costs(
        problem, settings, y0, theta,
        cost_probe_for(needs, request, state_bytes, flags.disk_directory, flags.stage_aware));
  }
  if (measured) {
    checkpointing.step_seconds = measured->step_seconds;
    if (needs.disk) {
      checkpointing.disk_costs_measured = true;
      checkpointing.disk_costs = *measured->disk;
    }
    if (needs.level_copies()) {
      checkpointing.level_costs_measured = true;
      checkpointing.level_costs = *measured->levels;
    }
  }
  // Given costs always win: flags put them in the request (resolve_checkpoint_flags), but a
  // caller may set them afterwards (a fit's later stages reuse the first stage's disk costs).
  if (measured || given.copy || given.disk_write || given.disk_read)
    request.costs = with_given_costs(request.costs, needs,
                                     measured ? measured->in_forward_steps() : CostModel{}, given);
  if (!flags.disk_directory.empty() || flags.stage_aware || needs.any())
    request.costs.adjoint_cost_factor = flags.adjoint_cost;

  if (flags.resume && family_needs.any()) {
    // Every rank has measured by now (the figures are agreed): what an earlier attempt killed
    // while measuring left in the run's directory goes.
    for (const auto& left : remove_abandoned_disk_probes(flags.disk_directory, attempt_started))
      warn("snapshot file", "removed ", left.string(),
           ", left by an attempt killed while it measured the disk");
    MeasuredCosts kept;
    kept.step_seconds = checkpointing.step_seconds;
    if (checkpointing.disk_costs_measured) kept.disk = checkpointing.disk_costs;
    if (checkpointing.level_costs_measured) kept.levels = checkpointing.level_costs;
    options.disk.identity += measured_costs_line(kept);
  }
  return {request, options};
}

// --stage-aware without a budget: store-all keeping every step's stage values
// (StoreAllOptions::keep_stages), so that the reverse sweep re-runs no step — for an implicit or
// Rosenbrock method, none of its Newton iterations or factorisations; for an adaptive method, none
// of its attempts (each step keeps its accepted size too).
template <class Stepper>
bool keep_every_stage(const Stepper&, const RunSettings& settings) {
  if (!settings.checkpoint.stage_aware) return false;
  if constexpr (!StageKeepingStepper<Stepper>) {
    rwd::detail::fail<InvalidArgument>("--stage-aware: --method ", method_name(settings.method),
                                       " cannot keep its stage values");
  } else {
    return true;
  }
}

// Plans `steps` steps into checkpointing.plan, refusing a plan whose memory slots — allocated by
// the store before the first step — exceed half the physical memory.
// stage_units > 0 (--stage-aware): the least predicted time of revolve, stage-aware and the
// store-alls within the request's budget (choose_stage_plan).
inline const CheckpointPlan& plan_within_memory(const PlanRequest& request, Index steps,
                                                CheckpointReport& checkpointing,
                                                int stage_units = 0) {
  if (stage_units > 0) {
    if (!request.family->binomial_budget(request) || request.all_on_disk)
      rwd::detail::fail<InvalidArgument>(
          "--stage-aware needs a budget in memory (--snapshots C or --memory BYTES) and no "
          "other --schedule or disk level");
    checkpointing.plan = choose_stage_plan(steps, *request.budget, stage_units, request.costs);
  } else {
    checkpointing.plan = plan_checkpoints(request, steps);
  }
  checkpointing.store_all_bytes =
      (static_cast<double>(steps) + 1.0) * static_cast<double>(checkpointing.snapshot_bytes);
  const double reserved = static_cast<double>(checkpointing.plan.slots_used_on(LevelKind::memory)) *
                          static_cast<double>(checkpointing.snapshot_bytes);
  const double limit = static_cast<double>(rwd::detail::half_physical_memory());
  if (reserved > limit)
    rwd::detail::fail<InvalidArgument>(checkpointing.plan.name, " would reserve ",
                                       checkpointing.plan.slots_used_on(LevelKind::memory),
                                       " snapshots of ", checkpointing.snapshot_bytes, " bytes (",
                                       format_bytes(reserved),
                                       "), above half the physical memory (", format_bytes(limit),
                                       "); use fewer --snapshots or a smaller --memory");
  return checkpointing.plan;
}

// dJ/dθ of a run whose initial state depends on θ, from the driver's dJ/dy0 and dJ/dθ (a model
// with initial_state(θ): dJ/dθ + (∂y0/∂θ)ᵀ dJ/dy0). Empty: y0 does not depend on θ.
template <class V>
using ThroughInitialState = std::function<V(const V& grad_y0, const V& grad_theta)>;

template <class P, class V = typename P::Backend::Vector>
RunReport run_gradient(const P& problem, const V& y0, const V& theta,
                       std::vector<std::string> parameter_names, const RunSettings& settings,
                       const PlanCallback& on_plan = {}, const StepSampler& sample = {},
                       const ThroughInitialState<V>& through_initial_state = {}) {
  using B = typename P::Backend;
  const auto objective = Objective<B>::terminal_squared_norm();

  return with_stepper(problem, settings, settings.control, [&](auto& stepper) {
    ProgressBar bar(settings.progress);
    StepProgress progress(stepper, bar, "", sample);

    RunReport report;
    report.settings = settings;
    report.state_size = stepper.state_size();
    report.parameters = host_values<B>(theta);
    report.parameter_size = stepper.parameter_size();
    auto take = [&](const GradientResult<V>& result) {
      report.loss = result.loss;
      // A stable norm: a finite gradient with entries above 1e154 (chaotic runs) has a finite
      // norm.
      report.grad_y0_norm = stable_norm<B>(result.grad_y0);
      report.grad_y0 = host_values<B>(result.grad_y0);
      report.final_state = host_values<B>(result.y_final);
      if (through_initial_state) {
        const V grad_theta = through_initial_state(result.grad_y0, result.grad_theta);
        report.grad_theta_norm = stable_norm<B>(grad_theta);
        report.grad_theta = host_values<B>(grad_theta);
      } else {
        report.grad_theta_norm = stable_norm<B>(result.grad_theta);
        report.grad_theta = host_values<B>(result.grad_theta);
      }
      report.summary = result.summary;
      if (report.summary.ranks > 1) {
        // Each rank stored its own slice: report the largest (the memory one rank needs).
        // Every rank has the same levels (one plan), so each takes part in every maximum.
        for (LevelStatistics& level : report.summary.storage.levels)
          level.peak_bytes = static_cast<std::int64_t>(
              max_on_any_process<B>(static_cast<double>(level.peak_bytes)));
      }
    };
    V grad_y0;

    if (!settings.checkpoint.checkpointed) {
      StoreAllStrategy store_all;
      store_all.options.observer = progress.observer();
      store_all.options.keep_stages = keep_every_stage(stepper, settings);
      const GradientResult<V> result = differentiate(stepper, objective, y0, theta, store_all);
      take(result);
      grad_y0 = result.grad_y0;
    } else {
      report.checkpointed = true;
      CheckpointReport& checkpointing = report.checkpoint;
      // Not a structured binding: the lambda below refers to both, which clang before 16 refuses.
      auto planned = checkpoint_request(problem, settings, y0, theta, checkpointing);
      PlanRequest& request = planned.first;
      CheckpointOptions& options = planned.second;
      options.observer = progress.observer();
      // The driver calls the planner once, when the number of steps is known (after the counting
      // sweep of an adaptive run): the plan is reported before the scheduled sweep starts.
      int stage_units = 0;
      if (settings.checkpoint.stage_aware) {
        if constexpr (StageKeepingStepper<std::remove_cvref_t<decltype(stepper)>>)
          stage_units = stepper.stage_count();
        else
          rwd::detail::fail<InvalidArgument>(
              "--stage-aware needs a method that keeps its stage values (not bdf)");
      }
      auto planner = [&](Index steps) -> CheckpointPlan {
        plan_within_memory(request, steps, checkpointing, stage_units);
        if (on_plan) {
          bar.clear();
          on_plan(checkpointing);
        }
        return checkpointing.plan;
      };
      // A run of unknown length (adaptive) with revolve's budget runs online(c) with no
      // counting sweep, its snapshots in memory or all on disk (--disk: resumable): its plan,
      // for the report, is what the online schedule cost once it ended.
      std::optional<int> online;
      if (const std::optional<Index> budget = request.family->binomial_budget(request);
          budget && stage_units == 0)
        online = static_cast<int>(*budget);
      if (settings.checkpoint.online_rule_given && !online)
        rwd::detail::fail<InvalidArgument>(
            "--online-rule needs the online schedule: revolve with --snapshots C (or --memory), "
            "without --stage-aware");
      // A run with a disk level stops at a step boundary on SIGINT/SIGTERM (rwd::Interrupted),
      // its background writes done; a resumable one saves its progress first.
      std::optional<StopOnSignals> stop_on_signals;
      if (!settings.checkpoint.disk_directory.empty()) stop_on_signals.emplace();
      const OnlineRule rule = settings.checkpoint.online_rule;
      const CheckpointStrategy strategy{Planner(planner, online, rule, request.all_on_disk),
                                        options};
      const CheckpointedResult<V> result = differentiate(stepper, objective, y0, theta, strategy);
      stop_on_signals.reset();
      if (online && result.summary.schedule == OnlineSchedule(*online, rule).name()) {
        checkpointing.plan =
            rwd::plan_online(*online, result.summary.steps, rule, request.all_on_disk);
        checkpointing.store_all_bytes = (static_cast<double>(result.summary.steps) + 1.0) *
                                        static_cast<double>(checkpointing.snapshot_bytes);
      }
      take(result);
      grad_y0 = result.grad_y0;
      checkpointing.drift = result.drift;
      checkpointing.counting_steps = result.counting_steps;
      checkpointing.resumed_at_action = result.resumed_at_action;
      checkpointing.adopted_snapshots = result.adopted_snapshots;
      checkpointing.resume_replayed_steps = result.resume_replayed_steps;
    }
    bar.clear();

    report.parameter_names = std::move(parameter_names);
    if (static_cast<Index>(report.parameter_names.size()) != report.parameter_size)
      report.parameter_names.clear();

    if (settings.fd_check) {
      report.fd = spot_check(problem, settings, objective, y0, theta, grad_y0, report.loss, &bar);
      report.fd_checked = true;
    }
    return report;
  });
}

// Runs `problem` (on the Eigen backend) from its default initial state, with its default
// parameters changed by --parameters: what ProblemInfo::run does for a built-in problem.
template <class P>
RunReport run_gradient_from_defaults(const P& problem, const RunSettings& settings,
                                     const PlanCallback& on_plan) {
  const Eigen::VectorXd y0 = problem.default_initial_state();
  Eigen::VectorXd theta = problem.default_parameters();
  apply_parameter_values(settings.parameters, theta);
  return run_gradient(problem, y0, theta, problem.parameter_names(), settings, on_plan);
}

// Builds the problem the settings name and runs it (ProblemInfo::run).
inline RunReport run_gradient(const RunSettings& settings, const PlanCallback& on_plan = {}) {
  return settings.problem->run(settings, on_plan);
}

}  // namespace rwd::cli
