#!/usr/bin/env python3
"""rewind's online schedule against Stumm & Walther's online_r2 followed by online_r3.

    bench/online_stumm_walther_compare.py [REWIND = build/src/cli/rewind [MAX_C = 20 [STRIDE = 8]]]
    bench/online_stumm_walther_compare.py --below-both [MAX_C = 5]

P. Stumm, A. Walther, "New algorithms for optimal online checkpointing", SIAM J. Sci. Comput.
32(2):836-854, 2010. The placement rules below restate the behaviour of the one public
implementation (revolve 2, classes Online_r2 and Online_r3), checked against the paper's theorem
for online_r2 (optimal up to beta(c, 2)); no code of it is used. Model and cost are
bench/online_placement_search.py's (rewind's): after the driver has computed y_{n+1}, the
schedule decides about y_n, giving the set S_n (at most c steps, 0 always held); a run that
stops at l reverses from S_{l-2} with y_{l-1} current, costing cost(). Their "takeshot at
capo = n" is the decision about y_n; steps they advance over (2 or 3 at a time) are steps
without a decision, which keep the set. This mapping makes online_r2 exactly offline revolve
for every l <= beta(c, 2), their theorem (checked below).

online_r2 (l <= beta(c, 2)), in rounds o = c, c-1, ..., 1: o - 1 single steps, each storing the
new state, in a free slot while there is one, else in place of the oldest checkpoint stored by
a single step of the previous round; then a double step (no decision about the skipped state),
whose state replaces the newest checkpoint and stays for good. Round 1 is only its double step
and ends at beta(c, 2) - 1 with no decision. The checkpoints that stay are revolve's first sweep
for beta(c, 2) steps: 0, c + 1, 2c + 1, ... (segments c + 1, c, ..., 3).
  Assumed: the public code has separate branches for c = 2 and c = 3 which never hand over to
  online_r3. For c = 2 its branch holds the same sets as the rule above followed by online_r3
  for every l <= beta(2, 3). For c = 3 its branch holds {0, 1, 4} after step 6, which costs
  p(8, 3) + 1 at l = 8, against the theorem; the general rule (the code's branch for c >= 4) is
  used for every c.

online_r3 (beta(c, 2) < l <= beta(c, 3)): targets T_0 = 0, T_k = T_{k-1} + beta(c - k + 1, 2)
(revolve's unique first sweep for beta(c, 3) steps; T_{c-1} = beta(c, 3) - 4). A decision 3
steps after the newest checkpoint, or 1 step after it when that step is the next target. Every
decision stores the new state in place of one checkpoint: of the newest again if the last
decision replaced the newest and this one came after a single step; else of the newest
checkpoint, not a target already stored and not y_0, whose removal leaves the merged segment
within beta(s, 2) steps, s = the snapshots that segment then has (the i-th newest: s = i + 2).
A target once stored stays. The last decision is at T_{c-1}; nothing changes up to beta(c, 3).
The first rule (the newest moved again, onto a target; here once or twice for each c >= 10)
leaves the two newest checkpoints 7 steps apart, where 2 snapshots reverse at most beta(2, 2) =
6 steps with two repetitions: the runs stopping in the next 3 steps compute a step 4 times and
cost p(l, c) + 2, + 1, + 1. The public code takes that move knowingly (a note there puts it at
two advances above the minimum); the general choice there would cost one more at each of those
l (p + 3, + 2, + 2).
  Assumed: the public code keeps the segment lengths in its own bookkeeping (which does not follow
  a single-step decision) and counts candidates in a way that can skip one when a target is
  refused; the rule above uses the true positions and the first allowed candidate. A literal
  trace of the code's state machine (with the c >= 4 branch of online_r2) holds the same set at
  every step for every c = 2 ... 20, so the difference does not arise there.

rewind's numbers: `rewind plan --online --json`, field recomputed_steps, which is cost() in this
convention (p(l, c) where optimal; forward_steps = recomputed_steps + l): the default rule
(least_worst_case) at every l, never_above_dynamic (the same placement up to beta(c, 3)) at every
STRIDE-th l and at beta(c, 2), beta(c, 2) + 1 and beta(c, 3) (STRIDE = 1: every l). One process
per (l, c, rule): the run time is that of about 10^4 starts of the binary.
"""
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from math import comb

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from online_placement_search import cost, dynamic_checkpoint_sets, next_sets, p  # noqa: E402


