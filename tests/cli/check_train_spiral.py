#!/usr/bin/env python3
"""Checks `rewind generate spiral` and `rewind train spiral` end to end (a ctest added by
tests/cli/CMakeLists.txt).

    check_train_spiral.py path/to/rewind [path/to/plot_training.py]

- generate writes 1000 points on [0, 25] starting at (2, 0), and refuses to overwrite.
- train (200 iterations) writes a JSON log with every iteration, evaluations and predictions;
  the whole-trajectory MSE falls at least fivefold; the parameters file is written and a
  second run starting from it (--load-parameters) starts at the trained error.
- the same seeds give the same log bit for bit, with store-all and with revolve(2) per window.
- on a terminal, a progress bar shows the iteration and the loss and is erased at the end.
- bad input: missing data file, unknown activation (exit 2).
- with the plot script and a python that has matplotlib (/usr/bin/python3), both PNGs appear.
"""
import json
import os
import subprocess
import sys
import tempfile


def fail(message):
    print("check_train_spiral: " + message, file=sys.stderr)
    sys.exit(1)


def losses(path):
    """(iteration, loss, gradient norm) of every iteration: the log minus its timings."""
    return [(r["iteration"], r["loss"], r["gradient_norm"]) for r in json.load(open(path))["iterations"]]


def run(cmd, expect=0):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != expect:
        fail(f"{' '.join(cmd)} exited {done.returncode}, expected {expect}\n{done.stdout}\n{done.stderr}")
    return done


def main():
    rewind = sys.argv[1]
    plot = sys.argv[2] if len(sys.argv) > 2 else None
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "spiral.csv")
        run([rewind, "generate", "spiral", "--out", data])
        rows = open(data).read().split()
        if rows[0] != "t,y0,y1" or len(rows) != 1001 or rows[1] != "0,2,0":
            fail(f"unexpected spiral data: {rows[:2]}, {len(rows)} lines")
        if not rows[-1].startswith("25,"):
            fail(f"last time is not 25: {rows[-1]}")
        run([rewind, "generate", "spiral", "--out", data], expect=2)

        common = [rewind, "train", "spiral", "--data", data, "--iterations", "200", "--eval-every", "50", "--quiet"]
        log_a, log_b, log_c = (os.path.join(tmp, n) for n in ("a.json", "b.json", "c.json"))
        params = os.path.join(tmp, "theta.h5")
        run(common + ["--json", log_a, "--save-parameters", params])
        log = json.load(open(log_a))
        for key in ("problem", "model", "options", "iterations", "evaluations", "data", "predictions",
                    "final_loss", "final_trajectory_mse", "seconds_per_iteration"):
            if key not in log:
                fail(f"log has no '{key}'")
        if len(log["iterations"]) != 200 or log["model"]["parameters"] != 252:
            fail(f"{len(log['iterations'])} iterations logged, {log['model']['parameters']} parameters")
        first, last = log["evaluations"][0]["trajectory_mse"], log["final_trajectory_mse"]
        if not last < first / 5:
            fail(f"trajectory MSE only went from {first} to {last}")
        if len(log["predictions"][-1]["y"]) != 1000:
            fail("the final prediction does not cover the 1000 data points")
        if not os.path.exists(params):
            fail("no parameter file")

        run(common + ["--json", log_b])
        if losses(log_b) != losses(log_a):
            fail("the same seeds gave a different training log")
        run(common + ["--json", log_c, "--snapshots", "2"])
        if losses(log_c) != losses(log_a):
            fail("revolve(2) per window changed the training log (schedule independence)")

        resumed = os.path.join(tmp, "resumed.json")
        run([rewind, "train", "spiral", "--data", data, "--iterations", "1", "--quiet", "--json", resumed,
             "--load-parameters", params])
        if json.load(open(resumed))["evaluations"][0]["trajectory_mse"] != last:
            fail("--load-parameters did not start from the trained parameters")

        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from check_progress import run_on_pty
        _, err, seconds = run_on_pty(rewind, ["train", "spiral", "--data", data, "--iterations", "1500"],
                                     parse_json=False)
        if seconds > 0.6:  # long enough that the bar must have been drawn (first draw at 0.2 s)
            if "iteration" not in err or "loss" not in err or not err.endswith("\r\x1b[K"):
                fail(f"no progress bar (or not erased) on a terminal after {seconds:.2f} s: {err[-120:]!r}")

        run([rewind, "train", "spiral", "--data", os.path.join(tmp, "absent.csv")], expect=2)
        run([rewind, "train", "spiral", "--data", data, "--activation", "swish"], expect=2)

        python = "/usr/bin/python3"
        if plot and os.path.exists(python) and subprocess.run([python, "-c", "import matplotlib"]).returncode == 0:
            run([python, plot, log_a])
            for png in ("a_loss.png", "a_fit.png"):
                if not os.path.getsize(os.path.join(tmp, png)) > 10000:
                    fail(f"{png} missing or empty")
    print("check_train_spiral: ok")


if __name__ == "__main__":
    main()
