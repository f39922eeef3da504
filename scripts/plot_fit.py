#!/usr/bin/env python3
"""Draws a `rewind fit --plot PREFIX` run: PREFIX_fields.png and PREFIX_history.png.

Usage: plot_fit.py PREFIX.fit.json PREFIX

The data file is the fit's JSON report (rewind fit --json) plus "fields":
  {"kind": "grid", "side": n, "step": k, "observed": [n*n], "start": [n*n], "fit": [n*n]}
  ("start" or "fit" null: that run did not stay finite, and its curve is left out)
    the last observed frame (row-major n x n): the data, and the model's with theta at the
    start and at the fit;
  {"kind": "series", "t": [K], "components": m, "observed": [m][K], "start": [m][K], "fit": [m][K]}
    the first m observed components at every observed time;
  {"kind": "data", "t": [T], "states": [names], "start": [states][T], "fit": [states][T]}
    a measured series (rewind fit --data): the model's every state on an even grid of times at
    the start and at the fit; the measured columns are the report's "data" (t, y with nulls
    for missing values, states, training_points).
PREFIX_fields.png shows them side by side (grid) or over time (series, data); PREFIX_history.png
shows J and each fitted parameter against the iterations, with the file's (generating) value
dashed when there is one.
Needs Debian's python3-matplotlib and python3-numpy.
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def fitted_text(report, key):
    return ", ".join(f"{name} = {report[key][name]:.5g}" for name in report["fitted"])


def draw_data(report, out):
    """One panel per state (the first six): the measured values of its column(s), the held-out
    ones as open squares, and the model at the start and at the fit."""
    fields, data = report["fields"], report["data"]
    states = fields["states"][:6]
    fig, axes = plt.subplots(len(states), 1, figsize=(9, 2.4 * len(states) + 0.6), sharex=True,
                             constrained_layout=True, squeeze=False)
    first = data["training_points"]
    t_data = np.asarray(data["t"], dtype=float)
    for i, state in enumerate(states):
        ax = axes[i][0]
        for column, column_state in zip(data["y"], data["states"]):
            if column_state != state:
                continue
            y = np.asarray([np.nan if v is None else v for v in column], dtype=float)
            ax.plot(t_data[:first], y[:first], "k.", markersize=6, label="measured")
            if first < len(y):
                ax.plot(t_data[first:], y[first:], "s", mfc="none", color="0.4", markersize=6,
                        label="held out")
                ax.axvspan(t_data[first], t_data[-1], color="0.92", zorder=0)
        if fields["start"]:
            ax.plot(fields["t"], fields["start"][i], color="tab:orange",
                    label="start: " + fitted_text(report, "start"))
        if fields["fit"]:
            ax.plot(fields["t"], fields["fit"][i], color="tab:blue",
                    label="fit: " + fitted_text(report, "parameters"))
        ax.set_ylabel(state)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="best")
    axes[-1][0].set_xlabel("t")
    fig.suptitle(f"{report['problem']} fitted to {os.path.basename(data['file'])}")
    fig.savefig(out, dpi=110)
    plt.close(fig)


def draw_fields(report, out):
    fields = report["fields"]
    if fields["kind"] == "data":
        draw_data(report, out)
        return
    field = report["observations"]["field"]
    if fields["kind"] == "grid":
        side = fields["side"]
        # A curve is null when its run did not stay finite (a far start, a failed fit).
        panels = [("observed (with noise)", fields["observed"]),
                  ("model at the start\n" + fitted_text(report, "start"), fields["start"]),
                  ("model at the fit\n" + fitted_text(report, "parameters"), fields["fit"])]
        panels = [(title, values) for title, values in panels if values is not None]
        images = [np.asarray(values).reshape(side, side) for _, values in panels]
        low = min(float(image.min()) for image in images)
        high = max(float(image.max()) for image in images)
        fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 4.3),
                                 constrained_layout=True, squeeze=False)
        axes = axes[0]
        for ax, (title, _), image in zip(axes, panels, images):
            shown = ax.imshow(image, cmap="viridis", vmin=low, vmax=high, origin="lower")
            ax.set_title(title, fontsize=10)
            ax.set_xticks([])
            ax.set_yticks([])
        fig.colorbar(shown, ax=axes, shrink=0.85, label=field)
        fig.suptitle(f"{report['problem']} (n = {report['n']}): '{field}' at step "
                     f"{fields['step']} of {report['steps']}")
    else:
        t = np.asarray(fields["t"])
        m = fields["components"]
        fig, axes = plt.subplots(m, 1, figsize=(9, 2.4 * m + 0.6), sharex=True,
                                 constrained_layout=True, squeeze=False)
        for i in range(m):
            ax = axes[i][0]
            ax.plot(t, fields["observed"][i], "k.", markersize=4, label="observed")
            if fields["start"] is not None:
                ax.plot(t, fields["start"][i], color="tab:orange", label="start: " +
                        fitted_text(report, "start"))
            if fields["fit"] is not None:
                ax.plot(t, fields["fit"][i], color="tab:blue", label="fit: " +
                        fitted_text(report, "parameters"))
            ax.set_ylabel(f"{field}[{i}]" if m > 1 or field == "all" else field)
            ax.grid(alpha=0.3)
        axes[0][0].legend(fontsize=8, loc="upper right")
        axes[-1][0].set_xlabel("t")
        fig.suptitle(f"{report['problem']}: observations and the model at the start and the fit")
    fig.savefig(out, dpi=110)
    plt.close(fig)


def draw_history(report, out):
    history = report["history"]
    names = report["fitted"]
    # Iterations counted over every stage of a continuation (--stages), stage starts marked.
    iterations = list(range(len(history)))
    stage_starts = [i for i, h in enumerate(history)
                    if i > 0 and h.get("stage", 1) != history[i - 1].get("stage", 1)]
    fig, axes = plt.subplots(1 + len(names), 1, figsize=(7, 2.2 * (1 + len(names)) + 0.6),
                             sharex=True, constrained_layout=True)
    axes[0].semilogy(iterations, [h["loss"] for h in history], "o-", color="tab:red")
    axes[0].set_ylabel("J")
    axes[0].grid(alpha=0.3, which="both")
    for ax, name in zip(axes[1:], names):
        ax.plot(iterations, [h["parameters"][name] for h in history], "o-", color="tab:blue")
        truth = (report.get("generating_parameters") or {}).get(name)
        if truth is not None:
            ax.axhline(truth, color="k", linestyle="--", linewidth=1,
                       label=f"in the file: {truth:.5g}")
            ax.legend(fontsize=8)
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
    for ax in axes:
        for i in stage_starts:
            ax.axvline(i - 0.5, color="grey", linewidth=0.8, linestyle=":")
    stages = len(report.get("stages", [])) or 1
    axes[-1].set_xlabel("iteration (an evaluation that lowered J)" +
                        (f"; dotted: the {stages} stages' starts" if stages > 1 else ""))
    fig.suptitle(f"rewind fit {report['problem']}: {report['iterations']} iterations, "
                 f"{report['evaluations']} gradients, {report['schedule']['name']}")
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        report = json.load(f)
    prefix = sys.argv[2]
    draw_fields(report, prefix + "_fields.png")
    draw_history(report, prefix + "_history.png")


if __name__ == "__main__":
    main()
