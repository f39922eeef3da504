#!/usr/bin/env python3
"""A stiff model of one's own fitted to a measured series, from Python: Robertson's kinetics as a
model plugin, its three rate constants from noisy measurements at uneven times, with an implicit
method (esdirk43) and a Rosenbrock one (rodas4), every gradient their exact discrete adjoint.

    scripts/test.sh      # builds the plugin (build/tests/robertson_model.so), rewind._commands
    build/python-venv/bin/python bench/stiff_data_fit.py [--plot data/figures/robertson_data_fit]

The series: the model run with esdirk43 on fixed steps of 5*10^-4 to t = 40 (every rate at
rewind's values k1 = 0.04, k2 = 10^4, k3 = 3*10^7), y1, y2, y3 read at 16 times spaced evenly in
log t from 0.01 to 40, Gaussian noise of sigma = 10^-6 added (3 % of y2's plateau; rewind
generate's keyed draws, seed 7): data/robertson_measured.csv, written by this script. (With y2
unmeasured, only a combination of k2 and k3 is determined: y2 sits at its quasi-steady value.)
The fit: k1, k2, k3 on the log scale from 2.5x, 1/4 and 3x the truth (bounded [0, 10^9]), steps
of at most 5*10^-4 landing on every row, or (METHOD+adaptive) adaptive steps to rtol 1e-8,
atol 1e-14 landing on every row (rodas4's linearly implicit stages drive y2 below zero at
the start's rates with 10^-3, where I - h gamma J turns singular), two restarts, sigma estimated
from the residuals. Printed: the estimates with their
standard errors, the truth's distance from them in standard errors, sigma-hat, iterations,
gradients and seconds per method.
"""

import argparse
import math
import pathlib
import sys
import tempfile
import time

import numpy as np

import rewind

ROOT = pathlib.Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "build" / "tests" / "robertson_model.so"
SERIES = ROOT / "data" / "robertson_measured.csv"
TRUTH = {"k1": 0.04, "k2": 1e4, "k3": 3e7}
START = {"k1": 0.1, "k2": 2.5e3, "k3": 9e7}
DT, T_FINAL, NOISE, SEED = 5e-4, 40.0, 1e-6, 7


def measured_series():
    """Writes SERIES: y1, y2, y3 with noise at 16 log-spaced times (rows of a finer run)."""
    with tempfile.TemporaryDirectory() as scratch:
        written = rewind.generate(model=PLUGIN, method="esdirk43", dt=DT,
                                  steps=round(T_FINAL / DT), observe_every=1, noise=NOISE,
                                  seed=SEED, out=pathlib.Path(scratch) / "all.h5")
    wanted = np.unique(np.round(np.geomspace(0.01, T_FINAL, 16) / DT).astype(int))
    steps = written["observed_steps"]
    rows = ["# Robertson's kinetics (the robertson_model plugin: k1 = 0.04, k2 = 1e4, k3 = 3e7, "
            "y0 = (1, 0, 0)),",
            f"# esdirk43 on steps of {DT} to t = {T_FINAL}; every state at 16 log-spaced times, "
            f"Gaussian noise sigma = {NOISE}",
            "# (rewind generate's draws, seed 7). Written by bench/stiff_data_fit.py.",
            "t,y1,y2,y3"]
    for step in wanted:
        d = written["data"][steps.index(int(step))]
        rows.append(f"{step * DT!r},{d[0]!r},{d[1]!r},{d[2]!r}")
    SERIES.write_text("\n".join(rows) + "\n")


def fit(method, plot):
    """`method` (esdirk43, rodas4) on fixed steps of DT; `method+adaptive` on adaptive steps to
    rtol 1e-8, atol 1e-14 (held while the optimiser moves, chosen again at the estimate)."""
    name, _, adaptive = method.partition("+")
    steps = {"adaptive": True, "rtol": 1e-8, "atol": 1e-14} if adaptive else {"dt": DT}
    started = time.perf_counter()
    f = rewind.fit(model=PLUGIN, data=SERIES, method=name, fit=list(TRUTH),
                   log_scale=list(TRUTH), start=START,
                   bounds={name: "0:1e9" for name in TRUTH}, restarts=2,
                   max_evaluations=300, plot=plot, **steps)
    return f, time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plot", help="PREFIX for esdirk43's pictures (rewind fit --plot)")
    parser.add_argument("--methods",
                        default="esdirk43,rodas4,esdirk43+adaptive,rodas4+adaptive")
    args = parser.parse_args()
    if not PLUGIN.exists() or not rewind.commands_available():
        sys.exit(f"needs {PLUGIN} and rewind._commands: run scripts/test.sh first")
    measured_series()
    print(f"{SERIES.relative_to(ROOT)}: y1, y2, y3 at 16 times in [0.01, 40], sigma = {NOISE}")
    print("| method | k1 | k2 | k3 | truth off by (s.e.) | sigma-hat | iterations | gradients "
          "| steps a run | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for method in args.methods.split(","):
        f, seconds = fit(method, args.plot if method == "esdirk43" else None)
        errors = f.report["standard_errors"]
        cells = [f"{f.parameters[n]:.6g} ± {errors[n]:.2g}" for n in TRUTH]
        off = [abs(f.parameters[n] - TRUTH[n]) / errors[n] for n in TRUTH]
        print(f"| {method} | {' | '.join(cells)} | {', '.join(f'{z:.2f}' for z in off)} | "
              f"{f.report['sigma']:.3g} | {f.report['iterations']} | {f.report['evaluations']} "
              f"| {f.report['steps']} | {seconds:.1f} |")
        if f.report["failed"] or not all(math.isfinite(z) for z in off):
            sys.exit(f"{method}: the fit failed: {f.stop_reason}")


if __name__ == "__main__":
    main()
