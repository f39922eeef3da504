"""rewind.torch.odeint: the exact discrete adjoint of a PyTorch ODE solve under rewind's
schedules. Its gradient equals backpropagation through the same steps to round-off, has the same
bits whatever the schedule and store, costs exactly the forward steps rewind's simulator counts,
and bad input is refused naming what and where.

Skipped without PyTorch; `REWIND_PYTHON_TORCH=1 scripts/python_test.sh` installs it
(python/requirements-torch.txt) and runs these tests."""

import math
import os
import pathlib
import re
import warnings

import pytest

torch = pytest.importorskip("torch")

import rewind  # noqa: E402
import rewind.torch as rt  # noqa: E402

TOLERANCE = {torch.float64: 1e-13, torch.float32: 1e-5}


class Field(torch.nn.Module):
    """dy/dt = W2 tanh(W1 y + b1) + b2 + s sin(t) y: an MLP with an explicit time term, so that
    the stage times matter."""

    def __init__(self, width=16):
        super().__init__()
        self.inner = torch.nn.Linear(2, width)
        self.outer = torch.nn.Linear(width, 2)
        self.scale = torch.nn.Parameter(torch.tensor(0.3))

    def forward(self, t, y):
        return self.outer(torch.tanh(self.inner(y))) + self.scale * torch.sin(t) * y


def field(dtype=torch.float64):
    torch.manual_seed(7)
    return Field().to(dtype)


def start(dtype=torch.float64):
    return torch.tensor([[1.0, 0.5], [0.2, -0.3], [-0.7, 0.9]], dtype=dtype, requires_grad=True)


def reference_solve(func, y0, t, method, substeps=None):
    """Backpropagation's reference: a plain loop of the tableau's steps with autograd recording,
    every stage evaluated; substeps[k] equal steps in interval k."""
    tableau = rewind.ButcherTableau.by_name(method)
    s = tableau.stages
    ys, y = [y0], y0
    for k in range(len(t) - 1):
        m = 1 if substeps is None else substeps[k]
        h = (t[k + 1] - t[k]) / m
        for j in range(m):
            tn = t[k] + j * h
            stages = []
            for i in range(s):
                yi = y + h * sum(tableau.a_at(i, q) * stages[q] for q in range(i)) if i else y
                stages.append(func(tn + tableau.c[i] * h, yi))
            y = y + h * sum(tableau.b[i] * stages[i] for i in range(s))
        ys.append(y)
    return torch.stack(ys)


def weights(ys):
    torch.manual_seed(3)
    return torch.randn(ys.shape, dtype=torch.float64).to(ys.dtype)


def gradients(ys, y0, func):
    loss = (ys * weights(ys)).sum()
    return torch.autograd.grad(loss, (y0, *func.parameters()))


def largest_difference(got, want):
    return float((got - want).detach().abs().max())


def relative_difference(got, want):
    return max(float((g - w).abs().max() / w.abs().max()) for g, w in zip(got, want))


# -- exactness ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
@pytest.mark.parametrize("method", rt.methods())
def test_the_gradient_is_backpropagation_through_the_same_steps(method, dtype):
    func, y0 = field(dtype), start(dtype)
    t = torch.linspace(0.0, 2.0, 16, dtype=dtype)
    want_states = reference_solve(func, y0, t, method)
    want = gradients(want_states, y0, func)
    states = rt.odeint(func, y0, t, method=method, checkpoints=3)
    assert states.shape == (16, 3, 2) and states.dtype == dtype
    assert largest_difference(states, want_states) <= TOLERANCE[dtype]
    assert relative_difference(gradients(states, y0, func), want) <= TOLERANCE[dtype]


