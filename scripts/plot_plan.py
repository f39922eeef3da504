#!/usr/bin/python3
"""Picture of a checkpointing plan written by `rewind plan ... --plot OUT.png`.

    /usr/bin/python3 scripts/plot_plan.py PLAN.json OUT.png

OUT.png is one figure with one or two panels side by side:
  schedule   (only when PLAN.json has a non-empty "actions") every action of the schedule in
             time order: x is the action number, y the step index 0 … l. An advance is a
             vertical line from its first to its last step — dark for the first forward sweep
             (it reaches a step no earlier action reached), light for a recomputation; a reverse
             is a short red line from step + 1 down to step; stores (filled circles) and restores
             (open diamonds) are markers at their step, green in memory and purple on disk.
             Frees are not drawn.
  trade-off  (always) forward steps (l + p)/l against the number of snapshots c for memory-only
             revolve (the Griewank–Walther optimum), the store-all line (2l − 1)/l, and the
             chosen plan as a red star at (c, ratio), or, for a two-level plan whose curve is
             present, on that curve at (K + D, time_ratio). The two-level curve is drawn on the
             same axes at x = K + D (all snapshots, memory and disk), because then both curves
             answer one question — what does a run cost with this many snapshots in all — and
             the gap between them at one x is the price of putting D of them on disk. Its y is
             the predicted time in forward runs (adjoint and disk I/O included), not a step
             count; the legend and the axis label say so. An axis is logarithmic when its values
             span more than two decades (x) or more than one (y).

Input contract (PLAN.json, one object; numbers are JSON numbers, "null" where a value does
not apply; keys other than these are ignored):

  {
    "steps": 1000,                      // l >= 1
    "schedule": "revolve(c = 20)",      // the schedule's name, for titles
    "kind": "revolve",                  // "revolve" | "uniform" | "store-all" | "two-level"
    "snapshots": 20,                    // c, all levels together
    "memory_snapshots": null,           // K for two-level, else null
    "disk_snapshots": null,             // D for two-level, else null
    "all_on_disk": false,               // every snapshot on disk
    "chosen": {"snapshots": 20,         // c of the plan
               "ratio": 6.342,          // its (l + p)/l
               "disk_snapshots": null,  // two-level: D (required), else null or absent
               "time_ratio": 8.1},      // two-level: predicted time / l (required), else optional
    "tradeoff": {
      "memory": [[1, 500.5], [2, 45.2], ...],       // [c, (l + p)/l], memory-only revolve; >= 1
      "two_level": [[0, 12.3], [5, 9.1], ...],      // optional: [D, predicted time / l]
      "two_level_memory_snapshots": 4               // K of that curve; required with two_level
    },
    "actions": [                        // optional; sent only for small l (say l <= 200)
      {"kind": "advance", "from": 0, "to": 7},
      {"kind": "store", "step": 0, "slot": 0, "level": "memory"},     // level: memory | disk
      {"kind": "restore", "step": 7, "slot": 1, "level": "disk"},
      {"kind": "reverse", "step": 9},                                  // step + 1 -> step
      {"kind": "free", "slot": 1}                                      // not drawn
    ]                                   // "done", if present, is not drawn either
  }

Exit status: 0 when OUT.png is written (nothing is printed: the caller's stdout may carry its
own JSON report); 2 with one line on stderr for a missing or unreadable PLAN.json, invalid JSON,
a missing key or a value of the wrong type or range, or wrong arguments; 1 when OUT.png cannot
be written.

Needs numpy and matplotlib (Debian: python3-numpy python3-matplotlib; use /usr/bin/python3
if another python3 comes first on PATH).
"""
import json
import logging
import math
import sys

# Cache-directory and font-cache notices would land on the terminal of whoever ran `rewind plan`;
# real problems still surface as exceptions.
logging.getLogger("matplotlib").setLevel(logging.ERROR)

import matplotlib  # noqa: E402

matplotlib.use("Agg")  # files only; no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib import ticker  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.text import Text  # noqa: E402

PROGRAM = "plot_plan"
EXIT_BAD_INPUT = 2
EXIT_WRITE_FAILED = 1

