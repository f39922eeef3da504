#!/usr/bin/env python3
"""Checks `rewind plan ... --json` against the Griewank-Walther closed form (a ctest added by
tests/cli/CMakeLists.txt).

    check_plan_json.py path/to/rewind CASE

CASE is one of
  revolve  --steps 1000 --snapshots 10: p(1000, 10) = 3636, forward 4636, simulated counts;
           and a sweep of (l, c) pairs against the closed form computed here with exact integers
  memory   --memory 1MiB --state-bytes 8KiB: c = floor(1048576 / (8192 + 48)) = 127, and the
           byte counts that follow from it; a budget >= l says store-all is possible
  large    --steps 1e12: closed forms (no simulation), still exact p
  uniform  --schedule uniform with --interval and with an interval chosen from the budget;
           --schedule store-all
  stages   --stage-aware --method rk4 / heun: counts of state and stage snapshots consistent,
           forward steps <= revolve's at the same budget (and fewer for l = 10^4, c = 20), the
           store-alls chosen when they fit, --stage-aware without --method refused
  online   --online --steps L --snapshots C: offline p(L, C) and r from the closed form, the
           online counts consistent with it, stored-all for L <= C + 1, within the bound stated
           for L's region (rewind/schedule/online_placement.hpp), the region named right
"""
import json
import math
import pathlib
import subprocess
import sys

CARRY_BYTES = 48  # sizeof(rwd::Carry): t, h, error_prev (doubles), step, rejected (int64), noise_seed (uint64)

KEYS = ["steps", "snapshots", "forward_steps", "recomputed_steps", "stores", "restores",
        "peak_slots", "recompute_ratio", "peak_snapshot_bytes", "store_all_bytes",
        "predicted_time_ratio", "schedule"]


def fail(message):
    print("check_plan_json: " + message, file=sys.stderr)
    sys.exit(1)


def beta(c, r):
    return math.comb(c + r, c) if r >= 0 else 0


def revolve_p(l, c):
    """p(l, c) = r*l - beta(c + 1, r - 1), r the smallest with beta(c, r) >= l."""
    r = 0
    while beta(c, r) < l:
        r += 1
    return r * l - beta(c + 1, r - 1), r


def plan(rewind, *args):
    command = [rewind, "plan", *args, "--json"]
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        fail(f"{' '.join(command)} exited with {proc.returncode}: {proc.stderr.strip()}")
    if proc.stderr:
        fail(f"{' '.join(command)} wrote to stderr: {proc.stderr!r}")
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        fail(f"stdout is not one JSON document: {e}\n{proc.stdout}")
    for key in KEYS:
        if key not in report:
            fail(f"{' '.join(command)}: no key '{key}'")
    return report


def expect(report, key, value, what=""):
    got = report[key]
    ok = math.isclose(got, value, rel_tol=1e-12) if isinstance(value, float) else got == value
    if not ok:
        fail(f"{what} {key} = {got!r}, expected {value!r}")


def check_revolve_counts(report, l, c, adjoint_cost=1.5):
    p, r = revolve_p(l, c)
    what = f"revolve l={l} c={c}:"
    expect(report, "steps", l, what)
    expect(report, "snapshots", c, what)
    expect(report, "recomputed_steps", p, what)
    expect(report, "forward_steps", l + p, what)
    expect(report, "repetitions", r, what)
    expect(report, "recompute_ratio", (l + p) / l, what)
    expect(report, "restores", l - 1, what)
    expect(report, "reverses", l, what)
    expect(report, "predicted_time_ratio", (p + l * (1 + adjoint_cost)) / l, what)
    if report["peak_slots"] > min(c, l):
        fail(f"{what} peak_slots = {report['peak_slots']} > min(c, l)")


def case_revolve(rewind):
    report = plan(rewind, "--steps", "1000", "--snapshots", "10")
    # The numbers, spelled out.
    expect(report, "recomputed_steps", 3636)
    expect(report, "forward_steps", 4636)
    expect(report, "schedule", "revolve(c = 10)")
    expect(report, "counts", "simulated")
    expect(report, "peak_slots", 10)
    expect(report, "peak_snapshot_bytes", None)  # no --state-bytes: bytes unknown
    check_revolve_counts(report, 1000, 10)
    for l, c in [(1, 1), (2, 1), (7, 1), (100, 2), (300, 5), (1000, 3), (5000, 17), (100, 99),
                 (100, 100), (100000, 20)]:
        check_revolve_counts(plan(rewind, "--steps", str(l), "--snapshots", str(c)), l, c)
    report = plan(rewind, "--steps", "1e3", "--snapshots", "10", "--adjoint-cost", "2")
    check_revolve_counts(report, 1000, 10, adjoint_cost=2.0)
    print("ok: revolve counts equal the closed form")