def every_store(tmp_path, steps):
    costs = rewind.CostModel(disk_write_time=2.0, disk_read_time=2.0)
    three = rewind.CostModel(write_time=0.01, read_time=0.01, host_write_time=0.5,
                             host_read_time=0.5, disk_write_time=20.0, disk_read_time=20.0)
    return {
        "store-all": {},
        "revolve(1)": {"checkpoints": 1},
        "revolve(2)": {"checkpoints": 2},
        "revolve(5)": {"checkpoints": 5},
        "revolve(l)": {"checkpoints": steps},
        "memory budget": {"memory": 4 * 3 * 2 * 8},  # 4 snapshots in float64, 8 in float32
        "two-level on disk": {"checkpoints": 2, "disk": tmp_path, "disk_checkpoints": 4,
                              "disk_costs": costs},
        "three-level": {"schedule": rewind.ThreeLevelSchedule(steps, 1, 2, 4, three),
                        "disk": tmp_path},
        "disk only": {"schedule": rewind.DiskOnlySchedule(rewind.RevolveSchedule(steps, 3)),
                      "disk": tmp_path},
        "uniform": {"schedule": rewind.UniformSchedule(steps, 7)},
        "plan": {"schedule": rewind.plan_checkpoints(rewind.PlanRequest.revolve(4), steps)},
    }


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
def test_every_schedule_and_store_gives_the_same_bits(tmp_path, dtype):
    func, y0 = field(dtype), start(dtype)
    t = torch.linspace(0.0, 3.0, 7, dtype=dtype)  # 6 intervals of 5 steps: 30 steps
    runs = {}
    for name, options in every_store(tmp_path, 30).items():
        report = rt.Report()
        states = rt.odeint(func, y0, t, step_size=0.1, report=report, **options)
        runs[name] = (states, gradients(states, y0, func), report)
        assert report.steps == 30
        assert report.forward_steps == report.planned_forward_steps, name
    states, grads, _ = runs["store-all"]
    for name, (other_states, other_grads, report) in runs.items():
        assert torch.equal(other_states, states), name
        assert all(torch.equal(a, b) for a, b in zip(other_grads, grads)), name
    assert runs["two-level on disk"][2].disk_writes > 0
    assert runs["two-level on disk"][2].disk_reads > 0
    assert runs["revolve(2)"][2].peak_snapshots == 2
    assert not os.listdir(tmp_path)  # every snapshot file removed


@pytest.mark.parametrize("steps,snapshots", [(1, 1), (2, 1), (40, 1), (40, 3), (100, 7)])
def test_revolve_computes_the_fewest_forward_steps(steps, snapshots):
    func, y0 = field(), start()
    t = torch.linspace(0.0, 1.0, steps + 1, dtype=torch.float64)
    report = rt.Report()
    states = rt.odeint(func, y0, t, method="euler", checkpoints=snapshots, report=report)
    assert report.forward_steps == steps  # the forward pass: l - 1 advances and the last step
    assert report.peak_snapshots <= snapshots
    gradients(states, y0, func)
    want = steps + rewind.revolve_advances(steps, snapshots)
    assert report.forward_steps == report.planned_forward_steps == want
    assert report.plan == f"revolve(c = {snapshots})"


def test_the_step_size_rule_takes_equal_steps_per_interval():
    func, y0 = field(), start()
    t = torch.tensor([0.0, 0.25, 1.0, 1.3, 1.7], dtype=torch.float64)
    report = rt.Report()
    states = rt.odeint(func, y0, t, method="rk4", step_size=0.1, checkpoints=4, report=report)
    substeps = [3, 8, 3, 4]  # ceil(2.5), ceil(7.5), 0.3 / 0.1 and 0.4 / 0.1 up to round-off
    assert (1.3 - 1.0) / 0.1 > 3  # the slack is needed
    assert report.steps == sum(substeps)
    want_states = reference_solve(func, y0, t, "rk4", substeps)
    assert largest_difference(states, want_states) <= 1e-13
    assert relative_difference(gradients(states, y0, func),
                               gradients(want_states, y0, func)) <= 1e-13


@pytest.mark.parametrize("method,order", [("euler", 1), ("heun", 2), ("rk4", 4), ("rk38", 4),
                                          ("bs3", 3), ("dopri5", 5), ("tsit5", 5)])
def test_each_method_converges_at_its_order(method, order):
    t = torch.tensor([0.0, 1.0], dtype=torch.float64)
    y0 = torch.tensor([1.0], dtype=torch.float64)
    exact = math.exp(math.sin(1.0))  # dy/dt = cos(t) y

    def error(h):
        ys = rt.odeint(lambda s, y: torch.cos(s) * y, y0, t, method=method, step_size=h)
        return abs(float(ys[-1, 0]) - exact)

    observed = math.log2(error(0.1) / error(0.05))
    assert abs(observed - order) < 0.3, observed


# -- against torchdiffeq --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
@pytest.mark.parametrize("ours,theirs", [("rk38", "rk4"), ("euler", "euler")])
def test_torchdiffeq_fixed_grid_gives_the_same_states_and_gradient(ours, theirs, dtype):
    torchdiffeq = pytest.importorskip("torchdiffeq")
    func, y0 = field(dtype), start(dtype)
    t = torch.linspace(0.0, 2.0, 41, dtype=dtype)
    want_states = torchdiffeq.odeint(func, y0, t, method=theirs)
    want = gradients(want_states, y0, func)
    states = rt.odeint(func, y0, t, method=ours, checkpoints=4)
    assert largest_difference(states, want_states) <= 10 * TOLERANCE[dtype]
    assert relative_difference(gradients(states, y0, func), want) <= 10 * TOLERANCE[dtype]


