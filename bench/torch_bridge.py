#!/usr/bin/env python3
"""rewind.torch.odeint against backpropagation and torchdiffeq, side by side, as the horizon grows.

    REWIND_PYTHON_TORCH=1 scripts/python_test.sh -q    # build/python-venv with torch, torchdiffeq
    build/python-venv/bin/python bench/torch_bridge.py  # about 20 minutes on 2 loaded cores
    build/python-venv/bin/python bench/torch_bridge.py --steps 100,1000 --repeats 5

The model: dy/dt = MLP(y), 2-64-64-2 tanh (4482 parameters), a batch of 16 initial states; one
gradient of J = 1/2 mean |y_T|^2 with respect to y0 and the parameters. The solver: Kutta's 3/8
rule (torchdiffeq's fixed-grid "rk4"; rewind's "rk38") with the step dt = 1/64 (a binary
fraction, so every variant's grid has the same bits), l = 100, 1000, 10000 steps, float64 and
float32, torch on one thread. Variants:

  direct            backpropagation through a plain PyTorch loop of the same steps (the reference)
  rewind-revolve    rewind.torch.odeint, revolve with --snapshots snapshots (default 20)
  rewind-store-all  rewind.torch.odeint keeping every state (no recomputation; not the graph)
  torchdiffeq       torchdiffeq.odeint(method="rk4", options=dict(step_size=dt)), backpropagated
  torchdiffeq-adj   torchdiffeq.odeint_adjoint, the same: its continuous adjoint, solved backwards

Each variant runs in its own process (so that its peak RSS, ru_maxrss, is its own): --repeats
gradients, the median time of those after the first and the best time (the least disturbed by
other work on the machine); the memory is the peak RSS over the
gradients minus the peak RSS before the first (torch and the variant's modules imported, the
model and the states built: each variant's own baseline). Printed per row:
the gradient's largest difference relative to direct backpropagation's, |y_T| (the physics: equal
across variants), time and memory, and their ratios to direct backpropagation.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

DT = 1.0 / 64
BATCH, WIDTH = 16, 64
VARIANTS = ["direct", "rewind-revolve", "rewind-store-all", "torchdiffeq", "torchdiffeq-adj"]


# ------------------------------------------------------------------ one variant (child process)


def build(dtype_name):
    import torch

    torch.set_num_threads(1)
    dtype = getattr(torch, dtype_name)
    torch.manual_seed(0)

    class Field(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(2, WIDTH), torch.nn.Tanh(),
                                           torch.nn.Linear(WIDTH, WIDTH), torch.nn.Tanh(),
                                           torch.nn.Linear(WIDTH, 2))

        def forward(self, t, y):
            return self.net(y)

    func = Field().to(dtype)
    angle = torch.linspace(0.0, 6.0, BATCH, dtype=torch.float64)
    y0 = torch.stack([2.0 * torch.cos(angle), 2.0 * torch.sin(angle)], dim=1).to(dtype)
    return torch, func, y0.requires_grad_(True)


def direct_solve(torch, func, y0, steps):
    """Backpropagation's reference: the 3/8 rule as torchdiffeq writes it, in a plain loop."""
    h = torch.tensor(DT, dtype=y0.dtype)
    y, t = y0, torch.tensor(0.0, dtype=y0.dtype)
    third = h / 3
    for n in range(steps):
        t = n * h
        k1 = func(t, y)
        k2 = func(t + third, y + h * k1 / 3)
        k3 = func(t + 2 * third, y + h * (k2 - k1 / 3))
        k4 = func(t + h, y + h * (k1 - k2 + k3))
        y = y + (k1 + 3 * (k2 + k3) + k4) * h * 0.125
    return y


def final_state(variant, torch, func, y0, steps, snapshots):
    t = torch.tensor([0.0, steps * DT], dtype=y0.dtype)
    if variant == "direct":
        return direct_solve(torch, func, y0, steps)
    if variant.startswith("rewind"):
        import rewind.torch

        checkpoints = snapshots if variant == "rewind-revolve" else None
        return rewind.torch.odeint(func, y0, t, method="rk38", step_size=DT,
                                   checkpoints=checkpoints, drift="warn")[-1]
    import torchdiffeq

    solve = torchdiffeq.odeint_adjoint if variant == "torchdiffeq-adj" else torchdiffeq.odeint
    return solve(func, y0, t, method="rk4", options={"step_size": DT})[-1]


