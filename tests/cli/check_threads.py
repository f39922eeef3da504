#!/usr/bin/env python3
"""Checks `rewind ... --threads T` (a ctest added by tests/cli/CMakeLists.txt).

    check_threads.py path/to/rewind

- gray_scott --n 140 (140 rows: the rows and the vector operations run on threads) with revolve
  on 4 snapshots and with two levels on disk, heat2d --n 140, and lorenz96 --n 70001 with dopri5
  adaptive steps: J, dJ/dtheta, |dJ/dy0| and <dJ/dy0, d> are the same bits (the JSON prints each
  double as the shortest text that reads back as it) for --threads 1, 2 and 3, and the report says
  how many threads ran. The option works before and after the subcommand.
- `rewind train spiral --threads 2` reports 2 threads and the loss history of --threads 1.
- In a build without OpenMP (REWIND_TEST_OPENMP=0 in the environment, set by CMake: the TSan
  build), --threads 1 runs and --threads 2 is refused before any work, naming OpenMP.
"""
import json
import os
import subprocess
import sys
import tempfile


def fail(message):
    print("check_threads: " + message, file=sys.stderr)
    sys.exit(1)


def run_json(rewind, *args):
    proc = subprocess.run([rewind, *args, "--json"], capture_output=True, text=True)
    if proc.returncode != 0:
        fail(f"{' '.join(args)} exited with {proc.returncode}: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


GRADIENT_FIELDS = ["loss", "grad_theta", "grad_y0_norm", "grad_theta_norm"]


def gradient(report):
    missing = [k for k in GRADIENT_FIELDS if k not in report]
    if missing:
        fail(f"the report lacks {missing}")
    return {k: report[k] for k in GRADIENT_FIELDS}


def threads_of(report):
    return report.get("stats", {}).get("threads")


def check_without_openmp(rewind):
    args = ["run", "lorenz96", "--n", "40", "--steps", "20", "--snapshots", "3", "--no-fd-check"]
    if threads_of(run_json(rewind, *args, "--threads", "1")) != 1:
        fail("--threads 1 did not report one thread")
    proc = subprocess.run([rewind, *args, "--threads", "2"], capture_output=True, text=True)
    if proc.returncode != 2 or "OpenMP" not in proc.stderr:
        fail(f"--threads 2 without OpenMP exited {proc.returncode}: {proc.stderr.strip()}")
    print("check_threads: built without OpenMP: --threads 2 refused, naming OpenMP")


def main():
    rewind = sys.argv[1]
    if os.environ.get("REWIND_TEST_OPENMP") == "0":
        check_without_openmp(rewind)
        return
    with tempfile.TemporaryDirectory() as disk:
        cases = {
            "gray_scott revolve": ["run", "gray_scott", "--n", "140", "--steps", "40",
                                   "--snapshots", "4", "--no-fd-check"],
            "gray_scott two-level": ["run", "gray_scott", "--n", "140", "--steps", "40",
                                     "--ram-snapshots", "2", "--disk-snapshots", "3", "--disk",
                                     disk, "--disk-write-cost", "2", "--disk-read-cost", "1",
                                     "--no-fd-check"],
            "heat2d": ["run", "heat2d", "--n", "140", "--steps", "30", "--snapshots", "3",
                       "--no-fd-check"],
            "lorenz96 adaptive": ["run", "lorenz96", "--n", "70001", "--method", "dopri5",
                                  "--adaptive", "--t-final", "0.2", "--snapshots", "3",
                                  "--no-fd-check"],
        }
        for name, args in cases.items():
            reference = run_json(rewind, *args, "--threads", "1")
            if threads_of(reference) != 1:
                fail(f"{name}: --threads 1 reported {threads_of(reference)} threads")
            for threads in (2, 3):
                report = run_json(rewind, *args, "--threads", str(threads))
                if threads_of(report) != threads:
                    fail(f"{name}: --threads {threads} reported {threads_of(report)} threads")
                if gradient(report) != gradient(reference):
                    fail(f"{name}: --threads {threads} changed the gradient:\n"
                         f"  {gradient(report)}\n  {gradient(reference)}")
            before = run_json(rewind, "--threads", "2", *args)
            if threads_of(before) != 2 or gradient(before) != gradient(reference):
                fail(f"{name}: --threads before the subcommand did not act the same")

    histories = {}
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "spiral.csv")
        subprocess.run([rewind, "generate", "spiral", "--out", data], check=True,
                       capture_output=True)
        for threads in (1, 2):
            log = os.path.join(tmp, f"train{threads}.json")
            proc = subprocess.run([rewind, "train", "spiral", "--data", data, "--iterations", "20",
                                   "--quiet", "--threads", str(threads), "--json", log],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                fail(f"train --threads {threads} exited with {proc.returncode}: {proc.stderr}")
            with open(log) as f:
                training = json.load(f)
            if training.get("threads") != threads:
                fail(f"train --threads {threads} reported {training.get('threads')}")
            histories[threads] = [it["loss"] for it in training["iterations"]]
    if histories[1] != histories[2]:
        fail("train spiral: the loss history depends on the thread count")
    print("check_threads: gradients and loss histories identical for 1, 2 and 3 threads")


if __name__ == "__main__":
    main()
