#!/usr/bin/python3
"""The hare-lynx comparison: a fitted Lotka-Volterra model against a neural ODE, on the same
data and the same held-out years, drawn over the data and scored by held-out RMSE per species.

    rewind fit lotka_volterra --data data/hare_lynx.csv --validation 0.2 --dt 0.01 \\
        --fit alpha,beta,delta,gamma --fit-initial-state \\
        --start alpha=0.55,beta=0.028,delta=0.024,gamma=0.8 --json > lv.json
    rewind train --data data/hare_lynx.csv --validation 0.2 --window 5 --batch 8 \\
        --layers 16,16 --substeps 4 --iterations 1500 --json node.json
    python3 scripts/plot_hare_lynx.py lv.json node.json --out data/figures/hare_lynx

writes PREFIX_series.png (each species over time, held-out years shaded) and PREFIX_phase.png
(lynx against hare), and prints the held-out RMSE of both models in the data's units. Both
models are scored on the same points: those `rewind train` held out (the last fraction of the
series), which must be the ones `rewind fit` held out.
"""
import argparse
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402


def rmse(pred, data, first):
    """Root-mean-square error of pred against data over the points from index `first` on."""
    diffs = [(p - d) ** 2 for p, d in zip(pred[first:], data[first:])]
    return math.sqrt(sum(diffs) / len(diffs))


def load(lv_path, node_path):
    with open(lv_path) as f:
        lv = json.load(f)
    with open(node_path) as f:
        node = json.load(f)
    if "data" not in lv:
        sys.exit(f"{lv_path}: not a `rewind fit --data` report (no 'data')")
    if len(node.get("trajectories", [])) != 1:
        sys.exit(f"{node_path}: expected a `rewind train --data` report of one trajectory")
    data = lv["data"]
    trajectory = node["trajectories"][0]
    if trajectory["t"] != data["t"] or trajectory["y"] != [list(r) for r in zip(*data["y"])]:
        sys.exit("the two reports are not of the same data")
    if trajectory["training_points"] != data["training_points"]:
        sys.exit(
            f"different splits: the neural ODE held out from point {trajectory['training_points']},"
            f" the Lotka-Volterra fit from point {data['training_points']}"
        )
    node_pred = list(zip(*trajectory["predictions"][-1]["y"]))  # per component
    return lv, data, [list(c) for c in node_pred]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lv", help="JSON of rewind fit --data ... --json")
    parser.add_argument("node", help="JSON of rewind train --data ... --json")
    parser.add_argument("--out", default="hare_lynx", help="prefix of the PNG files")
    args = parser.parse_args()

    lv, data, node = load(args.lv, args.node)
    t = data["t"]
    names = data["columns"]
    first = data["training_points"]
    colors = {"data": "black", "lv": "tab:blue", "node": "tab:orange"}

    print(f"held-out points: t = {t[first]:g} to {t[-1]:g} ({len(t) - first} points)")
    print(f"{'model':<16}" + "".join(f"{n + ' RMSE':>14}" for n in names))
    scores = {}
    for label, pred in (("Lotka-Volterra", data["fit"]), ("neural ODE", node)):
        scores[label] = [rmse(pred[i], data["y"][i], first) for i in range(len(names))]
        print(f"{label:<16}" + "".join(f"{s:14.3f}" for s in scores[label]))

    fig, axes = plt.subplots(len(names), 1, figsize=(7.5, 2.6 * len(names)), sharex=True)
    for i, ax in enumerate(axes):
        ax.axvspan(t[first] - 0.5, t[-1] + 0.5, color="0.9", label="held out")
        ax.plot(t, data["y"][i], "o", color=colors["data"], ms=4, label="pelts (data)")
        ax.plot(t, data["fit"][i], "-", color=colors["lv"],
                label=f"Lotka-Volterra (held-out RMSE {scores['Lotka-Volterra'][i]:.1f})")
        ax.plot(t, node[i], "--", color=colors["node"],
                label=f"neural ODE (held-out RMSE {scores['neural ODE'][i]:.1f})")
        ax.set_ylabel(f"{names[i]} (thousands)")
        ax.set_xlim(t[0] - 0.5, t[-1] + 0.5)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7, loc="upper left", ncol=2)
    axes[-1].set_xlabel("year")
    axes[-1].xaxis.set_major_locator(MaxNLocator(integer=True))
    axes[0].set_title("Hudson's Bay Company pelts: fitted on 1900-1915, predicted after", fontsize=10)
    fig.tight_layout()
    fig.savefig(f"{args.out}_series.png", dpi=90)

    fig, ax = plt.subplots(figsize=(4.6, 4.2))
    ax.plot(data["y"][0], data["y"][1], "o-", color=colors["data"], ms=3, lw=0.6, label="data")
    ax.plot(data["fit"][0], data["fit"][1], "-", color=colors["lv"], label="Lotka-Volterra")
    ax.plot(node[0], node[1], "--", color=colors["node"], label="neural ODE")
    ax.plot(data["y"][0][first:], data["y"][1][first:], "s", mfc="none", color="0.4", ms=7,
            label="held-out points")
    ax.set_xlabel(f"{names[0]} (thousands)")
    ax.set_ylabel(f"{names[1]} (thousands)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(f"{args.out}_phase.png", dpi=90)
    print(f"wrote {args.out}_series.png and {args.out}_phase.png")


if __name__ == "__main__":
    main()
