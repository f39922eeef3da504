#!/usr/bin/env python3
"""Checks `rewind run` on the problems with noise (a ctest added by tests/cli/CMakeLists.txt).

    check_noise_run.py path/to/rewind

For ornstein_uhlenbeck (Euler-Maruyama, 3 components) and stochastic_lorenz63 (Milstein):
- the same --seed twice gives the same bits (J, dJ/dtheta, |dJ/dy0|; the JSON prints each
  double as the shortest text that reads back as it), and the JSON reports the seed;
- another --seed gives another path (another J);
- store-all, revolve with 2 and 7 snapshots and revolve with 3 snapshots on disk give the
  store-all bits, with zero drift over every replay;
- the finite-difference spot check (common random numbers: the same seed) agrees;
- --seed for a problem without noise and an ODE method for a problem with noise are refused;
- a seed outside 0 … 2^64 - 1 or not a whole number (-1, 2^64, 1.5, 0x10, abc, empty) is
  refused naming the flag, what was typed and the range, for --seed and --fd-seed (CLI11 alone
  would saturate 2^64 to the type's limit and wrap -1, silently), and 2^64 - 1 itself is accepted
  and reported exactly.
"""
import json
import subprocess
import sys
import tempfile


def fail(message):
    print("check_noise_run: " + message, file=sys.stderr)
    sys.exit(1)


def run_json(rewind, *args):
    command = [rewind, "run", *args, "--json"]
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        fail(f"{' '.join(command)} exited with {proc.returncode}: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def refused(rewind, *args, needle):
    command = [rewind, "run", *args]
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode == 0 or needle not in proc.stderr:
        fail(f"{' '.join(command)} should be refused with '{needle}': {proc.stderr!r}")


KEYS = ("loss", "grad_theta", "grad_y0_norm", "grad_theta_norm")


def same_bits(a, b, what):
    for key in KEYS:
        if a[key] != b[key]:
            fail(f"{what}: {key} differs: {a[key]!r} vs {b[key]!r}")


def check_problem(rewind, problem, method, extra):
    base = [problem, "--method", method, "--steps", "300", *extra]
    first = run_json(rewind, *base, "--seed", "7")
    if first["noise_seed"] != 7 or first["method"] != method:
        fail(f"{problem}: the JSON does not report seed 7 and {method}: "
             f"{first['noise_seed']!r}, {first['method']!r}")
    same_bits(first, run_json(rewind, *base, "--seed", "7"), f"{problem} seed 7 twice")
    other = run_json(rewind, *base, "--seed", "8")
    if other["loss"] == first["loss"]:
        fail(f"{problem}: seeds 7 and 8 gave the same J {first['loss']!r}")
    if first["fd_check"]["verdict"] != "agree":
        fail(f"{problem}: spot check {first['fd_check']}")
    with tempfile.TemporaryDirectory() as disk:
        for flags in (["--snapshots", "2"], ["--snapshots", "7"],
                      ["--snapshots", "3", "--disk", disk]):
            what = f"{problem} {' '.join(flags)}"
            report = run_json(rewind, *base, "--seed", "7", *flags, "--no-fd-check")
            same_bits(first, report, what)
            drift = report["drift"]
            if (drift["max_rel_drift"] != 0 or drift["mismatched_steps"] != 0
                    or not drift["replayed_steps_checked"] > 0):
                fail(f"{what}: drift {drift}")
            if report["noise_seed"] != 7:
                fail(f"{what}: noise_seed {report['noise_seed']!r}")
    print(f"ok: {problem} ({method}): same seed same bits, store-all = every schedule, drift 0")


def main():
    rewind = sys.argv[1]
    check_problem(rewind, "ornstein_uhlenbeck", "euler_maruyama", ["--n", "3"])
    check_problem(rewind, "stochastic_lorenz63", "milstein", [])
    refused(rewind, "lorenz63", "--seed", "3", needle="--fd-seed")
    refused(rewind, "ornstein_uhlenbeck", "--method", "rk4", needle="has noise")
    refused(rewind, "lorenz63", "--method", "milstein", needle="needs a problem with noise")
    for seed in ("-1", "18446744073709551616", "99999999999999999999999", "1.5", "0x10", "abc",
                 ""):
        for flag in ("--seed", "--fd-seed"):
            refused(rewind, "ornstein_uhlenbeck", flag, seed, needle=f"{flag} = '{seed}'")
            refused(rewind, "ornstein_uhlenbeck", flag, seed,
                    needle=f"{flag} takes a whole number in [0, 2^64 - 1]")
    top = run_json(rewind, "ornstein_uhlenbeck", "--steps", "20", "--no-fd-check",
                   "--seed", "18446744073709551615")
    if top["noise_seed"] != 18446744073709551615:
        fail(f"--seed 2^64 - 1: the JSON reports {top['noise_seed']!r}")
    print("ok: refusals")


if __name__ == "__main__":
    main()
