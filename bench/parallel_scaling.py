#!/usr/bin/python3
"""Threads (and, where built, MPI ranks) against one core on one gradient, side by side.

    bench/run_parallel_scaling.sh                     # builds if needed, runs this, prints a table
    python3 bench/parallel_scaling.py --rewind build/src/cli/rewind --n 708 --steps 200

Runs `rewind run gray_scott` (RK4, dt = 1, revolve on --snapshots snapshots in memory) once per
thread count, each in its own process, --repeats times, and keeps the fastest of each (these
machines are shared: the minimum is the least disturbed run). For each it prints the forward
sweep, the whole gradient (forward + recomputation + reverse), the speed-up of both against one
thread, and the process's peak RSS. Every gradient (J, dJ/dtheta, |dJ/dy0|) must be the same
bits as the one-thread run, and the field must be alive (the report's "degenerate" is null):
a fast gradient of a dead field means nothing.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time


def run_once(rewind, args):
    """Runs rewind with args; returns its JSON report."""
    proc = subprocess.Popen([rewind, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    out, err = proc.communicate()
    if proc.returncode != 0:
        sys.exit(f"parallel_scaling: {' '.join(args)} failed ({proc.returncode}): {err.strip()}")
    return json.loads(out)


def peak_rss_of(rewind, args):
    """Runs rewind under fork/exec and reads the child's own maximum resident set (wait4)."""
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.execv(rewind, [rewind, *args])
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"parallel_scaling: {' '.join(args)} failed")
    return usage.ru_maxrss * 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rewind", required=True, help="the rewind executable")
    parser.add_argument("--n", type=int, default=708, help="grid side (708: 10^6 unknowns)")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--snapshots", type=int, default=10)
    parser.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ranks", default="1,2",
                        help="MPI rank counts for the ranks table (one thread each); empty: none")
    parser.add_argument("--distributed-bench",
                        help="build/bench/distributed_gray_scott_bench (the ranks table)")
    parser.add_argument("--mpiexec", default="mpiexec")
    parser.add_argument("--model-ranks", type=int, default=64)
    parser.add_argument("--model-unknowns", type=float, default=1e8)
    parser.add_argument("--bandwidth", type=float, default=10e9,
                        help="model: bytes/s one rank sends or receives (default 10 GB/s)")
    parser.add_argument("--latency", type=float, default=2e-6,
                        help="model: seconds per message (default 2 us)")
    options = parser.parse_args()

    cores = os.cpu_count()
    print(f"machine: {cores} cores, {platform.processor() or platform.machine()}; "
          f"load {os.getloadavg()[0]:.2f}")
    print(f"date:    {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}")
    unknowns = 2 * options.n * options.n
    print(f"case:    gray_scott --n {options.n} ({unknowns} unknowns), rk4 dt = 1, "
          f"{options.steps} steps, revolve on {options.snapshots} snapshots; "
          f"fastest of {options.repeats}\n")

    base = ["run", "gray_scott", "--n", str(options.n), "--steps", str(options.steps),
            "--snapshots", str(options.snapshots), "--no-fd-check", "--json"]
    rows = []
    reference = None
    for threads in [int(t) for t in options.threads.split(",")]:
        args = base + ["--threads", str(threads)]
        best = None
        for _ in range(options.repeats):
            report = run_once(options.rewind, args)
            stats = report["stats"]
            if stats.get("threads") != threads:
                sys.exit(f"parallel_scaling: asked for {threads} threads, ran {stats.get('threads')}")
            if report.get("degenerate") is not None:
                sys.exit(f"parallel_scaling: the gradient is degenerate: {report['degenerate']}")
            gradient = (report["loss"], report["grad_theta"], report["grad_y0_norm"])
            if reference is None:
                reference = gradient
            elif gradient != reference:
                sys.exit(f"parallel_scaling: {threads} threads changed the gradient:\n"
                         f"  {gradient}\n  {reference}")
            timing = (stats["forward_seconds"], stats["total_seconds"])
            if best is None or timing[1] < best[1]:
                best = timing
        rss = peak_rss_of(options.rewind, args)
        rows.append((threads, best[0], best[1], rss))

    one = rows[0]
    print(f"{'threads':>7}  {'forward s':>9}  {'speed-up':>8}  {'gradient s':>10}  {'speed-up':>8}"
          f"  {'peak RSS':>9}")
    for threads, forward, total, rss in rows:
        print(f"{threads:>7}  {forward:9.3f}  {one[1] / forward:7.2f}x  {total:10.3f}  "
              f"{one[2] / total:7.2f}x  {rss / 2**20:7.0f} MiB")
    print(f"\ngradients: the same bits for every thread count (J = {reference[0]!r})")

    if options.distributed_bench and options.ranks:
        ranks_table(options)


