// The `rewind` tool's logic without its command line: problem names, option checks and defaults,
// the extrapolated finite differences, the gradient run with its spot check, byte-size parsing
// and checkpointed runs (planning itself is tested with the schedule part, in
// tests/checkpoint/schedule/checkpoint_plan_test.cpp). (The executable
// itself — exit statuses, messages, JSON — is tested by the ctests labelled "cli" that
// tests/cli/CMakeLists.txt adds.)
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "../../src/cli/builtin_problems.hpp"
#include "../../src/cli/byte_size.hpp"
#include "../../src/cli/checkpoint_flags.hpp"
#ifdef REWIND_CLI_WITH_MPI
#include "../../src/cli/distributed_run.hpp"
#endif
#include "../../src/cli/extrapolated_difference.hpp"
#include "../../src/cli/gradient_run.hpp"
#include "../../src/cli/problem_parameters.hpp"
#include "../../src/cli/problem_registry.hpp"
#include "../../src/cli/progress.hpp"
#include "../../src/cli/run_settings.hpp"
#include "../../src/cli/schedule_plan.hpp"
#include "rewind/schedule/revolve_cost.hpp"
#include "support/error_message.hpp"

namespace rwd::cli {
namespace {

// The message of the InvalidArgument that resolve_run_settings throws ("" if none).
std::string refusal(const RunOptions& options) {
  try {
    resolve_run_settings(options);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

RunOptions options_for(const std::string& problem) {
  RunOptions o;
  o.problem = problem;
  return o;
}

TEST(ProblemRegistry, FindsCanonicalNamesAliasesAndSpellings) {
  for (const ProblemInfo& info : problem_table()) {
    ASSERT_NE(find_problem(info.name), nullptr) << info.name;
    EXPECT_EQ(find_problem(info.name), &info);
  }
  EXPECT_EQ(find_problem("lotka-volterra")->name, "lotka_volterra");
  EXPECT_EQ(find_problem("vanderpol")->name, "van_der_pol");
  EXPECT_EQ(find_problem("van-der-pol")->name, "van_der_pol");
  EXPECT_EQ(find_problem("gray-scott")->name, "gray_scott");
  EXPECT_EQ(find_problem("Lorenz96")->name, "lorenz96");
  EXPECT_EQ(find_problem("lorenz"), nullptr);
  EXPECT_EQ(find_problem(""), nullptr);
}

#ifdef REWIND_CLI_WITH_MPI
// The problems whose facts say they split across ranks are exactly those the tool has a split
// model for (src/cli/distributed_run.cpp), so a new problem cannot claim a form mpirun lacks.
TEST(ProblemRegistry, SplitFormsMatchTheProblemsFacts) {
  for (const std::string& mismatch : split_form_mismatches()) ADD_FAILURE() << mismatch;
  int splitting = 0;
  for (const ProblemInfo& p : problem_table()) splitting += splits_across_ranks(p) ? 1 : 0;
  EXPECT_EQ(splitting, 4) << problems_split_across_ranks();
}
#endif

TEST(ProblemRegistry, UnknownNameListsTheKnownOnes) {
  try {
    require_problem("no_such_problem");
    FAIL() << "no exception";
  } catch (const InvalidArgument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("unknown problem 'no_such_problem'"), std::string::npos) << message;
    EXPECT_NE(message.find("gray_scott"), std::string::npos) << message;
  }
}

TEST(ProblemRegistry, BuildsEachProblemWithConsistentSizes) {
  for (const ProblemInfo& info : problem_table()) {
    const Index n = info.sized() ? 4 : 0;
    const ProblemDefaults defaults = info.defaults(n);
    const Eigen::VectorXd& y0 = defaults.initial_state;
    const Eigen::VectorXd& theta = defaults.parameters;
    const std::vector<std::string>& names = defaults.parameter_names;
    with_builtin_problem(info, n, [&](const auto& problem) {
      EXPECT_EQ(y0.size(), problem.state_size()) << info.name;
      EXPECT_EQ(theta.size(), problem.parameter_size()) << info.name;
      EXPECT_EQ(static_cast<Index>(names.size()), problem.parameter_size()) << info.name;
      if (!info.sized()) {
        EXPECT_EQ(problem.state_size(), info.fixed_state_size) << info.name;
      }
      return 0;
    });
  }
}

TEST(RunSettings, PerProblemDefaults) {
  const RunSettings l96 = resolve_run_settings(options_for("lorenz96"));
  EXPECT_EQ(l96.n, 40);
  EXPECT_EQ(l96.control.steps, 200);
  EXPECT_EQ(l96.control.dt, 0.01);
  EXPECT_EQ(method_name(l96.method), "rk4");
  EXPECT_FALSE(l96.control.is_adaptive());
  EXPECT_FALSE(l96.fd_epsilon.has_value());

  const RunSettings gs = resolve_run_settings(options_for("gray-scott"));
  EXPECT_EQ(gs.n, 64);
  EXPECT_EQ(gs.control.dt, 1.0);
  EXPECT_EQ(resolve_run_settings(options_for("linear")).n, 3);
  EXPECT_EQ(resolve_run_settings(options_for("lorenz63")).n, 0);
}

TEST(RunSettings, AdaptiveDefaultsToTheFixedRunsHorizon) {
  RunOptions o = options_for("lorenz63");
  o.method = "dopri5";
  o.adaptive = true;
  o.checkpoint.steps = "300";
  const RunSettings s = resolve_run_settings(o);
  ASSERT_TRUE(s.control.is_adaptive());
  EXPECT_DOUBLE_EQ(s.control.t_final, 3.0);
  EXPECT_EQ(s.control.rtol, kDefaultRtol);
  EXPECT_EQ(s.control.atol, kDefaultAtol);
  EXPECT_EQ(s.control.dt, 0.0);  // first step chosen automatically
}

TEST(RunSettings, RefusesBadInputNamingTheFlag) {
  RunOptions o = options_for("lorenz63");
  o.dt = -1.0;
  EXPECT_NE(refusal(o).find("--dt = -1 must be"), std::string::npos) << refusal(o);
  o = options_for("lorenz63");
  o.dt = std::nan("");
  EXPECT_NE(refusal(o).find("--dt"), std::string::npos) << refusal(o);
  o = options_for("lorenz63");
  o.checkpoint.steps = "0";
  EXPECT_NE(refusal(o).find("--steps = '0' must be >= 1"), std::string::npos) << refusal(o);
  o = options_for("lorenz63");
  o.n = 5;
  EXPECT_NE(refusal(o).find("--n does not apply to lorenz63"), std::string::npos) << refusal(o);
  o = options_for("lorenz63");
  o.method = "rk9";
  EXPECT_NE(refusal(o).find("--method"), std::string::npos) << refusal(o);
  o = options_for("lorenz63");
  o.adaptive = true;  // rk4 has no error estimate
  EXPECT_NE(refusal(o).find("embedded error estimate"), std::string::npos) << refusal(o);
  o = options_for("lorenz63");
  o.t_final = 3.0;  // without --adaptive
  EXPECT_NE(refusal(o).find("--t-final applies only with --adaptive"), std::string::npos);
  o = options_for("lorenz63");
  o.method = "tsit5";
  o.adaptive = true;
  o.rtol = 1e-20;
  EXPECT_NE(refusal(o).find("--rtol = 1e-20 "), std::string::npos) << refusal(o);
  o = options_for("lorenz63");
  o.fd_epsilon = 0.0;
  EXPECT_NE(refusal(o).find("--fd-epsilon"), std::string::npos) << refusal(o);
}

TEST(ExtrapolatedDifference, ReachesRoundOffOnSmoothFunctions) {
  const auto e = extrapolated_central_difference([](double s) { return std::exp(1.0 + s); }, 0.1);
  EXPECT_NEAR(e.value, std::exp(1.0), 1e-12 * std::exp(1.0));
  EXPECT_LE(e.error_estimate, 1e-10);
  EXPECT_EQ(e.first_step, 0.1);
  EXPECT_GT(e.evaluations, 0);
  const auto s =
      extrapolated_central_difference([](double x) { return std::sin(3.0 * x) + 2.0; }, 0.5);
  EXPECT_NEAR(s.value, 3.0, 1e-11);
}

TEST(ExtrapolatedDifference, HandlesSharpFunctionsWithALargeFirstStep) {
  // Curvature scale 1e-4 and a first step of 1e-1: the sweep must halve its way into range.
  const auto e = extrapolated_central_difference(
      [](double s) { return std::exp(1e4 * s) * 1e-4 + s * s; }, 0.1);
  EXPECT_NEAR(e.value, 1.0, 1e-8);
}

TEST(ExtrapolatedDifference, NonFiniteEverywhereGivesANonFiniteValue) {
  const auto e = extrapolated_central_difference(
      [](double) { return std::numeric_limits<double>::quiet_NaN(); }, 0.1, 6);
  EXPECT_FALSE(std::isfinite(e.value));
  EXPECT_EQ(e.evaluations, 12);
}

TEST(SpotCheckDirection, IsAUnitVectorThatDependsOnlyOnTheSeed) {
  const Eigen::VectorXd a = spot_check_direction(50, 7);
  EXPECT_NEAR(a.norm(), 1.0, 1e-15);
  EXPECT_EQ(a, spot_check_direction(50, 7));
  EXPECT_NE(a, spot_check_direction(50, 8));
}

// Every problem at a small size: the adjoint agrees with the finite differences.
TEST(GradientRun, SpotCheckAgreesOnEveryProblem) {
  for (const ProblemInfo& info : problem_table()) {
    RunOptions o = options_for(info.name);
    if (info.sized()) o.n = info.name == "gray_scott" ? 8 : 5;
    // Stiff problems run BDF by default, where a step is one interval: a few suffice.
    o.checkpoint.steps = std::to_string(info.stiff ? 6 : 50);
    if (info.stiff) o.atol = 1e-10;
    const RunReport r = run_gradient(resolve_run_settings(o));
    EXPECT_EQ(r.summary.steps, std::stoll(*o.checkpoint.steps)) << info.name;
    EXPECT_EQ(static_cast<Index>(r.grad_theta.size()), r.parameter_size) << info.name;
    EXPECT_TRUE(std::isfinite(r.loss)) << info.name;
    ASSERT_TRUE(r.fd_checked);
    // Runge–Kutta gradients are exact to round-off; BDF's continuous adjoint to 10⁴·rtol.
    EXPECT_LT(r.fd.rel_error, info.stiff ? 1e-2 : 1e-6) << info.name;
    EXPECT_EQ(r.fd.verdict, "agree") << info.name;
  }
}

// The acceptance run: rewind run lorenz96 --n 40 --steps 200 --method rk4 --dt 0.01.
TEST(GradientRun, AcceptanceRunLorenz96) {
  RunOptions o = options_for("lorenz96");
  o.n = 40;
  o.checkpoint.steps = "200";
  o.method = "rk4";
  o.dt = 0.01;
  const RunReport r = run_gradient(resolve_run_settings(o));
  EXPECT_EQ(r.state_size, 40);
  EXPECT_EQ(r.parameter_size, 1);
  EXPECT_EQ(r.parameter_names, std::vector<std::string>{"F"});
  EXPECT_DOUBLE_EQ(r.summary.t_final, 2.0);
  EXPECT_LT(r.fd.rel_error, 1e-7);
  EXPECT_EQ(r.summary.schedule, "store-all");
}

TEST(GradientRun, AdaptiveRunChecksAgainstItsOwnSteps) {
  RunOptions o = options_for("lorenz63");
  o.method = "dopri5";
  o.adaptive = true;
  o.t_final = 1.0;
  o.rtol = 1e-8;
  const RunReport r = run_gradient(resolve_run_settings(o));
  EXPECT_TRUE(r.fd.steps_frozen);
  EXPECT_DOUBLE_EQ(r.summary.t_final, 1.0);
  EXPECT_LT(r.fd.rel_error, 1e-6);
}

TEST(GradientRun, SkipsTheSpotCheckWhenAsked) {
  RunOptions o = options_for("lorenz63");
  o.no_fd_check = true;
  const RunReport r = run_gradient(resolve_run_settings(o));
  EXPECT_FALSE(r.fd_checked);
  EXPECT_EQ(r.fd.loss_evaluations, 0);
  o.fd_epsilon = 1e-3;
  EXPECT_NE(refusal(o).find("--no-fd-check"), std::string::npos) << refusal(o);
}

TEST(GradientRun, BlowUpIsANumericalErrorNamingTheStep) {
  RunOptions o = options_for("lorenz96");
  o.dt = 0.5;
  o.checkpoint.steps = "100";
  try {
    run_gradient(resolve_run_settings(o));
    FAIL() << "no exception";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("non-finite"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("at step"), std::string::npos) << e.what();
  }
}

// ---- byte sizes and counts ----------------------------------------------------------------

TEST(ByteSize, ReadsUnitsAndNotation) {
  EXPECT_EQ(parse_byte_size("--memory", "4096"), 4096);
  EXPECT_EQ(parse_byte_size("--memory", "1e6"), 1000000);
  EXPECT_EQ(parse_byte_size("--memory", "64KiB"), 65536);
  EXPECT_EQ(parse_byte_size("--memory", "256MiB"), 268435456);
  EXPECT_EQ(parse_byte_size("--memory", "1GiB"), 1073741824);
  EXPECT_EQ(parse_byte_size("--memory", "1.5 GiB"), 1610612736);
  EXPECT_EQ(parse_byte_size("--memory", "2gib"), 2147483648);
  EXPECT_EQ(parse_byte_size("--memory", "3G"), 3LL << 30);
  EXPECT_EQ(parse_byte_size("--memory", "2MB"), 2000000);
  EXPECT_EQ(parse_byte_size("--memory", "7B"), 7);
  EXPECT_EQ(parse_byte_size("--memory", "1TiB"), 1LL << 40);
}

TEST(ByteSize, RefusesGarbageNamingTheFlag) {
  for (const char* bad : {"", "abc", "12XB", "-5", "0", "0.5", "nan", "inf", "1e400", "0x10", "GiB",
                          "1 2 MiB", "1e30TiB"}) {
    try {
      parse_byte_size("--memory", bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("--memory = '"), std::string::npos) << e.what();
    }
  }
}

TEST(ByteSize, CountsAreWholeNumbers) {
  EXPECT_EQ(parse_count("--steps", "1000"), 1000);
  EXPECT_EQ(parse_count("--steps", "1e6"), 1000000);
  EXPECT_EQ(parse_count("--steps", "1e12"), 1000000000000);
  EXPECT_EQ(parse_count("--steps", "123456789012345678"), 123456789012345678);
  for (const char* bad : {"0", "-1", "1.5", "ten", "5MiB", "", "1e40"})
    EXPECT_THROW(parse_count("--steps", bad), InvalidArgument) << bad;
}

// The range of --seed is checked while the command line is parsed (integer_option.hpp; refusals
// in check_noise_run.py and check_integer_options.py); here: every value of it reaches the run.
TEST(RunSettings, NoiseSeedTakesEvery64BitValue) {
  RunOptions o = options_for("ornstein_uhlenbeck");
  o.seed = 18446744073709551615u;
  EXPECT_EQ(std::get<StochasticMethod>(resolve_run_settings(o).method).noise_seed,
            18446744073709551615u);
  o.seed.reset();
  EXPECT_EQ(std::get<StochasticMethod>(resolve_run_settings(o).method).noise_seed,
            1u);  // the default
  o.fd_seed = 18446744073709551615u;
  EXPECT_EQ(resolve_run_settings(o).seed, 18446744073709551615u);
}

// ---- checkpointed runs ---------------------------------------------------------------------

RunReport run_with(RunOptions o) {
  return run_gradient(resolve_run_settings(o));
}

void expect_same_gradient(const RunReport& a, const RunReport& b) {
  EXPECT_EQ(a.loss, b.loss);
  EXPECT_EQ(a.grad_theta, b.grad_theta);
  EXPECT_EQ(a.grad_y0_norm, b.grad_y0_norm);
}

TEST(CheckpointedRun, IsBitForBitTheStoreAllRun) {
  RunOptions o = options_for("gray_scott");
  o.n = 8;
  o.checkpoint.steps = "150";
  o.no_fd_check = true;
  const RunReport reference = run_with(o);
  EXPECT_FALSE(reference.checkpointed);
  o.checkpoint.snapshots = "4";
  const RunReport r = run_with(o);
  ASSERT_TRUE(r.checkpointed);
  expect_same_gradient(r, reference);
  EXPECT_EQ(r.checkpoint.drift.max_rel_drift, 0.0);
  EXPECT_GT(r.checkpoint.drift.replayed_steps_checked, 0);
  EXPECT_EQ(r.summary.recomputed_steps, revolve_advances(150, 4));
  EXPECT_EQ(r.summary.recomputed_steps, r.checkpoint.plan.advances);
  EXPECT_EQ(r.summary.stores, *r.checkpoint.plan.stores);
  EXPECT_EQ(r.checkpoint.snapshot_bytes, 2 * 8 * 8 * 8 + 48);
  EXPECT_EQ(r.summary.storage.peak_bytes_on(LevelKind::memory), 4 * r.checkpoint.snapshot_bytes);
  EXPECT_DOUBLE_EQ(r.checkpoint.store_all_bytes, 151.0 * r.checkpoint.snapshot_bytes);

  o.checkpoint.snapshots.reset();
  o.checkpoint.memory = std::to_string(5 * r.checkpoint.snapshot_bytes + 7);
  const RunReport m = run_with(o);
  EXPECT_EQ(m.checkpoint.plan.snapshots, 5);
  expect_same_gradient(m, reference);

  o.checkpoint.memory = "100";
  EXPECT_THROW(run_with(o), InvalidArgument);
}

TEST(CheckpointedRun, CallsBackWithThePlanFirst) {
  RunOptions o = options_for("lorenz63");
  o.checkpoint.snapshots = "3";
  o.no_fd_check = true;
  int calls = 0;
  const RunReport r = run_gradient(resolve_run_settings(o), [&](const CheckpointReport& cp) {
    ++calls;
    EXPECT_EQ(cp.plan.steps, 200);
    EXPECT_EQ(cp.plan.advances, revolve_advances(200, 3));
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(r.checkpoint.plan.name, "revolve(c = 3)");
}

TEST(CheckpointedRun, SpotCheckStillRuns) {
  RunOptions o = options_for("lorenz96");
  o.n = 10;
  o.checkpoint.steps = "100";
  o.checkpoint.snapshots = "3";
  const RunReport r = run_with(o);
  ASSERT_TRUE(r.fd_checked);
  EXPECT_EQ(r.fd.verdict, "agree");
}

TEST(CheckpointedRun, RefusesBadCombinations) {
  RunOptions o = options_for("lorenz63");
  o.checkpoint.interval = "5";
  EXPECT_NE(refusal(o).find("--interval applies only to checkpointed runs"), std::string::npos)
      << refusal(o);
  o = options_for("lorenz63");
  o.checkpoint.schedule = "revolve";
  EXPECT_NE(refusal(o).find("needs a snapshot budget"), std::string::npos) << refusal(o);
  o.checkpoint.schedule = "bogus";
  EXPECT_NE(refusal(o).find("--schedule = 'bogus'"), std::string::npos) << refusal(o);
  o = options_for("lorenz63");
  o.checkpoint.snapshots = "3";
  o.checkpoint.memory = "1MiB";
  EXPECT_NE(refusal(o).find("exclude each other"), std::string::npos) << refusal(o);
  o = options_for("lorenz63");
  o.checkpoint.snapshots = "3";
  o.checkpoint.drift = "maybe";
  EXPECT_NE(refusal(o).find("--drift = 'maybe'"), std::string::npos) << refusal(o);
  o.checkpoint.drift = "fail";
  EXPECT_EQ(resolve_run_settings(o).checkpoint.drift, DriftPolicy::fail);
  o.checkpoint.adjoint_cost = -1.0;
  EXPECT_NE(refusal(o).find("--adjoint-cost = -1"), std::string::npos) << refusal(o);
  o = options_for("lorenz63");
  o.checkpoint.schedule = "store-all";
  EXPECT_TRUE(resolve_run_settings(o).checkpoint.checkpointed);
}

// The flags are declared and checked once: plan and run refuse the same mistakes in the same
// words, and differ only where the issue of a run differs (plan always plans; run writes a disk).
std::string flag_refusal(const CheckpointFlags& flags, FlagUse use) {
  try {
    resolve_checkpoint_flags(flags, use);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(CheckpointFlags, PlanAndRunRefuseTheSameMistakesInTheSameWords) {
  std::vector<CheckpointFlags> mistakes(9);
  mistakes[0].snapshots = "0";
  mistakes[1].snapshots = "3", mistakes[1].memory = "1MiB";
  mistakes[2].snapshots = "3", mistakes[2].interval = "4";
  mistakes[3].schedule = "greedy";
  mistakes[4].memory = "12XB";
  mistakes[5].snapshots = "3", mistakes[5].adjoint_cost = -1.0;
  mistakes[6].ram_snapshots = "2", mistakes[6].disk_snapshots = "3", mistakes[6].snapshots = "4";
  mistakes[6].disk = std::filesystem::temp_directory_path().string();
  mistakes[7].snapshots = "3", mistakes[7].disk = "/nonexistent/rewind";
  mistakes[8].snapshots = "3", mistakes[8].disk_read_cost = -2.0;
  for (CheckpointFlags& flags : mistakes) {
    flags.steps = "100";
    const std::string plan = flag_refusal(flags, FlagUse::plan);
    EXPECT_NE(plan, "(accepted)");
    EXPECT_EQ(plan, flag_refusal(flags, FlagUse::run));
    EXPECT_EQ(plan.rfind("--", 0), 0u) << "names the flag first: " << plan;
  }
}

// The rules of a plan request are the library's (PlanRequest::validate); the command line names
// the flag where the library names the field, and keeps the library's rule.
TEST(CheckpointFlags, LibraryRulesNameTheFlag) {
  const auto refused = [](CheckpointFlags flags) {
    flags.steps = "100";
    return flag_refusal(flags, FlagUse::plan);
  };
  CheckpointFlags f;
  f.snapshots = "3000000000";
  EXPECT_EQ(refused(f), "--snapshots = 3000000000 must be <= 2147483647");
  f = {};
  f.snapshots = "3", f.interval = "4";
  EXPECT_EQ(refused(f),
            "--interval does not apply to the revolve schedule (it applies to uniform)");
  f = {};
  f.schedule = "uniform";
  EXPECT_EQ(refused(f).rfind("--snapshots C (or --memory BYTES) is missing: the uniform", 0), 0u)
      << refused(f);
  f = {};
  f.schedule = "two-level";
  EXPECT_EQ(refused(f).rfind("--ram-snapshots K is missing: the two-level schedule", 0), 0u)
      << refused(f);
  f = {};
  f.ram_snapshots = "2000000", f.disk_snapshots = "3";
  EXPECT_EQ(refused(f),
            "--ram-snapshots = 2000000 must lie in [1, 1048576] for the two-level "
            "schedule");
  f.ram_snapshots = "2", f.disk_snapshots = "30000000";
  EXPECT_EQ(refused(f),
            "--disk-snapshots = 30000000 must lie in [0, 16777216] for the two-level "
            "schedule");
  f.disk_snapshots = "3", f.snapshots = "4";
  EXPECT_EQ(refused(f).rfind("--snapshots does not apply to the two-level schedule", 0), 0u)
      << refused(f);
  f.snapshots.reset(), f.memory = "1MiB";
  EXPECT_EQ(refused(f).rfind("--memory does not apply to the two-level schedule", 0), 0u)
      << refused(f);
  f = {};
  f.device_snapshots = "2000000", f.host_snapshots = "1";
  EXPECT_EQ(flag_refusal(f, FlagUse::run),
            "--device-snapshots = 2000000 must lie in [0, 1048576] for the three-level schedule");
  f.device_snapshots = "1", f.host_snapshots = "2000000";
  EXPECT_EQ(flag_refusal(f, FlagUse::run),
            "--host-snapshots = 2000000 must lie in [0, 1048576] for the three-level schedule");
  // A budget from --memory counts as one snapshot until the state size is known.
  f = {};
  f.memory = "1MiB";
  EXPECT_EQ(refused(f), "(accepted)");
  f.schedule = "uniform";
  EXPECT_EQ(refused(f), "(accepted)");
}

TEST(CheckpointFlags, DifferOnlyInWhatNoFlagsAndADiskMean) {
  CheckpointFlags flags;
  flags.steps = "1e3";
  EXPECT_NE(flag_refusal(flags, FlagUse::plan).find("rewind plan needs a budget"),
            std::string::npos);
  const CheckpointSettings run = resolve_checkpoint_flags(flags, FlagUse::run);
  EXPECT_FALSE(run.checkpointed);
  EXPECT_EQ(*run.steps, 1000);
  flags.ram_snapshots = "2";
  flags.disk_snapshots = "0";
  const CheckpointSettings plan = resolve_checkpoint_flags(flags, FlagUse::plan);
  EXPECT_EQ(plan.request.family, &rwd::two_level_family());
  EXPECT_EQ(*plan.request.disk_slots, 0);
  EXPECT_NE(flag_refusal(flags, FlagUse::run).find("need --disk DIR"), std::string::npos);
}

TEST(Parameters, ByNameReplaceTheDefaultsAndReachTheRun) {
  RunOptions o = options_for("lotka_volterra");
  o.checkpoint.steps = "50";
  o.no_fd_check = true;
  const RunReport defaults = run_with(o);
  o.parameters = "beta=0.5, GAMMA=2.5";  // spaces and case are forgiven
  const RunSettings settings = resolve_run_settings(o);
  ASSERT_EQ(settings.parameters.size(), 2u);
  EXPECT_EQ(settings.parameters[0].name, "beta");
  EXPECT_EQ(settings.parameters[1].name, "gamma");
  const RunReport changed = run_gradient(settings);
  EXPECT_EQ(changed.parameters[0], defaults.parameters[0]);
  EXPECT_EQ(changed.parameters[1], 0.5);
  EXPECT_EQ(changed.parameters[3], 2.5);
  EXPECT_NE(changed.loss, defaults.loss);
}

TEST(Parameters, RefusesUnknownNamesRepeatsAndValuesOutsideTheModel) {
  const ProblemInfo& gs = require_problem("gray_scott");
  const std::vector<std::string> names = problem_parameter_names(gs, 16);
  const auto refusal_of = [&](const char* text) -> std::string {
    try {
      parse_parameter_values("--parameters", text, gs, names);
    } catch (const InvalidArgument& e) {
      return e.what();
    }
    return "(accepted)";
  };
  EXPECT_EQ(refusal_of("F=0.04,k=0.06"), "(accepted)");
  EXPECT_EQ(refusal_of("F=0"), "(accepted)");  // no feed: a model, if a dull one
  EXPECT_NE(refusal_of("G=1").find("has no parameter 'G'; its parameters are Du, Dv, F, k"),
            std::string::npos);
  EXPECT_NE(refusal_of("F=0.1,F=0.2").find("F is given twice"), std::string::npos);
  EXPECT_NE(refusal_of("Du=0").find("Du = 0 must be finite and > 0"), std::string::npos);
  EXPECT_NE(refusal_of("k=-0.1").find(">= 0"), std::string::npos);
  EXPECT_NE(refusal_of("F=inf").find("not a finite number"), std::string::npos);
  EXPECT_NE(refusal_of("F").find("is not NAME=VALUE"), std::string::npos);
  EXPECT_NE(refusal_of("F=0.1,").find("empty item"), std::string::npos);
  // Names that differ only in case must be spelt exactly.
  const std::vector<std::string> clash = {"ab", "AB"};
  EXPECT_EQ(parameter_index("--fit", "AB", gs, clash), 1);  // an exact match wins
  EXPECT_THROW(parameter_index("--fit", "aB", gs, clash), InvalidArgument);
}

TEST(Progress, DisabledBarDrawsNothingAndForwardsEveryCall) {
  ProgressBar bar(false);
  EXPECT_FALSE(bar.due());
  EXPECT_EQ(percent(0.0), "  0%");
  EXPECT_EQ(percent(0.999), " 99%");
  EXPECT_EQ(percent(1.0), "100%");
}

}  // namespace
}  // namespace rwd::cli