KINDS = ("revolve", "uniform", "store-all", "two-level")
LEVELS = ("memory", "disk")
DRAWN_ACTIONS = ("advance", "store", "restore", "reverse")
SILENT_ACTIONS = ("free", "done")

FIRST_SWEEP = "#1f3b73"   # dark blue
RECOMPUTE = "#6fa8dc"     # light blue: the same operation, repeated
REVERSE = "tab:red"
LEVEL_COLOUR = {"memory": "tab:green", "disk": "tab:purple"}
MEMORY_CURVE = "tab:blue"
TWO_LEVEL_CURVE = "tab:purple"
CHOSEN = "tab:red"

FIG_HEIGHT = 5.0
DPI = 120


class BadInput(Exception):
    """PLAN.json is not a plan this script can draw; the message names what is wrong."""


# --- reading and checking the plan -------------------------------------------------------------

def load_plan(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise BadInput(f"cannot read it: {e.strerror}")
    try:
        return json.loads(data)  # bytes: json finds the UTF-8/16/32 encoding itself
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise BadInput(f"not valid JSON: {e}")


def field(obj, key, where):
    if not isinstance(obj, dict):
        raise BadInput(f"{where} is not a JSON object")
    if key not in obj:
        raise BadInput(f"{where} has no key '{key}'")
    return obj[key]


def number(value, where, minimum=None, integer=False):
    # bool is an int in Python but `true` is no count in JSON.
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BadInput(f"{where} = {json.dumps(value)} is not a finite number")
    if integer and value != int(value):
        raise BadInput(f"{where} = {value} is not a whole number")
    if minimum is not None and value < minimum:
        raise BadInput(f"{where} = {value} is below {minimum}")
    return int(value) if integer else float(value)


def optional_number(obj, key, where, **limits):
    """The number at obj[key], or None when the key is absent or null."""
    value = obj.get(key)
    return None if value is None else number(value, f"{where}.{key}", **limits)


def pairs(value, where, x_minimum):
    if not isinstance(value, list) or not value:
        raise BadInput(f"{where} is not a non-empty list of [x, y] pairs")
    out = []
    for i, pair in enumerate(value):
        if not isinstance(pair, list) or len(pair) != 2:
            raise BadInput(f"{where}[{i}] is not an [x, y] pair")
        out.append((number(pair[0], f"{where}[{i}][0]", minimum=x_minimum),
                    number(pair[1], f"{where}[{i}][1]", minimum=0)))
    return sorted(out)


def check_action(action, i, steps):
    """The action as a small dict of what gets drawn, or None for kinds that are not drawn."""
    where = f"actions[{i}]"
    kind = field(action, "kind", where)
    if kind in SILENT_ACTIONS:
        return None
    if kind not in DRAWN_ACTIONS:
        raise BadInput(f"{where}.kind = {json.dumps(kind)} is none of "
                       f"{', '.join(DRAWN_ACTIONS + SILENT_ACTIONS)}")
    where = f"{where} ({kind})"
    if kind == "advance":
        start = number(field(action, "from", where), f"{where}.from", minimum=0, integer=True)
        end = number(field(action, "to", where), f"{where}.to", minimum=0, integer=True)
        if not start < end <= steps:
            raise BadInput(f"{where} goes from {start} to {end}; needs from < to <= {steps}")
        return {"kind": kind, "from": start, "to": end}
    step = number(field(action, "step", where), f"{where}.step", minimum=0, integer=True)
    if step > steps or (kind == "reverse" and step >= steps):
        raise BadInput(f"{where}.step = {step} is outside the {steps} steps")
    if kind == "reverse":
        return {"kind": kind, "step": step}
    level = field(action, "level", where)
    if level not in LEVELS:
        raise BadInput(f"{where}.level = {json.dumps(level)} is neither memory nor disk")
    return {"kind": kind, "step": step, "level": level}


def check_plan(raw):
    """The plan with every key this script reads checked and normalised; raises BadInput."""
    where = "the plan"
    plan = {"steps": number(field(raw, "steps", where), "steps", minimum=1, integer=True),
            "schedule": str(field(raw, "schedule", where)),
            "kind": field(raw, "kind", where),
            "snapshots": number(field(raw, "snapshots", where), "snapshots", minimum=0)}
    if plan["kind"] not in KINDS:
        raise BadInput(f"kind = {json.dumps(plan['kind'])} is none of {', '.join(KINDS)}")
    for key in ("memory_snapshots", "disk_snapshots", "all_on_disk"):
        field(raw, key, where)  # part of the contract even where null
    plan["memory_snapshots"] = optional_number(raw, "memory_snapshots", "plan", minimum=0)
    plan["disk_snapshots"] = optional_number(raw, "disk_snapshots", "plan", minimum=0)
    plan["all_on_disk"] = bool(raw["all_on_disk"])

    chosen = field(raw, "chosen", where)
    plan["chosen"] = {
        "snapshots": number(field(chosen, "snapshots", "chosen"), "chosen.snapshots", minimum=1),
        "ratio": number(field(chosen, "ratio", "chosen"), "chosen.ratio", minimum=0),
        "disk_snapshots": optional_number(chosen, "disk_snapshots", "chosen", minimum=0),
        "time_ratio": optional_number(chosen, "time_ratio", "chosen", minimum=0),
    }
    if plan["kind"] == "two-level":
        for key in ("disk_snapshots", "time_ratio"):
            if plan["chosen"][key] is None:
                raise BadInput(f"chosen has no '{key}', which a two-level plan needs")

    tradeoff = field(raw, "tradeoff", where)
    plan["memory_curve"] = pairs(field(tradeoff, "memory", "tradeoff"), "tradeoff.memory",
                                 x_minimum=1)
    plan["two_level_curve"] = None
    if tradeoff.get("two_level") is not None:
        plan["two_level_curve"] = pairs(tradeoff["two_level"], "tradeoff.two_level", x_minimum=0)
        plan["two_level_memory"] = number(
            field(tradeoff, "two_level_memory_snapshots", "tradeoff"),
            "tradeoff.two_level_memory_snapshots", minimum=0, integer=True)

    plan["actions"] = None
    if raw.get("actions") is not None:
        if not isinstance(raw["actions"], list):
            raise BadInput("actions is not a list")
        checked = [check_action(a, i, plan["steps"]) for i, a in enumerate(raw["actions"])]
        # Keep the position in the stream: the x axis is the action number as the tool lists it.
        plan["actions"] = [(i, a) for i, a in enumerate(checked) if a is not None]
    return plan


# --- panel A: the schedule ---------------------------------------------------------------------

def split_advances(actions):
    """(first-sweep segments, recomputation segments): an advance belongs to the first sweep
    when it reaches a step that no earlier action reached."""
    first, again = [], []
    reached = 0
    for i, a in actions:
        if a["kind"] != "advance":
            continue
        segment = [(i, a["from"]), (i, a["to"])]
        (first if a["to"] > reached else again).append(segment)
        reached = max(reached, a["to"])
    return first, again


def size_for(count):
    """Line width and marker size: bold for a handful of actions, thin for a thousand."""
    if count <= 150:
        return 1.6, 5.0
    if count <= 600:
        return 1.1, 3.0
    return 0.8, 2.0


def counted(n, word):
    return f"{n:,g} {word}" + ("" if n == 1 else "s")


def schedule_title(plan):
    if plan["memory_snapshots"] is not None and plan["disk_snapshots"] is not None:
        budget = (f"{plan['memory_snapshots']:g} in memory + {plan['disk_snapshots']:g} "
                  f"on disk")
    else:
        where = " (all on disk)" if plan["all_on_disk"] else ""
        budget = counted(plan["snapshots"], "snapshot") + where
    return f"schedule {plan['schedule']}\nl = {counted(plan['steps'], 'step')}, {budget}"


def integer_ticks(axis):
    """Ticks at round whole numbers: actions, steps and snapshots are counted, and a tiny
    schedule should not get ticks at 0.25."""
    axis.set_major_locator(ticker.MaxNLocator(integer=True, steps=[1, 2, 5, 10]))


def plot_schedule(ax, plan):
    """Draws the action stream; returns the legend entries, placed once the layout is final."""
    actions = plan["actions"]
    width, marker = size_for(len(actions))
    first, again = split_advances(actions)
    # Lines above markers: the advances and reverses are the story, stores and restores mark
    # where it turns, and at l = 200 the markers would otherwise hide every line.
    ax.add_collection(LineCollection(again, colors=RECOMPUTE, linewidths=width, zorder=3))
    ax.add_collection(LineCollection(first, colors=FIRST_SWEEP, linewidths=width, zorder=4))
    reverses = [[(i, a["step"] + 1), (i, a["step"])] for i, a in actions if a["kind"] == "reverse"]
    ax.add_collection(LineCollection(reverses, colors=REVERSE, linewidths=width * 2, zorder=5))

    lines = ((first, FIRST_SWEEP, "advance, first sweep"),
             (again, RECOMPUTE, "advance, recomputation"),
             (reverses, REVERSE, "reverse step (adjoint)"))
    legend = [Line2D([], [], color=colour, lw=2, label=label)
              for segments, colour, label in lines if segments]
    for kind, fill in (("store", True), ("restore", False)):
        for level in LEVELS:
            points = [(i, a["step"]) for i, a in actions
                      if a["kind"] == kind and a["level"] == level]
            if not points:
                continue
            xs, ys = zip(*points)
            style = dict(marker="o" if fill else "D", ms=marker, ls="none",
                         mec=LEVEL_COLOUR[level], mew=0.8,
                         mfc=LEVEL_COLOUR[level] if fill else "white")
            ax.plot(xs, ys, zorder=2, **style)
            legend.append(Line2D([], [], label=f"{kind} ({level})", **{**style, "ms": 6}))

    last = max(i for i, _ in actions) if actions else 0
    l = plan["steps"]
    ax.set_xlim(-0.01 * last - 1, last * 1.01 + 1)
    ax.set_ylim(-0.02 * l - 0.5, l * 1.02 + 0.5)
    integer_ticks(ax.xaxis)
    integer_ticks(ax.yaxis)
    ax.set_xlabel("action number (order of the schedule)")
    ax.set_ylabel("step index")
    ax.set_title(schedule_title(plan), fontsize=10)
    ax.grid(True, alpha=0.25)
    return legend


# --- panel B: the trade-off --------------------------------------------------------------------

def readable_log_axis(axis, low, high):
    """Ticks a reader can name: 1, 2, 5, 10, … over a short range, powers of ten over a long one;
    plain numbers below 10^5."""
    decades = math.log10(high / low)
    subs = (1.0, 2.0, 3.0, 5.0) if decades <= 1.5 else (1.0, 2.0, 5.0) if decades <= 3 else (1.0,)
    axis.set_major_locator(ticker.LogLocator(base=10, subs=subs))
    if high < 1e5:
        axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:,g}"))
    axis.set_minor_formatter(ticker.NullFormatter())


