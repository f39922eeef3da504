"""rewind.torch: the exact gradient of a PyTorch ODE solve, in memory bounded by a snapshot budget.

``odeint(func, y0, t)`` integrates dy/dt = func(t, y) for a ``torch.nn.Module`` (or any callable)
with one of rewind's explicit Runge-Kutta methods on a fixed grid, and returns the state at every
time of ``t`` as torchdiffeq's ``odeint`` does, shaped ``(len(t), *y0.shape)``. Its backward pass
is the exact discrete adjoint of the steps taken - the gradient that backpropagating through the
solver gives, to round-off - but the forward pass keeps only the snapshots a rewind checkpointing
schedule asks for (binomial checkpointing, revolve), and the backward pass recomputes the rest::

    import torch
    import rewind.torch

    func = torch.nn.Sequential(...)                   # dy/dt = func(t, y); called as func(t, y)
    ys = rewind.torch.odeint(func, y0, t, method="rk4", checkpoints=20)
    loss = ys.square().sum()
    loss.backward()                                   # dL/dy0 and dL/dθ for func's parameters

How it runs. One schedule of rewind (revolve with ``checkpoints`` snapshots, a plan from a
``memory`` budget, a two-level plan with snapshots on ``disk``, or every state kept) is split
between the two passes: the forward pass runs its actions up to the first reverse (advances and
stores, under ``torch.no_grad``) and the last step with autograd recording; the backward pass
continues the same stream - restores, re-advances without a graph, and for each reverse step
re-runs that one step with autograd from the current state and takes its vector-Jacobian
product with ``torch.autograd.grad``. Every reverse step is the same computation whatever the
schedule, so every schedule and store gives the same gradient, bit for bit.

This module imports PyTorch; ``import rewind`` does not import it.
"""

from __future__ import annotations

import ctypes
import math
import os
import shutil
import tempfile
import warnings
import weakref
import zlib
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence, Union

import torch
from torch.autograd.function import once_differentiable

import rewind

__all__ = ["DriftError", "Report", "methods", "odeint"]

_WHERE = "rewind.torch.odeint"
_DRIFT_POLICIES = ("warn", "fail", "ignore")


class DriftError(rewind.Error):
    """A replayed state differs from the state the forward pass computed at the same step."""


@dataclass
class Report:
    """What one ``odeint`` call did; pass one as ``report=`` and read it after ``backward()``.

    The forward pass fills the plan's fields and ``forward_steps`` so far; the backward pass adds
    its steps, its disk traffic and the drift check.
    """

    plan: str = ""
    """The schedule's name, e.g. 'revolve(c = 20)'."""
    steps: int = 0
    """l: the steps taken (len(t) - 1 intervals, each of one or more equal steps)."""
    planned_forward_steps: int = 0
    """What rewind's simulator counts for the schedule: l + p, each reverse step's re-run
    included."""
    forward_steps: int = 0
    """The steps computed, both passes: equal to planned_forward_steps after backward()."""
    snapshots: int = 0
    """The schedule's slot budget (y_0's snapshot included)."""
    peak_snapshots: int = 0
    """The most snapshots held at once."""
    disk_writes: int = 0
    disk_reads: int = 0
    drift_checked: int = 0
    """Replayed states compared with the forward pass's (see odeint's ``drift``)."""
    drift_steps: list = field(default_factory=list)
    """The steps whose replayed state differed."""


def methods() -> list:
    """The method names odeint takes: rewind's explicit Runge-Kutta tableaux."""
    return list(rewind.ButcherTableau.names())