def ranks_table(options):
    """The same gradient with the grid rows split across MPI ranks, one thread per rank."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMP_NUM_THREADS="1")
    print(f"\nMPI ranks (rwd::DistributedGrayScott, one thread per rank, seed 1; "
          f"fastest of {options.repeats}):\n")
    rows, reference = [], None
    for ranks in [int(r) for r in options.ranks.split(",")]:
        best = None
        for _ in range(options.repeats):
            proc = subprocess.run([options.mpiexec, "-n", str(ranks), "--oversubscribe",
                                   options.distributed_bench, "--n", str(options.n), "--steps",
                                   str(options.steps), "--snapshots", str(options.snapshots),
                                   "--threads", "1"], capture_output=True, text=True, env=env)
            if proc.returncode != 0:
                sys.exit(f"parallel_scaling: {ranks} ranks failed: {proc.stderr.strip()}")
            report = json.loads(proc.stdout)
            gradient = (report["loss"], report["grad_theta"])
            if reference is None:
                reference = gradient
            elif gradient != reference:
                sys.exit(f"parallel_scaling: {ranks} ranks changed the gradient:\n"
                         f"  {gradient}\n  {reference}")
            if report["std_v"] < 1e-3:
                sys.exit(f"parallel_scaling: the field is dead (std v = {report['std_v']})")
            if best is None or report["gradient_seconds"] < best["gradient_seconds"]:
                best = report
        rows.append(best)
    one = rows[0]
    print(f"{'ranks':>5}  {'forward s':>9}  {'speed-up':>8}  {'gradient s':>10}  {'speed-up':>8}"
          f"  {'peak RSS / rank':>15}  {'snapshots / rank':>16}")
    for r in rows:
        rss = max(r["peak_rss_bytes"]) / 2**20
        snap = max(r["snapshot_bytes"]) / 2**20
        print(f"{r['ranks']:>5}  {r['forward_seconds']:9.3f}  "
              f"{one['forward_seconds'] / r['forward_seconds']:7.2f}x  "
              f"{r['gradient_seconds']:10.3f}  "
              f"{one['gradient_seconds'] / r['gradient_seconds']:7.2f}x  {rss:11.0f} MiB  "
              f"{snap:12.1f} MiB")
    print(f"\ngradients: the same bits for every rank count (J = {reference[0]!r}); "
          f"std(v) at the end = {rows[0]['std_v']:.4g}")
    model(options, one)


def model(options, one_rank):
    """Bytes and messages per RK4 step of the distributed Gray–Scott gradient, and the time they
    would take beside the compute, at --model-ranks ranks × --model-unknowns unknowns.

    Counted from the code: every rhs exchanges 2 halo messages (up, down) of 2 rows (u, v) of n
    doubles; every vjp exchanges halos of y and of the cotangent (4 messages) and folds the 4
    parameter sums — one allgather of n rows × 4 doubles that every rank receives whole. A
    forward step is 4 rhs; a reverse step re-runs its forward step (4 rhs) and 4 vjp. Compute
    time per unknown and step is this run's one-rank figure (same machine, one core), and it
    is assumed to scale with the unknowns a rank owns; the network is the two --bandwidth and
    --latency numbers, an allgather over P ranks costs a ring's (P-1) latencies plus the bytes
    received. Snapshot I/O, drift fingerprints (<= 4096 per run, one allgather each) and the
    schedule's recomputation factor are left out: they multiply compute and communication alike.
    """
    P, N = options.model_ranks, options.model_unknowns
    n = (N / 2) ** 0.5  # rows = columns of each field
    unknowns_per_rank = N / P
    forward_per_unknown = one_rank["forward_seconds"] / (options.steps * 2 * options.n ** 2)
    halo_bytes = 2 * n * 8  # u and v rows, one message
    gather_bytes = n * 4 * 8  # every row's 4 parameter sums
    forward_messages, forward_bytes = 4 * 2, 4 * 2 * halo_bytes
    reverse_messages = forward_messages + 4 * 4
    reverse_bytes = forward_bytes + 4 * 4 * halo_bytes
    reverse_gathers = 4
    t_forward = forward_per_unknown * unknowns_per_rank
    gradient_ratio = one_rank["gradient_seconds"] / one_rank["forward_seconds"]
    t_step_reverse = t_forward * 3.0  # one adjoint RK4 step: its forward step plus 4 vjp (~2x rhs)
    c_forward = forward_messages * options.latency + forward_bytes / options.bandwidth
    c_gather = (P - 1) * options.latency + gather_bytes * (P - 1) / P / options.bandwidth
    c_reverse = (reverse_messages * options.latency + reverse_bytes / options.bandwidth +
                 reverse_gathers * c_gather)
    print(f"\nModel, {P} ranks x {N:.0e} unknowns (n = {n:.0f} rows per field, "
          f"{unknowns_per_rank:.3g} unknowns per rank; {options.bandwidth / 1e9:g} GB/s, "
          f"{options.latency * 1e6:g} us per message; see parallel_scaling.py model()):")
    print(f"  forward step: {forward_messages} messages, {forward_bytes / 1e3:.0f} kB sent per rank,"
          f" 0 reductions; {c_forward * 1e3:.3f} ms beside {t_forward * 1e3:.1f} ms compute "
          f"({c_forward / (c_forward + t_forward):.1%} of the step)")
    print(f"  reverse step: {reverse_messages} messages, {reverse_bytes / 1e3:.0f} kB sent, "
          f"{reverse_gathers} ordered reductions of {gather_bytes / 1e3:.0f} kB gathered per rank; "
          f"{c_reverse * 1e3:.3f} ms beside {t_step_reverse * 1e3:.1f} ms compute "
          f"({c_reverse / (c_reverse + t_step_reverse):.1%})")
    print(f"  (measured here: gradient / forward = {gradient_ratio:.2f} at one rank; snapshot "
          f"memory per rank = 1/{P} of one process's)")


if __name__ == "__main__":
    main()