def log_scale_if_wide(ax, which, values, decades):
    """A log scale on axis `which` ("x" or "y") when its positive values span more than
    `decades` (c = 1 against c = 1000, or ratio 500 against 2, would flatten a linear plot);
    whether it set one."""
    positive = [v for v in values if v > 0]
    if not positive or max(positive) <= min(positive) * 10 ** decades:
        return False
    (ax.set_xscale if which == "x" else ax.set_yscale)("log")
    readable_log_axis(ax.xaxis if which == "x" else ax.yaxis, min(positive), max(positive))
    return True


def rounded(value):
    """'1.98' or '≈ 2' style: an equals sign only where the printed value is exact."""
    text = f"{value:.4g}"
    return ("= " if float(text) == value else "≈ ") + text


def chosen_point(plan):
    """(x, y, text) of the chosen plan on the trade-off axes."""
    chosen = plan["chosen"]
    if plan["two_level_curve"] is not None and chosen["disk_snapshots"] is not None:
        k, d = plan["two_level_memory"], chosen["disk_snapshots"]
        return (k + d, chosen["time_ratio"],
                f"chosen: K = {k:g} in memory + D = {d:g} on disk\n"
                f"time {chosen['time_ratio']:.3g} forward runs, (l + p)/l = {chosen['ratio']:.3g}")
    return (chosen["snapshots"], chosen["ratio"],
            f"chosen: c = {chosen['snapshots']:g}, {chosen['ratio']:.3g} forward runs")