def odeint(
    func: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    y0: torch.Tensor,
    t: torch.Tensor,
    *,
    method: str = "rk4",
    step_size: Optional[float] = None,
    checkpoints: Optional[int] = None,
    memory: Optional[int] = None,
    disk: Union[str, os.PathLike, None] = None,
    disk_checkpoints: Optional[int] = None,
    disk_costs: Optional[rewind.CostModel] = None,
    schedule: Union[rewind.Schedule, rewind.CheckpointPlan, None] = None,
    drift: str = "warn",
    adjoint_params: Optional[Sequence[torch.Tensor]] = None,
    report: Optional[Report] = None,
) -> torch.Tensor:
    """The solution of dy/dt = func(t, y), y(t[0]) = y0, at every time of t, with the exact
    discrete adjoint as its backward pass and checkpointed memory.

    func: called as func(t, y) with t a 0-d tensor and y shaped like y0; must return a tensor of
        y0's shape, dtype and device (checked at the first evaluation). Its parameters
        (``func.parameters()`` for a Module, else ``adjoint_params``) get gradients.
    y0: the initial state, any shape, a floating-point tensor on any device.
    t: 1-D, at least 2 times, strictly increasing, of y0's dtype and device. t gets no gradient.
    method: one of rewind's explicit Runge-Kutta tableaux (``methods()``): euler, heun
        (explicit trapezoid), rk4 (the classical method), rk38 (Kutta's 3/8 rule, what
        torchdiffeq's fixed-grid "rk4" computes), bs3, dopri5, tsit5 (their propagated weights
        at fixed steps; stages used only by the error estimate are not evaluated).
    step_size: None: one step per interval of t (torchdiffeq's fixed-grid rule). Given h > 0:
        each interval [t_k, t_k+1] takes m_k = ceil((t_k+1 - t_k) / h) equal steps (with a
        relative slack of 1e-9, so an interval that is a whole multiple of h up to round-off
        takes exactly that many), and the output still lands on every t_k.
    checkpoints: C: revolve with C snapshots in memory (y_0's included; C <= the steps).
    memory: a budget in bytes instead: as many snapshots (each y0's size) as it holds.
    disk: a directory: a two-level plan, ``checkpoints`` snapshots in memory in front of
        ``disk_checkpoints`` in files there (raw tensor bytes with a CRC-32 check, in a
        subdirectory removed when the backward pass ends), placed for the least predicted time
        under ``disk_costs`` (a rewind.CostModel in units of one step; default: free I/O).
    schedule: any rewind schedule for the steps (or a CheckpointPlan) instead of the above; its
        slots from ``memory_slots`` on are disk slots (``disk`` needed), three-level host slots
        are kept in host memory.
        None of checkpoints, memory and schedule: every state is kept (store-all).
    drift: 'warn', 'fail' or 'ignore'. Every replayed state that ends a replayed segment (where
        the backward pass stores it or reverses the step from it) is compared with the state the
        forward pass computed at that step, through a fingerprint computed on the tensor's
        device: an integer sum of its bit pattern (any changed bit changes it, short of a
        collision) and the sum of its magnitudes (for the size). The fingerprints are compared
        once, at the end of the backward pass; a difference warns naming the first step, or
        raises DriftError. Deterministic devices show none.
    adjoint_params: the tensors that get gradients; default func.parameters() for a Module.
    report: a Report to fill.

    Under torch.no_grad, or when neither y0 nor a parameter requires a gradient, the steps run
    plainly: no snapshot is kept and no file written.

    Refusals, each a rewind.InvalidArgument (a ValueError) naming the argument and the rule,
    raised before any step: t not 1-D, not strictly increasing or with fewer than 2 times; y0
    and t on different devices or of different dtypes; integer or complex dtypes; an unknown
    method; more snapshots than steps; func's output of another shape, dtype or device than its
    input (at its first evaluation). A non-finite output state raises rewind.Error naming the
    time. The backward pass runs once (backward with retain_graph and a second backward is
    refused); it is not itself differentiable.
    """
    _refuse_bad_tensors(y0, t)
    if method not in methods():
        _refuse(f"method = {method!r} is not a known method; known: {', '.join(methods())}")
    if drift not in _DRIFT_POLICIES:
        _refuse(f"drift = {drift!r} must be one of {', '.join(map(repr, _DRIFT_POLICIES))}")
    grid = _Grid(t, step_size)
    chosen = _choose_schedule(grid.steps, y0, checkpoints, memory, disk, disk_checkpoints,
                              disk_costs, schedule)
    params = _parameters(func, adjoint_params)
    run = _Run(func, rewind.ButcherTableau.by_name(method), grid, chosen, disk, drift, params,
               y0, report if report is not None else Report())
    wanted = y0.requires_grad or any(p.requires_grad for p in params)
    if not (torch.is_grad_enabled() and wanted):
        return run.solve_without_gradient(y0)  # no backward pass to come: no snapshots
    return _Odeint.apply(run, y0, t, *params)


# ---------------------------------------------------------------------------------------------
# Refusals before any work.


def _refuse(message: str):
    raise rewind.InvalidArgument(f"{_WHERE}: {message}")


