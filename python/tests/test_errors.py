"""Bad input raises rewind's exceptions with rewind's messages, naming the value and the rule."""

import math

import pytest

import rewind


def message(call, kind=rewind.InvalidArgument):
    with pytest.raises(kind) as caught:
        call()
    return str(caught.value)


def test_the_exception_types():
    assert issubclass(rewind.InvalidArgument, rewind.Error)
    assert issubclass(rewind.InvalidArgument, ValueError)
    assert issubclass(rewind.InvalidPlanRequest, rewind.InvalidArgument)
    assert issubclass(rewind.ScheduleViolation, rewind.InvalidArgument)


def test_more_snapshots_than_steps():
    said = message(lambda: rewind.RevolveSchedule(10, 20))
    assert "snapshots c = 20" in said and "steps l = 10" in said and "c <= l" in said


@pytest.mark.parametrize(
    "call,says",
    [
        (lambda: rewind.RevolveSchedule(0, 3), "revolve: steps l = 0 must be >= 1"),
        (lambda: rewind.RevolveSchedule(10, 0), "revolve: snapshots c = 0 must be >= 1"),
        (lambda: rewind.RevolveSchedule(10, -4), "revolve: snapshots c = -4 must be >= 1"),
        (lambda: rewind.RevolveSchedule(2**40, 2**33), "snapshots c = 8589934592 does not fit"),
        (lambda: rewind.UniformSchedule(10, 0), "uniform: interval k = 0 must be >= 1"),
        (lambda: rewind.StoreAllSchedule(2**40), "more than an int can count"),
        (lambda: rewind.StageAwareSchedule(10, 4, 0), "stage units u = 0 must be >= 1"),
        (lambda: rewind.StageAwareSchedule(100000, 1000, 4), "above its limit of 33554432"),
        (lambda: rewind.OnlineSchedule(0), "online: snapshots c = 0 must be >= 1"),
        (lambda: rewind.OnlineSchedule(3).end_at(2), "the run can only end at step 1"),
        (lambda: rewind.MultiLevelSchedule(100, 0, 3, rewind.CostModel()),
         "memory snapshots = 0 must be >= 1"),
        (lambda: rewind.MultiLevelSchedule(100, 2, -3, rewind.CostModel()),
         "disk snapshots = -3 must be >= 0"),
        (lambda: rewind.ThreeLevelSchedule(100, 0, 0, 3, rewind.CostModel()),
         "no device and no host snapshots"),
        (lambda: rewind.CostModel(step_time=-1).validate(), "step_time = -1 must be finite"),
        (lambda: rewind.CostModel(disk_read_time=math.nan).validate(), "disk_read_time = nan"),
        (lambda: rewind.plan_for_memory(100, -1, 8), "a budget of -1 bytes holds no snapshot"),
        (lambda: rewind.plan_for_memory(100, 1000, 0), "bytes per snapshot = 0 must be >= 1"),
        (lambda: rewind.plan_checkpoints(rewind.PlanRequest.revolve(3), 0),
         "steps = 0 must be >= 1"),
        (lambda: rewind.PlanRequest(family="revolv"), "did you mean revolve?"),
        (lambda: rewind.choose_stage_plan(2000, 0, 4), "budget = 0 must be >= 1"),
        (lambda: rewind.revolve_beta(34, 34), "overflows 64-bit integers"),
        (lambda: rewind.simulate(rewind.OnlineSchedule(3)), "has no length until end_at"),
        (lambda: rewind.OnlineSchedule(3).actions(), "needs a length known in advance"),
    ],
)
def test_bad_arguments_are_refused_naming_the_value(call, says):
    assert says in message(call)


@pytest.mark.parametrize(
    "request_,field,says",
    [
        (lambda: rewind.PlanRequest(budget=-5), "budget", "budget = -5 must be >= 1"),
        (lambda: rewind.PlanRequest(), "budget", "budget is missing: revolve needs a snapshot"),
        (lambda: rewind.PlanRequest.two_level(0, 4, rewind.CostModel()), "memory_slots",
         "memory_slots = 0 must lie in [1, 1048576] for the two-level schedule"),
        (lambda: rewind.PlanRequest.three_level(1, 1, 1, rewind.CostModel(write_time=-2)),
         "costs", "costs: "),
    ],
)
def test_invalid_plan_requests_carry_the_field_and_the_library_text(request_, field, says):
    with pytest.raises(rewind.InvalidPlanRequest) as caught:
        rewind.plan_checkpoints(request_(), 100)
    assert str(caught.value).startswith(says)
    assert caught.value.field == field
    assert str(caught.value) == field + caught.value.rule


def test_a_plan_that_does_not_fit_its_budget():
    request = rewind.PlanRequest(family="uniform", interval=5, budget=30)
    request.validate()  # the rules without l hold
    said = message(lambda: rewind.plan_checkpoints(request, 1000))
    assert "holds up to 203 snapshots of 1000 steps, more than the budget of 30" in said


def test_a_broken_stream_names_the_action_and_the_rule():
    validator = rewind.ScheduleValidator(3, 2)
    with pytest.raises(rewind.ScheduleViolation) as caught:
        validator.apply(rewind.Action.restore(1, 0))
    assert "action #0 'restore y_0 from slot 1': slot 1 is empty" in str(caught.value)
    assert caught.value.action_index == 0
    assert caught.value.action == rewind.Action.restore(1, 0)


def test_values_python_cannot_pass_as_integers():
    with pytest.raises(TypeError):
        rewind.RevolveSchedule("ten", 3)
