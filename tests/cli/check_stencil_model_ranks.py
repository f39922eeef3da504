#!/usr/bin/env python3
"""Checks `mpirun -np N rewind run --model PATH ...` for stencil models loaded from plugins (a ctest
added by tests/cli/CMakeLists.txt when rewind is built with MPI).

    check_stencil_model_ranks.py mpiexec rewind gray_scott.so brusselator.so lorenz96.so

- Gray-Scott (periodic, 2-D) on 37 rows that split unevenly, with revolve on 4 snapshots and with
  two levels on disk: J, dJ/dtheta, |dJ/dy0| and the finite-difference check's <dJ/dy0, d> are
  the same bits for 1, 2 and 4 ranks; dJ/dtheta is the one-process run's; the report says how
  many ranks ran; the check agrees and the replays are bitwise.
- The Brusselator (reflecting walls) whose initial state depends on A and B, with --parameters:
  dJ/dtheta through the initial state is the one-process run's for 1, 2 and 3 ranks; with
  esdirk43 and matrix-free GMRES the same bits for 1, 2 and 3 ranks, the one-process run's
  gradient to 1e-9, and a direct solver refused across ranks.
- Lorenz-96 on a 1-D ring of 20000 cells (four equal blocks of 5000) with revolve: the same bits
  for 1, 2 and 4 ranks, dJ/dtheta the one-process run's; on 8192 cells with esdirk43 and GMRES the
  same bits for 1 and 2 ranks, the one-process gradient to 1e-9.
- Refused before any work, one line from rank 0 (exit 2): more ranks than the grid's rows allow for
  the stencil's reach, a 1-D grid of fewer blocks than ranks, and one of a prime number of cells
  (no equal blocks).
"""
import json
import os
import subprocess
import sys

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMP_NUM_THREADS="1", OMP_WAIT_POLICY="passive", OMPI_MCA_mpi_yield_when_idle="1")
FIELDS = ["loss", "grad_theta", "grad_y0_norm", "grad_theta_norm"]


def fail(message):
    print("check_stencil_model_ranks: " + message, file=sys.stderr)
    sys.exit(1)


def launch(mpiexec, ranks, rewind, *args):
    command = [mpiexec, "-q", "-np", str(ranks), "--oversubscribe", rewind, *args]
    return subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=300)


def parsed(proc, what):
    if proc.returncode != 0:
        fail(f"{what} exited with {proc.returncode}: {proc.stderr.strip()}")
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        fail(f"{what}: stdout is not one JSON object ({e}): {proc.stdout[:300]!r}")


def one_process(rewind, args):
    proc = subprocess.run([rewind, *args, "--json"], capture_output=True, text=True, env=ENV,
                          timeout=300)
    return parsed(proc, "one process: " + " ".join(args))


def across(mpiexec, ranks, rewind, args):
    return parsed(launch(mpiexec, ranks, rewind, *args, "--json"),
                  f"-np {ranks} " + " ".join(args))


def bits(report):
    out = {k: report[k] for k in FIELDS}
    out["directional_adjoint"] = report["fd_check"]["directional_adjoint"]
    return out


def check_same_bits(mpiexec, rewind, args, ranks, label, serial_tolerance=0.0):
    """serial_tolerance: how far dJ/dtheta may be from the one-process run's (0: its bits)."""
    serial = one_process(rewind, args)
    reports = {r: across(mpiexec, r, rewind, args) for r in ranks}
    first = bits(reports[ranks[0]])
    for r, report in reports.items():
        if bits(report) != first:
            fail(f"{label}: {r} ranks give {bits(report)}, {ranks[0]} give {first}")
        close = all(abs(a - b) <= serial_tolerance * abs(b)
                    for a, b in zip(report["grad_theta"], serial["grad_theta"]))
        if not close:
            fail(f"{label}: dJ/dtheta on {r} ranks {report['grad_theta']} is not the one-process "
                 f"run's {serial['grad_theta']} (within {serial_tolerance})")
        if report["fd_check"]["verdict"] != "agree":
            fail(f"{label}, {r} ranks: finite-difference verdict {report['fd_check']['verdict']}")
        if not report["drift"]["bitwise_identical"]:
            fail(f"{label}, {r} ranks: the replays are not bitwise identical")
        text = json.dumps(report)
        if r > 1 and '"ranks": ' + str(r) not in text:
            fail(f"{label}: the report of {r} ranks does not say so: {text[:400]}")
    print(f"{label}: the same bits on {ranks} ranks, dJ/dtheta the one-process run's" +
          (f" within {serial_tolerance}" if serial_tolerance else ""))