def _refuse_bad_tensors(y0, t):
    for name, value in (("y0", y0), ("t", t)):
        if not isinstance(value, torch.Tensor):
            _refuse(f"{name} must be a torch.Tensor, not {type(value).__name__}")
        if not value.is_floating_point():
            _refuse(f"{name} has dtype {value.dtype}; a real floating-point dtype is needed")
    if y0.numel() == 0:
        _refuse(f"y0 of shape {tuple(y0.shape)} has no elements")
    if t.dim() != 1:
        _refuse(f"t must be 1-D (the output times), but has shape {tuple(t.shape)}")
    if t.numel() < 2:
        _refuse(f"t has {t.numel()} time(s); at least 2 are needed (the start and an end)")
    if t.device != y0.device:
        _refuse(f"t is on {t.device} but y0 on {y0.device}; both must be on one device")
    if t.dtype != y0.dtype:
        _refuse(f"t has dtype {t.dtype} but y0 {y0.dtype}; both must have one dtype")
    times = t.detach()
    if not bool(torch.isfinite(times).all()):
        _refuse("t holds a non-finite time")
    rising = times[1:] > times[:-1]
    if not bool(rising.all()):
        k = int((~rising).nonzero()[0])
        _refuse(f"t must be strictly increasing, but t[{k + 1}] = {float(times[k + 1])!r} <= "
                f"t[{k}] = {float(times[k])!r}")


def _parameters(func, adjoint_params):
    if adjoint_params is None:
        adjoint_params = tuple(func.parameters()) if isinstance(func, torch.nn.Module) else ()
    params = tuple(adjoint_params)
    for i, p in enumerate(params):
        if not isinstance(p, torch.Tensor):
            _refuse(f"adjoint_params[{i}] is a {type(p).__name__}, not a torch.Tensor")
    return params