def beta(c, r):
    return comb(c + r, c)


def stumm_walther_sets(c):
    """S_n for n = 0 ... beta(c, 3) - 2, the set held after the decision about y_n (ascending),
    and the steps n at which online_r3 moved the newest checkpoint one step onto a target."""
    b2, b3 = beta(c, 2), beta(c, 3)
    decided = {0: (0,)}
    held, movable, n = [0], [], 0
    for o in range(c, 0, -1):  # online_r2, round o
        singles = []
        for _ in range(o - 1):
            n += 1
            if len(held) == c:
                held.remove(movable.pop(0))
            held.append(n)
            singles.append(n)
            decided[n] = tuple(held)
        n += 2  # double step: no decision about y_{n-1}
        if o == 1:
            break  # online_r2 ends here, at beta(c, 2) - 1
        held[-1] = n  # in place of the newest (the last single), stays
        singles.pop()
        movable = singles
        decided[n] = tuple(held)
    assert n == b2 - 1
    targets = [0]
    for k in range(1, c):
        targets.append(targets[-1] + beta(c - k + 1, 2))
    assert targets[-1] == b3 - 4
    newest_first = held[::-1]  # online_r3 from online_r2's checkpoints, none of them fixed
    stored_targets, k, moved_newest, n, moved_onto = {0}, 1, False, newest_first[0], []
    while True:
        step = 1 if k < c and n + 1 == targets[k] else 3
        n += step
        if n > b3 - 4:
            break
        drop = 0 if step == 1 and moved_newest else None
        if drop == 0:
            moved_onto.append(n)
        else:
            for i in range(c - 1):  # never the last one, y_0
                above = newest_first[i - 1] if i else n
                if (newest_first[i] not in stored_targets
                        and above - newest_first[i + 1] <= beta(i + 2, 2)):
                    drop = i
                    break
            assert drop is not None, (c, n, newest_first)
        newest_first = [n] + newest_first[:drop] + newest_first[drop + 1:]
        moved_newest = drop == 0
        if k < c and n == targets[k]:
            stored_targets.add(n)
            k += 1
        decided[n] = tuple(newest_first[::-1])
    assert k == c and decided[b3 - 4] == tuple(targets)
    sets = []
    for m in range(b3 - 1):
        sets.append(decided.get(m, sets[-1] if sets else None))
    return sets, moved_onto


def segments(held, l, c):
    """(steps, snapshots) of every segment the closed form reverses for a run stopping at l."""
    k = len(held) - 1
    return [(held[i + 1] - held[i], c - i) for i in range(k)] + [(l - 1 - held[k], c - k)]


def validate(c, sets, moved_onto):
    """(a) optimal up to beta(c, 2); (b) legal moves, at most c, 0 held; (c) offline revolve
    exactly at beta(c, 3), and every step computed at most 3 times (first sweep, then each segment
    reversed with at most 2 repetitions) for l <= beta(c, 3) except while the set holds a
    target moved onto from the step before (two checkpoints 7 steps apart with 2 snapshots for
    that segment, where beta(2, 2) = 6): returns the l where a step is computed 4 times."""
    b2, b3 = beta(c, 2), beta(c, 3)
    for n in range(1, len(sets)):
        assert sets[n] in next_sets(sets[n - 1], n, c), (c, n, sets[n - 1], sets[n])
        assert sets[n][0] == 0 and len(sets[n]) <= c and list(sets[n]) == sorted(set(sets[n]))
    for l in range(2, b2 + 1):
        assert cost(sets[l - 2], l, c) == p(l, c), ("online_r2 not optimal", c, l)
    assert cost(sets[b3 - 2], b3, c) == p(b3, c)
    four = [l for l in range(2, b3 + 1)
            if any(m > beta(s, 2) for m, s in segments(sets[l - 2], l, c))]
    windows = [l for n in moved_onto for l in (n + 2, n + 3, n + 4)]  # to the next decision
    assert four == windows, ("repetition > 3", c, four, moved_onto)
    assert [cost(sets[l - 2], l, c) - p(l, c) for l in four] == [2, 1, 1] * len(moved_onto)
    return [f"{n + 2}-{n + 4}" for n in moved_onto]


