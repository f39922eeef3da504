"""rewind's schedules against the PyPI package checkpoint_schedules (1.0.4) on the cases both
support: the forward steps each evaluates in all, and, for the schedules that weigh disk I/O,
the predicted time under the same costs. Used by test_checkpoint_schedules_comparison.py and,
run as a script, writes the table of bench/results/python_schedules.md:

    build/python-venv/bin/python python/tests/compare_checkpoint_schedules.py

Counting. checkpoint_schedules' Forward(n0, n1) runs steps n0 .. n1 - 1 (with write_adj_deps,
keeping what the adjoint of those steps needs, so its Reverse re-runs nothing); its forward steps
in all are the sum of n1 - n0 up to EndReverse. rewind's are ScheduleCost.forward_evaluations:
advances plus the step each reverse re-runs — the same quantity (both give l + p(l, c) for
binomial checkpointing). A disk write is a Forward with write_ics to disk, a disk read a Copy or
Move from disk; rewind's are disk_stores and disk_restores. Time, with a forward step 1, an
adjoint step ub, a disk write wd and a read rd: forward steps + ub l + wd writes + rd reads in
both (rewind.CostModel with adjoint_cost_factor = ub, which counts the step the reverse re-runs
apart: the same sum).
"""

import dataclasses
import sys
import time
import warnings

import checkpoint_schedules as cs

import rewind


@dataclasses.dataclass
class Counts:
    forward: int
    disk_writes: int = 0
    disk_reads: int = 0

    def time(self, steps, wd, rd, ub=1.0):
        return self.forward + ub * steps + wd * self.disk_writes + rd * self.disk_reads


def their_counts(schedule, steps):
    """Counts of a checkpoint_schedules schedule run for `steps` steps (online ones are told the
    length by finalize when their first open-ended Forward reaches it)."""
    counts = Counts(0)
    for action in schedule:
        if isinstance(action, cs.Forward):
            end = min(action.n1, steps)
            counts.forward += end - action.n0
            if action.write_ics and action.storage == cs.StorageType.DISK:
                counts.disk_writes += 1
            if action.n1 >= steps and schedule.max_n is None:
                schedule.finalize(steps)
        elif isinstance(action, (cs.Copy, cs.Move)) and action.from_storage == cs.StorageType.DISK:
            counts.disk_reads += 1
        elif isinstance(action, cs.EndReverse):
            return counts
    raise AssertionError("no EndReverse")


def rewind_counts(schedule):
    cost = rewind.simulate(schedule)
    return Counts(cost.forward_evaluations, cost.disk_stores, cost.disk_restores)


@dataclasses.dataclass
class Case:
    """One comparison: `theirs` and `ours` build the two schedules; objective 'forward' (both
    minimise forward steps) or 'time' (both minimise the time under wd, rd)."""

    family: str
    ours_name: str
    steps: int
    theirs: object
    ours: object
    objective: str = "forward"
    wd: float = 0.0
    rd: float = 0.0


