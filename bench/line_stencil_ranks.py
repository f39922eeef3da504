#!/usr/bin/env python3
"""A 1-D stencil model split across MPI ranks against the built-in problem, side by side.

    bench/line_stencil_ranks.py --build build [--n 1000000] [--repeats 5]

Runs `rewind run lorenz96` (hand-written rhs and vjp; rwd::DistributedLorenz96 across ranks) and
`rewind run --model BUILD/tests/lorenz96_stencil_model.so` (the same model as a 1-D stencil plugin,
derived vjp; rwd::DistributedPluginStencilProblem across ranks) without mpiexec, under
`mpiexec -np 1` and under `-np 2`, one thread per process, interleaved, and prints the medians of
the forward sweep's and the whole gradient's seconds. Stops if a rank count changes the bits of
dJ/dF, or of J between rank counts (J is summed in the split's row order under mpiexec, in the
one-process backend's otherwise). Needs a build with MPI and the tests (the plugin is a test
model).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMP_NUM_THREADS="1", OMP_WAIT_POLICY="passive")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--n", default="1000000")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rewind = os.path.join(args.build, "src", "cli", "rewind")
    plugin = os.path.join(args.build, "tests", "lorenz96_stencil_model.so")
    common = ["--n", args.n, "--steps", "200", "--dt", "0.01", "--snapshots", "10",
              "--no-fd-check", "--json", "--threads", "1"]
    models = {"built-in": ["run", "lorenz96"], "stencil plugin": ["run", "--model", plugin]}
    times, bits = {}, {}
    for _ in range(args.repeats):
        for name, model in models.items():
            for ranks in (0, 1, 2):
                launcher = ["mpiexec", "-q", "-np", str(ranks)] if ranks else []
                proc = subprocess.run(launcher + [rewind] + model + common, capture_output=True,
                                      text=True, env=ENV)
                if proc.returncode != 0:
                    sys.exit(f"{name}, {ranks} ranks: {proc.stderr.strip()}")
                report = json.loads(proc.stdout)
                key = (report["loss"] if ranks else None, tuple(report["grad_theta"]))
                known = bits.setdefault(name, key)
                if known[1] != key[1] or (ranks and known[0] is not None and known[0] != key[0]):
                    sys.exit(f"{name}: {ranks} ranks give {key}, another run {known}")
                if ranks and known[0] is None:
                    bits[name] = key
                stats = report["stats"]
                times.setdefault((name, ranks), []).append(
                    (stats["forward_seconds"], stats["total_seconds"]))
    print(f"n = {args.n}, rk4 dt = 0.01, 200 steps, revolve on 10 snapshots; "
          f"medians of {args.repeats}")
    for (name, ranks), runs in times.items():
        where = "one process" if ranks == 0 else f"mpiexec -np {ranks}"
        forward = statistics.median(r[0] for r in runs)
        gradient = statistics.median(r[1] for r in runs)
        print(f"{name:15s} {where:15s} forward {forward:7.3f} s   gradient {gradient:7.3f} s")
    for name, (loss, grad) in bits.items():
        print(f"{name}: dJ/dF = {grad[0]!r} in every run, J = {loss!r} on 1 and 2 ranks")


if __name__ == "__main__":
    main()