def case_memory(rewind):
    state = 8 * 1024
    report = plan(rewind, "--steps", "1000", "--memory", "1MiB", "--state-bytes", "8KiB")
    c = (1 << 20) // (state + CARRY_BYTES)
    expect(report, "snapshots", c)
    expect(report, "memory_bytes", 1 << 20)
    expect(report, "state_bytes", state)
    expect(report, "carry_bytes", CARRY_BYTES)
    expect(report, "snapshot_bytes", state + CARRY_BYTES)
    expect(report, "store_all_bytes", 1001 * (state + CARRY_BYTES))
    expect(report, "peak_snapshot_bytes", report["peak_slots"] * (state + CARRY_BYTES))
    check_revolve_counts(report, 1000, c)
    expect(report, "store_all_possible", False)
    # Decimal and scientific budgets, and one that holds every state.
    report = plan(rewind, "--steps", "50", "--memory", "1e6", "--state-bytes", "1000")
    expect(report, "snapshots", 10**6 // 1048)
    expect(report, "store_all_possible", True)
    report = plan(rewind, "--steps", "50", "--memory", "2 MB", "--state-bytes", "1000B")
    expect(report, "snapshots", 2 * 10**6 // 1048)
    print(f"ok: --memory 1MiB / (8KiB + {CARRY_BYTES}) = {c} snapshots")


def case_large(rewind):
    l, c = 10**12, 30
    report = plan(rewind, "--steps", "1e12", "--snapshots", str(c))
    expect(report, "counts", "closed form")
    check_revolve_counts(report, l, c)
    expect(report, "stores", None)  # revolve's stores have no closed form
    expect(report, "peak_slots_exact", False)
    print("ok: closed form for l = 1e12")


def case_uniform(rewind):
    l, k = 1000, 32
    report = plan(rewind, "--steps", str(l), "--schedule", "uniform", "--interval", str(k))
    m = (l - 1) // k + 1
    last = l - (m - 1) * k
    expect(report, "schedule", "uniform(k = 32)")
    expect(report, "recomputed_steps", (m - 1) * k + (l - m))
    expect(report, "forward_steps", l + (m - 1) * k + (l - m))
    expect(report, "stores", m + (m - 1) * (k - 2) + max(last - 2, 0))
    slots = max(m + max(last - 2, 0), m - 1 + k - 2)
    expect(report, "snapshots", slots)
    expect(report, "peak_slots", slots)
    # Chosen from a budget: must fit.
    report = plan(rewind, "--steps", "10000", "--snapshots", "300", "--schedule", "uniform")
    if report["peak_slots"] > 300 or not report["interval_chosen"]:
        fail(f"uniform from a budget of 300: {report}")
    report = plan(rewind, "--steps", "500", "--schedule", "store-all", "--state-bytes", "800")
    expect(report, "recomputed_steps", 499)
    expect(report, "forward_steps", 999)
    expect(report, "stores", 500)
    expect(report, "peak_slots", 500)
    expect(report, "store_all_bytes", 501 * 848)
    print("ok: uniform and store-all counts")


def case_online(rewind):
    for l, c in [(1, 1), (300, 1), (3, 2), (5, 2), (6, 5), (20, 5), (40, 5), (1000, 10),
                 (100000, 20), (54321, 3)]:
        command = [rewind, "plan", "--online", "--steps", str(l), "--snapshots", str(c), "--json"]
        proc = subprocess.run(command, capture_output=True, text=True)
        if proc.returncode != 0 or proc.stderr:
            fail(f"{' '.join(command)} exited with {proc.returncode}: {proc.stderr.strip()}")
        report = json.loads(proc.stdout)
        what = f"online l={l} c={c}:"
        p, r = revolve_p(l, c)
        expect(report, "schedule", f"online(c = {c})", what)
        expect(report, "online", True, what)
        expect(report, "steps", l, what)
        expect(report, "snapshots", c, what)
        expect(report, "offline_recomputed_steps", p, what)
        expect(report, "offline_repetitions", r, what)
        expect(report, "reverses", l, what)
        online = report["recomputed_steps"]
        expect(report, "forward_steps", l + online, what)
        expect(report, "recompute_ratio", (l + online) / l, what)
        expect(report, "ratio_to_offline", online / p if p else 1.0, what)
        if online < p:
            fail(f"{what} {online} advances, below the offline minimum {p}")
        if report["peak_slots"] > c:
            fail(f"{what} peak slots {report['peak_slots']} > c")
        if l <= c + 1:
            expect(report, "recomputed_steps", l - 1, what)
        if c == 1:
            expect(report, "recomputed_steps", l * (l - 1) // 2, what)
        b2, b3 = beta(c, 2), beta(c, 3)
        expect(report, "beta2", b2, what)
        expect(report, "beta3", b3, what)
        region, bound = (("r <= 2", 1 + 1 / p if p else 1) if l <= b2 else
                         ("r = 3", 1.05 if c >= 8 else 1.13 if c >= 3 else 1.30) if l <= b3 else
                         ("r > 3", 1.11 if c >= 3 else 1.25))
        expect(report, "region", region, what)
        if online > bound * p + 1e-9:
            fail(f"{what} {online} advances, above {bound} * p(l, c) = {bound * p}")
    print("ok: online plans against the closed form")


def wmi_reference():
    """Wang, Moin & Iaccarino's checkpoints and the closed-form reversal cost, as the exhaustive
    search of bench/online_placement_search.py writes them (independently of the C++)."""
    bench = pathlib.Path(__file__).resolve().parents[2] / "bench"
    sys.path.insert(0, str(bench))
    import online_placement_search  # noqa: E402
    return online_placement_search.dynamic_checkpoint_sets, online_placement_search.cost


def case_online_rules(rewind):
    def online(l, c, *extra):
        command = [rewind, "plan", "--online", "--steps", str(l), "--snapshots", str(c), *extra,
                   "--json"]
        proc = subprocess.run(command, capture_output=True, text=True)
        if proc.returncode != 0:
            fail(f"{' '.join(command)} exited with {proc.returncode}: {proc.stderr.strip()}")
        report = json.loads(proc.stdout)
        return report["recomputed_steps"], report["schedule"]

    dynamic_checkpoint_sets, reversal_advances = wmi_reference()
    for l, c in [(8, 2), (23, 3), (38, 3), (61, 5), (100, 5), (1000, 10), (2000, 4)]:
        default, name = online(l, c)
        dynamic, dynamic_name = online(l, c, "--online-rule", "never-above-dynamic")
        if name != f"online(c = {c})" or dynamic_name != f"online(c = {c}, never above dynamic)":
            fail(f"l={l} c={c}: schedules named {name!r}, {dynamic_name!r}")
        if l <= beta(c, 3):
            if default != dynamic:
                fail(f"l={l} c={c}: the rules differ before beta(c, 3): {default} vs {dynamic}")
        else:  # Wang et al.'s checkpoints, reversed by revolve per segment
            expected = reversal_advances(dynamic_checkpoint_sets(c, l - 2)[l - 2], l, c)
            if dynamic != expected:
                fail(f"l={l} c={c}: never-above-dynamic did {dynamic}, WMI's checkpoints {expected}")
    for args, needle in ((["--online", "--online-rule", "fastest"], "least-worst-case"),
                         (["--online-rule", "never-above-dynamic"], "--online")):
        command = [rewind, "plan", "--steps", "100", "--snapshots", "5", *args]
        proc = subprocess.run(command, capture_output=True, text=True)
        if proc.returncode == 0 or needle not in proc.stderr:
            fail(f"{' '.join(command)} was not refused naming {needle}: {proc.stderr!r}")
    print("ok: --online-rule plans: the same up to beta(c, 3), then WMI's checkpoints")


def case_stages(rewind):
    for method, stages in (("rk4", 4), ("heun", 2)):
        for l, c in ((10000, 20), (300, 9), (50, 3), (40, 200)):
            j = plan(rewind, "--steps", str(l), "--snapshots", str(c), "--stage-aware",
                     "--method", method)
            p, _ = revolve_p(l, c)
            if j["revolve_forward_steps"] != l + p:
                fail(f"{method} l={l} c={c}: revolve_forward_steps {j['revolve_forward_steps']}")
            if j["forward_steps"] > l + p or j["predicted_time_ratio"] > j["revolve_predicted_time_ratio"]:
                fail(f"{method} l={l} c={c}: chose worse than revolve: {j}")
            if j["recomputed_steps"] != j["forward_steps"] - l or j["peak_slots"] > c:
                fail(f"{method} l={l} c={c}: inconsistent counts {j}")
            if j["schedule"].startswith("stage-aware"):
                if j["stage_units"] != stages or j["stage_stores"] != j["stage_reverses"]:
                    fail(f"{method} l={l} c={c}: stage counts {j}")
            if l == 10000 and not j["forward_steps"] < l + p:
                fail(f"{method}: stage-aware no better than revolve at l = 10^4, c = 20")
            if c >= l * stages and (j["schedule"] != "store-all-stages" or j["forward_steps"] != l):
                fail(f"{method} l={l} c={c}: every step's stages fit, ran {j['schedule']}")
    command = [rewind, "plan", "--steps", "100", "--snapshots", "10", "--stage-aware", "--json"]
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode == 0 or "--method" not in proc.stderr:
        fail(f"--stage-aware without --method was not refused: {proc.stderr!r}")
    print("ok: --stage-aware plans are consistent and never worse than revolve")


def main():
    if len(sys.argv) != 3:
        fail("usage: check_plan_json.py REWIND revolve|memory|large|uniform|online|online_rules")
    rewind, case = sys.argv[1], sys.argv[2]
    cases = {"revolve": case_revolve, "memory": case_memory, "large": case_large,
             "uniform": case_uniform, "stages": case_stages, "online": case_online,
             "online_rules": case_online_rules}
    if case not in cases:
        fail(f"unknown case '{case}'")
    cases[case](rewind)


if __name__ == "__main__":
    main()
