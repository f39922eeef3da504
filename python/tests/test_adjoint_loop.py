"""A Python time loop driven by each schedule computes the exact adjoint of the recurrence in
recurrence.py: equal to the closed form, the same bits whatever the schedule, and exactly as many
forward steps as the simulator counts."""

import numpy as np
import pytest

import rewind
from recurrence import closed_form, run_online, run_schedule

A, B = 1.0007, 0.25
Y0 = np.array([1.0, -0.5, 2.0])
L = 300


def schedules(steps):
    costs = rewind.CostModel(disk_write_time=3.0, disk_read_time=2.0)
    three = rewind.CostModel(write_time=0.01, read_time=0.01, host_write_time=0.5,
                             host_read_time=0.5, disk_write_time=20.0, disk_read_time=20.0)
    return [
        rewind.StoreAllSchedule(steps),
        rewind.RevolveSchedule(steps, 1),
        rewind.RevolveSchedule(steps, 7),
        rewind.UniformSchedule(steps, 16),
        rewind.UniformSchedule(steps, 16, rewind.SegmentReplay.recompute),
        rewind.MultiLevelSchedule(steps, 3, 8, costs),
        rewind.ThreeLevelSchedule(steps, 2, 4, 16, three),
        rewind.DiskOnlySchedule(rewind.RevolveSchedule(steps, 5)),
        rewind.StageAwareSchedule(steps, 9, 1),
        rewind.StoreAllStagesSchedule(steps, 1),
        rewind.plan_checkpoints(rewind.PlanRequest.revolve(12), steps).schedule(),
        rewind.plan_for_memory(steps, memory_bytes=10 * Y0.nbytes, snapshot_bytes=Y0.nbytes)
        .schedule(),
    ]


def test_closed_form_against_a_plain_loop():
    y = Y0.copy()
    for _ in range(L):
        y = A * y + B
    assert closed_form(A, B, Y0, L)[0] == pytest.approx(np.sum(y), rel=1e-13)


@pytest.mark.parametrize("schedule", schedules(L), ids=lambda s: s.name)
def test_every_schedule_gives_the_closed_form_gradient(schedule):
    loop = run_schedule(schedule, A, B, Y0)
    loss, d_y0, d_a, d_b = loop.gradients()
    want = closed_form(A, B, Y0, L)
    assert loss == pytest.approx(want[0], rel=1e-12)
    np.testing.assert_allclose(d_y0, want[1], rtol=1e-12)
    assert d_a == pytest.approx(want[2], rel=1e-11)
    assert d_b == pytest.approx(want[3], rel=1e-12)
    assert loop.forward_evaluations == rewind.simulate(schedule).forward_evaluations


def test_the_gradient_has_the_same_bits_whatever_the_schedule():
    reference = run_schedule(rewind.StoreAllSchedule(L), A, B, Y0).gradients()
    for schedule in schedules(L):
        loss, d_y0, d_a, d_b = run_schedule(schedule, A, B, Y0).gradients()
        assert (loss, d_a, d_b) == (reference[0], reference[2], reference[3]), schedule.name
        assert np.array_equal(d_y0, reference[1]), schedule.name


@pytest.mark.parametrize("snapshots,steps", [(1, 1), (1, 40), (3, 2), (3, 77), (5, 300)])
def test_an_online_schedule_drives_a_run_of_unknown_length(snapshots, steps):
    loop = run_online(snapshots, steps, A, B, Y0)
    reference = run_schedule(rewind.StoreAllSchedule(steps), A, B, Y0).gradients()
    loss, d_y0, d_a, d_b = loop.gradients()
    assert loss == reference[0] and d_a == reference[2] and d_b == reference[3]
    assert np.array_equal(d_y0, reference[1])
    # The forward phase computes y_l once more than the simulator counts (its probe of the end).
    cost = rewind.simulate_online(snapshots, steps)
    assert loop.forward_evaluations == cost.forward_evaluations + 1


def test_revolve_drives_the_fewest_forward_steps():
    loop = run_schedule(rewind.RevolveSchedule(L, 7), A, B, Y0)
    assert loop.forward_evaluations == L + rewind.revolve_advances(L, 7)
