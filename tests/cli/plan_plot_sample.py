#!/usr/bin/python3
"""Sample plan JSON for scripts/plot_plan.py, written without the C++ tool (tests and previews).

    plan_plot_sample.py revolve 30 4 out.json            # l = 30 steps, c = 4 snapshots
    plan_plot_sample.py revolve 1e6 20 out.json          # l > 200: trade-off only, no actions
    plan_plot_sample.py store-all 50 out.json
    plan_plot_sample.py two-level 200 4 6 out.json       # K = 4 memory + D = 6 disk snapshots

The action streams follow the conventions of rewind/schedule/action.hpp:
  revolve    the classic binomial recursion of Griewank & Walther (the split rule of
             rewind/schedule/revolve_schedule.hpp); its advance count is checked against the
             closed form p(l, c) = r·l − β(c + 1, r − 1) before anything is written.
  store-all  store y_0 … y_{l−1} on the way up, then restore them one by one.
  two-level  the revolve stream for c = K + D with slots ≥ K on disk, the outer (rarely read)
             snapshots given the disk slots. This is a picture of the level markers, not the
             optimal two-level plan of rewind/schedule/multilevel_schedule.hpp.
The two-level trade-off curve is, for several D, the least predicted time of that stream with at
most D disk slots in use (a plan may leave slots empty), with the cost model below; the numbers
are only meant to look like the real ones.
"""
import argparse
import json
import math
import sys

ACTIONS_MAX_STEPS = 200   # the C++ side sends actions only for small l
ADJOINT_COST = 1.5        # adjoint part of a reverse step, in forward steps
DISK_WRITE = 0.5          # one disk store, in forward steps
DISK_READ = 0.5           # one disk restore, in forward steps


def beta(c, r):
    return math.comb(c + r, c) if r >= 0 else 0


def repetitions(l, c):
    """r(l, c): the smallest r with β(c, r) ≥ l, by doubling then bisection (c = 1 needs
    r = l − 1, too many to count up to for l = 10^6)."""
    high = 1
    while beta(c, high) < l:
        high *= 2
    low = 0
    while low < high:
        mid = (low + high) // 2
        if beta(c, mid) >= l:
            high = mid
        else:
            low = mid + 1
    return low


def revolve_advances(l, c):
    """p(l, c), the first sweep's l − 1 advances included."""
    r = repetitions(l, c)
    return r * l - beta(c + 1, r - 1)


def split(n, c):
    """Steps to advance from y_s to reverse a range of n ≥ 2 steps with c snapshots (y_s's in)."""
    r = repetitions(n, c)
    if n >= beta(c, r - 1) + beta(c - 1, r - 1):
        return beta(c, r - 1)
    return n - beta(c - 1, r - 1)


def revolve_actions(l, c, slot_of_depth, level_of_slot):
    """The revolve stream; the snapshot at stack depth d lives in slot_of_depth(d)."""
    actions = []

    def store(step, depth):
        slot = slot_of_depth(depth)
        actions.append({"kind": "store", "step": step, "slot": slot, "level": level_of_slot(slot)})

    def restore(step, depth):
        slot = slot_of_depth(depth)
        actions.append({"kind": "restore", "step": step, "slot": slot,
                        "level": level_of_slot(slot)})

    def free(depth):
        actions.append({"kind": "free", "slot": slot_of_depth(depth)})

    def reverse_range(start, end, snapshots, depth):
        # y_start is the current state and sits in the slot of `depth`. The left parts are a loop
        # (their recursion would be l deep for c = 1); the right parts recurse at most c deep.
        while end - start > 1:
            mid = start + split(end - start, snapshots)
            actions.append({"kind": "advance", "from": start, "to": mid})
            if mid < end - 1:
                store(mid, depth + 1)
                reverse_range(mid, end, snapshots - 1, depth + 1)
                free(depth + 1)
            else:  # a one-step right part is reversed at once, without a snapshot
                actions.append({"kind": "reverse", "step": mid})
            restore(start, depth)
            end = mid
        actions.append({"kind": "reverse", "step": start})

    store(0, 0)
    reverse_range(0, l, c, 0)
    free(0)
    return actions


def store_all_actions(l):
    actions = [{"kind": "store", "step": 0, "slot": 0, "level": "memory"}]
    for step in range(1, l):
        actions.append({"kind": "advance", "from": step - 1, "to": step})
        actions.append({"kind": "store", "step": step, "slot": step, "level": "memory"})
    for step in range(l - 1, -1, -1):
        if step < l - 1:
            actions.append({"kind": "restore", "step": step, "slot": step, "level": "memory"})
        actions.append({"kind": "reverse", "step": step})
        actions.append({"kind": "free", "slot": step})
    return actions