def child(arguments):
    torch, func, y0 = build(arguments.dtype)
    params = [y0, *func.parameters()]
    if arguments.variant.startswith("rewind"):
        import rewind.torch  # noqa: F401
    elif arguments.variant.startswith("torchdiffeq"):
        import torchdiffeq  # noqa: F401
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    times = []
    for _ in range(arguments.repeats):
        start = time.perf_counter()
        y_t = final_state(arguments.variant, torch, func, y0, arguments.steps,
                          arguments.snapshots)
        loss = 0.5 * y_t.square().sum(dim=1).mean()
        grads = torch.autograd.grad(loss, params)
        times.append(time.perf_counter() - start)
    gradient = torch.cat([g.reshape(-1) for g in grads]).double()
    torch.save(gradient, arguments.gradient_file)
    print(json.dumps({
        "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before,
        "seconds": statistics.median(times[1:] if len(times) > 1 else times),
        "best_seconds": min(times),
        "loss": float(loss),
        "final_norm": float(y_t.detach().double().norm()),
    }))


# ------------------------------------------------------------------ the table (parent process)


def run_child(variant, dtype, steps, arguments, gradient_file):
    command = [sys.executable, __file__, "--child", "--variant", variant, "--dtype", dtype,
               "--steps", str(steps), "--repeats", str(arguments.repeats),
               "--snapshots", str(arguments.snapshots), "--gradient-file", gradient_file]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr else "failed"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def available(variant):
    if not variant.startswith("torchdiffeq"):
        return True
    try:
        import torchdiffeq  # noqa: F401
    except ImportError:
        return False
    return True


def table(arguments):
    import torch

    rows = []
    folder = tempfile.mkdtemp(prefix="torch-bridge-")
    print(f"{'dtype':8} {'steps':>6} {'variant':17} {'grad diff':>10} {'|y_T|':>13} "
          f"{'time s':>9} {'x direct':>8} {'best s':>9} {'x direct':>8} {'memory MiB':>10} "
          f"{'x direct':>8}", flush=True)
    for dtype in arguments.dtypes.split(","):
        for steps in [int(s) for s in arguments.steps.split(",")]:
            reference = None
            for variant in VARIANTS:
                if not available(variant):
                    continue
                gradient_file = os.path.join(folder, f"{variant}.pt")
                result = run_child(variant, dtype, steps, arguments, gradient_file)
                row = {"dtype": dtype, "steps": steps, "variant": variant, **result}
                if "error" not in result:
                    row["memory_mib"] = result["rss_kib"] / 1024
                    gradient = torch.load(gradient_file)
                    if variant == "direct":
                        reference = dict(row, gradient=gradient)
                    row["gradient_difference"] = float(
                        (gradient - reference["gradient"]).abs().max()
                        / reference["gradient"].abs().max())
                    row["time_ratio"] = result["seconds"] / reference["seconds"]
                    row["best_time_ratio"] = result["best_seconds"] / reference["best_seconds"]
                    row["memory_ratio"] = row["memory_mib"] / max(reference["memory_mib"], 1e-9)
                    print(f"{dtype:8} {steps:6d} {variant:17} {row['gradient_difference']:10.2e} "
                          f"{row['final_norm']:13.10f} {row['seconds']:9.4f} "
                          f"{row['time_ratio']:8.2f} {row['best_seconds']:9.4f} "
                          f"{row['best_time_ratio']:8.2f} {row['memory_mib']:10.1f} "
                          f"{row['memory_ratio']:8.2f}", flush=True)
                else:
                    print(f"{dtype:8} {steps:6d} {variant:17} failed: {result['error']}",
                          flush=True)
                rows.append(row)
    if arguments.json:
        with open(arguments.json, "w") as out:
            json.dump(rows, out, indent=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", default="100,1000,10000", help="horizons in steps")
    parser.add_argument("--dtypes", default="float64,float32")
    parser.add_argument("--repeats", type=int, default=5, help="gradients per variant")
    parser.add_argument("--snapshots", type=int, default=20, help="rewind-revolve's budget")
    parser.add_argument("--json", help="also write the rows here")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--variant", help=argparse.SUPPRESS)
    parser.add_argument("--dtype", help=argparse.SUPPRESS)
    parser.add_argument("--gradient-file", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        arguments.steps = int(arguments.steps)
        child(arguments)
    else:
        table(arguments)


if __name__ == "__main__":
    main()
