#!/usr/bin/env python3
"""Checks `rewind train --data` and `rewind predict` end to end (a ctest added by
src/cli/CMakeLists.txt).

    check_train_data.py path/to/rewind [path/to/plot_training.py]

- a 3-component Lorenz-63 series (written here, RK4) trains with --layers 16,16, validation and
  the cosine schedule; the train error falls; the log has every iteration and evaluation.
- resume: 2N iterations in one run equal N iterations (--stop-at N, checkpoint every N) plus a
  --resume for the other N: the same loss history and the same bits in the saved models'
  predictions (the log's and predict's, all 17 digits).
- the same seeds give the same log; revolve(2) per window gives the same log (schedule
  independence); --augment 2, --time-dependent, several trajectories on irregular grids and
  early stopping (--patience) run.
- predict: --y0 of the trained model reproduces the trained prediction; a CSV file comes out.
- bad input: a missing value and non-increasing times (file and line named), a layer width 0,
  --layers garbage, a checkpoint of another architecture to --resume, a --y0 of the wrong size
  to predict (an old parameter file without the model fields: tests/neural/model_file_test.cpp).
"""
import json
import math
import os
import subprocess
import sys
import tempfile


def fail(message):
    print("check_train_data: " + message, file=sys.stderr)
    sys.exit(1)


def run(cmd, expect=0, stderr_has=None):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != expect:
        fail(f"{' '.join(cmd)} exited {done.returncode}, expected {expect}\n{done.stdout}\n{done.stderr}")
    if stderr_has is not None and stderr_has not in done.stderr:
        fail(f"{' '.join(cmd)}: stderr lacks {stderr_has!r}:\n{done.stderr}")
    return done


def lorenz(points, dt, y, substeps=4):
    def f(v):
        x, yy, z = v
        return [10 * (yy - x), x * (28 - z) - yy, x * yy - 8 / 3 * z]
    out = []
    h = dt / substeps
    for _ in range(points):
        out.append(list(y))
        for _ in range(substeps):
            k1 = f(y)
            k2 = f([a + h / 2 * b for a, b in zip(y, k1)])
            k3 = f([a + h / 2 * b for a, b in zip(y, k2)])
            k4 = f([a + h * b for a, b in zip(y, k3)])
            y = [a + h / 6 * (b + 2 * c + 2 * d + e) for a, b, c, d, e in zip(y, k1, k2, k3, k4)]
    return out


def history(path):
    log = json.load(open(path))
    return ([(r["iteration"], r["loss"], r["gradient_norm"], r["learning_rate"]) for r in log["iterations"]],
            [(e["iteration"], e["train_mse"], e["validation_mse"]) for e in log["evaluations"]])