def drawn_points(ax, per_segment=24):
    """Display coordinates of what the axes show: the markers, and points along every line and
    line collection, so that a legend or label can be tested against the curves and not only
    against their vertices."""
    polylines, markers = [], []
    for line in ax.lines:
        xy = line.get_transform().transform(np.asarray(line.get_xydata(), dtype=float))
        (markers if line.get_linestyle() in ("None", "none", "", " ") else polylines).append(xy)
    for collection in ax.collections:
        transform = collection.get_transform()
        polylines += [transform.transform(np.asarray(seg, dtype=float))
                      for seg in collection.get_segments()]
    chunks = list(markers)
    t = np.linspace(0, 1, per_segment)[:, None, None]
    for xy in polylines:
        chunks.append((xy[:-1] * (1 - t) + xy[1:] * t).reshape(-1, 2) if len(xy) > 1 else xy)
    points = np.concatenate(chunks) if chunks else np.empty((0, 2))
    return points[np.isfinite(points).all(axis=1)]


def covered(box, points):
    return int(((points[:, 0] >= box.x0) & (points[:, 0] <= box.x1)
                & (points[:, 1] >= box.y0) & (points[:, 1] <= box.y1)).sum())


# Legend corners, tried in order. Upper right first: revolve's reverse steps fall from the top
# left to the bottom right with all recomputation below them, and the trade-off curves fall from
# the top left towards the store-all line, so that corner is usually empty.
LEGEND_PLACES = ("upper right", "lower left", "center right", "upper center", "lower right",
                 "upper left", "center left", "lower center")


