#!/usr/bin/python3
"""Checks `rewind fit --data FILE.csv --adaptive` end to end (a ctest added by
tests/cli/CMakeLists.txt).

    /usr/bin/python3 tests/cli/check_fit_data_adaptive.py path/to/rewind \\
        path/to/robertson_model.so data/robertson_measured.csv

- Robertson's three rates from the measured series (every state at 16 log-spaced times in
  [0.01, 40], noise 1e-6), on the log scale from a start off by 2.5, 4 and 3, with adaptive
  esdirk43 and rodas4 steps: the truth within 3 standard errors, sigma-hat near the noise, the
  steps chosen again at the estimate the same, in a few hundred steps a run (fixed steps short
  enough for the transient take 80 000: bench/results/stiff_data_fit.md); the JSON says
  adaptive, the tolerances, the rounds and the steps;
- the rates are those of the same fit on fixed steps of 5e-4 (bench/results/stiff_data_fit.md)
  within a standard error;
- --rtol without --adaptive, --adaptive with --dt, --adaptive with a method that has no
  embedded estimate and --adaptive with --observations exit 2 with one line saying so.
"""
import json
import sys

from cli_check import fail, refused, run

TRUTH = {"k1": 0.04, "k2": 1e4, "k3": 3e7}
# The same fit on fixed steps of 5e-4 (80 000 a run, half a minute: too slow for a test), as
# bench/results/stiff_data_fit.md records it.
FIXED_STEPS = {"k1": 0.0400001, "k2": 10041.2, "k3": 3.02476e7}


def main():
    rewind, plugin, series = sys.argv[1], sys.argv[2], sys.argv[3]
    common = ["fit", "--model", plugin, "--data", series, "--fit", "k1,k2,k3",
              "--log-scale", "k1,k2,k3", "--bounds", "k1=0:1e9,k2=0:1e9,k3=0:1e9",
              "--start", "k1=0.1,k2=2500,k3=9e7", "--restarts", "2", "--json"]
    fits = {}
    for method in ("esdirk43", "rodas4"):
        report = json.loads(run(rewind, *common, "--method", method, "--adaptive",
                                "--rtol", "1e-8", "--atol", "1e-14").stdout)
        fits[method] = report
        if not (report["adaptive"] and report["rtol"] == 1e-8 and report["atol"] == 1e-14):
            fail(f"{method}: the report does not state the adaptive steps: {report['adaptive']!r}, "
                 f"{report['rtol']!r}, {report['atol']!r}")
        if not report["steps_settled"] or report["step_rounds"] < 1:
            fail(f"{method}: steps chosen {report['step_rounds']} times, settled "
                 f"{report['steps_settled']}")
        if not 20 <= report["steps"] <= 2000:
            fail(f"{method}: {report['steps']} steps a run")
        for name, truth in TRUTH.items():
            value, error = report["parameters"][name], report["standard_errors"][name]
            if not abs(value - truth) <= 3 * error:
                fail(f"{method}: {name} = {value!r} +- {error!r}, truth {truth}")
        if not 0.7e-6 <= report["sigma"] <= 1.4e-6:
            fail(f"{method}: sigma-hat {report['sigma']!r}, the noise 1e-6")

    for name, theirs in FIXED_STEPS.items():
        ours, error = fits["esdirk43"]["parameters"][name], fits["esdirk43"]["standard_errors"][name]
        if not abs(ours - theirs) <= error:
            fail(f"{name}: {ours!r} on adaptive steps, {theirs!r} on fixed ones")

    base = ["fit", "--model", plugin, "--data", series, "--fit", "k1"]
    refused(rewind, "--rtol sets adaptive steps' tolerance: add --adaptive", *base,
            "--method", "esdirk43", "--rtol", "1e-8")
    refused(rewind, "--dt caps fixed steps; with --adaptive", *base, "--method", "esdirk43",
            "--adaptive", "--dt", "0.01")
    refused(rewind, "has no embedded error estimate", *base, "--method", "rk4", "--adaptive")
    refused(rewind, "--adaptive goes with --data", "fit", "--model", plugin, "--observations",
            "missing.h5", "--fit", "k1", "--adaptive")
    print("check_fit_data_adaptive: ok")


if __name__ == "__main__":
    main()
