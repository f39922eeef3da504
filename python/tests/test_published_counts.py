"""The counts the C++ tests check (tests/checkpoint/schedule), from Python: Griewank & Walther's
closed form and its optimum, each schedule's simulated counts, and the plans."""

import numpy as np
import pytest

import rewind


def brute_force_advances(max_steps, max_snapshots):
    """Fewest advances to reverse l steps from a stored y_0 with c snapshots, by the classic
    recursion over the first split (independent of the closed form; revolve_cost_test.cpp)."""
    f = [[0] * (max_snapshots + 1) for _ in range(max_steps + 1)]
    for c in range(1, max_snapshots + 1):
        for l in range(2, max_steps + 1):
            best = (l - 1) + f[l - 1][c]
            if c >= 2:
                best = min([best] + [j + f[l - j][c - 1] + f[j][c] for j in range(1, l)])
            f[l][c] = best
    return f


@pytest.mark.parametrize(
    "steps,snapshots,repetitions,advances",
    [(10, 3, 2, 15), (100, 5, 4, 316), (1000, 10, 4, 3636), (100000, 20, 6, 534220)],
)
def test_griewank_walther_closed_form(steps, snapshots, repetitions, advances):
    assert rewind.revolve_repetitions(steps, snapshots) == repetitions
    assert rewind.revolve_advances(steps, snapshots) == advances
    assert rewind.revolve_recompute_ratio(steps, snapshots) == (steps + advances) / steps


def test_binomials_and_repetition_jumps():
    assert rewind.revolve_beta(3, 2) == 10
    assert rewind.revolve_beta(10, 4) == 1001
    assert rewind.revolve_beta(30, 30) == 118264581564861424
    assert rewind.revolve_beta(4, -1) == 0
    assert rewind.revolve_repetitions(1001, 10) == 4
    assert rewind.revolve_repetitions(1002, 10) == 5


def test_closed_form_equals_an_independent_dynamic_program():
    f = brute_force_advances(60, 5)
    for l in range(1, 61):
        for c in range(1, 6):
            assert rewind.revolve_advances(l, c) == f[l][c], (l, c)


@pytest.mark.parametrize("steps", [1, 2, 3, 10, 99, 100, 101, 1000, 4321])
@pytest.mark.parametrize("snapshots", [1, 2, 3, 5, 20, 100])
def test_revolve_schedule_reaches_the_optimum(steps, snapshots):
    snapshots = min(snapshots, steps)
    schedule = rewind.RevolveSchedule(steps, snapshots)
    cost = rewind.simulate(schedule)
    assert cost.advances == rewind.revolve_advances(steps, snapshots)
    assert cost.forward_evaluations == steps + cost.advances
    assert cost.reverses == steps
    assert cost.restores == steps - 1
    assert cost.peak_slots <= snapshots
    assert schedule.repetitions == rewind.revolve_repetitions(steps, snapshots)


def test_limits_of_revolve():
    for l in range(1, 120):
        assert rewind.simulate(rewind.RevolveSchedule(l, 1)).advances == l * (l - 1) // 2
        assert rewind.simulate(rewind.RevolveSchedule(l, max(l - 1, 1))).advances == l - 1


def test_plan_of_revolve_is_the_closed_form():
    plan = rewind.plan_checkpoints(rewind.PlanRequest.revolve(10), 1000)
    assert plan.simulated
    assert (plan.advances, plan.forward_steps, plan.restores, plan.reverses) == (3636, 4636, 999,
                                                                                 1000)
    assert plan.recompute_ratio == 4.636
    assert plan.peak_slots == 10
    assert plan.name == "revolve(c = 10)"
    assert plan.predicted_time_ratio(1.5) == pytest.approx((3636 + 1000 * 2.5) / 1000.0)
    assert [level.kind for level in plan.levels] == [rewind.LevelKind.memory]
    assert plan.levels[0].slots_used == 10
    assert rewind.simulate(plan.schedule()).advances == 3636


def test_large_horizons_use_the_closed_form():
    plan = rewind.plan_checkpoints(rewind.PlanRequest.revolve(20), 2**40)
    assert not plan.simulated and not plan.peak_exact
    assert plan.stores is None
    assert plan.advances == rewind.revolve_advances(2**40, 20)