def place_legend(ax, handles):
    """The legend in the first corner where it covers nothing drawn, else where it covers least;
    call after the layout is final, since the test is in display coordinates."""
    renderer = ax.figure.canvas.get_renderer()
    points = drawn_points(ax)
    best = None
    for place in LEGEND_PLACES:
        legend = ax.legend(handles=handles, loc=place, fontsize=8, framealpha=0.9)
        cost = covered(legend.get_window_extent(renderer), points)
        if cost == 0:
            return
        if best is None or cost < best[0]:
            best = (cost, place)
    ax.legend(handles=handles, loc=best[1], fontsize=8, framealpha=0.9)


def label_cost(box, points, legend_box, axes_box):
    """How badly a label box would sit: curve points it covers, overlap with the legend, and
    (worst) any part outside the axes."""
    cost = covered(box, points)
    if legend_box is not None and box.overlaps(legend_box):
        cost += 1000
    if not (axes_box.x0 <= box.x0 and box.x1 <= axes_box.x1
            and axes_box.y0 <= box.y0 and box.y1 <= axes_box.y1):
        cost += 100000
    return cost


# Directions of the label from the chosen point, tried in order at growing distances: above right
# first (a falling curve leaves that corner empty), then below left (between the curve and the
# store-all line), then the others.
LABEL_DIRECTIONS = [(1, 1), (-1, -1), (-1, 1), (1, -1), (0, 1.4), (0, -1.4), (1.4, 0), (-1.4, 0)]
LABEL_DISTANCES = (25, 50, 80)  # points
LABEL_OFFSETS = [(dx * d, dy * d) for d in LABEL_DISTANCES for dx, dy in LABEL_DIRECTIONS]


def annotate_chosen(ax, x, y, text):
    """Label the chosen point where the label covers no curve and no legend and stays inside
    the axes; call after the layout is final, since the test is in display coordinates."""
    renderer = ax.figure.canvas.get_renderer()
    points = drawn_points(ax)
    legend = ax.get_legend()
    legend_box = legend.get_window_extent(renderer) if legend else None
    axes_box = ax.get_window_extent(renderer)
    best = None
    for dx, dy in LABEL_OFFSETS:
        label = ax.annotate(
            text, (x, y), xytext=(dx, dy), textcoords="offset points", fontsize=9,
            ha="left" if dx > 0 else "right" if dx < 0 else "center",
            va="bottom" if dy > 0 else "top" if dy < 0 else "center",
            bbox=dict(boxstyle="round,pad=0.3", fc="white", ec=CHOSEN, alpha=0.9),
            arrowprops=dict(arrowstyle="->", color=CHOSEN, lw=1), zorder=6)
        # The text alone (Annotation's own extent includes the arrow), padded for the box; the
        # text's transform is only set by update_positions, which drawing would call.
        label.update_positions(renderer)
        box = Text.get_window_extent(label, renderer).padded(10)
        cost = label_cost(box, points, legend_box, axes_box)
        if best is None or cost < best[0]:
            if best is not None:
                best[1].remove()
            best = (cost, label)
        else:
            label.remove()
        if cost == 0:
            break