def two_level_actions(l, memory, disk):
    # Depths 0 … D−1 (y_0 and the first splits, read least often per snapshot) go to the disk
    # slots K … K+D−1, deeper ones to the memory slots 0 … K−1.
    def slot_of_depth(depth):
        return memory + depth if depth < disk else depth - disk

    def level_of_slot(slot):
        return "disk" if slot >= memory else "memory"

    return revolve_actions(l, memory + disk, slot_of_depth, level_of_slot)


def count(actions, kind, level=None):
    return sum(1 for a in actions if a["kind"] == kind and (level is None or a["level"] == level))


def advanced_steps(actions):
    return sum(a["to"] - a["from"] for a in actions if a["kind"] == "advance")


def predicted_time_ratio(l, actions):
    """(advances + l·(1 + F) + disk writes + disk reads) / l, memory copies taken as free."""
    time = (advanced_steps(actions) + l * (1 + ADJOINT_COST)
            + DISK_WRITE * count(actions, "store", "disk")
            + DISK_READ * count(actions, "restore", "disk"))
    return time / l


def memory_tradeoff(l, points=40):
    """[c, (l + p)/l] for c spread evenly on a log scale over 1 … l."""
    cs = sorted({max(1, round(l ** (i / (points - 1)))) for i in range(points)})
    return [[c, (l + revolve_advances(l, c)) / l] for c in cs]


def base_plan(l, name, kind, snapshots):
    return {"steps": l, "schedule": name, "kind": kind, "snapshots": snapshots,
            "memory_snapshots": None, "disk_snapshots": None, "all_on_disk": False,
            "tradeoff": {"memory": memory_tradeoff(l)}}


def revolve_plan(l, c, with_actions):
    plan = base_plan(l, f"revolve(c = {c})", "revolve", c)
    p = revolve_advances(l, c)
    plan["chosen"] = {"snapshots": c, "ratio": (l + p) / l, "disk_snapshots": None,
                      "time_ratio": (p + l * (1 + ADJOINT_COST)) / l}
    if with_actions:
        actions = revolve_actions(l, c, lambda depth: depth, lambda slot: "memory")
        if advanced_steps(actions) != p:  # the recursion must be the optimal revolve
            raise AssertionError(f"revolve l={l} c={c}: {advanced_steps(actions)} advances, "
                                 f"closed form {p}")
        plan["actions"] = actions
    return plan


def store_all_plan(l, with_actions):
    plan = base_plan(l, "store-all", "store-all", l)
    plan["chosen"] = {"snapshots": l, "ratio": (2 * l - 1) / l, "disk_snapshots": None,
                      "time_ratio": (l - 1 + l * (1 + ADJOINT_COST)) / l}
    if with_actions:
        plan["actions"] = store_all_actions(l)
    return plan


def two_level_plan(l, memory, disk, with_actions):
    plan = base_plan(l, f"two-level(memory = {memory}, disk = {disk})", "two-level", memory + disk)
    plan["memory_snapshots"], plan["disk_snapshots"] = memory, disk
    actions = two_level_actions(l, memory, disk)
    plan["chosen"] = {"snapshots": memory + disk, "ratio": (l + advanced_steps(actions)) / l,
                      "disk_snapshots": disk, "time_ratio": predicted_time_ratio(l, actions)}
    ds = sorted({0, disk} | {d for d in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128)
                             if memory + d <= l})
    times = [predicted_time_ratio(l, two_level_actions(l, memory, d)) for d in range(ds[-1] + 1)]
    best = [min(times[: d + 1]) for d in range(len(times))]
    plan["tradeoff"]["two_level"] = [[d, best[d]] for d in ds]
    plan["tradeoff"]["two_level_memory_snapshots"] = memory
    if with_actions:
        plan["actions"] = actions
    return plan


def steps_arg(text):
    value = float(text)
    if value < 1 or value != int(value):
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number of steps >= 1")
    return int(value)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-actions", action="store_true",
                        help="leave out the action stream even for l <= 200")
    kinds = parser.add_subparsers(dest="kind", required=True)
    revolve = kinds.add_parser("revolve")
    revolve.add_argument("steps", type=steps_arg)
    revolve.add_argument("snapshots", type=int)
    store_all = kinds.add_parser("store-all")
    store_all.add_argument("steps", type=steps_arg)
    two_level = kinds.add_parser("two-level")
    two_level.add_argument("steps", type=steps_arg)
    two_level.add_argument("memory", type=int)
    two_level.add_argument("disk", type=int)
    for sub in (revolve, store_all, two_level):
        sub.add_argument("out", help="JSON file to write")
    args = parser.parse_args()
    with_actions = args.steps <= ACTIONS_MAX_STEPS and not args.no_actions
    if args.kind == "revolve":
        plan = revolve_plan(args.steps, args.snapshots, with_actions)
    elif args.kind == "store-all":
        plan = store_all_plan(args.steps, with_actions)
    else:
        plan = two_level_plan(args.steps, args.memory, args.disk, with_actions)
    with open(args.out, "w") as f:
        json.dump(plan, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
