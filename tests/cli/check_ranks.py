#!/usr/bin/env python3
"""Checks `mpirun -np N rewind run ...` (a ctest added by tests/cli/CMakeLists.txt when rewind is
built with MPI).

    check_ranks.py path/to/mpiexec path/to/rewind path/to/spiral.csv

- gray_scott --n 37 (rows that split unevenly) with revolve on 4 snapshots, a uniform schedule,
  two levels with snapshots on disk (measured costs: every rank must agree on them) and
  store-all: J, dJ/dtheta, |dJ/dy0| and the finite-difference check's <dJ/dy0, d> are the same
  bits (the JSON prints each double as the shortest text that reads back as it) for 1, 2 and 4
  ranks, and for 2 ranks x 2 threads; dJ/dtheta is the one-process run's. The report says how many
  ranks ran, and the snapshot memory per rank shrinks with the ranks.
- heat2d and lorenz96 with revolve: the same bits for 1, 2 and 4 ranks, dJ/dtheta of one process.
- brusselator with --method bdf (CVODES, GMRES on the distributed N_Vector): the same bits for 1,
  2 and 4 ranks; --linear-solver band is refused across ranks.
- train spiral with the minibatch split over 2 and 4 ranks: the one-process loss history and
  gradient norms, bit for bit; a batch smaller than the ranks is refused.
- Only rank 0 prints: stdout is one JSON object, one text report.
- Failures end the job with one line on stderr (mpirun -q): a problem that does not split
  (exit 2), more ranks than rows (exit 2), a run that blows up mid-run (exit 1; every rank meets
  the NaN through the collective check, rank 0 reports it and ends the job).
- generate, fit, plan, inspect and predict, which run in one process, are refused under 2 ranks
  (exit 2, one line) and write nothing.
"""
import json
import re
import os
import shutil
import subprocess
import sys

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMP_NUM_THREADS="1", OMP_WAIT_POLICY="passive", OMPI_MCA_mpi_yield_when_idle="1")


def fail(message):
    print("check_ranks: " + message, file=sys.stderr)
    sys.exit(1)


def launch(mpiexec, ranks, rewind, *args):
    command = [mpiexec, "-q", "-np", str(ranks), "--oversubscribe", rewind, *args]
    return subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=300)


def run_json(mpiexec, ranks, rewind, *args):
    proc = launch(mpiexec, ranks, rewind, *args, "--json")
    if proc.returncode != 0:
        fail(f"-np {ranks} {' '.join(args)} exited with {proc.returncode}: {proc.stderr.strip()}")
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        fail(f"-np {ranks} {' '.join(args)}: stdout is not one JSON object ({e}): "
             f"{proc.stdout[:300]!r}")


FIELDS = ["loss", "grad_theta", "grad_y0_norm", "grad_theta_norm"]


def bits(report):
    out = {k: report[k] for k in FIELDS}
    out["directional_adjoint"] = report["fd_check"]["directional_adjoint"]
    return out


# A build without OpenMP (the TSan build; CMake sets REWIND_TEST_OPENMP=0) runs one thread per
# rank and refuses --threads 2: the 2 ranks x 2 threads runs are left out there.
WITH_OPENMP = os.environ.get("REWIND_TEST_OPENMP") != "0"