def plot_tradeoff(ax, plan):
    """Draws the curves; returns (x, y, text) of the chosen plan, labelled once the layout and
    the legend are final."""
    l = plan["steps"]
    cs, ratios = zip(*plan["memory_curve"])
    ax.plot(cs, ratios, "o-", color=MEMORY_CURVE, lw=1.5, ms=3.5,
            label="memory only: revolve, fewest forward steps")
    xs, ys = list(cs), list(ratios)
    if plan["two_level_curve"] is not None:
        k = plan["two_level_memory"]
        ds, times = zip(*plan["two_level_curve"])
        x2 = [k + d for d in ds]
        ax.plot(x2, times, "s--", color=TWO_LEVEL_CURVE, lw=1.3, ms=3.5,
                label=f"K = {k} in memory + D on disk, at x = K + D\n(predicted time, "
                      f"adjoint and disk I/O included)")
        xs += x2
        ys += list(times)
    store_all = (2 * l - 1) / l
    ax.axhline(store_all, color="0.35", ls=":", lw=1.3,
               label=f"store-all: (2l − 1)/l {rounded(store_all)}")
    x, y, text = chosen_point(plan)
    ax.plot([x], [y], "*", color=CHOSEN, ms=15, mec="black", mew=0.6, zorder=5,
            label="chosen plan")
    xs.append(x)
    ys += [y, store_all]

    if not log_scale_if_wide(ax, "x", xs, decades=2):
        integer_ticks(ax.xaxis)
    log_scale_if_wide(ax, "y", ys, decades=1)
    ax.set_xlabel("snapshots c" if plan["two_level_curve"] is None
                  else "snapshots c (two-level: K + D)")
    ax.set_ylabel("forward steps (l + p) / l" if plan["two_level_curve"] is None
                  else "forward steps (l + p) / l\ntwo-level: predicted time in forward runs")
    ax.set_title(f"memory–recomputation trade-off, l = {counted(l, 'step')}", fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    ax.grid(True, which="minor", alpha=0.1)
    return x, y, text


# --- the figure --------------------------------------------------------------------------------

def draw(plan, out):
    panels = 2 if plan["actions"] else 1
    fig, axes = plt.subplots(1, panels, figsize=(12 if panels == 2 else 7, FIG_HEIGHT),
                             dpi=DPI, squeeze=False)
    if panels == 2:
        schedule_legend = plot_schedule(axes[0][0], plan)
    tradeoff = axes[0][-1]
    chosen = plot_tradeoff(tradeoff, plan)
    fig.tight_layout()
    # Legends and the label go where they cover nothing, which needs the final layout.
    if panels == 2:
        place_legend(axes[0][0], schedule_legend)
    place_legend(tradeoff, tradeoff.get_legend_handles_labels()[0])
    annotate_chosen(tradeoff, *chosen)
    fig.savefig(out, dpi=DPI)
    plt.close(fig)


def main(argv):
    if len(argv) != 3:
        print(f"usage: {PROGRAM}.py PLAN.json OUT.png", file=sys.stderr)
        return EXIT_BAD_INPUT
    plan_path, out = argv[1], argv[2]
    try:
        plan = check_plan(load_plan(plan_path))
    except BadInput as e:
        print(f"{PROGRAM}: {plan_path}: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        draw(plan, out)
    except OSError as e:
        print(f"{PROGRAM}: cannot write {out}: {e.strerror or e}", file=sys.stderr)
        return EXIT_WRITE_FAILED
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
