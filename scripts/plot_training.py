#!/usr/bin/python3
"""Plots of a neural-ODE training log written by `rewind train spiral --json LOG`.

    python3 scripts/plot_training.py spiral.json            # spiral_loss.png, spiral_fit.png
    python3 scripts/plot_training.py spiral.json --out-dir plots/

LOSS.png: the minibatch loss per iteration (light) with a running mean (dark), and the
whole-trajectory MSE at each evaluation, both on a log scale.
FIT.png: the true trajectory against the model's prediction from the first data point with the
initial and the trained parameters, as a phase portrait and as components over time.

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
                color="tab:red", ms=3, lw=1.2, label="whole-trajectory MSE")
    ax.set_xlabel("iteration")
    ax.set_ylabel("mean squared error")
    opts = log["options"]
    ax.set_title(f"{log['model']['network']} on {log['model']['features']} features, "
                 f"{opts['optimizer']}, batch {opts['batch']} × window {opts['window']}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def plot_fit(log, path):
    t = np.array(log["data"]["t"])
    truth = np.array(log["data"]["y"])
    preds = {p["iteration"]: np.array(p["y"]) for p in log["predictions"]}
    first, last = min(preds), max(preds)
    fig = plt.figure(figsize=(11, 4.5))
    phase = fig.add_subplot(1, 2, 1)
    phase.plot(truth[:, 0], truth[:, 1], color="black", lw=1.5, label="data")
    phase.plot(preds[first][:, 0], preds[first][:, 1], color="tab:gray", lw=1, ls=":",
               label=f"initial model (iteration {first})")
    phase.plot(preds[last][:, 0], preds[last][:, 1], color="tab:red", lw=1.2, ls="--",
               label=f"trained model (iteration {last})")
    phase.set_xlabel("y0")
    phase.set_ylabel("y1")
    phase.set_title("phase portrait")
    phase.set_aspect("equal", adjustable="datalim")
    phase.legend(loc="lower left", fontsize=8)
    series = fig.add_subplot(1, 2, 2)
    for i, colour in enumerate(("tab:blue", "tab:green")):
        series.plot(t, truth[:, i], color=colour, lw=1.5, label=f"y{i} data")
        series.plot(t, preds[last][:, i], color=colour, lw=1.2, ls="--", label=f"y{i} trained")
    series.set_xlabel("t")
    series.set_title(f"trajectory MSE {log['final_trajectory_mse']:.3g}")
    series.legend(fontsize=8, ncol=2)
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
