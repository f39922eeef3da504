#!/usr/bin/python3
"""Robertson's three rate constants fitted from noisy observations with the exact discrete
gradient (esdirk43) and with CVODES's adjoint (bdf): bench/results/stiff_fit.md.

    python3 bench/stiff_fit.py build/src/cli/rewind OUTDIR [--quick]

Writes OUTDIR/robertson.h5 (rewind generate: BDF at rtol 1e-10, atol 1e-14, t = 0 .. 40 in 100
intervals of 0.4, every state observed every 2 with noise 1e-6), fits p1, p2, p3 (rewind's
names: p1 = 0.04 of y1 -> y2, p2 = 1e4 of y2 + y3 -> y1 + y3, p3 = 3e7 of 2 y2 -> y2 + y3) from
a start off by 2.5, 5 and 3.3 on the log scale with every method below, and prints one
Markdown row per fit: iterations, gradient evaluations, restarts, seconds, the fitted values,
their error against the truth, J and why the optimiser stopped. The JSON reports stay in
OUTDIR.
"""
import json
import os
import subprocess
import sys
import time

TRUTH = {"p1": 0.04, "p2": 1e4, "p3": 3e7}
START = "p1=0.1,p2=2e3,p3=1e8"
FITS = [
    ("esdirk43, h = 1e-3 (exact)", ["--method", "esdirk43", "--dt", "0.001"]),
    ("bdf, rtol 1e-6", ["--rtol", "1e-6", "--atol", "1e-10"]),
    ("bdf, rtol 1e-8", ["--rtol", "1e-8", "--atol", "1e-12"]),
    ("bdf, rtol 1e-10 (the data's)", []),
]


def run(rewind, *args):
    started = time.perf_counter()
    proc = subprocess.run([rewind, *args], capture_output=True, text=True)
    return proc, time.perf_counter() - started


def main():
    rewind, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    data = os.path.join(out, "robertson.h5")
    proc, _ = run(rewind, "generate", "robertson", "--method", "bdf", "--rtol", "1e-10",
                  "--atol", "1e-14", "--dt", "0.4", "--steps", "100", "--observe-every", "5",
                  "--noise", "1e-6", "--force", "--out", data)
    if proc.returncode != 0:
        sys.exit(proc.stderr)
    print("| method | log scale | restarts | iterations | gradients | seconds | p1 | p2 | p3 "
          "| max error | J | stopped |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    variants = [(True, 10), (True, 0), (False, 10)]
    if "--quick" in sys.argv:
        variants = variants[:1]
    for log_scale, restarts in variants:
        for name, extra in FITS:
            args = ["fit", "robertson", "--observations", data, "--fit", "p1,p2,p3",
                    "--start", START, "--max-evaluations", "300", "--no-uncertainty",
                    "--restarts", str(restarts), "--json", *extra]
            if log_scale:
                args += ["--log-scale", "p1,p2,p3"]
            proc, seconds = run(rewind, *args)
            tag = name.split(",")[0] + "_" + "_".join(extra[1::2] or ["file"])
            tag += ("_log" if log_scale else "_linear") + f"_r{restarts}"
            with open(os.path.join(out, tag + ".json"), "w") as f:
                f.write(proc.stdout)
            try:
                report = json.loads(proc.stdout)
            except json.JSONDecodeError:
                print(f"| {name} | {log_scale} | {restarts} | failed: {proc.stderr.strip()} |")
                continue
            p = report["parameters"]
            error = max(abs(p[k] / TRUTH[k] - 1.0) for k in TRUTH)
            stopped = report["failure"] if report["failed"] else report["stop_reason"]
            print(f"| {name} | {'yes' if log_scale else 'no'} | {report['restarts']} "
                  f"| {report['iterations']} | {report['evaluations']} "
                  f"| {report['seconds']:.2f} | {p['p1']:.6g} | {p['p2']:.6g} | {p['p3']:.6g} "
                  f"| {error:.1e} | {report['loss']:.4g} | {stopped} |", flush=True)


if __name__ == "__main__":
    main()
