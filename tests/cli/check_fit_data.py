#!/usr/bin/python3
"""Checks `rewind fit --data` on the hare-lynx pelts and the comparison with a neural ODE end to
end (a ctest added by tests/cli/CMakeLists.txt).

    /usr/bin/python3 tests/cli/check_fit_data.py path/to/rewind data/hare_lynx.csv \\
        scripts/plot_hare_lynx.py

- docs/fitting.md's Lotka-Volterra fit of 1900-1915 (alpha, beta, delta, gamma and the 1900 state,
  from the documented literature start) converges to the documented values within 0.5 %, with
  finite standard errors, and predicts the held-out years 1916-1920 with the documented RMSE;
- the split is rewind train's (the last 5 of 21 points held out);
- a neural ODE trained for a few iterations on the same split and the comparison script run
  through: both RMSEs printed, both pictures written;
- sigma is estimated from the residuals (docs/fitting.md's 4.477 thousand pelts) and the
  standard errors use it;
- bad input exits 2 with one line: times out of order, both --data and --observations,
  --validation without --data, columns that name no state and are not every state in order.
"""
import json
import os
import sys
import tempfile

from cli_check import fail, refused, run

# docs/fitting.md's numbers (rewind fit --data data/hare_lynx.csv ... as below).
START = "alpha=0.55,beta=0.028,delta=0.024,gamma=0.8"
EXPECTED = {"alpha": 0.45986, "beta": 0.023797, "delta": 0.028401, "gamma": 0.96787}
EXPECTED_Y0 = [35.684, 3.7426]
EXPECTED_RMSE = [2.588, 3.106]  # hare, lynx over 1916-1920, thousands of pelts


def close(value, expected, tolerance, what):
    if not abs(value - expected) <= tolerance * abs(expected):
        fail(f"{what} = {value}, expected {expected} within {tolerance:.1%}")


def main():
    rewind, data, script = sys.argv[1:4]
    base = ["fit", "lotka_volterra", "--data", data, "--validation", "0.2", "--dt", "0.01",
            "--fit", "alpha,beta,delta,gamma", "--fit-initial-state", "--start", START]
    report = json.loads(run(rewind, *base, "--json").stdout)
    if report["failed"]:
        fail("the fit failed: " + str(report["failure"]))
    for name, value in EXPECTED.items():
        close(report["parameters"][name], value, 5e-3, name)
        error = report["standard_errors"][name]
        if not (error is not None and 0 < error < abs(value)):
            fail(f"standard error of {name}: {error}")
    for i, value in enumerate(EXPECTED_Y0):
        close(report["initial_state"]["fit"][i], value, 5e-3, f"y0[{i}]")
        if report["initial_state"]["standard_errors"][i] is None:
            fail(f"no standard error for y0[{i}]")
    if report["initial_state"]["start"] != [30, 4]:
        fail(f"y0 should start at the 1900 counts, not {report['initial_state']['start']}")
    points = report["data"]
    if points["training_points"] != 16 or points["held_out_points"] != 5:
        fail(f"split {points['training_points']} + {points['held_out_points']}, expected 16 + 5")
    if points["measured"] != 32 or report["steps"] != 1500:
        fail(f"fitted {points['measured']} values over {report['steps']} steps, expected 32 "
             "over 1500 (1900-1915, dt 0.01)")
    if not points["by_position"] or points["states"] != ["prey", "predator"]:
        fail(f"hare, lynx should be read as prey, predator by position: {points}")
    if not report["sigma_estimated"]:
        fail("sigma should be estimated from the residuals")
    close(report["sigma"], 4.477, 5e-3, "sigma")
    for i, value in enumerate(EXPECTED_RMSE):
        close(report["held_out_rmse"][i], value, 5e-3, f"held-out RMSE of component {i}")

    # The same with the text report: the held-out line names the years and the species.
    text = run(rewind, *base).stdout
    if "held-out RMSE over the last 5 points (t = 1916 to 1920): hare" not in text:
        fail("the text report lacks the held-out line:\n" + text)

    with tempfile.TemporaryDirectory() as scratch:
        lv = os.path.join(scratch, "lv.json")
        node = os.path.join(scratch, "node.json")
        with open(lv, "w") as f:
            json.dump(report, f)
        run(rewind, "train", "--data", data, "--validation", "0.2", "--window", "5", "--batch",
            "8", "--layers", "8", "--substeps", "4", "--iterations", "20", "--quiet", "--json",
            node)
        prefix = os.path.join(scratch, "hl")
        out = run("/usr/bin/python3", script, lv, node, "--out", prefix).stdout
        if "Lotka-Volterra" not in out or "neural ODE" not in out:
            fail("the comparison printed no scores:\n" + out)
        for suffix in ("_series.png", "_phase.png"):
            if os.path.getsize(prefix + suffix) < 1000:
                fail(f"{prefix + suffix} is missing or empty")

        # Refusals, each named.
        fit = ["fit", "lotka_volterra", "--fit", "alpha"]
        unsorted = os.path.join(scratch, "unsorted.csv")
        with open(unsorted, "w") as f:
            f.write("t,hare,lynx\n1900,1,2\n1902,2,3\n1901,2,3\n")
        refused(rewind, "data row 2: time 1901 does not come after row 1", *fit, "--data",
                unsorted)
        refused(rewind, "not both", *fit, "--data", data, "--dt", "0.01", "--observations", lv)
        refused(rewind, "go with --data", *fit, "--observations", lv, "--validation", "0.2")
        three = os.path.join(scratch, "three.csv")
        with open(three, "w") as f:
            f.write("t,a,b,c\n0,1,2,3\n1,2,3,4\n2,3,4,5\n")
        refused(rewind, "column 'a' names no state of lotka_volterra (its states: prey, "
                "predator); name the columns by state, or give every state in order", *fit,
                "--data", three, "--dt", "0.1")
    print("check_fit_data: ok")


if __name__ == "__main__":
    main()
