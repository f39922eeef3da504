#!/usr/bin/python3
"""Checks `rewind generate` and `rewind fit` with a stiff problem's methods (a ctest added by
src/cli; docs/stiff.md, "Fitting a stiff model").

    /usr/bin/python3 tests/cli/check_fit_stiff.py path/to/rewind tests/cli/data/robertson_v1.h5

- Robertson observed by esdirk43 (fixed steps) with its Newton tolerance given: the file records
  the method and the tolerance (`inspect --json`), and a fit of (p1, p3) on the log scale from
  starts off by 2x and 3x repeats both and recovers them within 1 %;
- the same file refitted by rodas4 on steps of another size (--method, --dt) lands on the same
  observed times and recovers the same values;
- bad input exits 2 with one line naming it: a log scale for a parameter whose lower bound is
  negative, one not fitted, one starting below 0; an unknown --linear-solver for generate and fit;
  a --dt on which the observed times do not fall; with --data (explicit methods only, for now):
  the log scale, restarts, a Newton tolerance, an implicit method;
- an observation file written before the method's settings were recorded (format version 1,
  bdf) still fits, with BDF's default tolerances.
"""
import json
import os
import sys
import tempfile

from cli_check import fail, refused, run


def close(name, value, truth, tolerance):
    if abs(value / truth - 1.0) > tolerance:
        fail(f"{name} = {value}, expected {truth} within {tolerance:.0%}")


