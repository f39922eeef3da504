#!/usr/bin/env python3
"""Runs `rewind run ... --json` and checks its report (a ctest added by tests/cli/CMakeLists.txt).

    check_run_json.py path/to/rewind run lorenz96 --n 40 --steps 200 --json

Passes when the tool exits 0 and prints exactly one JSON object on stdout that has every key of
the report, finite numbers everywhere, sizes that agree with each other, a gradient that is not
degenerate ("degenerate" null, the health figures in "stats"), and a finite-difference spot check
with relative error below 1e-6.
"""
import json
import math
import subprocess
import sys

TOP_KEYS = {
    "problem": str, "method": str, "adaptive": bool, "state_size": int, "parameter_size": int,
    "steps": int, "loss": float, "grad_y0_norm": float, "grad_theta_norm": float,
    "grad_theta": list, "parameter_names": list, "fd_check": dict, "stats": dict,
}
FD_KEYS = {"seed": int, "epsilon": float, "directional_fd": float,
           "directional_adjoint": float, "rel_error": float}
STATS_KEYS = {
    "steps": int, "rejected_steps": int, "forward_steps": int, "recomputed_steps": int,
    "reversed_steps": int, "rhs_evaluations_forward": int, "rhs_evaluations_reverse": int,
    "vjp_evaluations": int, "stores": int, "restores": int, "peak_stored_bytes": int,
    "setup_seconds": float, "forward_seconds": float, "recompute_seconds": float, "reverse_seconds": float,
    "gradient_cost_ratio": float, "t_final": float, "schedule": str, "backend": str,
    "relative_sensitivity": float, "final_step_change": float, "gradient_zero": bool,
    "gradient_negligible": bool, "state_stationary": bool,
}


def fail(message):
    print("check_run_json: " + message, file=sys.stderr)
    sys.exit(1)


def check_keys(obj, keys, where):
    for key, kind in keys.items():
        if key not in obj:
            fail(f"{where} has no key '{key}'")
        value = obj[key]
        if kind is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            if ok and not math.isfinite(value):
                fail(f"{where}['{key}'] = {value} is not finite")
        elif kind is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, kind)
        if not ok:
            fail(f"{where}['{key}'] = {value!r} is not a {kind.__name__}")


def main():
    command = sys.argv[1:]
    if not command:
        fail("usage: check_run_json.py REWIND [ARGS...]")
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        fail(f"{' '.join(command)} exited with {proc.returncode}: {proc.stderr.strip()}")
    try:
        report = json.loads(proc.stdout)  # exactly one JSON value, nothing else
    except json.JSONDecodeError as e:
        fail(f"stdout is not one JSON document: {e}\n{proc.stdout}")
    if not isinstance(report, dict):
        fail("the report is not a JSON object")
    check_keys(report, TOP_KEYS, "report")
    check_keys(report["fd_check"], FD_KEYS, "fd_check")
    check_keys(report["stats"], STATS_KEYS, "stats")
    for i, g in enumerate(report["grad_theta"]):
        if not isinstance(g, (int, float)) or not math.isfinite(g):
            fail(f"grad_theta[{i}] = {g!r} is not a finite number")
    if len(report["grad_theta"]) != report["parameter_size"]:
        fail(f"grad_theta has {len(report['grad_theta'])} entries, "
             f"parameter_size is {report['parameter_size']}")
    stats = report["stats"]
    if stats["steps"] != report["steps"] or stats["reversed_steps"] != report["steps"]:
        fail(f"steps disagree: report {report['steps']}, stats {stats['steps']}, "
             f"reversed {stats['reversed_steps']}")
    if report["steps"] < 1 or report["loss"] < 0:
        fail(f"implausible run: steps = {report['steps']}, loss = {report['loss']}")
    if "degenerate" not in report:
        fail("report has no key 'degenerate'")
    if report["degenerate"] is not None:
        fail(f"a healthy run is reported degenerate: {report['degenerate']}")
    if stats["gradient_negligible"] or stats["state_stationary"]:
        fail(f"stats say degenerate: {stats}")
    rel = report["fd_check"]["rel_error"]
    if not rel < 1e-6:
        fail(f"finite-difference check failed: rel_error = {rel} >= 1e-6")
    print(f"ok: {report['problem']} {report['method']}, J = {report['loss']:.17g}, "
          f"fd rel_error = {rel:.3g}")


if __name__ == "__main__":
    main()