def main():
    mpiexec, rewind, spiral = sys.argv[1], sys.argv[2], sys.argv[3]
    base = ["run", "gray_scott", "--n", "37", "--steps", "60"]
    scratch = os.path.abspath("check_ranks_scratch")
    os.makedirs(scratch, exist_ok=True)
    schedules = {
        "revolve": ["--snapshots", "4"],
        "uniform": ["--snapshots", "13", "--schedule", "uniform"],
        "two-level disk": ["--ram-snapshots", "2", "--disk-snapshots", "3", "--disk", scratch],
        "store-all": [],
    }
    serial = subprocess.run([rewind, *base, "--snapshots", "4", "--json"], capture_output=True,
                            text=True, env=ENV)
    if serial.returncode != 0:
        fail(f"the one-process run failed: {serial.stderr.strip()}")
    serial_theta = json.loads(serial.stdout)["grad_theta"]
    for name, flags in schedules.items():
        reports = {ranks: run_json(mpiexec, ranks, rewind, *base, *flags) for ranks in (1, 2, 4)}
        if WITH_OPENMP:
            reports["2x2"] = run_json(mpiexec, 2, rewind, *base, *flags, "--threads", "2")
        reference = bits(reports[1])
        for key, report in reports.items():
            if bits(report) != reference:
                fail(f"{name}: {key} ranks give {bits(report)}, 1 rank {reference}")
            ranks = 2 if key == "2x2" else key
            if report["stats"]["ranks"] != ranks:
                fail(f"{name}: {key} ranks: the report says {report['stats']['ranks']} ranks")
            if report["fd_check"]["verdict"] != "agree":
                fail(f"{name}: {key} ranks: finite differences {report['fd_check']['verdict']}")
        if WITH_OPENMP and reports["2x2"]["stats"]["threads"] != 2:
            fail(f"{name}: --threads 2 under mpirun reports {reports['2x2']['stats']['threads']}")
        if reference["grad_theta"] != serial_theta:
            fail(f"{name}: dJ/dtheta {reference['grad_theta']} differs from the one-process "
                 f"{serial_theta}")
        if flags and "--disk" not in flags:
            one, four = (reports[k]["stats"]["peak_stored_bytes"] for k in (1, 4))
            # 37 rows over 4 ranks: the largest slice has 10 rows of 37 (and the carry).
            if not four < one / 3:
                fail(f"{name}: peak snapshot memory per rank {four} bytes at 4 ranks, "
                     f"{one} at 1")
        if os.listdir(scratch):
            fail(f"{name}: snapshot files left behind: {os.listdir(scratch)}")
        print(f"{name}: the same bits for 1, 2, 4 ranks" +
              (" and 2 ranks x 2 threads" if WITH_OPENMP else " (built without OpenMP)"))

    # Heat2D (walls) and Lorenz-96 (a ring cut into rows) split too: dJ/dtheta is the
    # one-process run's, everything the same bits for 1, 2 and 4 ranks.
    for problem in (["heat2d", "--n", "37", "--steps", "200"],
                    ["lorenz96", "--n", "400", "--steps", "200"]):
        args = ["run", *problem, "--snapshots", "4"]
        alone = subprocess.run([rewind, *args, "--json"], capture_output=True, text=True, env=ENV)
        if alone.returncode != 0:
            fail(f"{' '.join(problem)} in one process: {alone.stderr.strip()}")
        reports = {ranks: run_json(mpiexec, ranks, rewind, *args) for ranks in (1, 2, 4)}
        for ranks, report in reports.items():
            if bits(report) != bits(reports[1]) or report["stats"]["ranks"] != ranks:
                fail(f"{problem[0]}: {ranks} ranks give {bits(report)}, 1 rank {bits(reports[1])}")
        if reports[1]["grad_theta"] != json.loads(alone.stdout)["grad_theta"]:
            fail(f"{problem[0]}: dJ/dtheta differs from the one-process run")
        print(f"{problem[0]}: the same bits for 1, 2, 4 ranks, dJ/dtheta of one process")

    # CVODES BDF over ranks: the matrix-free GMRES solver on rewind's distributed N_Vector.
    bdf = ["run", "brusselator", "--n", "12", "--method", "bdf", "--steps", "6", "--snapshots", "2",
           "--rtol", "1e-8", "--atol", "1e-10"]
    reports = {ranks: run_json(mpiexec, ranks, rewind, *bdf) for ranks in (1, 2, 4)}
    for ranks, report in reports.items():
        if bits(report) != bits(reports[1]):
            fail(f"brusselator bdf: {ranks} ranks give {bits(report)}, 1 rank {bits(reports[1])}")
        if "gmres" not in report["stats"]["method"] or report["fd_check"]["verdict"] != "agree":
            fail(f"brusselator bdf, {ranks} ranks: {report['stats']['method']}, finite "
                 f"differences {report['fd_check']['verdict']}")
    print("brusselator bdf (gmres): the same bits for 1, 2, 4 ranks")

    # Training with the minibatch split: the loss history of one process, bit for bit.
    def history(path):
        with open(path) as f:
            log = json.load(f)
        return log["ranks"], [(i["loss"], i["gradient_norm"]) for i in log["iterations"]]

    train = ["train", "spiral", "--data", spiral, "--iterations", "30", "--quiet"]
    alone = subprocess.run([rewind, *train, "--json", "train1.json"], capture_output=True,
                           text=True, env=ENV)
    if alone.returncode != 0:
        fail(f"train spiral in one process: {alone.stderr.strip()}")
    for ranks in (2, 4):
        if os.path.exists("train.json"):
            os.remove("train.json")
        proc = launch(mpiexec, ranks, rewind, *train, "--json", "train.json")
        if proc.returncode != 0:
            fail(f"-np {ranks} train spiral exited with {proc.returncode}: {proc.stderr.strip()}")
        count, losses = history("train.json")
        if count != ranks or losses != history("train1.json")[1]:
            fail(f"-np {ranks} train spiral: {count} ranks reported, the history "
                 f"{'matches' if losses == history('train1.json')[1] else 'differs'}")
    print("train spiral: the one-process loss history with 2 and 4 ranks")

    text = launch(mpiexec, 2, rewind, *base, "--snapshots", "4")
    if text.returncode != 0 or text.stdout.count("rewind run gray_scott") != 1:
        fail(f"text report under 2 ranks (exit {text.returncode}): {text.stdout[:400]!r}")
    if "ranks x threads             2 x 1" not in text.stdout:
        fail("the text report does not say 2 ranks x 1 thread")

    for args, status, message in [
        (["run", "lorenz63"], 2, "lorenz63 does not split its state across ranks"),
        (["run", "brusselator", "--n", "8", "--method", "bdf", "--linear-solver", "band"], 2,
         "band linear solver does not distribute"),
        (["train", "spiral", "--data", spiral, "--batch", "3", "--quiet"], 2,
         "batch 3 windows cannot be split over 4 ranks"),
        (["run", "gray_scott", "--n", "3"], 2, "3 rows to split and 4 ranks"),
        (["run", "gray_scott", "--n", "16", "--dt", "50", "--steps", "100"], 1,
         "non-finite .*at step 2"),
    ]:
        proc = launch(mpiexec, 4, rewind, *args)
        lines = [l for l in proc.stderr.splitlines() if l.strip()]

        if proc.returncode != status or len(lines) != 1 or not re.search(message, lines[0]):
            fail(f"-np 4 {' '.join(args)}: exit {proc.returncode} (want {status}), stderr "
                 f"{proc.stderr.strip()!r} (want one line matching {message!r})")
        print(f"-np 4 {' '.join(args)}: exit {status}, one line: {lines[0]}")

    # The subcommands that run in one process are refused in a job of 2 ranks, before any work:
    # nothing written (each rank would have run all of it and written the same files).
    one_process = os.path.abspath("check_ranks_one_process")
    shutil.rmtree(one_process, ignore_errors=True)
    os.makedirs(one_process)
    observations = os.path.join(one_process, "observations.h5")
    alone = subprocess.run([rewind, "generate", "lorenz63", "--observe-every", "10", "--out",
                            observations], capture_output=True, text=True, env=ENV)
    if alone.returncode != 0:
        fail(f"generate lorenz63 in one process: {alone.stderr.strip()}")
    written = os.path.join(one_process, "written")
    for args in (["generate", "lorenz63", "--observe-every", "10", "--out", written],
                 ["fit", "lorenz63", "--fit", "rho", "--observations", observations, "--plot",
                  written],
                 ["plan", "--steps", "100", "--snapshots", "5", "--plot", written + ".png"],
                 ["inspect", observations],
                 ["predict", "--parameters", observations, "--y0", "1,2", "--t", "0,1",
                  "--output", written + ".csv"]):
        proc = launch(mpiexec, 2, rewind, *args)
        lines = [l for l in proc.stderr.splitlines() if l.strip()]
        want = f"rewind {args[0]} runs in one process, and this job has 2 ranks"
        if proc.returncode != 2 or len(lines) != 1 or want not in lines[0]:
            fail(f"-np 2 {' '.join(args)}: exit {proc.returncode} (want 2), stderr "
                 f"{proc.stderr.strip()!r} (want one line saying {want!r})")
        left = [f for f in os.listdir(one_process) if f.startswith("written")]
        if left:
            fail(f"-np 2 {' '.join(args)} wrote {left}")
        print(f"-np 2 {' '.join(args)}: exit 2, one line: {lines[0]}")


if __name__ == "__main__":
    main()