def main():
    rewind, old_file = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as scratch:
        data = os.path.join(scratch, "robertson.h5")
        # t = 0 .. 4 in 2000 steps of 2e-3, observed every 0.2.
        run(rewind, "generate", "robertson", "--method", "esdirk43", "--dt", "0.002",
            "--steps", "2000", "--observe-every", "100", "--noise", "1e-6",
            "--newton-rtol", "1e-11", "--out", data)
        info = json.loads(run(rewind, "inspect", data, "--json").stdout)
        if info["method"] != "esdirk43" or info["method_settings"]["newton_rtol"] != 1e-11:
            fail(f"the file records {info['method']} with {info['method_settings']}")
        if "Newton rtol = 1e-11" not in run(rewind, "inspect", data).stdout:
            fail("inspect does not show the recorded Newton tolerance")

        base = ["fit", "robertson", "--observations", data, "--fit", "p1,p3",
                "--log-scale", "p1,p3", "--start", "p1=0.08,p3=1e7", "--no-uncertainty",
                "--json"]
        fit = json.loads(run(rewind, *base).stdout)
        if fit["method"] != "esdirk43" or fit["method_settings"]["newton_rtol"] != 1e-11:
            fail(f"the fit ran {fit['method']} with {fit['method_settings']}, not the file's")
        if fit["log_scale"] != ["p1", "p3"] or fit["failed"]:
            fail(f"log scale {fit['log_scale']}, failed {fit['failed']}: {fit['failure']}")
        close("p1", fit["parameters"]["p1"], 0.04, 0.01)
        close("p3", fit["parameters"]["p3"], 3e7, 0.01)

        other = json.loads(run(rewind, *base, "--method", "rodas4", "--dt", "0.001").stdout)
        if other["method"] != "rodas4" or other["steps"] != 4000 or other["dt"] != 0.001:
            fail(f"refit ran {other['method']}, {other['steps']} steps of {other['dt']}")
        if other["method_settings"]["newton_rtol"] != 0:
            fail("rodas4 has no Newton iteration, yet the refit records a Newton tolerance")
        for name, truth in (("p1", 0.04), ("p3", 3e7)):
            close(name + " (rodas4)", other["parameters"][name], truth, 0.01)

        fit_args = ["fit", "robertson", "--observations", data, "--fit", "p1,p3"]
        refused(rewind, "--log-scale: p1 has the lower bound -1, and a log scale needs one >= 0",
                *fit_args, "--log-scale", "p1", "--bounds", "p1=-1:1")
        refused(rewind, "--log-scale: p2 is not fitted (--fit p1,p3)", *fit_args,
                "--log-scale", "p2")
        # Robertson's rates are refused at 0 anyway; Lorenz-96's forcing may have either sign.
        lorenz = os.path.join(scratch, "lorenz96.h5")
        run(rewind, "generate", "lorenz96", "--n", "5", "--steps", "20", "--observe-every", "10",
            "--out", lorenz)
        refused(rewind, "--log-scale: F starts at -1, and a log scale needs a start > 0",
                "fit", "lorenz96", "--observations", lorenz, "--fit", "F", "--log-scale", "F",
                "--start", "F=-1")
        refused(rewind, "--linear-solver 'lu'", *fit_args, "--linear-solver", "lu")
        refused(rewind, "--linear-solver 'lu'", "generate", "robertson", "--method", "esdirk43",
                "--dt", "0.002", "--steps", "10", "--observe-every", "5", "--linear-solver", "lu",
                "--out", os.path.join(scratch, "never.h5"))
        refused(rewind, "is not a whole number of steps of 0.003", *fit_args, "--dt", "0.003")
        # A measured series (--data): the implicit and Rosenbrock methods too (not bdf, whose
        # steps cannot all land on the rows), on a log scale with restarts as with --observations.
        series = os.path.join(scratch, "series.csv")
        with open(series, "w") as f:
            f.write("t,y1,y2,y3\n0,1,0,0\n1,0.97,3e-5,0.03\n2,0.94,3e-5,0.06\n")
        data_fit = ["fit", "robertson", "--data", series, "--fit", "p1"]
        refused(rewind, "--log-scale: p2 is not fitted", *data_fit, "--log-scale", "p2")
        refused(rewind, "--rtol sets adaptive steps' tolerance: add --adaptive", *data_fit,
                "--method", "esdirk43", "--rtol", "1e-9")
        refused(rewind, "--method bdf: a data fit takes steps that land on every data time",
                *data_fit, "--method", "bdf")
        refused(rewind, "--newton-rtol applies to the implicit methods", *data_fit,
                "--method", "rk4", "--newton-rtol", "1e-9")
        # Without --method a stiff built-in's data fit runs esdirk43 (bdf cannot land on rows).
        default = json.loads(run(rewind, *data_fit, "--dt", "0.001", "--start", "p1=0.05",
                                 "--sigma", "0.01", "--no-uncertainty", "--json").stdout)
        if default["method"] != "esdirk43" or default["failed"]:
            fail(f"--data without --method: {default['method']}, failed {default['failed']}")
        # A start whose implicit solver fails at once: the fit stops (exit 1) and still reports.
        stopped = json.loads(run(rewind, *data_fit, "--dt", "0.001", "--start", "p1=1e6",
                                 "--bounds", "p1=0:1e7", "--json", expect=1).stdout)
        if not stopped["failed"] or stopped["start"]["p1"] != 1e6:
            fail(f"a data fit whose start fails: failed {stopped['failed']}")
        for method in ("esdirk43", "rodas4"):
            settings = ["--linear-solver", "dense"] + (
                ["--newton-rtol", "1e-11", "--log-scale", "p1", "--restarts", "2"]
                if method == "esdirk43" else [])
            fitted = json.loads(run(rewind, *data_fit, "--method", method, "--dt", "0.001",
                                    "--start", "p1=0.05", "--sigma", "0.01", *settings,
                                    "--json").stdout)
            if fitted["method"] != method or fitted["failed"] or fitted["steps"] != 2000:
                fail(f"--data with {method}: {fitted['method']}, failed {fitted['failed']}, "
                     f"{fitted['steps']} steps")
            close(f"p1 (--data, {method})", fitted["parameters"]["p1"], 0.04, 0.25)
            if fitted["log_scale"] != (["p1"] if method == "esdirk43" else []):
                fail(f"--data with {method}: log_scale {fitted['log_scale']}")

        # Format version 1 (written by rewind before this change): BDF with its defaults.
        old = json.loads(run(rewind, "fit", "robertson", "--observations", old_file, "--fit",
                             "p1", "--start", "p1=0.05", "--no-uncertainty", "--json").stdout)
        if old["method"] != "bdf" or old["method_settings"]["rtol"] != 1e-6 or old["failed"]:
            fail(f"the old file fitted with {old['method']}, {old['method_settings']}")
        close("p1 (old file)", old["parameters"]["p1"], 0.04, 0.01)
    print("check_fit_stiff: ok")


if __name__ == "__main__":
    main()
