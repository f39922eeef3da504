#!/usr/bin/env python3
"""The least worst case any online snapshot placement can reach, by exhaustive search.

    bench/online_placement_search.py [max_c = 4]
    bench/online_placement_search.py --never-above-dynamic [max_c = 4 [REWIND]]

Model (rewind/schedule/online_placement.hpp, Stumm & Walther's): the driver computes y_{n+1}
before it asks about y_n, so the schedule decides about y_n knowing that the run goes on (l >= n+2).
It holds a set S_n of at most c snapshot steps (0 always among them), obtained from S_{n-1} by
dropping snapshots and possibly adding n. A run that stops at l = n + 1 never asked about y_n: it
reverses from S_{n-1} with y_n current, costing
    (l - 1) + sum_i p(t_{i+1} - t_i, c - i) + p(l - 1 - t_k, c - k)
advances, p = revolve's minimum. An online placement is one sequence S_0, S_1, ... (the run's end
is the only unknown), so the least possible worst case over l <= L is a minimax path, found by
dynamic programming over the sets held at each step. Printed: the least possible most extra
advances and worst ratio to p(l, c) over l <= beta(c, 2), and the least possible worst ratio over
l <= beta(c, 3). rewind's placement is optimal up to beta(c, 2) and reaches the second value for
c = 2, 3, 4 (bench/results/online_checkpointing.md) — the least worst case over l <= beta(c, 3)
of any online placement, and so also of any that is optimal up to beta(c, 2).

--never-above-dynamic: the least possible worst ratio over beta(c, 3) < l <= beta(c, 4) of a
placement that never does more than Wang, Moin & Iaccarino's dynamic checkpointing (their
checkpoints reversed by the same closed form, a stricter bound than their own count) at any
l <= beta(c, 4) — to compare with rwd::OnlineRule's two rules, which each give up one of the two
(their worst ratios in the same region are added as columns when the rewind binary is given).
"""
import json
import subprocess
import sys
from fractions import Fraction
from functools import lru_cache
from math import comb


@lru_cache(maxsize=None)
def p(m, c):
    if m <= 1:
        return 0
    r = 0
    while comb(c + r, c) < m:
        r += 1
    return r * m - comb(c + r, c + 1)  # r*m - beta(c + 1, r - 1)


def cost(held, l, c):
    k = len(held) - 1
    total = l - 1 + p(l - 1 - held[k], c - k)
    for i in range(k):
        total += p(held[i + 1] - held[i], c - i)
    return total


def next_sets(held, n, c):
    """The sets a placement can hold after deciding about y_n: the same, or y_n added (in a free
    slot, or in place of one snapshot other than y_0's)."""
    if len(held) < c:
        return [held, held + (n,)]
    return [held] + [held[:j] + held[j + 1:] + (n,) for j in range(1, len(held))]


def least_worst(c, first_l, max_l, measure):
    """The least possible worst measure over first_l <= l <= max_l (runs ending earlier count
    for nothing, but the placement must still have lived through them)."""
    best = {(0,): Fraction(0)}  # S_0 = {0}: the run ending at l = 1 needs nothing
    for n in range(1, max_l):
        following = {}
        for held, worst in best.items():
            l = n + 1  # reversed from S_{n-1} = held, y_n current
            w = max(worst, measure(cost(held, l, c), p(l, c))) if l >= first_l else worst
            for choice in next_sets(held, n, c):
                if choice not in following or w < following[choice]:
                    following[choice] = w
        best = following
    return min(best.values())