# -- what the caller gets -------------------------------------------------------------------------


def test_any_state_shape_and_parameters_without_gradient():
    func = field()
    func.scale.requires_grad_(False)
    y0 = torch.tensor([0.4, -0.2], dtype=torch.float64)  # no gradient wanted for y0
    t = torch.linspace(0.0, 1.0, 6, dtype=torch.float64)
    states = rt.odeint(func, y0, t, checkpoints=2)
    assert states.shape == (6, 2) and not states.is_leaf
    states.sum().backward()
    assert func.scale.grad is None and func.inner.weight.grad is not None
    scalar = rt.odeint(lambda s, y: -y, torch.tensor(1.0, dtype=torch.float64), t)
    assert scalar.shape == (6,) and float(scalar[-1]) == pytest.approx(math.exp(-1.0), rel=1e-4)


def test_without_gradients_the_steps_run_plainly(tmp_path):
    func, y0 = field(), start()
    t = torch.linspace(0.0, 1.0, 21, dtype=torch.float64)
    report = rt.Report()
    with torch.no_grad():
        states = rt.odeint(func, y0, t, checkpoints=2, disk=tmp_path, disk_checkpoints=5,
                           report=report)
    assert report.forward_steps == 20 and report.disk_writes == 0 and not os.listdir(tmp_path)
    assert torch.equal(states, rt.odeint(func, y0, t, checkpoints=2).detach())


def test_snapshot_files_go_with_a_solve_never_differentiated(tmp_path):
    func, y0 = field(), start()
    t = torch.linspace(0.0, 1.0, 21, dtype=torch.float64)
    states = rt.odeint(func, y0, t, checkpoints=2, disk=tmp_path, disk_checkpoints=5)
    (folder,) = tmp_path.iterdir()
    assert list(folder.iterdir())
    del states
    assert not os.listdir(tmp_path)


def test_a_plain_function_with_adjoint_params():
    rate = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    y0 = torch.tensor([2.0], dtype=torch.float64)
    t = torch.linspace(0.0, 1.0, 11, dtype=torch.float64)
    states = rt.odeint(lambda s, y: -rate * y, y0, t, checkpoints=3, adjoint_params=(rate,))
    states[-1].sum().backward()  # y(1) ≈ 2 exp(-rate): dy/drate ≈ -2 exp(-rate)
    assert float(rate.grad) == pytest.approx(-2.0 * math.exp(-0.5), rel=1e-6)


def test_the_backward_pass_runs_once():
    func, y0 = field(), start()
    states = rt.odeint(func, y0, torch.linspace(0.0, 1.0, 5, dtype=torch.float64), checkpoints=2)
    loss = states.sum()
    loss.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="backward pass of a solve runs once"):
        loss.backward()


def test_snapshot_files_live_in_the_disk_folder_and_are_checked(tmp_path):
    func, y0 = field(), start()
    t = torch.linspace(0.0, 1.0, 21, dtype=torch.float64)
    states = rt.odeint(func, y0, t, checkpoints=2, disk=tmp_path, disk_checkpoints=5)
    (folder,) = tmp_path.iterdir()
    files = sorted(folder.iterdir())
    assert files and all(f.stat().st_size == y0.numel() * 8 for f in files)
    files[0].write_bytes(b"\0" * files[0].stat().st_size)
    with pytest.raises(rewind.Error, match=r"snapshot file .*slot\d+\.bin .* CRC-32"):
        states.sum().backward()


def test_a_state_that_is_not_finite_stops_the_run():
    t = torch.linspace(0.0, 1.0, 4, dtype=torch.float64)
    y0 = torch.tensor([1.0], dtype=torch.float64)
    with pytest.raises(rewind.Error, match=r"state at output 1 \(step 1, t = 0.333"):
        rt.odeint(lambda s, y: y / 0.0, y0, t)


# -- drift ----------------------------------------------------------------------------------------


class Noisy(Field):
    """Not deterministic: each evaluation adds a little more, so a replay differs."""

    calls = 0

    def forward(self, t, y):
        self.calls += 1
        return super().forward(t, y) + 1e-9 * self.calls


