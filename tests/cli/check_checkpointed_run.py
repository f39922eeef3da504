#!/usr/bin/env python3
"""Checks a checkpointed `rewind run ... --json` against the store-all run and `rewind plan`
(a ctest added by tests/cli/CMakeLists.txt).

    check_checkpointed_run.py path/to/rewind CASE

CASE is one of
  revolve   gray_scott --n 16 --steps 300 --snapshots 5: the drift monitor saw every replay
            match bit for bit, schedule.recomputed_steps equals `rewind plan --steps 300
            --snapshots 5`, and J, dJ/dtheta, |dJ/dy0| and the spot check's <dJ/dy0, d> are
            bit for bit those of the same run without --snapshots (the JSON prints each double
            as the shortest text that reads back as it, so equal text = equal bits)
  memory    --memory 41440 on the same run: 8*512 + 48 = 4144 bytes per snapshot, so c = 10
  stages    --stage-aware with --snapshots and --memory, for rk4 and heun: bit for bit the
            store-all gradient, zero drift, the counts of `rewind plan --stage-aware`, fewer
            forward steps than revolve at the same budget; an adaptive run is refused
  schedules --schedule uniform --interval 20, --schedule store-all, revolve with c = 1 and
            an adaptive run: all bit for bit the store-all gradient
"""
import json
import subprocess
import sys

CARRY_BYTES = 48


def fail(message):
    print("check_checkpointed_run: " + message, file=sys.stderr)
    sys.exit(1)


def run_json(rewind, *args):
    command = [rewind, *args, "--json"]
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        fail(f"{' '.join(command)} exited with {proc.returncode}: {proc.stderr.strip()}")
    if proc.stderr:  # stderr is not a terminal here: no progress bar, no warning
        fail(f"{' '.join(command)} wrote to stderr: {proc.stderr!r}")
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        fail(f"stdout of {' '.join(command)} is not one JSON document: {e}")


def same_gradient(a, b, what):
    for key in ("loss", "grad_theta", "grad_y0_norm", "grad_theta_norm"):
        if a[key] != b[key]:
            fail(f"{what}: {key} differs from the store-all run: {a[key]!r} vs {b[key]!r}")
    if a["fd_check"] and b["fd_check"]:
        if a["fd_check"]["directional_adjoint"] != b["fd_check"]["directional_adjoint"]:
            fail(f"{what}: <dJ/dy0, d> differs from the store-all run")


def check_drift(report, what, replays=True):
    drift = report["drift"]
    if drift is None:
        fail(f"{what}: no drift report")
    if drift["max_rel_drift"] != 0 or drift["mismatched_steps"] != 0:
        fail(f"{what}: replays drifted: {drift}")
    if replays and not drift["replayed_steps_checked"] > 0:
        fail(f"{what}: no replayed state was checked: {drift}")
    if drift["first_drift_step"] is not None or not drift["bitwise_identical"]:
        fail(f"{what}: drift report inconsistent: {drift}")


def case_revolve(rewind):
    base = ["run", "gray_scott", "--n", "16", "--steps", "300"]
    reference = run_json(rewind, *base)
    if reference["schedule"] is not None or reference["drift"] is not None:
        fail("a store-all run reports a schedule or drift")
    report = run_json(rewind, *base, "--snapshots", "5")
    check_drift(report, "revolve c=5")
    if report["drift"]["policy"] != "warn":
        fail(f"default drift policy is {report['drift']['policy']}, expected warn")
    same_gradient(report, reference, "revolve c=5")
    plan = run_json(rewind, "plan", "--steps", "300", "--snapshots", "5")
    schedule = report["schedule"]
    for key in ("recomputed_steps", "forward_steps", "stores", "restores"):
        if schedule[key] != plan[key]:
            fail(f"schedule.{key} = {schedule[key]}, rewind plan says {plan[key]}")
    if schedule["recomputed_steps"] != 1338:  # p(300, 5), Griewank-Walther
        fail(f"schedule.recomputed_steps = {schedule['recomputed_steps']}, expected 1338")
    if schedule["name"] != "revolve(c = 5)" or schedule["snapshots"] != 5:
        fail(f"schedule = {schedule}")
    snapshot = 8 * 2 * 16 * 16 + CARRY_BYTES
    if schedule["snapshot_bytes"] != snapshot:
        fail(f"snapshot_bytes = {schedule['snapshot_bytes']}, expected {snapshot}")
    if schedule["peak_stored_bytes"] != plan["peak_slots"] * snapshot:
        fail(f"peak_stored_bytes = {schedule['peak_stored_bytes']}, expected "
             f"{plan['peak_slots']} x {snapshot}")
    if schedule["store_all_bytes"] != 301 * snapshot:
        fail(f"store_all_bytes = {schedule['store_all_bytes']}, expected 301 x {snapshot}")
    for key, plan_key in (("predicted_recompute_ratio", "recompute_ratio"),
                          ("predicted_time_ratio", "predicted_time_ratio")):
        if schedule[key] != plan[plan_key]:
            fail(f"schedule.{key} = {schedule[key]}, rewind plan's {plan_key} = {plan[plan_key]}")
    stats = report["stats"]
    if stats["recomputed_steps"] != schedule["recomputed_steps"]:
        fail("stats.recomputed_steps and schedule.recomputed_steps disagree")
    if report["fd_check"] is None:  # the spot check still runs (forward runs only)
        fail("a checkpointed run skipped the finite-difference check")
    print(f"ok: revolve(c = 5) is bit for bit store-all, p = {schedule['recomputed_steps']}, "
          f"{report['drift']['replayed_steps_checked']} replays checked")


