#!/usr/bin/env python3
"""Checks `rewind train --data` and `rewind predict` end to end (a ctest added by
tests/cli/CMakeLists.txt).

    check_train_data.py path/to/rewind [path/to/plot_training.py]

- a 3-component Lorenz-63 series (written here, RK4) trains with --layers 16,16, validation and
  the cosine schedule; the train error falls; the log has every iteration and evaluation.
- resume: 2N iterations in one run equal N iterations (--stop-at N, checkpoint every N) plus a
  --resume for the other N: the same loss history and the same bits in the saved models'
  predictions (the log's and predict's, all 17 digits).
- the same seeds give the same log; revolve(2) per window gives the same log (schedule
  independence); --augment 2, --time-dependent, several trajectories on irregular grids and
  early stopping (--patience) run; --validate-on windows is recorded, scores the held-out points
  from windows (below the free run's error here), and is refused without held-out points and
  against a checkpoint of the other measure.
- predict: --y0 of the trained model reproduces the trained prediction; a CSV file comes out.
- adaptive steps (--method dopri5 --adaptive): the log reports steps per iteration and window,
  revolve(2) gives the same log, a looser tolerance fewer steps, predict of the saved model the
  log's prediction, resume the same history; another tolerance or fixed steps on resume are refused,
  and so are --adaptive without an embedded pair, --rtol without --adaptive, --substeps with it.
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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from adaptive_training import lorenz  # noqa: E402  (the data generator, shared with the bench)


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

        # Validation on windows: recorded, measured otherwise than the free run, with early
        # stopping; refused without held-out data and, on resume, against a checkpoint of the other
        # measure.
        run(common + ["--iterations", str(n), "--validate-on", "windows", "--patience", "50",
                      "--json", path("w.json")])
        wlog = json.load(open(path("w.json")))
        if wlog["options"]["validate_on"] != "windows":
            fail(f"the log records validate_on = {wlog['options'].get('validate_on')}")
        clog = json.load(open(path("c.json")))
        if clog["options"]["validate_on"] != "trajectory":
            fail("the default validation measure is not recorded as trajectory")
        wval = [e["validation_mse"] for e in wlog["evaluations"]]
        cval = [e["validation_mse"] for e in clog["evaluations"]]
        if [e["train_mse"] for e in wlog["evaluations"]] != [e["train_mse"] for e in clog["evaluations"]]:
            fail("--validate-on changed the training run itself")
        if wval == cval or not all(w < c for w, c in zip(wval, cval)):
            fail(f"windows' validation errors {wval} are not below the free run's {cval}")
        run([a for a in common if a not in ("--validation", "0.2")] + ["--iterations", "2", "--validate-on", "windows"],
            expect=2, stderr_has="--validate-on")
        run(common + ["--iterations", "2", "--validate-on", "window"], expect=2, stderr_has="trajectory, windows")
        run(common + ["--iterations", str(2 * n), "--resume", ckpt, "--validate-on", "windows"],
            expect=2, stderr_has="validate_on")

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

        # Adaptive steps: dopri5 lands on every (irregular) observation time; revolve(2) per window
        # runs online and gives the same log; the model keeps its tolerances, so predict steps
        # adaptively too; resuming with another step control is refused.
        # Observations 0.1 apart (some missing): far enough for the tight tolerance to need
        # several steps per interval even with the untrained network's slow field.
        sparse = path("sparse.csv")
        with open(sparse, "w") as out:
            out.write("t,x,y,z\n")
            for k, y in enumerate(lorenz(61, 0.1, [1.0, 1.0, 1.0], substeps=20)):
                if k % 7 != 3:
                    out.write(f"{k * 0.1!r},{y[0]!r},{y[1]!r},{y[2]!r}\n")
        adaptive = [rewind, "train", "--data", sparse, "--layers", "8", "--window", "4", "--batch", "4",
                    "--iterations", "20", "--eval-every", "10", "--method", "dopri5", "--adaptive",
                    "--rtol", "1e-9", "--atol", "1e-11", "--validation", "0.3", "--quiet"]
        run(adaptive + ["--json", path("ad.json"), "--save-parameters", path("ad.h5")])
        run(adaptive + ["--json", path("ad2.json"), "--snapshots", "2"])
        if history(path("ad.json")) != history(path("ad2.json")):
            fail("revolve(2) per window changed the adaptive training log")
        ad = json.load(open(path("ad.json")))
        steps = [r["steps"] for r in ad["iterations"]]
        # Every window of 4 intervals takes at least 4 steps; at 1e-9 it takes more.
        if min(steps) < 4 * 4 or not ad["steps_per_window"] > 5:
            fail(f"adaptive steps per iteration {steps[:5]}…, {ad['steps_per_window']} per window")
        if not ad["evaluations"][-1]["train_mse"] < ad["evaluations"][0]["train_mse"]:
            fail("adaptive training did not lower the train error")
        loose = [a if a != "1e-9" else "1e-3" for a in adaptive]
        run(loose + ["--json", path("ad3.json")])
        if not json.load(open(path("ad3.json")))["steps_per_window"] < ad["steps_per_window"]:
            fail("rtol 1e-3 took no fewer steps than 1e-9")
        ad_traj = ad["trajectories"][0]
        ad_grid = ",".join(repr(t) for t in ad_traj["t"])
        ad_y0 = ",".join(repr(v) for v in ad_traj["y"][0])
        last = run([rewind, "predict", "-p", path("ad.h5"), "--y0", ad_y0, "--t", ad_grid]).stdout.split()[-1]
        ad_expected = ad_traj["predictions"][-1]["y"][-1]
        ad_predicted = [float(v) for v in last.split(",")[1:]]
        if max(abs(a - b) for a, b in zip(ad_predicted, ad_expected)) > 1e-9 * (1 + max(map(abs, ad_expected))):
            fail(f"predict of the adaptive model gave {last}, the log {ad_expected}")
        run([rewind, "predict", "-p", path("ad.h5"), "--y0", ad_y0, "--t", "0,1", "--substeps", "2"],
            expect=2, stderr_has="adaptive steps")
        ad_ckpt = path("ad.ckpt.h5")
        run(adaptive + ["--stop-at", "10", "--checkpoint-every", "10", "--checkpoint", ad_ckpt])
        run(adaptive + ["--resume", ad_ckpt, "--json", path("ad4.json")])
        if history(path("ad4.json")) != history(path("ad.json")):
            fail("an adaptive run resumed gave another loss history")
        run([a if a != "1e-9" else "1e-8" for a in adaptive] + ["--resume", ad_ckpt],
            expect=2, stderr_has="rtol")
        fixed_resume = [a for a in adaptive if a not in ("--adaptive", "--rtol", "1e-9", "--atol", "1e-11")]
        run(fixed_resume + ["--resume", ad_ckpt], expect=2, stderr_has="adaptive")
        run([rewind, "train", "--data", data, "--adaptive"], expect=2, stderr_has="embedded error estimate")
        run([rewind, "train", "--data", data, "--rtol", "1e-6"], expect=2, stderr_has="add --adaptive")
        run([rewind, "train", "--data", data, "--adaptive", "--method", "dopri5", "--substeps", "2"],
            expect=2, stderr_has="--substeps sets fixed steps")
        run([rewind, "train", "--data", data, "--adaptive", "--method", "dopri5", "--rtol", "0"],
            expect=2, stderr_has="--rtol = 0")

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