def dynamic_checkpoint_sets(c, max_n):
    """Wang, Moin & Iaccarino's checkpoints (rwd::detail::DynamicCheckpoints) after the decision
    about y_n, n = 0 ... max_n: levels, y_0's infinite; the entry of t + 1 at level 0 while at most
    c entries are held, else in place of the dispensable entry with the largest step (a later one
    has a higher level), else the entry of t moves up one level to t + 1."""
    entries = [[0, float("inf")]]
    sets = []
    for _ in range(max_n + 1):
        t = entries[-1][0]
        if len(entries) <= c:
            entries.append([t + 1, 0])
        else:
            highest_later, dropped = -1, None
            for j in range(len(entries) - 1, -1, -1):
                if entries[j][1] < highest_later:
                    dropped = j
                    break
                highest_later = max(highest_later, entries[j][1])
            if dropped is not None:
                del entries[dropped]
                entries.append([t + 1, 0])
            else:
                entries[-1] = [t + 1, entries[-1][1] + 1]
        sets.append(tuple(e[0] for e in entries[:-1]))
    return sets


def least_worst_never_above_dynamic(c, first_l, max_l):
    """The least possible worst ratio to p(l, c) over first_l <= l <= max_l of a placement that
    never costs more than Wang et al.'s checkpoints reversed the same way (their own count is
    never lower), at any l <= max_l; None when no placement can."""
    dynamic = dynamic_checkpoint_sets(c, max_l)
    best = {(0,): Fraction(0)}
    for n in range(1, max_l):
        following = {}
        l = n + 1
        bound = cost(dynamic[n - 1], l, c)
        for held, worst in best.items():
            advances = cost(held, l, c)
            if advances > bound:
                continue
            w = max(worst, Fraction(advances, p(l, c))) if l >= first_l else worst
            for choice in next_sets(held, n, c):
                if choice not in following or w < following[choice]:
                    following[choice] = w
        best = following
        if not best:
            return None
    return min(best.values())


def rule_worst(rewind, c, rule, first_l, max_l):
    """The worst ratio to p(l, c) over first_l <= l <= max_l of rewind's online schedule with
    `rule`, from `rewind plan --online --json` (the validated action stream)."""
    worst = Fraction(0)
    for l in range(first_l, max_l + 1):
        report = json.loads(subprocess.run(
            [rewind, "plan", "--online", "--steps", str(l), "--snapshots", str(c),
             "--online-rule", rule, "--json"], capture_output=True, text=True, check=True).stdout)
        worst = max(worst, Fraction(report["recomputed_steps"], p(l, c)))
    return worst


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--never-above-dynamic":
        max_c = int(sys.argv[2]) if len(sys.argv) > 2 else 4
        rewind = sys.argv[3] if len(sys.argv) > 3 else None
        rules = ("least-worst-case", "never-above-dynamic") if rewind else ()
        print("| c | least worst ratio over beta(c,3) < l <= beta(c,4), never above WMI |"
              + "".join(f" {rule} |" for rule in rules))
        print("|---|---|" + "---|" * len(rules))
        for c in range(2, max_c + 1):
            first_l, max_l = comb(c + 3, 3) + 1, comb(c + 4, 4)
            r = least_worst_never_above_dynamic(c, first_l, max_l)
            cells = [f"{float(r):.4f} ({r})" if r is not None else "none"]
            cells += [f"{float(rule_worst(rewind, c, rule, first_l, max_l)):.4f}"
                      for rule in rules]
            print(f"| {c} | " + " | ".join(cells) + " |", flush=True)
        return
    max_c = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    extra = lambda advances, optimum: Fraction(advances - optimum)
    ratio = lambda advances, optimum: Fraction(advances, optimum) if optimum else Fraction(1)
    print("| c | l <= beta(c,2): least most extra advances | least worst ratio "
          "| l <= beta(c,3): least worst ratio |")
    print("|---|---|---|---|")
    for c in range(2, max_c + 1):
        beta2, beta3 = comb(c + 2, 2), comb(c + 3, 3)
        r3 = least_worst(c, 1, beta3, ratio)
        print(f"| {c} | {least_worst(c, 1, beta2, extra)} | "
              f"{float(least_worst(c, 1, beta2, ratio)):.4f} | {float(r3):.4f} ({r3}) |",
              flush=True)


if __name__ == "__main__":
    main()