def main():
    rewind = sys.argv[1]
    plot = sys.argv[2] if len(sys.argv) > 2 else None
    with tempfile.TemporaryDirectory() as tmp:
        path = lambda name: os.path.join(tmp, name)  # noqa: E731
        data = path("lorenz.csv")
        with open(data, "w") as out:
            out.write("# Lorenz-63, sigma 10, rho 28, beta 8/3, RK4\nt,x,y,z\n")
            for k, y in enumerate(lorenz(121, 0.02, [1.0, 1.0, 1.0])):
                out.write(f"{k * 0.02!r},{y[0]!r},{y[1]!r},{y[2]!r}\n")

        common = [rewind, "train", "--data", data, "--layers", "16,16", "--batch", "8", "--window", "5",
                  "--validation", "0.2", "--lr-schedule", "cosine", "--learning-rate", "0.01",
                  "--final-learning-rate", "0.001", "--eval-every", "20", "--quiet"]
        n = 40
        run(common + ["--iterations", str(2 * n), "--json", path("a.json"), "--save-parameters", path("a.h5")])
        log = json.load(open(path("a.json")))
        for key in ("model", "options", "normalization", "iterations", "evaluations", "trajectories",
                    "final_train_mse", "final_validation_mse", "held_out_rmse", "stopped"):
            if key not in log:
                fail(f"log has no '{key}'")
        if len(log["iterations"]) != 2 * n or log["model"]["observed"] != 3:
            fail(f"{len(log['iterations'])} iterations logged, {log['model']['observed']} components")
        first, last = log["evaluations"][0]["train_mse"], log["evaluations"][-1]["train_mse"]
        if not last < 0.7 * first:
            fail(f"train MSE only went from {first} to {last}")
        if log["trajectories"][0]["training_points"] != 121 - math.ceil(0.2 * 121):
            fail(f"validation split: {log['trajectories'][0]['training_points']} training points")

        # Interrupted at N with a checkpoint, resumed: the same bits as the uninterrupted run.
        ckpt = path("run.ckpt.h5")
        run(common + ["--iterations", str(2 * n), "--stop-at", str(n), "--checkpoint-every", str(n),
                      "--checkpoint", ckpt])
        if not os.path.exists(ckpt):
            fail("no checkpoint written")
        run(common + ["--iterations", str(2 * n), "--resume", ckpt, "--json", path("b.json"),
                      "--save-parameters", path("b.h5")])
        if history(path("b.json")) != history(path("a.json")):
            fail("N + resume N gave another loss history than 2N in one run")
        predict = [rewind, "predict", "--y0", "1,1,1", "--t-final", "2.4", "--steps", "120"]
        pa = run(predict + ["-p", path("a.h5")]).stdout
        pb = run(predict + ["-p", path("b.h5")]).stdout
        if pa != pb:
            fail("the resumed model predicts other bits than the uninterrupted one")
        # Predictions in the logs are printed with every bit (repr of doubles).
        pred = lambda p: [t["predictions"] for t in json.load(open(p))["trajectories"]]  # noqa: E731
        if pred(path("a.json")) != pred(path("b.json")):
            fail("the resumed run's predictions differ in their bits")
        # Options of the continuation must match those recorded.
        run([a if a != "0.01" else "0.02" for a in common] + ["--iterations", str(2 * n), "--resume", ckpt],
            expect=2, stderr_has="learning_rate")
        # Another architecture.
        run([a if a != "16,16" else "16,8" for a in common] + ["--iterations", str(2 * n), "--resume", ckpt],
            expect=2, stderr_has="layer 1")

        # Determinism and schedule independence.
        run(common + ["--iterations", str(n), "--json", path("c.json")])
        run(common + ["--iterations", str(n), "--json", path("d.json"), "--snapshots", "2"])
        if history(path("c.json")) != history(path("d.json")):
            fail("revolve(2) per window changed the training log")

        # predict reproduces the trained model's own prediction of the data.
        traj = log["trajectories"][0]
        grid = ",".join(repr(t) for t in traj["t"])
        y0 = ",".join(repr(v) for v in traj["y"][0])
        out_csv = path("p.csv")
        run([rewind, "predict", "-p", path("a.h5"), "--y0", y0, "--t", grid, "--output", out_csv])
        lines = open(out_csv).read().split()
        if lines[0] != "t,x,y,z" or len(lines) != 122:
            fail(f"predict wrote {lines[:1]} and {len(lines)} lines")
        predicted = [float(v) for v in lines[-1].split(",")[1:]]
        expected = traj["predictions"][-1]["y"][-1]
        if max(abs(a - b) for a, b in zip(predicted, expected)) > 1e-9 * (1 + max(map(abs, expected))):
            fail(f"predict gave {predicted}, the training log {expected}")

        # Several trajectories, irregular grids, augmentation, a time input, early stopping.
        multi = path("multi.csv")
        with open(multi, "w") as out:
            out.write("trajectory,t,x,y,z\n")
            for label, start in (("a", [1.0, 1.0, 1.0]), ("b", [-2.0, 3.0, 20.0])):
                points = lorenz(61, 0.02, start)
                for k, y in enumerate(points):
                    if k % 7 == 3:
                        continue  # irregular: some observations missing
                    out.write(f"{label},{k * 0.02!r},{y[0]!r},{y[1]!r},{y[2]!r}\n")
        run([rewind, "train", "--data", multi, "--layers", "8", "--augment", "2", "--time-dependent",
             "--substeps", "2", "--window", "4", "--batch", "4", "--iterations", "60", "--eval-every", "5",
             "--validation", "0.3", "--patience", "2", "--learning-rate", "0.3", "--json", path("m.json"),
             "--save-parameters", path("m.h5"), "--quiet"])
        m = json.load(open(path("m.json")))
        if len(m["trajectories"]) != 2 or m["model"]["augment"] != 2 or not m["model"]["time_input"]:
            fail("multi-trajectory log: wrong trajectories or model")
        if m["stopped"] == "early" and len(m["iterations"]) >= 60:
            fail("stopped early but ran every iteration")
        run([rewind, "predict", "-p", path("m.h5"), "--y0", "1,1,1", "--t", "0,0.05,0.3"])

        # Bad input.
        missing = path("missing.csv")
        open(missing, "w").write("t,x,y,z\n0,1,1,1\n0.1,2,,2\n")
        run([rewind, "train", "--data", missing], expect=2, stderr_has="line 3")
        backwards = path("backwards.csv")
        open(backwards, "w").write("t,x,y\n0,1,1\n0.2,2,2\n0.1,3,3\n")
        run([rewind, "train", "--data", backwards], expect=2, stderr_has="line 4")
        labelled = path("labelled.csv")
        open(labelled, "w").write("trajectory,t,x\na,0,1\na,0.1,2\nb,0,1\na,0.2,3\n")
        run([rewind, "train", "--data", labelled], expect=2, stderr_has="line 5")
        run([rewind, "train", "--data", data, "--layers", "16,0"], expect=2, stderr_has="--layers (hidden layer 2) = '0' must be >= 1")
        run([rewind, "train", "--data", data, "--layers", "16,x"], expect=2, stderr_has="--layers (hidden layer 2) = 'x' is not a whole number")
        run([rewind, "predict", "-p", path("a.h5"), "--y0", "1,1", "--t", "0,1"], expect=2, stderr_has="takes 3")
        spiral_data = path("spiral.csv")
        run([rewind, "generate", "spiral", "--out", spiral_data])
        run([rewind, "train", "spiral", "--data", spiral_data, "--iterations", "2", "--quiet",
             "--save-parameters", path("spiral.h5")])
        run([rewind, "predict", "-p", path("spiral.h5"), "--y0", "2,0", "--t-final", "1", "--steps", "4"])
        python = "/usr/bin/python3"
        if plot and os.path.exists(python) and subprocess.run([python, "-c", "import matplotlib"]).returncode == 0:
            run([python, plot, path("m.json")])
            for png in ("m_loss.png", "m_fit.png"):
                if not os.path.getsize(path(png)) > 10000:
                    fail(f"{png} missing or empty")
    print("check_train_data: ok")


if __name__ == "__main__":
    main()