def test_a_deterministic_replay_shows_no_drift():
    report = rt.Report()
    func, y0 = field(), start()
    t = torch.linspace(0.0, 1.0, 31, dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rt.odeint(func, y0, t, checkpoints=3, drift="fail", report=report).sum().backward()
    assert report.drift_checked > 0 and report.drift_steps == []


def test_drift_warns_fails_or_is_ignored():
    t = torch.linspace(0.0, 1.0, 31, dtype=torch.float64)

    def solve(policy):
        torch.manual_seed(7)
        report = rt.Report()
        states = rt.odeint(Noisy().double(), start(), t, checkpoints=3, drift=policy,
                           report=report)
        states.sum().backward()
        return report

    with pytest.warns(RuntimeWarning, match=r"replayed state at step \d+ \(t = .*\) differs"):
        report = solve("warn")
    assert report.drift_steps and report.drift_checked >= len(report.drift_steps)
    with pytest.raises(rt.DriftError, match="replayed state at step"):
        solve("fail")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert solve("ignore").drift_checked == 0


# -- refusals -------------------------------------------------------------------------------------


def refusals(tmp_path):
    t = torch.linspace(0.0, 1.0, 11, dtype=torch.float64)
    y0 = start()
    return [
        ({"t": t.reshape(1, 11)}, r"t must be 1-D \(the output times\), but has shape \(1, 11\)"),
        ({"t": t[:1]}, r"t has 1 time\(s\); at least 2 are needed"),
        ({"t": t.flip(0)}, r"t must be strictly increasing, but t\[1\] = 0.9 <= t\[0\] = 1.0"),
        ({"t": t.float()}, r"t has dtype torch.float32 but y0 torch.float64"),
        ({"t": torch.arange(5)}, r"t has dtype torch.int64; a real floating-point dtype"),
        ({"y0": torch.ones(3, 2, dtype=torch.int32)}, r"y0 has dtype torch.int32"),
        ({"y0": [1.0, 2.0]}, r"y0 must be a torch.Tensor"),
        ({"t": t.to("meta")}, r"t is on meta but y0 on cpu"),
        ({"method": "rk5"}, r"method = 'rk5' is not a known method; known: euler, heun, rk4, "
                            r"rk38, bs3, dopri5, tsit5"),
        ({"checkpoints": 11}, r"checkpoints = 11 is more than the 10 steps"),
        ({"checkpoints": 0}, r"checkpoints = 0 must be an int >= 1"),
        ({"checkpoints": 3, "memory": 10**6}, r"give checkpoints .* or memory .*, not both"),
        ({"memory": 8}, r"memory = 8 bytes must be an int holding at least one snapshot of y0 "
                        r"\(48 bytes\)"),
        ({"checkpoints": 3, "disk": tmp_path}, r"disk=DIR plans two levels"),
        ({"checkpoints": 3, "disk": tmp_path, "disk_checkpoints": 8},
         r"checkpoints \+ disk_checkpoints = 3 \+ 8 is more than the 10 steps"),
        ({"checkpoints": 3, "disk": tmp_path / "missing", "disk_checkpoints": 2},
         r"disk = '.*missing' is not a directory"),
        ({"step_size": -0.1}, r"step_size = -0.1 must be a finite number > 0"),
        ({"drift": "loud"}, r"drift = 'loud' must be one of 'warn', 'fail', 'ignore'"),
        ({"schedule": rewind.RevolveSchedule(20, 3)},
         r"schedule revolve\(c = 3\) is for 20 steps, but t and step_size make 10"),
        ({"schedule": rewind.StageAwareSchedule(10, 4, 1)},
         r"schedule stage-aware\(c = 4, u = 1\) keeps stage values"),
        ({"func": lambda s, y: y[:, :1]},
         r"func\(t, y\) returned shape \(3, 1\) for y of shape \(3, 2\) \(at its first "
         r"evaluation, t = 0.0\)"),
        ({"func": lambda s, y: y.float()}, r"func\(t, y\) returned dtype torch.float32 for y of "
                                           r"dtype torch.float64"),
    ]


def test_bad_input_is_refused_naming_what_and_where(tmp_path):
    for change, message in refusals(tmp_path):
        arguments = {"func": field(), "y0": start(),
                     "t": torch.linspace(0.0, 1.0, 11, dtype=torch.float64)}
        arguments.update(change)
        with pytest.raises(rewind.InvalidArgument, match="rewind.torch.odeint: " + message):
            rt.odeint(arguments.pop("func"), arguments.pop("y0"), arguments.pop("t"),
                      **arguments)


# -- the documented example -----------------------------------------------------------------------

PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"


def test_the_documented_example_runs(capsys):
    blocks = [b for b in re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)
              if "import rewind.torch" in b]
    assert len(blocks) == 1
    exec(compile(blocks[0], str(PAGE), "exec"), {})
    assert capsys.readouterr().out == "revolve(c = 10) 2136 forward steps\n"  # 500 + p(500, 10)