def expect_refusal(mpiexec, ranks, rewind, args, phrases, label):
    proc = launch(mpiexec, ranks, rewind, *args)
    if proc.returncode != 2:
        fail(f"{label}: exit {proc.returncode} (2 expected); stderr {proc.stderr.strip()!r}")
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    if len(lines) != 1:
        fail(f"{label}: {len(lines)} lines on stderr (one expected, from rank 0): {lines}")
    for phrase in phrases:
        if phrase not in lines[0]:
            fail(f"{label}: {phrase!r} not in {lines[0]!r}")
    print(f"{label}: refused: {lines[0]}")


def main():
    mpiexec, rewind, gray_scott, brusselator, lorenz96 = sys.argv[1:6]
    scratch = os.path.abspath("check_stencil_model_ranks_scratch")
    os.makedirs(scratch, exist_ok=True)
    gs = ["run", "--model", gray_scott, "--n", "37", "--steps", "30"]
    check_same_bits(mpiexec, rewind, gs + ["--snapshots", "4"], [1, 2, 4], "gray-scott revolve")
    check_same_bits(mpiexec, rewind,
                    gs + ["--ram-snapshots", "2", "--disk-snapshots", "3", "--disk", scratch],
                    [1, 2], "gray-scott two levels on disk")
    bruss = ["run", "--model", brusselator, "--n", "14", "--steps", "40", "--dt", "0.002",
             "--parameters", "A=1.1,B=3.2", "--snapshots", "5"]
    check_same_bits(mpiexec, rewind, bruss, [1, 2, 3], "brusselator through its initial state")
    # The implicit engine across ranks: Newton with matrix-free GMRES, whose reductions fold in the
    # split's order — the same bits for every rank count, the one-process GMRES run's gradient to
    # round-off (its reductions fold in another order).
    stiff = ["run", "--model", brusselator, "--n", "14", "--method", "esdirk43", "--adaptive",
             "--t-final", "0.5", "--linear-solver", "gmres", "--snapshots", "4"]
    check_same_bits(mpiexec, rewind, stiff, [1, 2, 3], "brusselator esdirk43 gmres",
                    serial_tolerance=1e-9)
    expect_refusal(mpiexec, 2, rewind, stiff[:-4] + ["--linear-solver", "sparse"],
                   ["matrix-free GMRES only (--linear-solver gmres)"],
                   "a direct solver across ranks")
    expect_refusal(mpiexec, 2, rewind, ["run", "gray_scott", "--n", "16", "--method", "esdirk43"],
                   ["needs the problem's Jacobian-vector product", "this problem has none"],
                   "the implicit method across ranks for a split problem without a jvp")

    l96 = ["run", "--model", lorenz96, "--steps", "20"]
    check_same_bits(mpiexec, rewind, l96 + ["--n", "20000", "--snapshots", "4"], [1, 2, 4],
                    "lorenz96 on a ring of cells, revolve")
    check_same_bits(mpiexec, rewind,
                    ["run", "--model", lorenz96, "--n", "8192", "--method", "esdirk43", "--adaptive",
                     "--t-final", "0.5", "--linear-solver", "gmres", "--snapshots", "4"], [1, 2],
                    "lorenz96 on a ring of cells, esdirk43 gmres", serial_tolerance=1e-9)
    expect_refusal(mpiexec, 3, rewind, l96 + ["--n", "8192"],
                   [lorenz96, "cut into 2 blocks of 4096", "use at most 2 ranks"],
                   "a line of 2 blocks over 3 ranks")
    expect_refusal(mpiexec, 2, rewind, l96 + ["--n", "20011"],
                   [lorenz96, "n = 20011 has none"], "a line of a prime number of cells")
    expect_refusal(mpiexec, 3, rewind, gs[:3] + ["--n", "5"],
                   [gray_scott, "reaches 2 slabs", "use at most 2 ranks"],
                   "5 rows over 3 ranks")


if __name__ == "__main__":
    main()