def case_memory(rewind):
    base = ["run", "gray_scott", "--n", "16", "--steps", "300", "--no-fd-check"]
    reference = run_json(rewind, *base)
    report = run_json(rewind, *base, "--memory", "41440")
    schedule = report["schedule"]
    if schedule["snapshots"] != 10 or schedule["memory_budget_bytes"] != 41440:
        fail(f"--memory 41440 with 4144-byte snapshots: {schedule}")
    if schedule["peak_stored_bytes"] > 41440:
        fail(f"peak_stored_bytes {schedule['peak_stored_bytes']} above the budget")
    check_drift(report, "--memory")
    same_gradient(report, reference, "--memory")
    report = run_json(rewind, *base, "--memory", "40KiB")  # 40960 / 4144 = 9.9
    if report["schedule"]["snapshots"] != 9:
        fail(f"--memory 40KiB: {report['schedule']}")
    print("ok: --memory 41440 = 10 snapshots of 4144 bytes")


def case_schedules(rewind):
    base = ["run", "gray_scott", "--n", "8", "--steps", "120", "--no-fd-check"]
    reference = run_json(rewind, *base)
    for extra, replays in [(["--schedule", "uniform", "--interval", "20"], True),
                           (["--schedule", "uniform", "--snapshots", "30"], True),
                           (["--schedule", "store-all"], False),
                           (["--snapshots", "1", "--drift", "fail"], True),
                           (["--snapshots", "500"], False)]:
        report = run_json(rewind, *base, *extra)
        what = " ".join(extra)
        check_drift(report, what, replays)
        same_gradient(report, reference, what)
    adaptive = ["run", "lorenz63", "--method", "dopri5", "--adaptive", "--t-final", "2",
                "--no-fd-check"]
    reference = run_json(rewind, *adaptive)
    report = run_json(rewind, *adaptive, "--snapshots", "4")
    check_drift(report, "adaptive")
    same_gradient(report, reference, "adaptive")
    # The length of an adaptive run is unknown: revolve's budget runs online, with no counting
    # sweep; a uniform schedule needs l and counts first.
    if report["schedule"]["counting_steps"] != 0 or report["schedule"]["name"] != "online(c = 4)":
        fail(f"adaptive --snapshots 4: {report['schedule']}")
    # Past beta(4, 3) = 35 steps the online rules differ; the gradient may not.
    if report["steps"] <= 35:
        fail(f"adaptive run of {report['steps']} steps: too short to reach beta(4, 3) = 35")
    report = run_json(rewind, *adaptive, "--snapshots", "4", "--online-rule", "never-above-dynamic")
    check_drift(report, "adaptive never-above-dynamic")
    same_gradient(report, reference, "adaptive never-above-dynamic")
    if report["schedule"]["name"] != "online(c = 4, never above dynamic)":
        fail(f"adaptive --online-rule never-above-dynamic: {report['schedule']}")
    report = run_json(rewind, *adaptive, "--schedule", "uniform", "--interval", "10")
    check_drift(report, "adaptive uniform")
    same_gradient(report, reference, "adaptive uniform")
    if report["schedule"]["counting_steps"] != report["steps"]:
        fail(f"adaptive uniform: counting_steps = {report['schedule']['counting_steps']}, "
             f"steps = {report['steps']}")
    print("ok: uniform, store-all, revolve c = 1 and adaptive runs (online, and uniform after a "
          "counting sweep) are bit for bit store-all")


