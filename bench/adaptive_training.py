#!/usr/bin/env python3
"""Fixed against adaptive steps in neural-ODE training: time per iteration, steps per window,
the fit reached and the solver's own error, side by side in one run.

    bench/adaptive_training.py build/src/cli/rewind [--iterations 300] [--spacing 0.02]
                               [--json out.json]

Data: Lorenz-63 (σ 10, ρ 28, β 8/3) from (1, 1, 1) over 4.8 time units, points --spacing apart
(0.02: 241 points), integrated here by RK4 with steps of 0.001, all of it for training (nothing
held out, so every result is the last iterate, not a best-so-far one). Every configuration
trains the same 3-32-32-3 tanh network from the same seeds (Adam, cosine schedule, batch 16 ×
window 10) with `rewind train --data`, then:
- ms/iteration: the log's seconds_per_iteration (gradient, update and the evaluations);
- steps/window: accepted steps per window of 10 intervals, and rejected attempts per window;
- last minibatch loss: the loss of the last iteration's minibatch (the log's final_loss);
- trajectory MSE: the trained model integrated from the first point over the whole series, the
  mean squared error against the data (normalised units; 4.8 time units of a chaotic system from
  one point, so it is large for every configuration — what matters is how alike they are);
- solver error: the trained model integrated over the data's grid by its own solver, against the
  same model integrated accurately (fixed steps: 32 × the substeps; adaptive: rtol 1e-12,
  atol 1e-14), the largest difference in data units. It says how far the trained model's
  predictions are from the ODE it defines, which is what a tolerance buys.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def lorenz(points, dt, y, substeps=4):
    """Lorenz-63 (σ 10, ρ 28, β 8/3) from y: `points` states dt apart, classical RK4 with
    `substeps` steps per interval (also the data of tests/cli/check_train_data.py)."""
    def f(v):
        x, yy, z = v
        return [10 * (yy - x), x * (28 - z) - yy, x * yy - 8 / 3 * z]
    out, h = [], dt / substeps
    for _ in range(points):
        out.append(list(y))
        for _ in range(substeps):
            k1 = f(y)
            k2 = f([a + h / 2 * b for a, b in zip(y, k1)])
            k3 = f([a + h / 2 * b for a, b in zip(y, k2)])
            k4 = f([a + h * b for a, b in zip(y, k3)])
            y = [a + h / 6 * (b + 2 * c + 2 * d + e) for a, b, c, d, e in zip(y, k1, k2, k3, k4)]
    return out


def run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")
    return done.stdout


def predict(rewind, model, y0, grid, extra):
    out = run([rewind, "predict", "-p", model, "--y0", y0, "--t", grid] + extra)
    return [[float(v) for v in line.split(",")[1:]] for line in out.split()[1:]]


CONFIGS = [  # (label, options, reference options for predict)
    ("rk4 × 1", ["--method", "rk4"], ["--substeps", "32"]),
    ("rk4 × 4", ["--method", "rk4", "--substeps", "4"], ["--substeps", "128"]),
    ("dopri5 × 1 (fixed)", ["--method", "dopri5"], ["--substeps", "32"]),
    ("dopri5 rtol 1e-3", ["--method", "dopri5", "--adaptive", "--rtol", "1e-3", "--atol", "1e-6"], None),
    ("dopri5 rtol 1e-5", ["--method", "dopri5", "--adaptive", "--rtol", "1e-5", "--atol", "1e-8"], None),
    ("dopri5 rtol 1e-7", ["--method", "dopri5", "--adaptive", "--rtol", "1e-7", "--atol", "1e-10"], None),
    ("tsit5 rtol 1e-5", ["--method", "tsit5", "--adaptive", "--rtol", "1e-5", "--atol", "1e-8"], None),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("rewind")
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--spacing", type=float, default=0.02, help="time between observations")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "lorenz.csv")
        count = round(4.8 / args.spacing) + 1
        points = lorenz(count, args.spacing, [1.0, 1.0, 1.0], substeps=round(args.spacing / 0.001))
        with open(data, "w") as out:
            out.write("t,x,y,z\n")
            for k, y in enumerate(points):
                out.write(f"{k * args.spacing!r},{y[0]!r},{y[1]!r},{y[2]!r}\n")
        grid = ",".join(repr(k * args.spacing) for k in range(count))
        y0 = "1,1,1"
        for label, options, reference in CONFIGS:
            model = os.path.join(tmp, f"model{len(rows)}.h5")
            log_file = os.path.join(tmp, f"log{len(rows)}.json")
            run([args.rewind, "train", "--data", data, "--layers", "32,32", "--batch", "16",
                 "--window", "10", "--iterations", str(args.iterations),
                 "--lr-schedule", "cosine", "--learning-rate", "0.01", "--final-learning-rate",
                 "0.001", "--eval-every", str(args.iterations), "--quiet", "--json", log_file,
                 "--save-parameters", model] + options)
            log = json.load(open(log_file))
            own = predict(args.rewind, model, y0, grid, [])
            accurate = predict(args.rewind, model, y0, grid,
                               reference or ["--rtol", "1e-12", "--atol", "1e-14"])
            solver_error = max(abs(a - b) for p, q in zip(own, accurate) for a, b in zip(p, q))
            rows.append({"configuration": label,
                         "ms_per_iteration": 1e3 * log["seconds_per_iteration"],
                         "steps_per_window": log["steps_per_window"],
                         "rejected": log["rejected_steps"],
                         "final_loss": log["final_loss"],
                         "trajectory_mse": log["final_train_mse"],
                         "solver_error": solver_error})
            print(f"{label}: done", file=sys.stderr)
    base = rows[0]["ms_per_iteration"]
    print(f"Lorenz-63 observed every {args.spacing}, 3-32-32-3 tanh, batch 16 × window 10, "
          f"{args.iterations} iterations\n")
    print("| configuration | ms/iteration | × rk4 × 1 | steps/window | rejected/window | "
          "last minibatch loss | trajectory MSE | solver error |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['configuration']} | {r['ms_per_iteration']:.2f} | "
              f"{r['ms_per_iteration'] / base:.2f} | {r['steps_per_window']:.1f} | "
              f"{r['rejected'] / (16 * args.iterations):.2f} | {r['final_loss']:.4e} | "
              f"{r['trajectory_mse']:.4e} | {r['solver_error']:.1e} |")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"iterations": args.iterations, "spacing": args.spacing, "rows": rows}, out,
                      indent=1)


if __name__ == "__main__":
    main()
