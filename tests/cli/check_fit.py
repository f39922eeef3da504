#!/usr/bin/python3
"""Checks `rewind generate PROBLEM` and `rewind fit` end to end (a ctest added by src/cli).

    /usr/bin/python3 tests/cli/check_fit.py path/to/rewind

- Lotka-Volterra observed every 20 steps over 1000 RK4 steps with noise 0.02: the fit of
  (alpha, gamma) started 13 % away recovers both within 1 % and ends with J near its expected
  value (half the number of observed values), reporting parameters by name;
- the standard errors (Hessian of J at the fit) are small and cover the generating values
  within 4 of them;
- the same fit under revolve(c = 5) and two-level (memory + disk) schedules follows store-all's
  iterates bit for bit (every gradient is store-all's bit for bit);
- --plot writes both pictures;
- bad input exits 2 with one line naming the problem: another problem's file, a start outside
  the bounds, sigma <= 0, an unknown field or parameter, observing beyond the horizon, a missing
  file, an existing output.
"""
import json
import os
import sys
import tempfile

from cli_check import fail, refused, run


def main():
    rewind = sys.argv[1]
    with tempfile.TemporaryDirectory() as scratch:
        data = os.path.join(scratch, "lv.h5")
        run(rewind, "generate", "lotka_volterra", "--steps", "1000", "--observe-every", "20",
            "--noise", "0.02", "--seed", "7", "--out", data)
        base = ["fit", "lotka_volterra", "--observations", data, "--fit", "alpha,gamma",
                "--start", "alpha=1.3,gamma=3.4", "--bounds", "alpha=0.5:3,gamma=1:6", "--json"]
        fits = {}
        for name, extra in {"store-all": [],
                            "revolve": ["--snapshots", "5"],
                            "two-level": ["--disk", scratch, "--ram-snapshots", "2",
                                          "--disk-snapshots", "4", "--disk-write-cost", "1",
                                          "--disk-read-cost", "1"]}.items():
            fits[name] = json.loads(run(rewind, *base, *extra).stdout)
        reference = fits["store-all"]
        for key in ("alpha", "gamma"):
            got, truth = reference["parameters"][key], reference["generating_parameters"][key]
            error = reference["standard_errors"][key]
            if abs(got / truth - 1.0) > 0.01:
                fail(f"{key} = {got}, generated with {truth}")
            if not (error and 0 < error < 0.01 * truth and abs(got - truth) < 4 * error):
                fail(f"{key} = {got} +- {error}: not within 4 standard errors of {truth}")
        expected_loss = 0.5 * 2 * 50  # half the observed values, for a fit at the noise level
        if not 0.5 * expected_loss < reference["loss"] < 2.0 * expected_loss:
            fail(f"final J = {reference['loss']}, expected near {expected_loss}")
        if reference["failed"] or reference["iterations"] < 1:
            fail(f"the reference fit: {reference['stop_reason']} {reference['failure']}")
        for name, fit in fits.items():
            same = [(h["loss"], h["parameters"]) for h in fit["history"]]
            if same != [(h["loss"], h["parameters"]) for h in reference["history"]]:
                fail(f"{name}: the iterates differ from store-all's")
            if fit["parameters"] != reference["parameters"]:
                fail(f"{name}: fitted {fit['parameters']}, store-all {reference['parameters']}")
        if fits["revolve"]["schedule"]["peak_memory_bytes"] >= \
                fits["store-all"]["schedule"]["peak_memory_bytes"]:
            fail("revolve(c = 5) used no less memory than store-all")

        prefix = os.path.join(scratch, "lv_fit")
        run(rewind, *base[:-1], "--plot", prefix)
        for picture in ("_fields.png", "_history.png"):
            if os.path.getsize(prefix + picture) < 10000:
                fail(f"{prefix + picture} is missing or blank")

        gs = os.path.join(scratch, "gs.h5")
        run(rewind, "generate", "gray_scott", "--n", "16", "--steps", "50", "--observe-every",
            "10", "--observe", "v", "--out", gs)
        refused(rewind, "observes gray_scott, not lotka_volterra",
                "fit", "lotka_volterra", "--observations", gs, "--fit", "alpha")
        refused(rewind, "lies outside its bounds", *base[:4], "--fit", "alpha",
                "--start", "alpha=4", "--bounds", "alpha=0.5:3")
        refused(rewind, "--sigma = 0 must be finite and > 0", *base[:4], "--fit", "alpha",
                "--sigma", "0")
        refused(rewind, "has no parameter 'F'", *base[:4], "--fit", "F")
        refused(rewind, "has no such field", "generate", "gray_scott", "--n", "16", "--steps",
                "50", "--observe-every", "10", "--observe", "w", "--out",
                os.path.join(scratch, "w.h5"))
        refused(rewind, "exceeds the horizon", "generate", "lotka_volterra", "--steps", "50",
                "--observe-every", "60", "--out", os.path.join(scratch, "x.h5"))
        refused(rewind, "does not exist", "fit", "lotka_volterra", "--observations",
                os.path.join(scratch, "none.h5"), "--fit", "alpha")
        refused(rewind, "exists; pass --force", "generate", "lotka_volterra", "--steps", "50",
                "--observe-every", "10", "--out", data)


if __name__ == "__main__":
    main()
