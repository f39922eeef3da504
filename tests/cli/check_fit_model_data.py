#!/usr/bin/python3
"""Checks `rewind fit --model PATH --data FILE.csv` end to end (a ctest added by
tests/cli/CMakeLists.txt).

    /usr/bin/python3 tests/cli/check_fit_model_data.py path/to/rewind path/to/sir_model.so \\
        data/sir_infected.csv

- the SIR plugin (S, I, R; beta, gamma, N; y0 = (0.99 N, 0.01 N, 0)) fitted to the infected
  counts alone (column I, uneven days, two missing) recovers examples/fit_sir_data.cpp's
  estimates (the same call, rwd::fit, from C++), with sigma estimated from the residuals, finite
  standard errors that contain the generating values within 3 s.e., and the JSON naming the
  model, the column's state and the 18 measured values;
- --validation holds out the last rows and reports their RMSE; --plot draws both pictures;
- --stages 2 ends at the same fit;
- a model's observation file (rewind generate --model) is fitted through --observations too;
- bad input exits 2 with one line naming what is wrong, before any work.
"""
import json
import os
import sys
import tempfile

from cli_check import fail, refused, run

# examples/fit_sir_data.cpp's fit of the same file (docs/models.md).
EXPECTED = {"beta": 0.51757, "gamma": 0.20833}
GENERATING = {"beta": 0.52, "gamma": 0.21}


def close(value, expected, tolerance, what):
    if not abs(value - expected) <= tolerance * abs(expected):
        fail(f"{what} = {value}, expected {expected} within {tolerance:.1%}")


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def main():
    rewind, model, data = sys.argv[1:4]
    fit = ["fit", "--model", model, "--data", data, "--fit", "beta,gamma",
           "--start", "beta=0.4,gamma=0.15", "--dt", "0.05"]
    report = json.loads(run(rewind, *fit, "--json").stdout)
    if report["failed"] or not report["converged"]:
        fail("the fit did not converge: " + str(report["stop_reason"]))
    if report["model"] != model or report["problem"] != "Sir":
        fail(f"the report names {report['problem']} / {report['model']}, not Sir / {model}")
    if report["data"]["columns"] != ["I"] or report["data"]["states"] != ["I"]:
        fail(f"columns {report['data']['columns']} as {report['data']['states']}, expected I")
    if report["data"]["measured"] != 18 or not report["sigma_estimated"]:
        fail(f"{report['data']['measured']} measured values (18 expected), sigma estimated: "
             f"{report['sigma_estimated']}")
    for name, value in EXPECTED.items():
        close(report["parameters"][name], value, 1e-4, name)
        error = report["standard_errors"][name]
        if not (error is not None and 0 < error < 0.05 * value):
            fail(f"standard error of {name}: {error}")
        if abs(report["parameters"][name] - GENERATING[name]) > 3 * error:
            fail(f"{name} = {report['parameters'][name]} is more than 3 s.e. from "
                 f"{GENERATING[name]}")
    if report["parameters"]["N"] != 1000:
        fail(f"N should keep its default 1000, not {report['parameters']['N']}")
    if report["initial_state"]["fit"] != [990, 10, 0]:
        fail(f"y0 = {report['initial_state']['fit']}, expected initial_state(theta) = (990, 10, 0)")
    text = run(rewind, *fit).stdout
    for needle in ("columns I)", "beta", "sigma = 3.1", "estimated from the residuals"):
        if needle not in text:
            fail(f"the text report lacks {needle!r}:\n{text}")

    held = json.loads(run(rewind, *fit, "--validation", "0.25", "--json").stdout)
    if held["data"]["held_out_points"] != 5 or held["held_out_rmse"] is None:
        fail(f"--validation 0.25: {held['data']['held_out_points']} held out, RMSE "
             f"{held['held_out_rmse']}")
    if not 0 < held["held_out_rmse"][0] < 20:
        fail(f"held-out RMSE {held['held_out_rmse'][0]} of I (noise 5)")
    staged = json.loads(run(rewind, *fit, "--stages", "2", "--json").stdout)
    if len(staged["stages"]) != 2:
        fail(f"--stages 2 ran {len(staged['stages'])} stages")
    for name, value in EXPECTED.items():
        close(staged["parameters"][name], value, 1e-4, f"{name} after 2 stages")

    with tempfile.TemporaryDirectory() as scratch:
        prefix = os.path.join(scratch, "sir")
        run(rewind, *fit, "--plot", prefix)
        for suffix in ("_fields.png", "_history.png"):
            if os.path.getsize(prefix + suffix) < 1000:
                fail(f"{prefix + suffix} is missing or empty")

        # The model's own observation file.
        observed = os.path.join(scratch, "sir.h5")
        run(rewind, "generate", "--model", model, "--observe-every", "20", "--observe", "I",
            "--noise", "2", "--out", observed)
        from_file = json.loads(run(rewind, "fit", "--model", model, "--observations", observed,
                                   "--fit", "beta", "--start", "beta=0.4", "--json").stdout)
        beta, error = from_file["parameters"]["beta"], from_file["standard_errors"]["beta"]
        if from_file["failed"] or not abs(beta - 0.5) <= 4 * error:
            fail(f"--observations: beta = {beta} +- {error}, generated with 0.5")

        # Refusals, each named.
        other = write(os.path.join(scratch, "other.csv"), "t,X\n1,2\n2,3\n")
        refused(rewind, "column 'X' names no state of Sir (its states: S, I, R)",
                "fit", "--model", model, "--data", other, "--fit", "beta")
        word = write(os.path.join(scratch, "word.csv"), "# counts\nt,I\n1,2\n2,many\n")
        refused(rewind, "line 4: I = 'many' is not a number", "fit", "--model", model, "--data",
                word, "--fit", "beta")
        no_time = write(os.path.join(scratch, "no_time.csv"), "t,I\n1,2\n,3\n")
        refused(rewind, "line 3: the time is missing", "fit", "--model", model, "--data",
                no_time, "--fit", "beta")
        unsorted = write(os.path.join(scratch, "unsorted.csv"), "t,I\n2,2\n1,3\n")
        refused(rewind, "data row 1: time 1 does not come after row 0", "fit", "--model", model,
                "--data", unsorted, "--fit", "beta")
        refused(rewind, "time 1 is before the start t0 = 1.5", *fit, "--t0", "1.5")
        refused(rewind, "Sir has no parameter 'delta'", "fit", "--model", model, "--data", data,
                "--fit", "delta")
        refused(rewind, "does not exist", "fit", "--model", model, "--data",
                os.path.join(scratch, "none.csv"), "--fit", "beta")
        refused(rewind, "model '/nonexistent/sir.so' does not exist", "fit", "--model",
                "/nonexistent/sir.so", "--data", data, "--fit", "beta")
        refused(rewind, "--method bdf: a data fit takes steps that land on every data time", *fit,
                "--method", "bdf")
        refused(rewind, "not both", *fit, "--observations", observed)
    print("check_fit_model_data: ok")


if __name__ == "__main__":
    main()
