#!/usr/bin/env python3
"""The least worst case any online snapshot placement can reach, by exhaustive search.

    bench/online_placement_search.py [max_c = 4]

Model (rewind/schedule/online_placement.hpp): at step n the schedule holds a set S_n of at most c
snapshot steps (0 always among them), obtained from S_{n-1} by dropping snapshots and possibly
adding n. A run that stops at l = n + 1 reverses from S_n with y_n current, costing
    (l - 1) + sum_i p(t_{i+1} - t_i, c - i) + p(l - 1 - t_k, c - k)
advances, p = revolve's minimum. An online placement is one sequence S_0, S_1, ... (the run's end
is the only unknown), so the least possible worst case over l <= L is a minimax path, found by
dynamic programming over the sets held at each step. Printed for l <= beta(c, 2): the least
possible most advances above p(l, c), and the least possible worst ratio to p(l, c).
Used for the table in bench/results/online_checkpointing.md.
"""
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


def least_worst(c, max_l, measure):
    best = {(0,): measure(cost((0,), 1, c), p(1, c))}
    for n in range(1, max_l):
        following = {}
        for held, worst in best.items():
            choices = [held]
            if len(held) < c:
                choices.append(held + (n,))
            else:
                choices += [held[:j] + held[j + 1:] + (n,) for j in range(1, len(held))]
            for choice in choices:
                w = max(worst, measure(cost(choice, n + 1, c), p(n + 1, c)))
                if choice not in following or w < following[choice]:
                    following[choice] = w
        best = following
    return min(best.values())


def main():
    max_c = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    extra = lambda advances, optimum: advances - optimum
    ratio = lambda advances, optimum: Fraction(advances, optimum) if optimum else Fraction(1)
    print("| c | least possible most extra advances | least possible worst ratio |")
    print("|---|---|---|")
    for c in range(2, max_c + 1):
        beta2 = comb(c + 2, 2)
        print(f"| {c} | {least_worst(c, beta2, extra)} | "
              f"{float(least_worst(c, beta2, ratio)):.4f} |", flush=True)


if __name__ == "__main__":
    main()
