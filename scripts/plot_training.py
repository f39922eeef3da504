#!/usr/bin/python3
"""Plots of a neural-ODE training log written by `rewind train [spiral] --json LOG`.

    python3 scripts/plot_training.py spiral.json            # spiral_loss.png, spiral_fit.png
    python3 scripts/plot_training.py spiral.json --out-dir plots/

LOSS.png: the minibatch loss per iteration (light) with a running mean (dark), and the
whole-trajectory MSE at each evaluation, both on a log scale.
FIT.png: every component over time, data against the trained model's prediction from each
trajectory's first point (held-out validation points shaded), and the phase portrait of the first
two components with the initial and trained models. Logs of any dimension and of several
trajectories; the loss plot adds the validation error when the log has one.

Needs numpy and matplotlib (Debian: python3-numpy python3-matplotlib; use /usr/bin/python3
if another python3 comes first on PATH).
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only; no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def running_mean(values, width):
    if len(values) < width:
        return values
    kernel = np.ones(width) / width
    head = np.cumsum(values[: width - 1]) / np.arange(1, width)
    return np.concatenate([head, np.convolve(values, kernel, mode="valid")])


def trajectories(log):
    """[(label, t, data, {iteration: prediction}, training_points)] for either log shape: the
    spiral's one "data" series, or `train --data`'s "trajectories"."""
    if "trajectories" in log:
        return [(tr["label"], np.array(tr["t"]), np.array(tr["y"]),
                 {p["iteration"]: np.array(p["y"]) for p in tr["predictions"]}, tr["training_points"])
                for tr in log["trajectories"]]
    t = np.array(log["data"]["t"])
    return [("0", t, np.array(log["data"]["y"]),
             {p["iteration"]: np.array(p["y"]) for p in log["predictions"]}, len(t))]


def component_names(log, dimension):
    names = log.get("model", {}).get("names")
    return names if names and len(names) == dimension else [f"y{i}" for i in range(dimension)]


def plot_loss(log, path):
    its = np.array([r["iteration"] for r in log["iterations"]])
    loss = np.array([r["loss"] for r in log["iterations"]], dtype=float)
    evals = log["evaluations"]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    if len(its):
        ax.semilogy(its, loss, color="tab:blue", alpha=0.25, lw=0.8, label="minibatch loss")
        ax.semilogy(its, running_mean(loss, max(1, len(loss) // 50)), color="tab:blue", lw=1.8,
                    label="minibatch loss, running mean")
    ax.semilogy([e["iteration"] for e in evals], [e["trajectory_mse"] for e in evals], "o-",
                color="tab:red", ms=3, lw=1.2, label="whole-trajectory MSE (training points)")
    validation = [(e["iteration"], e["validation_mse"]) for e in evals if e.get("validation_mse") is not None]
    if validation:
        ax.semilogy(*zip(*validation), "s-", color="tab:green", ms=3, lw=1.2,
                    label="validation MSE (held-out points)")
        if log.get("best_iteration"):
            ax.axvline(log["best_iteration"], color="tab:green", ls=":", lw=1, label="best validation")
    ax.set_xlabel("iteration")
    ax.set_ylabel("mean squared error")
    opts = log["options"]
    ax.set_title(f"{log['model']['network']} on {log['model']['features']} features, "
                 f"{opts['optimizer']}, batch {opts['batch']} × window {opts['window']}", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def plot_fit(log, path):
    """A panel per component over time (every trajectory; the validation part shaded), and the
    phase portrait of the first two components when there are two or more."""
    series = trajectories(log)
    dimension = series[0][2].shape[1]
    names = component_names(log, dimension)
    phase = dimension >= 2
    columns = 2 if phase else 1
    fig = plt.figure(figsize=(5.5 * columns, max(3.0, 2.2 * dimension)))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i in range(dimension):
        ax = fig.add_subplot(dimension, columns, i * columns + 1)
        for j, (label, t, truth, preds, training) in enumerate(series):
            colour = colours[j % len(colours)]
            last = max(preds)
            ax.plot(t, truth[:, i], ".", color=colour, ms=3, label=f"data {label}" if i == 0 else None)
            ax.plot(t, preds[last][:, i], "-", color=colour, lw=1.2,
                    label=f"model {label} (iteration {last})" if i == 0 else None)
            if training < len(t):
                ax.axvspan(t[training - 1], t[-1], color="tab:green", alpha=0.08)
        ax.set_ylabel(names[i])
        if i == dimension - 1:
            ax.set_xlabel("t")
        if i == 0:
            ax.set_title(f"train MSE {log['final_trajectory_mse']:.3g}"
                         + (f", validation MSE {log['final_validation_mse']:.3g} (shaded)"
                            if log.get("final_validation_mse") is not None else ""), fontsize=9)
            ax.legend(fontsize=7, ncol=2)
    if phase:
        ax = fig.add_subplot(1, 2, 2)
        for j, (label, t, truth, preds, _) in enumerate(series):
            colour = colours[j % len(colours)]
            first, last = min(preds), max(preds)
            ax.plot(truth[:, 0], truth[:, 1], color="black", lw=1.4, label="data" if j == 0 else None)
            ax.plot(preds[first][:, 0], preds[first][:, 1], color="tab:gray", lw=1, ls=":",
                    label=f"initial model (iteration {first})" if j == 0 else None)
            ax.plot(preds[last][:, 0], preds[last][:, 1], color=colour, lw=1.2, ls="--",
                    label=f"trained model {label}")
        ax.set_xlabel(names[0])
        ax.set_ylabel(names[1])
        ax.set_title("phase portrait")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", help="JSON log of rewind train --json")
    parser.add_argument("--out-dir", default=None, help="where the PNGs go (default: beside the log)")
    args = parser.parse_args()
    with open(args.log) as f:
        log = json.load(f)
    stem = os.path.splitext(os.path.basename(args.log))[0]
    out_dir = args.out_dir or os.path.dirname(os.path.abspath(args.log))
    os.makedirs(out_dir, exist_ok=True)
    loss_png = os.path.join(out_dir, f"{stem}_loss.png")
    fit_png = os.path.join(out_dir, f"{stem}_fit.png")
    plot_loss(log, loss_png)
    plot_fit(log, fit_png)
    print(f"wrote {loss_png} and {fit_png}")


if __name__ == "__main__":
    sys.exit(main())
