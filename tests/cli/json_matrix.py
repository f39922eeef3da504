#!/usr/bin/env python3
"""Every subcommand's --json report for a fixed set of cases, recorded and compared bit for bit.

    json_matrix.py record REWIND OUT_DIR      # runs every case, writes OUT_DIR/<case>.json
    json_matrix.py compare REWIND BASELINE    # runs every case again, compares with BASELINE
    json_matrix.py repeat REWIND              # records twice and compares (the ctest: every
                                              # report is the same bits run after run)

A refactoring of the tool or the library must leave gradients, losses, fits, predictions and drift
reports exactly as they were: `compare` fails on any number that differs in any bit, except in
fields that measure time or the machine (seconds, rates, ratios of times, predicted times, peak
resident memory), whose names are listed in VOLATILE below. Numbers are compared as the JSON text
wrote them (rewind writes doubles with 17 significant digits, so equal text is equal bits).

The disk costs are given (measured ones would pick the two-level schedule by this machine's
disk speed). The cases run in about ten seconds; each names the subcommand, the problem and the
method so that a difference says where it is.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

# (case name, arguments after the tool's path[, the JSON file the case writes instead of
# printing]). Files a case writes go to {dir}, a fresh folder.
CASES = [
    ("plan_revolve", ["plan", "--steps", "100000", "--snapshots", "20", "--json"]),
    ("plan_online", ["plan", "--online", "--steps", "951", "--snapshots", "10", "--json"]),
    ("plan_stage_aware", ["plan", "--steps", "10000", "--snapshots", "20", "--stage-aware",
                          "--method", "rk4", "--json"]),
    ("plan_memory", ["plan", "--steps", "100000", "--memory", "256MiB", "--state-bytes", "80656",
                     "--json"]),
    ("plan_two_level", ["plan", "--steps", "100000", "--ram-snapshots", "4", "--disk-snapshots",
                        "100", "--disk-write-cost", "2", "--disk-read-cost", "1", "--json"]),
    ("run_lorenz96_rk4", ["run", "lorenz96", "--n", "40", "--steps", "200", "--method", "rk4",
                          "--dt", "0.01", "--json"]),
    ("run_lorenz63_dopri5_online", ["run", "lorenz63", "--method", "dopri5", "--adaptive",
                                    "--t-final", "2", "--snapshots", "10", "--json"]),
    ("run_van_der_pol_adaptive", ["run", "van_der_pol", "--method", "dopri5", "--adaptive",
                                  "--t-final", "2", "--rtol", "1e-8", "--atol", "1e-10",
                                  "--json"]),
    ("run_gray_scott_revolve", ["run", "gray_scott", "--n", "24", "--steps", "300", "--dt", "1",
                                "--snapshots", "6", "--json"]),
    ("run_gray_scott_stage_aware", ["run", "gray_scott", "--n", "24", "--steps", "300", "--dt",
                                    "1", "--snapshots", "6", "--stage-aware", "--json"]),
    ("run_gray_scott_disk", ["run", "gray_scott", "--n", "24", "--steps", "300", "--dt", "1",
                             "--disk", "{dir}", "--ram-snapshots", "2", "--disk-snapshots", "6",
                             "--disk-write-cost", "2", "--disk-read-cost", "1", "--json"]),
    ("run_gray_scott_thrust_levels", ["run", "gray_scott", "--n", "24", "--steps", "200",
                                      "--backend", "thrust", "--device-snapshots", "2",
                                      "--host-snapshots", "4", "--json"]),
    ("run_heat2d_euler", ["run", "heat2d", "--n", "16", "--steps", "200", "--method", "euler",
                          "--snapshots", "5", "--json"]),
    ("run_ou_euler_maruyama", ["run", "ornstein_uhlenbeck", "--method", "euler_maruyama",
                               "--steps", "1000", "--seed", "7", "--snapshots", "5", "--json"]),
    ("run_stochastic_lorenz63_milstein", ["run", "stochastic_lorenz63", "--method", "milstein",
                                          "--seed", "3", "--steps", "200", "--json"]),
    ("run_robertson_bdf", ["run", "robertson", "--method", "bdf", "--atol", "1e-10",
                           "--snapshots", "4", "--json"]),
    ("run_brusselator_bdf", ["run", "brusselator", "--n", "8", "--method", "bdf", "--json"]),
    ("run_lotka_volterra_params", ["run", "lotka_volterra", "--steps", "500", "--parameters",
                                   "alpha=1.2", "--json"]),
    ("fit_lotka_volterra", ["fit", "lotka_volterra", "--observations", "{dir}/lv.h5", "--fit",
                            "alpha,gamma", "--start", "alpha=1.3,gamma=3.4", "--snapshots", "8",
                            "--json"]),
    ("fit_gray_scott_stages", ["fit", "gray_scott", "--observations", "{dir}/gs.h5", "--fit",
                               "F,k", "--start", "F=0.0425,k=0.052", "--bounds",
                               "F=0.02:0.08,k=0.04:0.08", "--stages", "2", "--snapshots", "5",
                               "--max-evaluations", "6", "--json"]),
    ("train_spiral", ["train", "spiral", "--data", "{dir}/spiral.csv", "--iterations", "30",
                      "--eval-every", "10", "--quiet", "--json", "{dir}/train.json"],
     "{dir}/train.json"),
]

# Files the cases read, written first into the same folder (their output is not compared: the
# fits that read them are).
SETUP = [
    ["generate", "lotka_volterra", "--steps", "1000", "--observe-every", "20", "--noise", "0.02",
     "--seed", "1", "--out", "{dir}/lv.h5"],
    ["generate", "gray_scott", "--n", "16", "--steps", "400", "--observe-every", "100",
     "--observe", "v", "--noise", "0.01", "--seed", "1", "--out", "{dir}/gs.h5"],
    ["generate", "spiral", "--out", "{dir}/spiral.csv"],
]

# Fields that measure time, speed or the machine, not the computation (prefetch hits depend on
# how fast the background reader ran): a key one of whose underscore-separated words is listed
# here is left out of the comparison ("forward_seconds", "gradient_cost_ratio").
VOLATILE = {"seconds", "second", "time", "times", "rate", "ratio", "predicted", "measured",
            "resident", "rss", "elapsed", "wall", "throughput", "cost", "costs", "host",
            "file", "path", "directory", "version", "date", "prefetch", "speed", "bandwidth"}


def is_volatile(key):
    return any(word in VOLATILE for word in key.lower().split("_"))


def strip(value):
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if not is_volatile(k)}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def run_case(rewind, args, folder, written=None):
    argv = [rewind] + [a.replace("{dir}", folder) for a in args]
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        return None, f"exit {proc.returncode}: {proc.stderr.strip()[-400:]}"
    if written:
        with open(written.replace("{dir}", folder)) as f:
            text = f.read()
    else:
        text = proc.stdout.strip()
    start = text.find("{")
    if start < 0:
        return None, "no JSON object on stdout"
    try:
        return json.loads(text[start:], parse_float=str, parse_int=str), None
    except json.JSONDecodeError as e:
        return None, f"unreadable JSON: {e}"


def run_all(rewind, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="rewind-json-matrix-")
    problems = []
    try:
        for args in SETUP:
            argv = [rewind] + [a.replace("{dir}", work) for a in args]
            proc = subprocess.run(argv, capture_output=True, text=True)
            if proc.returncode != 0:
                problems.append(f"setup {' '.join(args[:2])}: {proc.stderr.strip()[-400:]}")
        for name, args, *written in CASES:
            report, error = run_case(rewind, args, work, *written)
            if error:
                problems.append(f"{name}: {error}")
                report = {"error": error}
            # The temporary folder's name differs run to run: written as {dir}.
            text = json.dumps(strip(report), indent=1, sort_keys=True).replace(work, "{dir}")
            with open(os.path.join(out_dir, name + ".json"), "w") as f:
                f.write(text)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return problems


def differences(a, b, where=""):
    if type(a) is not type(b):
        return [f"{where}: {a!r} against {b!r}"]
    if isinstance(a, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{where}.{k}: only in {'baseline' if k in a else 'new run'}")
            else:
                out += differences(a[k], b[k], f"{where}.{k}")
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{where}: {len(a)} entries against {len(b)}"]
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += differences(x, y, f"{where}[{i}]")
        return out
    return [] if a == b else [f"{where}: {a} against {b}"]


def compare(baseline_dir, new_dir):
    bad = []
    for name, *_ in CASES:
        with open(os.path.join(baseline_dir, name + ".json")) as f:
            old = json.load(f)
        with open(os.path.join(new_dir, name + ".json")) as f:
            new = json.load(f)
        bad += [f"{name}{d}" for d in differences(old, new)]
    return bad


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "repeat":
        first = tempfile.mkdtemp(prefix="rewind-json-matrix-first-")
        try:
            problems = run_all(sys.argv[2], first)
            if problems:
                for p in problems:
                    print("json_matrix: " + p, file=sys.stderr)
                return 1
            sys.argv = [sys.argv[0], "compare", sys.argv[2], first]
            return main()
        finally:
            shutil.rmtree(first, ignore_errors=True)
    if len(sys.argv) != 4 or sys.argv[1] not in ("record", "compare"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, rewind, folder = sys.argv[1:]
    if mode == "record":
        problems = run_all(rewind, folder)
        for p in problems:
            print("json_matrix: " + p, file=sys.stderr)
        print(f"json_matrix: {len(CASES)} cases recorded in {folder}")
        return 1 if problems else 0
    new_dir = tempfile.mkdtemp(prefix="rewind-json-matrix-new-")
    problems = run_all(rewind, new_dir)
    bad = compare(folder, new_dir)
    for line in problems + bad:
        print("json_matrix: " + line, file=sys.stderr)
    print(f"json_matrix: {len(CASES)} cases, {len(bad)} differences, {len(problems)} failures")
    return 1 if (bad or problems) else 0


if __name__ == "__main__":
    sys.exit(main())