def rewind_costs(rewind, c, ls, rule):
    def one(l):
        report = json.loads(subprocess.run(
            [rewind, "plan", "--online", "--steps", str(l), "--snapshots", str(c),
             "--online-rule", rule, "--json"], capture_output=True, text=True, check=True).stdout)
        assert report["offline_recomputed_steps"] == p(l, c), (c, l, report)
        assert report["forward_steps"] == report["recomputed_steps"] + l, (c, l, report)
        return report["recomputed_steps"]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return dict(zip(ls, pool.map(one, ls)))


def worst(values, ls, c):
    ratio, at = max((Fraction(values[l], p(l, c)), -l) for l in ls)
    return f"{float(ratio):.4f} (l = {-at})"


def compared(rw, sw, ls):
    above = [(rw[l] - sw[l], -l) for l in ls if rw[l] > sw[l]]
    below = [(sw[l] - rw[l], -l) for l in ls if rw[l] < sw[l]]
    cell = lambda xs, sign: (f"{len(xs)} / {len(ls)} ({sign}{max(xs)[0]} at l = {-max(xs)[1]})"
                             if xs else f"0 / {len(ls)}")
    return cell(above, "+"), cell(below, "-")


def least_worst_below_both(c):
    """The least possible worst ratio to p(l, c) over l <= beta(c, 3) of an online placement that
    never costs more than online_r3 nor Wang et al.'s checkpoints (both reversed by the same
    closed form) at any l <= beta(c, 3), by exhaustive search over the sets held at each step (as
    online_placement_search.py searches); (None, l) when no placement can stay below both at l."""
    b3 = beta(c, 3)
    sw, _ = stumm_walther_sets(c)
    dynamic = dynamic_checkpoint_sets(c, b3)
    best = {(0,): Fraction(0)}
    for n in range(1, b3 + 1):
        l = n + 1 if n < b3 else b3  # the last round prices the run ending at beta(c, 3) only
        held_at = n - 1 if n < b3 else b3 - 2
        bound = min(cost(dynamic[held_at], l, c), cost(sw[held_at], l, c))
        following = {}
        for held, worst in best.items():
            advances = cost(held, l, c)
            if advances > bound:
                continue
            w = max(worst, Fraction(advances, p(l, c)))
            for choice in (next_sets(held, n, c) if n < b3 else [held]):
                if choice not in following or w < following[choice]:
                    following[choice] = w
        best = following
        if not best:
            return None, l
    return min(best.values()), None


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--below-both":
        for c in range(2, int(sys.argv[2]) + 1 if len(sys.argv) > 2 else 6):
            ratio, l = least_worst_below_both(c)
            print(f"c = {c}: " + (f"least worst ratio {float(ratio):.4f} ({ratio})" if ratio
                                  else f"no online placement stays below both at l = {l}"),
                  flush=True)
        return
    rewind = sys.argv[1] if len(sys.argv) > 1 else "build/src/cli/rewind"
    max_c = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    stride = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    print("| c | β(c,2) | β(c,3) | S&W, l ≤ β(c,2) | rewind, l ≤ β(c,2) | S&W, β(c,2) < l ≤ β(c,3) "
          "| rewind, β(c,2) < l ≤ β(c,3) | rewind > S&W (most) | rewind < S&W (most) |")
    print("|---|---|---|---|---|---|---|---|---|")
    checked, nad_checked, same_rules, totals, fours = 0, 0, True, [0, 0, 0, 0, 0], []
    sw_above_wmi, rw_above_wmi = [], []  # (c, l, excess) with Wang, Moin & Iaccarino's sets
    for c in range(2, max_c + 1):
        b2, b3 = beta(c, 2), beta(c, 3)
        sets, moved_onto = stumm_walther_sets(c)
        four = validate(c, sets, moved_onto)
        checked += len(sets)
        ls = list(range(2, b3 + 1))
        sw = {l: cost(sets[l - 2], l, c) for l in ls}
        fours += [f"c = {c}: l = {', '.join(four)}"] if four else []
        rw = rewind_costs(rewind, c, ls, "least-worst-case")
        nad_ls = sorted(set(ls[::stride]) | {b2, b2 + 1, b3})
        nad = rewind_costs(rewind, c, nad_ls, "never-above-dynamic")
        same_rules &= all(nad[l] == rw[l] for l in nad_ls)
        nad_checked += len(nad_ls)
        for l in range(2, b2 + 1):
            assert rw[l] == p(l, c), ("rewind not optimal", c, l)
        wmi_sets = dynamic_checkpoint_sets(c, b3)
        wmi = {l: cost(wmi_sets[l - 2], l, c) for l in ls}
        sw_above_wmi += [(c, l, sw[l] - wmi[l]) for l in ls if sw[l] > wmi[l]]
        rw_above_wmi += [(c, l, rw[l] - wmi[l]) for l in ls if rw[l] > wmi[l]]
        r1, r2 = ls[:b2 - 1], ls[b2 - 1:]
        above, below = compared(rw, sw, r2)
        assert all(rw[l] == sw[l] for l in r1)
        totals[0] += len(r2)
        totals[1] += sum(rw[l] > sw[l] for l in r2)
        totals[2] += sum(rw[l] < sw[l] for l in r2)
        totals[3] = max([totals[3]] + [rw[l] - sw[l] for l in r2])
        totals[4] = max([totals[4]] + [sw[l] - rw[l] for l in r2])
        print(f"| {c} | {b2} | {b3} | {worst(sw, r1, c)} | {worst(rw, r1, c)} | "
              f"{worst(sw, r2, c)} | {worst(rw, r2, c)} | {above} | {below} |", flush=True)
    print(f"\nbeta(c, 2) < l <= beta(c, 3), c = 2 ... {max_c}: {totals[0]} (l, c); rewind does "
          f"more advances than S&W at {totals[1]} (at most {totals[3]} more), fewer at "
          f"{totals[2]} (at most {totals[4]} fewer). Both are p(l, c) at every l <= beta(c, 2).")
    first = ", ".join(f"c = {c}, l = {l}: +{e}" for c, l, e in sw_above_wmi[:4])
    print(f"Against Wang, Moin & Iaccarino's dynamic checkpointing (the same cost) at every "
          f"l <= beta(c, 3): S&W does more advances at {len(sw_above_wmi)} (l, c) (at most "
          f"+{max([e for _, _, e in sw_above_wmi], default=0)}; first: {first or 'none'}), "
          f"rewind at {len(rw_above_wmi)}.")
    every = "every l" if stride == 1 else f"every {stride}th l and the region ends"
    print(f"never_above_dynamic: {'the same' if same_rules else 'NOT the same'} advances as "
          f"least_worst_case at all {nad_checked} (l, c) queried ({every}).")
    print(f"Validated, S&W at every step n <= beta(c, 3) - 2 ({checked} sets): legal moves, at "
          "most c snapshots, y_0 held; p(l, c) for every l <= beta(c, 2) and at l = beta(c, 3); "
          "every step computed at most 3 times for l <= beta(c, 3), except in the 3 runs after "
          "each move of the newest onto a target (p + 2, + 1, + 1): "
          + ("; ".join(fours) or "none") + ". rewind: p(l, c) for every l <= beta(c, 2).")


if __name__ == "__main__":
    main()
