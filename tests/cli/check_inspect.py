#!/usr/bin/env python3
"""Checks that `rewind inspect` reads every kind of file rewind writes (a ctest added by src/cli).

    check_inspect.py path/to/rewind

- an observation file (rewind generate): text names the problem, the method and the observed
  field; JSON carries the same facts as the file's writer was given;
- a parameter file (rewind train spiral --save-parameters): the network and its parameter count;
- a time series (rewind generate spiral --out FILE.csv): components, trajectories and points;
- a snapshot file (rewind run --disk --keep-snapshots): every slot intact;
- a file that is none of these, a directory and a missing file exit 2 with one line saying so.
"""
import glob
import json
import os
import sys
import tempfile

from cli_check import fail, refused, run


def inspect_json(rewind, path):
    return json.loads(run(rewind, "inspect", path, "--json").stdout)


def main():
    rewind = sys.argv[1]
    with tempfile.TemporaryDirectory() as folder:
        observations = os.path.join(folder, "lv.h5")
        run(rewind, "generate", "lotka_volterra", "--steps", "400", "--observe-every", "20",
            "--noise", "0.02", "--seed", "5", "--out", observations)
        text = run(rewind, "inspect", observations).stdout
        for needle in ("observation file", "lotka_volterra", "rk4", "at 20 steps", "seed 5"):
            if needle not in text:
                fail(f"inspect of the observation file lacks '{needle}':\n{text}")
        o = inspect_json(rewind, observations)
        if (o["kind"], o["problem"], o["steps"], len(o["observed_steps"]), o["noise"], o["seed"]) != \
                ("observations", "lotka_volterra", 400, 20, 0.02, 5):
            fail(f"observation file read as {o}")

        series = os.path.join(folder, "spiral.csv")
        run(rewind, "generate", "spiral", "--out", series)
        s = inspect_json(rewind, series)
        if s["kind"] != "time series" or len(s["components"]) != 2 or s["points"] != [1000]:
            fail(f"time series read as {s}")

        parameters = os.path.join(folder, "spiral_params.h5")
        run(rewind, "train", "spiral", "--data", series, "--iterations", "2", "--quiet",
            "--save-parameters", parameters)
        p = inspect_json(rewind, parameters)
        if p["kind"] not in ("model", "parameters") or "2-" not in p["network"]:
            fail(f"parameter file read as {p}")

        run(rewind, "run", "gray_scott", "--n", "12", "--steps", "60", "--disk", folder,
            "--snapshots", "4", "--keep-snapshots", "--no-fd-check")
        kept = [f for f in glob.glob(os.path.join(folder, "*.h5"))
                if f not in (observations, parameters)]
        if len(kept) != 1:
            fail(f"expected one kept snapshot file, found {kept}")
        snap = inspect_json(rewind, kept[0])
        if not snap["intact"] or snap["written_slots"] < 1:
            fail(f"snapshot file read as {snap}")

        other = os.path.join(folder, "notes.txt")
        with open(other, "w") as f:
            f.write("not a rewind file\n")
        refused(rewind, "none of the files rewind writes", "inspect", other)
        refused(rewind, "is a directory", "inspect", folder)
        refused(rewind, "does not exist", "inspect", os.path.join(folder, "missing.h5"))
    print("check_inspect: observation, parameter, time-series and snapshot files read; "
          "other input refused")


if __name__ == "__main__":
    main()
