"""rewind from Python: checkpointing schedules for a time loop of your own.

rewind's schedules are pure integers: they tell a time loop when to advance, store, restore,
reverse and free, and the loop keeps the states. So a solver written in Python (a Devito or
Firedrake time loop, a NumPy integrator) gets revolve's optimal recomputation, the online,
multi-level and stage-aware schedules, the simulator's counts and planning from a budget::

    import rewind

    schedule = rewind.RevolveSchedule(steps=1000, snapshots=10)
    for action in schedule:
        if action.kind == rewind.ActionKind.advance:
            ...  # step the current state forward to action.step
        elif action.kind == rewind.ActionKind.store:
            ...  # keep a copy of the current state in slot action.slot
        elif action.kind == rewind.ActionKind.restore:
            ...  # the state in slot action.slot becomes current
        elif action.kind == rewind.ActionKind.reverse:
            ...  # adjoint of step action.step from the current state
        elif action.kind == rewind.ActionKind.free:
            ...  # slot action.slot may be dropped

    rewind.simulate(schedule).forward_evaluations   # 4636 = l + p(l, c), the minimum

Bad input raises rewind.InvalidArgument (a ValueError) with rewind's own message. The meaning of
every action is that of rewind/schedule/action.hpp; docs/python.md has a complete loop.

rewind.run, gradient, plan, generate, fit and inspect run rewind's command line
in this process — built-in problems and model plugins, their exact gradients as NumPy arrays, and
fits to observations — when the package was installed with the C++ build's module
(scripts/python_test.sh; see rewind.commands)::

    r = rewind.gradient("lotka_volterra", steps=1000, snapshots=10)
    r.loss, r.grad_theta, r.summary["recomputed_steps"]

rewind.ButcherTableau gives rewind's explicit Runge-Kutta methods as data, and rewind.torch (not
imported here, so that the package needs no PyTorch) differentiates a PyTorch ODE solve with
these methods and these schedules: ``import rewind.torch``.
"""

from ._rewind import (
    Action,
    ActionKind,
    ButcherTableau,
    CheckpointPlan,
    CostModel,
    DiskOnlySchedule,
    Error,
    InvalidArgument,
    InvalidPlanRequest,
    LevelKind,
    MultiLevelSchedule,
    OnlineRule,
    OnlineSchedule,
    PlanRequest,
    RevolveSchedule,
    Schedule,
    ScheduleCost,
    ScheduleValidator,
    ScheduleViolation,
    SegmentReplay,
    StageAwareSchedule,
    StorageLevel,
    StoreAllSchedule,
    StoreAllStagesSchedule,
    ThreeLevelSchedule,
    UniformSchedule,
    choose_stage_plan,
    plan_checkpoints,
    predicted_time,
    predicted_time_ratio,
    revolve_advances,
    revolve_beta,
    revolve_recompute_ratio,
    revolve_repetitions,
    schedule_families,
    simulate,
    simulate_online,
    snapshots_for_budget,
)

from .commands import (
    FitResult,
    RewindWarning,
    RunResult,
    commands_available,
    fit,
    generate,
    gradient,
    help,
    inspect,
    plan,
    run,
)

# help and inspect are left out of __all__, so that `from rewind import *` keeps Python's own
# (the built-in help and the standard library's inspect module).
__all__ = [
    "Action", "ActionKind", "ButcherTableau", "CheckpointPlan", "CostModel", "DiskOnlySchedule",
    "Error", "FitResult", "InvalidArgument", "InvalidPlanRequest", "LevelKind", "MultiLevelSchedule",
    "OnlineRule", "OnlineSchedule", "PlanRequest", "RevolveSchedule", "RewindWarning", "RunResult",
    "Schedule", "ScheduleCost",
    "ScheduleValidator", "ScheduleViolation", "SegmentReplay", "StageAwareSchedule",
    "StorageLevel", "StoreAllSchedule", "StoreAllStagesSchedule", "ThreeLevelSchedule",
    "UniformSchedule", "choose_stage_plan", "commands_available", "fit", "generate", "gradient",
    "plan", "plan_checkpoints", "plan_for_memory", "run",
    "predicted_time", "predicted_time_ratio", "revolve_advances", "revolve_beta",
    "revolve_recompute_ratio", "revolve_repetitions", "schedule_families", "simulate",
    "simulate_online", "snapshots_for_budget",
]
__version__ = "0.1.0"


def plan_for_memory(steps: int, memory_bytes: int, snapshot_bytes: int) -> CheckpointPlan:
    """The revolve plan for `steps` steps with as many snapshots as `memory_bytes` holds.

    A snapshot takes `snapshot_bytes` (the state the loop keeps per slot). Raises
    InvalidArgument when the budget holds no snapshot or a size is not positive.

        plan = rewind.plan_for_memory(100_000, memory_bytes=2**30, snapshot_bytes=8 * 10**6)
        plan.snapshots   # 134
    """
    snapshots = snapshots_for_budget(memory_bytes, snapshot_bytes)
    return plan_checkpoints(PlanRequest.revolve(snapshots), steps)