def _choose_schedule(steps, y0, checkpoints, memory, disk, disk_checkpoints, disk_costs,
                     schedule):
    """The schedule of the run, every budget checked against the steps."""
    if schedule is not None:
        if checkpoints is not None or memory is not None:
            _refuse("schedule is given, so checkpoints and memory must be None")
        if isinstance(schedule, rewind.CheckpointPlan):
            schedule = schedule.schedule()
        if not isinstance(schedule, rewind.Schedule):
            _refuse(f"schedule must be a rewind.Schedule or CheckpointPlan, not "
                    f"{type(schedule).__name__}")
        if schedule.steps != steps:
            _refuse(f"schedule {schedule.name} is for {schedule.steps} steps, but t and "
                    f"step_size make {steps}")
        if schedule.stage_units != 0:
            _refuse(f"schedule {schedule.name} keeps stage values, which odeint does not store")
        schedule = schedule.clone()
        if schedule.slots > schedule.memory_slots and disk is None:
            _refuse(f"schedule {schedule.name} has disk slots; give disk=DIR")
        return schedule
    if checkpoints is not None and memory is not None:
        _refuse("give checkpoints (snapshots) or memory (bytes), not both")
    snapshot_bytes = y0.numel() * y0.element_size()
    if memory is not None:
        if not isinstance(memory, int) or memory < snapshot_bytes:
            _refuse(f"memory = {memory!r} bytes must be an int holding at least one snapshot "
                    f"of y0 ({snapshot_bytes} bytes)")
        checkpoints = min(memory // snapshot_bytes, steps)
    if checkpoints is not None:
        _refuse_snapshot_count("checkpoints", checkpoints, steps)
    if disk is None:
        if disk_checkpoints is not None:
            _refuse("disk_checkpoints is given without disk=DIR")
        if checkpoints is None:
            return rewind.StoreAllSchedule(steps)
        return rewind.plan_checkpoints(rewind.PlanRequest.revolve(checkpoints), steps).schedule()
    if checkpoints is None or disk_checkpoints is None:
        _refuse("disk=DIR plans two levels: give checkpoints (or memory) for the memory "
                "snapshots and disk_checkpoints for the files")
    _refuse_snapshot_count("disk_checkpoints", disk_checkpoints, steps)
    if checkpoints + disk_checkpoints > steps:
        _refuse(f"checkpoints + disk_checkpoints = {checkpoints} + {disk_checkpoints} is more "
                f"than the {steps} steps; a run of l steps has at most l states to hold")
    if not os.path.isdir(disk):
        _refuse(f"disk = {os.fspath(disk)!r} is not a directory")
    costs = disk_costs if disk_costs is not None else rewind.CostModel()
    request = rewind.PlanRequest.two_level(checkpoints, disk_checkpoints, costs)
    return rewind.plan_checkpoints(request, steps).schedule()


def _refuse_snapshot_count(name, count, steps):
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        _refuse(f"{name} = {count!r} must be an int >= 1 (y_0's snapshot counts)")
    if count > steps:
        _refuse(f"{name} = {count} is more than the {steps} steps; a run of l steps has at most "
                f"l states to hold (checkpoints <= l)")


# ---------------------------------------------------------------------------------------------
# The grid and the method.


class _Grid:
    """The steps of a run: step n goes from times[n] with size sizes[n]; the output k is the
    state after output_steps[k] steps."""

    def __init__(self, t, step_size):
        t = t.detach()
        intervals = len(t) - 1
        if step_size is None:
            counts = [1] * intervals
        else:
            if not isinstance(step_size, (int, float)) or not math.isfinite(step_size) \
                    or step_size <= 0:
                _refuse(f"step_size = {step_size!r} must be a finite number > 0")
            widths = (t[1:] - t[:-1]).tolist()
            counts = [max(1, math.ceil(w / step_size * (1 - 1e-9))) for w in widths]
        self.steps = sum(counts)
        self.output_steps = [0]
        for m in counts:
            self.output_steps.append(self.output_steps[-1] + m)
        self.output_of_step = {n: k for k, n in enumerate(self.output_steps)}
        count = torch.tensor(counts, device=t.device)
        width = (t[1:] - t[:-1]) / count.to(t.dtype)
        interval = torch.repeat_interleave(torch.arange(intervals, device=t.device), count)
        first = torch.tensor(self.output_steps[:-1], device=t.device)
        within = torch.arange(self.steps, device=t.device) - first[interval]
        self.sizes = width[interval]
        self.times = t[interval] + within.to(t.dtype) * self.sizes


class _RungeKutta:
    """One explicit Runge-Kutta step in torch operations, from a rewind tableau:
    k_i = f(t + c_i h, y + h sum_j a_ij k_j),  y_next = y + h sum_i b_i k_i.

    Zero coefficients are skipped, and so are stages that neither the weights nor a later stage
    use (the last stage of bs3, dopri5 and tsit5, which serves only the error estimate)."""

    def __init__(self, tableau):
        s = tableau.stages
        needed = [tableau.b[j] != 0.0 for j in range(s)]
        for i in reversed(range(s)):
            if needed[i]:
                for j in range(i):
                    needed[j] = needed[j] or tableau.a_at(i, j) != 0.0
        self.stages = [(i, tableau.c[i], [(j, tableau.a_at(i, j)) for j in range(i)
                                          if tableau.a_at(i, j) != 0.0])
                       for i in range(s) if needed[i]]
        self.weights = [(j, b) for j, b in enumerate(tableau.b) if b != 0.0]

    def step(self, f, t, h, y):
        k = {}
        for i, c, row in self.stages:
            y_stage = y + h * _combination(row, k) if row else y
            k[i] = f(t + c * h if c != 0.0 else t, y_stage)
        return y + h * _combination(self.weights, k)


def _combination(terms, k):
    """sum_j w_j k_j in the tableau's order."""
    total = None
    for j, w in terms:
        term = k[j] if w == 1.0 else w * k[j]
        total = term if total is None else total + term
    return total


# ---------------------------------------------------------------------------------------------
# Snapshots.


class _Snapshots:
    """The schedule's slots: [0, memory_slots - host_slots) as tensors where y0 lives,
    [memory_slots - host_slots, memory_slots) in host memory, the rest in files under disk."""

    def __init__(self, schedule, disk, like, report):
        self.device, self.dtype, self.shape = like.device, like.dtype, like.shape
        self.first_host = schedule.memory_slots - schedule.host_slots
        self.first_disk = schedule.memory_slots
        self.held = {}  # slot -> tensor (memory, host) or (path, crc) (disk)
        self.report = report
        self.folder = None
        if schedule.slots > schedule.memory_slots:
            self.folder = tempfile.mkdtemp(prefix="rewind-snapshots-", dir=os.fspath(disk))
            self._cleanup = weakref.finalize(self, shutil.rmtree, self.folder, True)

    def store(self, slot, y):
        if slot < self.first_host:
            self.held[slot] = y  # states are never changed in place: no copy needed
        elif slot < self.first_disk:
            self.held[slot] = y.to("cpu")
        else:
            host = y.detach().to("cpu").contiguous()
            data = ctypes.string_at(host.data_ptr(), host.numel() * host.element_size())
            path = os.path.join(self.folder, f"slot{slot}.bin")
            with open(path, "wb") as file:
                file.write(data)
            self.held[slot] = (path, zlib.crc32(data), len(data))
            self.report.disk_writes += 1
        self.report.peak_snapshots = max(self.report.peak_snapshots, len(self.held))

    def restore(self, slot):
        held = self.held[slot]
        if slot < self.first_disk:
            return held.to(self.device)
        path, crc, size = held
        with open(path, "rb") as file:
            data = file.read()
        if len(data) != size or zlib.crc32(data) != crc:
            raise rewind.Error(f"{_WHERE}: snapshot file {path} (slot {slot}) has {len(data)} "
                               f"bytes and CRC-32 {zlib.crc32(data):#x}, but {size} bytes with "
                               f"CRC-32 {crc:#x} were written")
        self.report.disk_reads += 1
        state = torch.frombuffer(bytearray(data), dtype=self.dtype).reshape(self.shape)
        return state.to(self.device)

    def free(self, slot):
        held = self.held.pop(slot)
        if slot >= self.first_disk:
            os.remove(held[0])

    def close(self):
        self.held.clear()
        if self.folder is not None:
            self._cleanup()


# ---------------------------------------------------------------------------------------------
# Drift: fingerprints of states, compared once at the end.


def _fingerprint(y):
    """(integer sum of the bit pattern, sum of magnitudes) of a state, computed on its device."""
    flat = y.detach().reshape(-1)
    bits = flat.view(torch.int16 if flat.element_size() == 2 else torch.int32)
    return bits.sum(dtype=torch.int64), flat.abs().sum(dtype=torch.float64)


def _replay_checks(schedule):
    """The steps, in stream order, at which the backward part of the stream holds a replayed
    state, the end of a replayed segment: a store or a reverse after an advance since the last
    restore (the first reverse, from the forward pass's own state, is not one)."""
    steps, started, advanced = [], False, False
    for action in schedule.clone():
        kind = action.kind
        if kind == rewind.ActionKind.reverse:
            if started and advanced:
                steps.append(action.step)
            started = True
        elif not started:
            continue
        elif kind == rewind.ActionKind.advance:
            advanced = True
        elif kind == rewind.ActionKind.restore:
            advanced = False
        elif kind == rewind.ActionKind.store and advanced:
            steps.append(action.step)
    return steps


class _DriftMonitor:
    """The fingerprints of the forward pass's states at the steps that will be replayed, and of
    their replays, in tensors allocated once on the states' device (no synchronisation per step,
    memory of two numbers per check); compared once, when the backward pass ends."""

    def __init__(self, schedule, like, enabled):
        self.replay_steps = _replay_checks(schedule) if enabled else []
        self.index_of_step = {n: i for i, n in enumerate(sorted(set(self.replay_steps)))}
        device, checks = like.device, len(self.replay_steps)
        self.first_bits = torch.zeros(len(self.index_of_step), dtype=torch.int64, device=device)
        self.first_sizes = torch.zeros(len(self.index_of_step), dtype=torch.float64, device=device)
        self.replay_bits = torch.zeros(checks, dtype=torch.int64, device=device)
        self.replay_sizes = torch.zeros(checks, dtype=torch.float64, device=device)
        self.replays = 0

    def first_pass(self, n, y):
        """The forward pass is at step n."""
        i = self.index_of_step.get(n)
        if i is not None:
            self.first_bits[i], self.first_sizes[i] = _fingerprint(y)

    def replayed(self, n, y):
        """The backward pass holds y_n, advanced from a restored snapshot."""
        if not self.replay_steps:
            return  # drift='ignore'
        j = self.replays
        if j >= len(self.replay_steps) or self.replay_steps[j] != n:
            raise rewind.Error(f"{_WHERE}: replayed state {j} is at step {n}, but the schedule's "
                               f"stream predicted {self.replay_steps[j:j + 1]}")
        self.replays = j + 1
        self.replay_bits[j], self.replay_sizes[j] = _fingerprint(y)

    def differences(self):
        """[(step, relative difference of the magnitudes)] of the replays that differ."""
        if not self.replays:
            return []
        steps = self.replay_steps[:self.replays]
        index = torch.tensor([self.index_of_step[n] for n in steps], device=self.first_bits.device)
        differs = (self.replay_bits[:self.replays] != self.first_bits[index]).tolist()
        if not any(differs):  # the one synchronisation
            return []
        first = self.first_sizes[index].tolist()
        replayed = self.replay_sizes[:self.replays].tolist()
        return [(n, abs(r - f) / max(f, 1e-300))
                for n, d, r, f in zip(steps, differs, replayed, first) if d]


# ---------------------------------------------------------------------------------------------
# The run: the first sweep (forward) and the rest of the stream (backward).


class _Run:
    def __init__(self, func, tableau, grid, schedule, disk, drift, params, y0, report):
        self.func, self.method, self.grid = func, _RungeKutta(tableau), grid
        self.schedule, self.disk, self.drift = schedule, disk, drift
        self.params = params
        self.trained = [i for i, p in enumerate(params) if p.requires_grad]
        self.report = report
        self.like = y0
        self.checked_output = False
        self.drift_monitor = _DriftMonitor(schedule, y0, drift != "ignore")
        report.plan, report.steps, report.snapshots = schedule.name, grid.steps, schedule.slots
        report.planned_forward_steps = rewind.simulate(schedule.clone()).forward_evaluations

    # -- stepping -------------------------------------------------------------------------------

    def evaluate(self, t, y):
        out = self.func(t, y)
        if not self.checked_output:
            self.refuse_bad_output(out)
        return out

    def refuse_bad_output(self, out):
        y = self.like
        if not isinstance(out, torch.Tensor):
            _refuse(f"func returned a {type(out).__name__}, not a torch.Tensor")
        for what, got, want in (("shape", tuple(out.shape), tuple(y.shape)),
                                ("dtype", out.dtype, y.dtype), ("device", out.device, y.device)):
            if got != want:
                _refuse(f"func(t, y) returned {what} {got} for y of {what} {want} (at its first "
                        f"evaluation, t = {float(self.grid.times[0])!r}); dy/dt must be "
                        f"shaped like y")
        self.checked_output = True

    def step(self, n, y):
        self.report.forward_steps += 1
        return self.method.step(self.evaluate, self.grid.times[n], self.grid.sizes[n], y)

    # -- forward --------------------------------------------------------------------------------

    def solve_without_gradient(self, y0):
        """The outputs of l plain steps, when no gradient is wanted."""
        grid = self.grid
        outputs = y0.new_empty((len(grid.output_steps), *y0.shape))
        outputs[0] = y0
        y = y0.detach()
        with torch.no_grad():
            for n in range(grid.steps):
                y = self.step(n, y)
                if n + 1 in grid.output_of_step:
                    outputs[grid.output_of_step[n + 1]] = y
        self.refuse_non_finite(outputs)
        return outputs

    def first_sweep(self, y0):
        """Runs the stream up to its first reverse, and the last step; the outputs."""
        grid = self.grid
        self.snapshots = _Snapshots(self.schedule, self.disk, y0, self.report)
        outputs = y0.new_empty((len(grid.output_steps), *y0.shape))
        outputs[0] = y0
        n, y = 0, y0.detach().clone()  # the caller's y0 may change before backward()
        with torch.no_grad():
            for action in self.schedule:
                kind = action.kind
                if kind == rewind.ActionKind.advance:
                    while n < action.step:
                        y, n = self.step(n, y), n + 1
                        if n in grid.output_of_step:
                            outputs[grid.output_of_step[n]] = y
                        self.drift_monitor.first_pass(n, y)
                elif kind == rewind.ActionKind.store:
                    self.snapshots.store(action.slot, y)
                elif kind == rewind.ActionKind.restore:
                    y, n = self.snapshots.restore(action.slot), action.step
                elif kind == rewind.ActionKind.free:
                    self.snapshots.free(action.slot)
                elif kind == rewind.ActionKind.reverse:
                    break
                else:
                    raise rewind.Error(f"{_WHERE}: unexpected action {action} in the first sweep")
        # The last step, recorded: the first reverse step takes its vector-Jacobian product.
        with torch.enable_grad():
            y_in = y.detach().requires_grad_(True)
            y_last = self.step(n, y_in)
        self.pending = (n, y_in, y_last)
        outputs[-1] = y_last.detach()
        self.refuse_non_finite(outputs)
        return outputs

    def refuse_non_finite(self, outputs):
        finite = torch.isfinite(outputs.reshape(len(outputs), -1)).all(dim=1)
        if not bool(finite.all()):
            k = int((~finite).nonzero()[0])
            time = float(self.grid.times[self.grid.output_steps[k]]) \
                if self.grid.output_steps[k] < self.grid.steps else None
            raise rewind.Error(f"{_WHERE}: the state at output {k} (step "
                               f"{self.grid.output_steps[k]}, t = "
                               f"{time if time is not None else 't[-1]'}) is not finite")

    # -- backward -------------------------------------------------------------------------------

    def reverse_sweep(self, grad_outputs):
        """The rest of the stream: (dL/dy0, [dL/dθ_i for the trained parameters])."""
        grid = self.grid
        lam = grad_outputs[-1]
        sums = [None] * len(self.params)
        n, y_in, y_next = self.pending
        self.pending = None
        lam = self.reverse(n, y_in, y_next, lam, sums, grad_outputs)
        y = y_in.detach()
        advanced = False
        with torch.no_grad():
            for action in self.schedule:
                kind = action.kind
                if kind == rewind.ActionKind.advance:
                    while n < action.step:
                        y, n = self.step(n, y), n + 1
                    advanced = True
                elif kind == rewind.ActionKind.store:
                    self.check_replay(n, y, advanced)
                    self.snapshots.store(action.slot, y)
                elif kind == rewind.ActionKind.restore:
                    y, n = self.snapshots.restore(action.slot), action.step
                    advanced = False
                elif kind == rewind.ActionKind.free:
                    self.snapshots.free(action.slot)
                elif kind == rewind.ActionKind.reverse:
                    self.check_replay(n, y, advanced)
                    with torch.enable_grad():
                        y_in = y.detach().requires_grad_(True)
                        y_next = self.step(n, y_in)
                    lam = self.reverse(n, y_in, y_next, lam, sums, grad_outputs)
                else:
                    raise rewind.Error(f"{_WHERE}: unexpected action {action}")
        self.snapshots.close()
        self.report_drift()
        if n != 0:
            raise rewind.Error(f"{_WHERE}: the schedule {self.schedule.name} ended at step {n}")
        return lam, sums

    def reverse(self, n, y_in, y_next, lam, sums, grad_outputs):
        """λ_n from λ_{n+1} through step n, θ's sums updated, and dL/dy_n of the outputs."""
        inputs = (y_in, *(self.params[i] for i in self.trained))
        grads = torch.autograd.grad(y_next, inputs, grad_outputs=lam, allow_unused=True)
        for i, g in zip(self.trained, grads[1:]):
            if g is not None:
                sums[i] = g if sums[i] is None else sums[i] + g
        lam = grads[0] if grads[0] is not None else torch.zeros_like(lam)
        if n in self.grid.output_of_step:
            lam = lam + grad_outputs[self.grid.output_of_step[n]]
        return lam

    def check_replay(self, n, y, advanced):
        if advanced:
            self.drift_monitor.replayed(n, y)

    def report_drift(self):
        monitor = self.drift_monitor
        differences = monitor.differences()
        self.report.drift_checked = monitor.replays
        self.report.drift_steps = sorted({n for n, _ in differences})
        if not differences:
            return
        n, size = min(differences)
        message = (f"{_WHERE}: the replayed state at step {n} (t = {float(self.grid.times[n])!r}) "
                   f"differs from the forward pass's (sum of magnitudes differs by {size:.3g} "
                   f"relative; {len(differences)} of {monitor.replays} checked states differ): "
                   f"func is not deterministic, so the gradient is that of the replayed steps")
        if self.drift == "fail":
            raise DriftError(message)
        warnings.warn(message, RuntimeWarning, stacklevel=2)


class _Odeint(torch.autograd.Function):
    """Inputs (run, y0, t, *params); output the states at the times of t."""

    @staticmethod
    def forward(ctx, run, y0, t, *params):
        ctx.run = run
        return run.first_sweep(y0.detach())

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_outputs):
        run, ctx.run = ctx.run, None
        if run is None:
            raise RuntimeError(f"{_WHERE}: the backward pass of a solve runs once (its "
                               f"schedule has been used up); solve again for a second one")
        d_y0, sums = run.reverse_sweep(grad_outputs)
        d_params = [s if s is not None and ctx.needs_input_grad[3 + i] else None
                    for i, s in enumerate(sums)]
        return (None, d_y0 if ctx.needs_input_grad[1] else None, None, *d_params)
