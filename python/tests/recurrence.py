"""A time loop in Python whose checkpointing a rewind schedule drives, with a gradient known in
closed form: the linear recurrence

    y_{n+1} = a * y_n + b        (y_n a NumPy vector, a and b scalars),   J = sum(y_l),

whose derivatives are dJ/dy_0 = a^l, dJ/db = m (a^l - 1) / (a - 1) and
dJ/da = l a^(l-1) sum(y_0) + m b (l a^(l-1) (a - 1) - (a^l - 1)) / (a - 1)^2 (m = len(y_0)).

The adjoint of step n needs y_n (dJ/da gathers y_n . lambda_{n+1}), so a wrong restore gives a
wrong gradient: the loop checks every action's step against its own bookkeeping as well.
"""

import numpy as np

import rewind

Kind = rewind.ActionKind


def closed_form(a, b, y0, steps):
    """(J, dJ/dy0, dJ/da, dJ/db) from the formulas above."""
    l, m = steps, len(y0)
    al = a**l
    y_l = al * y0 + b * (al - 1.0) / (a - 1.0)
    d_a = l * a ** (l - 1) * np.sum(y0) + m * b * (l * a ** (l - 1) * (a - 1.0) - (al - 1.0)) / (
        a - 1.0
    ) ** 2
    return np.sum(y_l), np.full(m, al), d_a, m * (al - 1.0) / (a - 1.0)


class AdjointLoop:
    """The state, the snapshots and the adjoint of the recurrence, moved by Actions."""

    def __init__(self, a, b, y0, steps):
        self.a, self.b, self.steps = a, b, steps
        self.step_index, self.y = 0, np.array(y0, dtype=float)
        self.slots = {}  # slot -> ("state" | "stages", step, vector)
        self.adjoint_step = steps
        self.lam = np.ones_like(self.y)  # dJ/dy_l
        self.grad_a = 0.0
        self.grad_b = 0.0
        self.loss = None
        self.forward_evaluations = 0

    def forward(self, y, n):
        """y_{n+1} from y_n; the loss when n + 1 = l."""
        self.forward_evaluations += 1
        y_next = self.a * y + self.b
        if n + 1 == self.steps:
            self.loss = np.sum(y_next)
        return y_next

    def adjoint_of_step(self, n, y_n):
        assert self.adjoint_step == n + 1, f"adjoint at {self.adjoint_step}, reversing step {n}"
        self.grad_a += float(np.dot(y_n, self.lam))
        self.grad_b += float(np.sum(self.lam))
        self.lam = self.a * self.lam
        self.adjoint_step = n

    def execute(self, action):
        kind, step, slot = action
        if kind == Kind.advance:
            assert self.step_index < step <= self.steps
            while self.step_index < step:
                self.y = self.forward(self.y, self.step_index)
                self.step_index += 1
        elif kind == Kind.store:
            assert step == self.step_index and slot not in self.slots
            self.slots[slot] = ("state", step, self.y.copy())
        elif kind == Kind.restore:
            what, held, y = self.slots[slot]
            assert what == "state" and held == step
            self.step_index, self.y = step, y.copy()
        elif kind == Kind.free:
            assert self.slots.pop(slot)[1] == step
        elif kind == Kind.store_stages:
            # What the adjoint of this step needs is y_n itself (its one stage).
            assert step == self.step_index and slot not in self.slots
            self.slots[slot] = ("stages", step, self.y.copy())
            self.y = self.forward(self.y, step)
            self.step_index += 1
        elif kind == Kind.reverse and action.uses_stages:
            what, held, y_n = self.slots[slot]
            assert what == "stages" and held == step
            self.adjoint_of_step(step, y_n)
        elif kind == Kind.reverse:
            assert self.step_index == step, f"reverse {step} from y_{self.step_index}"
            self.forward(self.y, step)  # the step re-run inside the reverse step
            self.adjoint_of_step(step, self.y)
        else:
            raise AssertionError(f"unexpected {action!r}")

    def gradients(self):
        """(J, dJ/dy0, dJ/da, dJ/db) once every step is reversed."""
        assert self.adjoint_step == 0 and not self.slots
        return self.loss, self.lam, self.grad_a, self.grad_b


def run_schedule(schedule, a, b, y0):
    """Drives the loop with every action of an offline schedule; returns the loop."""
    loop = AdjointLoop(a, b, y0, schedule.steps)
    for action in schedule:
        loop.execute(action)
    return loop


def run_online(snapshots, steps, a, b, y0):
    """The loop of a run that learns its length only when it stops (here: at `steps`), driven
    by rewind.OnlineSchedule: y_{n+1} is computed before the schedule is asked about y_n."""
    schedule = rewind.OnlineSchedule(snapshots)
    loop = AdjointLoop(a, b, y0, steps)
    y_next = loop.forward(loop.y, 0)
    if steps == 1:
        schedule.end_at(1)
    for action in schedule:
        if action.kind == Kind.advance and not schedule.ended:
            loop.step_index, loop.y = action.step, y_next
            y_next = loop.forward(loop.y, loop.step_index)
            if loop.step_index + 1 == steps:  # the stop condition: y_{n+1} is final
                schedule.end_at(steps)
        else:
            loop.execute(action)
    return loop