def case_stages(rewind):
    for method, snapshots in (("rk4", "20"), ("heun", "7")):
        base = ["run", "gray_scott", "--n", "8", "--steps", "150", "--method", method,
                "--no-fd-check"]
        reference = run_json(rewind, *base)
        revolve = run_json(rewind, *base, "--snapshots", snapshots)
        # --copy-cost 0: the copies priced as rewind plan prices them (free), so that both choose
        # alike; without it the run measures them and may rightly take another plan.
        report = run_json(rewind, *base, "--snapshots", snapshots, "--stage-aware",
                          "--copy-cost", "0", "--drift", "fail")
        what = f"{method} --stage-aware --snapshots {snapshots}"
        check_drift(report, what, replays=True)
        same_gradient(report, reference, what)
        plan = run_json(rewind, "plan", "--steps", "150", "--snapshots", snapshots,
                        "--stage-aware", "--method", method)
        schedule = report["schedule"]
        if schedule["name"] != plan["schedule"] or not plan["schedule"].startswith("stage-aware"):
            fail(f"{what}: ran {schedule['name']}, rewind plan chose {plan['schedule']}")
        for key in ("recomputed_steps", "forward_steps"):
            if schedule[key] != plan[key]:
                fail(f"{what}: schedule.{key} = {schedule[key]}, rewind plan says {plan[key]}")
        if not schedule["forward_steps"] < revolve["schedule"]["forward_steps"]:
            fail(f"{what}: {schedule['forward_steps']} forward steps, revolve "
                 f"{revolve['schedule']['forward_steps']}")
        # A budget of every step's stages, copies free: nothing is recomputed.
        stages = {"rk4": 4, "heun": 2}[method]
        snapshot = 8 * 2 * 8 * 8 + CARRY_BYTES
        budget = ["--memory", str(150 * stages * snapshot), "--stage-aware"]
        report = run_json(rewind, *base, *budget, "--copy-cost", "0")
        same_gradient(report, reference, what + " store-all-stages")
        if report["schedule"]["name"] != "store-all-stages" or \
                report["schedule"]["forward_steps"] != 150:
            fail(f"{what}: a budget of every step's stages ran {report['schedule']}")
        # Without --copy-cost the run times a step and a copy first and reports both; which plan
        # wins then depends on those times (a loaded machine may make copies dear), so only the
        # gradient is checked.
        measured = run_json(rewind, *base, *budget)
        same_gradient(measured, reference, what + " measured copy costs")
        if measured["schedule"]["measured_device_write_seconds"] is None or \
                measured["schedule"]["measured_step_seconds"] is None:
            fail(f"{what}: --stage-aware reports no measured copy and step costs")
        # Dear copies: the run and the plan choose alike, and both predictions count the copies.
        # A stage snapshot costs one copy (its state; the other stage values are built in their
        # slots and read there), and here stage-aware copies less than revolve restores, so it
        # still wins; revolve's prediction grows by more.
        dear = run_json(rewind, *base, "--snapshots", snapshots, "--stage-aware",
                        "--copy-cost", "2")
        dear_plan = run_json(rewind, "plan", "--steps", "150", "--snapshots", snapshots,
                             "--stage-aware", "--method", method, "--copy-cost", "2")
        same_gradient(dear, reference, what + " --copy-cost 2")
        if not dear["schedule"]["name"].startswith("stage-aware") or \
                dear_plan["schedule"] != dear["schedule"]["name"]:
            fail(f"{what} --copy-cost 2: ran {dear['schedule']['name']}, "
                 f"planned {dear_plan['schedule']}")
        if not (dear_plan["predicted_time_ratio"] > plan["predicted_time_ratio"] and
                dear_plan["revolve_predicted_time_ratio"] - plan["revolve_predicted_time_ratio"] >
                dear_plan["predicted_time_ratio"] - plan["predicted_time_ratio"]):
            fail(f"{what} --copy-cost 2: predictions {dear_plan['predicted_time_ratio']} "
                 f"(revolve {dear_plan['revolve_predicted_time_ratio']}) against free copies "
                 f"{plan['predicted_time_ratio']} (revolve {plan['revolve_predicted_time_ratio']})")
    command = [rewind, "run", "lorenz63", "--method", "dopri5", "--adaptive", "--t-final", "1",
               "--snapshots", "30", "--stage-aware", "--json"]
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode == 0 or "fixed steps" not in proc.stderr:
        fail(f"an adaptive --stage-aware run was not refused: {proc.returncode} {proc.stderr!r}")
    print("ok: --stage-aware runs (rk4, heun; --snapshots and --memory) are bit for bit "
          "store-all with fewer forward steps than revolve")


def main():
    if len(sys.argv) != 3:
        fail("usage: check_checkpointed_run.py REWIND revolve|memory|schedules")
    rewind, case = sys.argv[1], sys.argv[2]
    cases = {"revolve": case_revolve, "memory": case_memory, "schedules": case_schedules,
             "stages": case_stages}
    if case not in cases:
        fail(f"unknown case '{case}'")
    cases[case](rewind)


if __name__ == "__main__":
    main()