def test_store_all():
    cost = rewind.simulate(rewind.StoreAllSchedule(500))
    assert (cost.advances, cost.stores, cost.restores, cost.peak_slots) == (499, 500, 499, 500)
    plan = rewind.plan_checkpoints(rewind.PlanRequest(family="store-all"), 500)
    assert (plan.advances, plan.stores, plan.peak_slots) == (499, 500, 500)


def test_uniform_long_horizons():
    stored = rewind.UniformSchedule(1000000, 1000)
    assert rewind.simulate(stored).advances == 999 * 1000 + (1000000 - 1000)
    assert stored.slots == 1000 + 998
    recomputed = rewind.UniformSchedule(100000, 300, rewind.SegmentReplay.recompute)
    assert rewind.simulate(recomputed).advances == recomputed.predicted_advances
    assert recomputed.slots == 334
    one = rewind.UniformSchedule(10, 2**50, rewind.SegmentReplay.recompute)
    assert (one.slots, rewind.simulate(one).advances) == (1, 45)


def test_online_costs_at_least_revolve_and_one_snapshot_recomputes_from_the_start():
    for l in range(1, 120):
        assert rewind.simulate_online(1, l).advances == l * (l - 1) // 2
    for c, l in [(2, 1000), (5, 3000), (10, 20000), (20, 100000)]:
        cost = rewind.simulate_online(c, l)
        assert cost.reverses == l and cost.first_sweep_advances == l - 1
        assert cost.peak_slots <= c
        assert cost.advances >= rewind.revolve_advances(l, c)
        assert cost.advances <= 1.34 * rewind.revolve_advances(l, c)


def test_online_forward_then_reverse_phase():
    schedule = rewind.OnlineSchedule(4)
    assert schedule.name == "online(c = 4)"
    current = 0
    while current + 1 != 77:
        action = schedule.next()
        assert schedule.steps == -1 and not schedule.ended
        if action.kind == rewind.ActionKind.advance:
            assert action.step == current + 1
            current = action.step
        else:
            assert action.kind in (rewind.ActionKind.store, rewind.ActionKind.free)
            assert 0 <= action.slot < 4
    schedule.end_at(77)
    assert schedule.ended and schedule.steps == 77
    assert schedule.next() == rewind.Action.reverse(76)
    rest = list(schedule)
    assert rest and schedule.next() == rewind.Action.done()


def test_stage_aware_exact_stream_for_three_steps():
    schedule = rewind.StageAwareSchedule(3, 4, 2)
    A = rewind.Action
    assert list(schedule) == [
        A.store_stages(0, 0), A.store_stages(2, 1), A.reverse(2), A.reverse_from_stages(1, 2),
        A.free(2, 1), A.reverse_from_stages(0, 0), A.free(0, 0),
    ]
    assert schedule.extra_evaluations == 0


def test_stage_aware_ten_thousand_steps():
    schedule = rewind.StageAwareSchedule(10000, 20, 4)
    cost = rewind.simulate(schedule)
    assert cost.forward_evaluations - 10000 == schedule.extra_evaluations
    assert schedule.extra_evaluations < rewind.revolve_advances(10000, 20)
    assert cost.stage_stores > 0
    assert rewind.StageAwareSchedule(32768, 1, 4).extra_evaluations == 32768 * 32767 // 2


def test_store_all_stages_recomputes_nothing():
    for u in (1, 2, 4):
        for l in (1, 2, 50):
            cost = rewind.simulate(rewind.StoreAllStagesSchedule(l, u))
            assert cost.forward_evaluations == l and cost.stage_stores == l


def test_stage_plan_chooser_weighs_copies():
    free = rewind.CostModel(adjoint_cost_factor=1.5)
    cheap = rewind.choose_stage_plan(2000, 10, 4, free)
    assert cheap.stage_stores > 0 and cheap.budget == 10
    dear = rewind.CostModel(adjoint_cost_factor=1.5, write_time=0.5, read_time=0.5,
                            stage_values_copied=True)
    plan = rewind.choose_stage_plan(2000, 10, 4, dear)
    assert plan.name == "revolve(c = 10)" and plan.family == "revolve"
    assert plan.advances == rewind.revolve_advances(2000, 10)
    everything = rewind.choose_stage_plan(50, 200, 4, free)
    assert everything.stage_reverses == 50 and everything.forward_steps == 50