def cases(long=False):
    """The cases; `long` adds the longer horizons of the recorded table."""
    out = []
    revolve = [(10, 3), (100, 5), (50, 2), (200, 1), (20, 19), (1000, 10)]
    if long:
        revolve += [(10000, 20), (20000, 5)]
    # hrevolve.Revolve and MixedCheckpointSchedule plan in pure Python: seconds at l = 1000.
    for l, c in revolve:
        out.append(Case(f"MultistageCheckpointSchedule({l}, {c}, 0)", f"RevolveSchedule({l}, {c})",
                        l, lambda l=l, c=c: cs.MultistageCheckpointSchedule(l, c, 0),
                        lambda l=l, c=c: rewind.RevolveSchedule(l, c)))
    for l, c in [(100, 5)] + ([(1000, 10)] if long else []):
        out.append(Case(f"Revolve({l}, {c})", f"RevolveSchedule({l}, {c})", l,
                        lambda l=l, c=c: cs.Revolve(l, c),
                        lambda l=l, c=c: rewind.RevolveSchedule(l, c)))
    multistage = [(100, 3, 5), (500, 2, 10), (1000, 4, 20)]
    if long:
        multistage += [(5000, 4, 40)]
    for l, m, d in multistage:
        out.append(Case(f"MultistageCheckpointSchedule({l}, {m}, {d})",
                        f"MultiLevelSchedule({l}, {m}, {d}), free I/O", l,
                        lambda l=l, m=m, d=d: cs.MultistageCheckpointSchedule(l, m, d),
                        lambda l=l, m=m, d=d: rewind.MultiLevelSchedule(l, m, d,
                                                                        rewind.CostModel())))
    mixed = [(10, 3), (100, 5), (200, 1)]
    if long:
        mixed += [(1000, 10), (5000, 20)]
    for l, c in mixed:
        out.append(Case(f"MixedCheckpointSchedule({l}, {c})", f"StageAwareSchedule({l}, {c}, 1)",
                        l, lambda l=l, c=c: cs.MixedCheckpointSchedule(l, c),
                        lambda l=l, c=c: rewind.StageAwareSchedule(l, c, 1)))
    out.append(Case("SingleMemoryStorageSchedule()", "StoreAllStagesSchedule(500, 1)", 500,
                    cs.SingleMemoryStorageSchedule,
                    lambda: rewind.StoreAllStagesSchedule(500, 1)))
    for l, m, d, w in [(100, 3, 5, 2.0), (200, 4, 10, 5.0), (500, 2, 20, 1.0)] + (
            [(1000, 5, 10, 10.0)] if long else []):
        costs = rewind.CostModel(disk_write_time=w, disk_read_time=w)
        out.append(Case(f"HRevolve({l}, {m}, {d}, wd=rd={w:g})",
                        f"MultiLevelSchedule({l}, {m}, {d})", l,
                        lambda l=l, m=m, d=d, w=w: cs.HRevolve(l, m, d, uf=1, ub=1, wd=w, rd=w),
                        lambda l=l, m=m, d=d, c=costs: rewind.MultiLevelSchedule(l, m, d, c),
                        "time", w, w))
    for l, m, w in [(100, 3, 2.0)] + ([(300, 4, 5.0)] if long else []):
        costs = rewind.CostModel(disk_write_time=w, disk_read_time=w)
        out.append(Case(f"DiskRevolve({l}, {m}, wd=rd={w:g})",
                        f"MultiLevelSchedule({l}, {m}, {l})", l,
                        lambda l=l, m=m, w=w: cs.DiskRevolve(l, m, uf=1, ub=1, wd=w, rd=w),
                        lambda l=l, m=m, c=costs: rewind.MultiLevelSchedule(l, m, l, c),
                        "time", w, w))
    return out


def compare(case):
    """(their Counts, our Counts, our schedule) of a case."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Numba not available -- using memoization"
        theirs = their_counts(case.theirs(), case.steps)
    ours_schedule = case.ours()
    return theirs, rewind_counts(ours_schedule), ours_schedule


def table(long=True):
    lines = [
        "| checkpoint_schedules | forward steps | disk W/R | time | rewind | forward steps "
        "| disk W/R | time | exact plan |",
        "| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | --- |",
    ]
    for case in cases(long):
        theirs, ours, schedule = compare(case)
        timed = case.objective == "time"
        t_theirs = f"{theirs.time(case.steps, case.wd, case.rd):g}" if timed else ""
        t_ours = f"{ours.time(case.steps, case.wd, case.rd):g}" if timed else ""
        io_t = f"{theirs.disk_writes}/{theirs.disk_reads}" if theirs.disk_writes else ""
        io_o = f"{ours.disk_writes}/{ours.disk_reads}" if ours.disk_writes else ""
        exact = ("yes" if schedule.exact else "no") if hasattr(schedule, "exact") else ""
        lines.append(f"| {case.family} | {theirs.forward} | {io_t} | {t_theirs} | "
                     f"{case.ours_name} | {ours.forward} | {io_o} | {t_ours} | {exact} |")
    return "\n".join(lines)


if __name__ == "__main__":
    start = time.time()
    print(table(long="--short" not in sys.argv))
    print(f"\n({time.time() - start:.1f} s)")
