"""rewind against checkpoint_schedules (PyPI, 1.0.4) on the cases both support
(compare_checkpoint_schedules.py says how each is counted): the same or fewer forward steps where
both minimise them, the same or less time where both weigh disk I/O — wherever rewind plans
exactly. Past the exact table of rewind's two-level plan the recorded gap (at most 1 %,
bench/results/python_schedules.md) is what is checked."""

import pytest

from compare_checkpoint_schedules import cases, compare


@pytest.mark.parametrize("case", cases(), ids=lambda c: c.family)
def test_rewind_needs_no_more_than_checkpoint_schedules(case):
    theirs, ours, schedule = compare(case)
    exact = getattr(schedule, "exact", True)
    slack = 1.0 if exact else 1.01
    if case.objective == "forward":
        assert ours.forward <= slack * theirs.forward
    else:
        assert ours.time(case.steps, case.wd, case.rd) <= slack * theirs.time(
            case.steps, case.wd, case.rd)