@pytest.mark.parametrize("steps,memory,disk", [(100, 3, 5), (1000, 4, 20), (5000, 2, 40)])
def test_two_level_costs_what_it_predicts(steps, memory, disk):
    costs = rewind.CostModel(adjoint_cost_factor=2.0, disk_write_time=2.0, disk_read_time=2.0)
    schedule = rewind.MultiLevelSchedule(steps, memory, disk, costs)
    cost = rewind.simulate(schedule)
    assert schedule.memory_slots == memory and schedule.slots == memory + disk
    assert rewind.predicted_time(cost, costs) == pytest.approx(schedule.predicted_time)
    assert cost.advances == schedule.predicted_cost.advances
    assert cost.peak_disk_slots <= disk
    # Free disk I/O: the fewest advances with every snapshot, revolve's optimum.
    free = rewind.MultiLevelSchedule(steps, memory, disk, rewind.CostModel())
    if free.exact:
        assert rewind.simulate(free).advances == rewind.revolve_advances(steps, memory + disk)


def test_three_level_costs_what_it_predicts_per_level():
    costs = rewind.CostModel(adjoint_cost_factor=2.0, write_time=0.01, read_time=0.01,
                             host_write_time=0.5, host_read_time=0.5, disk_write_time=20.0,
                             disk_read_time=20.0)
    schedule = rewind.ThreeLevelSchedule(100000, 4, 64, 1000, costs)
    assert (schedule.device_slots, schedule.host_slots, schedule.disk_slots) == (4, 64, 1000)
    assert schedule.memory_slots == 68
    cost = rewind.simulate(schedule)
    assert rewind.predicted_time(cost, costs) == pytest.approx(schedule.predicted_time)
    assert cost.host_stores == schedule.predicted_cost.host_stores
    assert cost.disk_stores == schedule.predicted_cost.disk_stores
    assert cost.peak_host_slots <= 64 and cost.peak_disk_slots <= 1000


def test_disk_only_moves_every_slot_to_disk():
    inner = rewind.RevolveSchedule(1000, 10)
    disk = rewind.DiskOnlySchedule(inner)
    assert disk.memory_slots == 0 and disk.name == "revolve(c = 10) on disk"
    cost = rewind.simulate(disk)
    assert cost.disk_stores == cost.stores and cost.disk_restores == cost.restores
    assert np.array_equal(disk.actions(), inner.actions())
    plan = rewind.plan_checkpoints(rewind.PlanRequest(budget=10, all_on_disk=True), 1000)
    assert [level.kind for level in plan.levels] == [rewind.LevelKind.disk]


def test_actions_come_out_as_an_array_and_as_objects():
    schedule = rewind.RevolveSchedule(100, 5)
    table = schedule.actions()
    assert table.dtype == np.int64 and table.shape[1] == 3
    assert table.shape[0] == rewind.simulate(schedule).actions - 1  # done excluded
    listed = list(schedule)
    assert [(int(a.kind.value), a.step, a.slot) for a in listed] == [tuple(r) for r in table]
    assert list(schedule) == []  # an iterator: exhausted until reset
    schedule.reset()
    assert next(iter(schedule)) == listed[0]
    assert schedule.clone().next() == listed[0]
    kind, step, slot = listed[0]
    assert (kind, step, slot) == (rewind.ActionKind.store, 0, 0)
    assert str(listed[0]) == "store y_0 in slot 0"
    assert repr(listed[0]) == "Action.store(slot=0, step=0)"
    assert len({rewind.Action.advance(3), rewind.Action.advance(3)}) == 1


def test_a_loop_can_validate_its_own_stream():
    validator = rewind.ScheduleValidator(3, 2)
    for action in rewind.RevolveSchedule(3, 2):
        validator.apply(action)
    validator.apply(rewind.Action.done())
    assert validator.finished and validator.cost.advances == rewind.revolve_advances(3, 2)


def test_planning_from_a_memory_budget():
    plan = rewind.plan_for_memory(100000, memory_bytes=2**30, snapshot_bytes=8 * 10**6)
    assert plan.snapshots == 2**30 // (8 * 10**6) == 134
    assert plan.advances == rewind.revolve_advances(100000, 134)
    assert "revolve" in rewind.schedule_families(only_plannable=True)
