#!/usr/bin/python3
"""rewind against PyTorch on neural ODEs: same model, solver, steps, batch and initial parameters.

    bench/run_neural_ode_compare.sh              # sets up torch + torchdiffeq, builds, runs this
    python bench/neural_ode_torch_compare.py --rewind build/bench/neural_ode_bench \
        --lorenz-data build/lorenz63.csv

Cases (--cases):
  spiral     dy/dt = mlp(y^3; theta), MLP 2-50-2 tanh (252 parameters), data/spiral.csv,
             batch 20 x window 10
  lorenz63   dy/dt = mlp(y; theta), MLP 3-64-64-3 tanh (4611 parameters), noisy Lorenz-63
             samples (rewind generate lorenz63, normalised per component: --lorenz-data),
             batch 32 x window 20
float64, Kutta's 3/8 rule with a fixed step (torchdiffeq's "rk4" is that rule, so rewind runs
--method rk38), one step per data interval.
Variants:
  rewind            exact discrete adjoint (rwd::CheckpointedAdjoint, store-all per window)
  torch-direct      backpropagation through the solver steps written in plain PyTorch
  torchdiffeq       torchdiffeq.odeint, backpropagation through its fixed-grid solver
  torchdiffeq-adj   torchdiffeq.odeint_adjoint: the continuous adjoint, solved backwards

Per case:
1. Gradient check: the loss and dJ/dtheta at the same parameters (rewind's initial parameters,
   converted to nn.Linear's layout) and the same windows; the relative difference of every
   variant to rewind. Discrete variants must agree to ~1e-10; the continuous adjoint differs by
   its discretisation error, which is printed too.
2. Time per training iteration (sample windows, loss, gradient, Adam) and peak RSS; each variant
   in its own process, torch limited to one thread like rewind.
3. (spiral) Horizon: one gradient of J = 1/2 mean|y_T|^2 over T = 10^3, 10^4, 10^5 steps: peak RSS of
   rewind with revolve(--snapshots) against direct backpropagation (whose graph grows with T)
   and odeint_adjoint. A variant predicted to need more than --memory-limit is not run.
"""
import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

CASES = {
    "spiral": {"layers": [50], "features": "cube", "batch": 20, "window": 10, "rewind_iterations": 2000,
               "iterations": 100, "title": "spiral: dy/dt = mlp(y^3), MLP 2-50-2 tanh"},
    "lorenz63": {"layers": [64, 64], "features": "identity", "batch": 32, "window": 20,
                 "rewind_iterations": 300, "iterations": 40,
                 "title": "Lorenz-63 (noisy samples, normalised): dy/dt = mlp(y), MLP 3-64-64-3 tanh"},
}


# ---------------------------------------------------------------- PyTorch side (child process)

def torch_model(theta, dim, layers, features):
    import torch
    from torch import nn

    widths = [dim, *layers, dim]

    class Field(nn.Module):
        def __init__(self):
            super().__init__()
            self.linears = nn.ModuleList(nn.Linear(widths[i], widths[i + 1]).double()
                                         for i in range(len(widths) - 1))

        def forward(self, t, y):  # y: (batch, dim)
            h = y ** 3 if features == "cube" else y
            for layer in self.linears[:-1]:
                h = torch.tanh(layer(h))
            return self.linears[-1](h)

    field = Field()
    # rewind's flat theta: per layer W (out x in, column-major) then b.
    theta = np.asarray(theta, dtype=np.float64)
    with torch.no_grad():
        o = 0
        for layer in field.linears:
            n_out, n_in = layer.weight.shape
            w = theta[o:o + n_in * n_out].reshape(n_in, n_out).T
            o += n_in * n_out
            b = theta[o:o + n_out]
            o += n_out
            layer.weight.copy_(torch.from_numpy(np.ascontiguousarray(w)))
            layer.bias.copy_(torch.from_numpy(b.copy()))
        assert o == len(theta), f"theta has {len(theta)} values, the network {o}"
    return field


def flat_gradient(field):
    parts = []
    for layer in field.linears:
        parts.append(layer.weight.grad.detach().numpy().T.reshape(-1))  # column-major W
        parts.append(layer.bias.grad.detach().numpy().reshape(-1))
    return np.concatenate(parts)


def rk38_step(f, t, y, h):
    k1 = f(t, y)
    k2 = f(t + h / 3, y + h * k1 / 3)
    k3 = f(t + 2 * h / 3, y + h * (k2 - k1 / 3))
    k4 = f(t + h, y + h * (k1 - k2 + k3))
    return y + h * (k1 + 3 * (k2 + k3) + k4) / 8


def solve(variant, field, y0, times, step):
    """Trajectory at `times` (a tensor), shape (len(times), batch, 2)."""
    import torch
    if variant == "torch-direct":
        out, y = [y0], y0
        for i in range(len(times) - 1):
            y = rk38_step(field, times[i], y, step)
            out.append(y)
        return torch.stack(out)
    import torchdiffeq
    solver = torchdiffeq.odeint if variant == "torchdiffeq" else torchdiffeq.odeint_adjoint
    return solver(field, y0, times, method="rk4", options={"step_size": step})


def torch_child(args):
    import torch
    torch.set_num_threads(1)
    data = load_series(args.data)
    theta = json.loads(args.theta_json) if args.theta_json else json.load(open(args.theta_file))["theta"]
    t, y = data
    field = torch_model(theta, y.shape[1], [int(w) for w in args.layers.split(",")], args.features)
    step = float(t[1] - t[0])
    out = {"variant": args.variant}
    if args.task == "gradient":
        starts = [int(s) for s in args.starts.split(",")]
        times = torch.tensor([k * step for k in range(args.window + 1)], dtype=torch.float64)
        y0 = torch.tensor(y[starts], dtype=torch.float64)
        target = torch.tensor(np.stack([y[np.array(starts) + k] for k in range(1, args.window + 1)]))
        pred = solve(args.variant, field, y0, times, step)
        loss = ((pred[1:] - target) ** 2).mean()
        loss.backward()
        out.update(loss=loss.item(), grad_theta=flat_gradient(field).tolist())
    elif args.task == "train":
        rng = np.random.default_rng(args.seed)
        opt = torch.optim.Adam(field.parameters(), lr=1e-2)
        times = torch.tensor([k * step for k in range(args.window + 1)], dtype=torch.float64)
        yt = torch.tensor(y, dtype=torch.float64)

        def iteration():
            starts = torch.from_numpy(rng.integers(0, len(t) - args.window, size=args.batch))
            y0 = yt[starts]
            target = torch.stack([yt[starts + k] for k in range(1, args.window + 1)])
            opt.zero_grad()
            loss = ((solve(args.variant, field, y0, times, step)[1:] - target) ** 2).mean()
            loss.backward()
            opt.step()
            return loss.item()

        iteration()  # warm-up
        start = time.perf_counter()
        for _ in range(args.iterations):
            loss = iteration()
        out.update(seconds_per_iteration=(time.perf_counter() - start) / args.iterations, final_loss=loss)
    elif args.task == "horizon":
        rss_before = peak_rss()
        y0 = torch.tensor(y[np.arange(args.batch) % len(t)], dtype=torch.float64)
        times = torch.tensor([0.0, args.steps * step], dtype=torch.float64)
        start = time.perf_counter()
        if args.variant == "torch-direct":
            yT = y0
            for i in range(args.steps):
                yT = rk38_step(field, i * step, yT, step)
        else:
            yT = solve(args.variant, field, y0, times, step)[-1]
        loss = 0.5 * (yT ** 2).sum() / args.batch
        loss.backward()
        out.update(seconds=time.perf_counter() - start, loss=loss.item(),
                   grad_norm=float(np.linalg.norm(flat_gradient(field))), rss_before_bytes=rss_before)
    out["peak_rss_bytes"] = peak_rss()
    print(json.dumps(out))


# ---------------------------------------------------------------- helpers and the driver

def peak_rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def load_series(path):
    raw = np.loadtxt(path, delimiter=",", comments="#", skiprows=1)
    return raw[:, 0], raw[:, 1:]


def run_json(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def rewind(args, case, *extra):
    return run_json([args.rewind, "--data", case["data"], "--method", "rk38", "--features", case["features"],
                     "--layers", ",".join(map(str, case["layers"])), *extra])


def torch_run(args, case, variant, task, theta_file, *extra):
    return run_json([sys.executable, os.path.abspath(__file__), "--child", "--variant", variant, "--task", task,
                     "--data", case["data"], "--layers", ",".join(map(str, case["layers"])), "--features",
                     case["features"], "--theta-file", theta_file, *extra])


def mib(b):
    return b / 2 ** 20


def compare_case(args, name, case, report):
    """Sections 1 and 2 for one case; returns the theta file (for the spiral's horizons)."""
    t, y = load_series(case["data"])
    theta = rewind(args, case, "--mode", "parameters")["theta"]
    theta_file = os.path.join(tempfile.gettempdir(), f"rewind_neural_ode_theta_{name}_{os.getpid()}.json")
    with open(theta_file, "w") as f:
        json.dump({"theta": theta}, f)
    batch, window = case["batch"], case["window"]
    model = f"{y.shape[1]}-{'-'.join(map(str, case['layers']))}-{y.shape[1]}"
    out = report[name] = {"model": model, "features": case["features"], "parameters": len(theta),
                          "batch": batch, "window": window, "data": case["data"], "points": len(t)}
    print(f"== {case['title']} ({len(theta)} parameters), {len(t)} points, batch {batch} x window {window}")
    variants = ["torch-direct", "torchdiffeq", "torchdiffeq-adj"]
    # 1. gradients
    rng = np.random.default_rng(args.seed)
    starts = ",".join(str(int(s)) for s in rng.integers(0, len(t) - window, size=batch))
    ref = rewind(args, case, "--mode", "gradient", "--starts", starts, "--window", str(window))
    g_ref = np.array(ref["grad_theta"])
    print(f"1. gradient at the same parameters ({len(theta)}) and windows (batch {batch} x window {window})")
    print(f"   {'variant':16s} {'loss':>22s} {'|dJ/dtheta|':>12s} {'rel. difference to rewind':>26s}")
    print(f"   {'rewind':16s} {ref['loss']:22.15e} {np.linalg.norm(g_ref):12.5e} {'-':>26s}")
    out["gradient"] = {"rewind": {"loss": ref["loss"], "grad_norm": float(np.linalg.norm(g_ref))}}
    for v in variants:
        r = torch_run(args, case, v, "gradient", theta_file, "--starts", starts, "--window", str(window))
        g = np.array(r["grad_theta"])
        rel = float(np.linalg.norm(g - g_ref) / np.linalg.norm(g_ref))
        print(f"   {v:16s} {r['loss']:22.15e} {np.linalg.norm(g):12.5e} {rel:26.3e}")
        out["gradient"][v] = {"loss": r["loss"], "grad_norm": float(np.linalg.norm(g)), "rel_difference": rel}
        if v == "torchdiffeq-adj":
            # Both continuous adjoints, same solver and grid: they should agree with each other.
            ours = np.array(rewind(args, case, "--mode", "gradient", "--starts", starts, "--window", str(window),
                                   "--adjoint", "backsolve")["grad_theta"])
            rel_b = float(np.linalg.norm(ours - g) / np.linalg.norm(g))
            rel_e = float(np.linalg.norm(ours - g_ref) / np.linalg.norm(g_ref))
            print(f"   {'rewind backsolve':16s} {'':22s} {np.linalg.norm(ours):12.5e} {rel_e:26.3e}"
                  f"   (vs torchdiffeq-adj: {rel_b:.3e})")
            out["gradient"]["rewind-backsolve"] = {"rel_difference": rel_e, "rel_difference_to_torchdiffeq_adj": rel_b}

    # 2. training iterations
    print(f"2. time per training iteration (batch {batch}, window {window}, Adam, one thread)")
    ours = rewind(args, case, "--mode", "train", "--iterations", str(args.rewind_iterations or case["rewind_iterations"]),
                  "--batch", str(batch), "--window", str(window))
    rows = [("rewind", ours["seconds_per_iteration"], ours["peak_rss_bytes"])]
    for v in variants:
        r = torch_run(args, case, v, "train", theta_file, "--window", str(window), "--batch", str(batch),
                      "--iterations", str(args.iterations or case["iterations"]), "--seed", str(args.seed))
        rows.append((v, r["seconds_per_iteration"], r["peak_rss_bytes"]))
    print(f"   {'variant':16s} {'ms / iteration':>15s} {'vs rewind':>10s} {'peak RSS':>12s}")
    out["train"] = {}
    for row_name, sec, rss in rows:
        print(f"   {row_name:16s} {sec * 1e3:15.3f} {sec / rows[0][1]:9.1f}x {mib(rss):9.1f} MiB")
        out["train"][row_name] = {"seconds_per_iteration": sec, "peak_rss_bytes": rss}
    fastest = min(rows[1:], key=lambda r: r[1])
    print(f"   fastest PyTorch variant ({fastest[0]}) / rewind: {fastest[1] / rows[0][1]:.1f}x")
    out["train"]["fastest_torch_over_rewind"] = fastest[1] / rows[0][1]
    print()
    return theta_file


def horizons(args, case, theta_file, report):
    print(f"3. spiral: one gradient over T steps (batch {args.horizon_batch}): peak RSS (and seconds)")
    print(f"   {'T':>8s} {'rewind revolve(' + str(args.snapshots) + ')':>24s} {'rewind store-all':>20s}"
          f" {'torch-direct':>20s} {'torchdiffeq-adj':>20s}")
    report["horizon"] = []
    per_step = None  # direct backprop bytes per step, from the first horizon
    for T in [int(h) for h in args.horizons.split(",")]:
        row = {"steps": T}
        common = ["--mode", "horizon", "--steps", str(T), "--batch", str(args.horizon_batch)]
        row["rewind"] = rewind(args, case, *common, "--snapshots", str(args.snapshots))
        row["rewind-store-all"] = rewind(args, case, *common, "--snapshots", "0")
        for v in ("torch-direct", "torchdiffeq-adj"):
            if v == "torch-direct" and per_step and per_step * T > args.memory_limit * 2 ** 30:
                row[v] = {"skipped": f"predicted {per_step * T / 2 ** 30:.1f} GiB > --memory-limit"}
                continue
            row[v] = torch_run(args, case, v, "horizon", theta_file, "--steps", str(T), "--batch",
                               str(args.horizon_batch))
            if v == "torch-direct" and per_step is None:
                per_step = (row[v]["peak_rss_bytes"] - row[v]["rss_before_bytes"]) / T
        cells = []
        for v in ("rewind", "rewind-store-all", "torch-direct", "torchdiffeq-adj"):
            r = row[v]
            cells.append("skipped" if "skipped" in r else f"{mib(r['peak_rss_bytes']):.0f} MiB ({r['seconds']:.1f} s)")
        print(f"   {T:8d} " + " ".join(f"{c:>20s}" for c in cells))
        report["horizon"].append(row)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rewind", default="build/bench/neural_ode_bench")
    p.add_argument("--cases", default="spiral,lorenz63", help="comma-separated: spiral, lorenz63")
    p.add_argument("--data", default="data/spiral.csv", help="the spiral's data")
    p.add_argument("--lorenz-data", default="build/lorenz63.csv",
                   help="normalised Lorenz-63 samples (neural_ode_bench --mode series)")
    p.add_argument("--batch", type=int, default=None, help="windows per batch (default: the case's)")
    p.add_argument("--window", type=int, default=None, help="intervals per window (default: the case's)")
    p.add_argument("--iterations", type=int, default=None, help="timed training iterations (torch variants)")
    p.add_argument("--rewind-iterations", type=int, default=None, help="timed training iterations (rewind)")
    p.add_argument("--horizons", default="1000,10000,100000", help="spiral horizons; empty: none")
    p.add_argument("--horizon-batch", type=int, default=4)
    p.add_argument("--snapshots", type=int, default=8)
    p.add_argument("--memory-limit", type=float, default=12.0, help="GiB; larger predicted runs are skipped")
    p.add_argument("--json", default=None, help="write every figure here")
    p.add_argument("--seed", type=int, default=1)
    # child-process arguments
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--variant", help=argparse.SUPPRESS)
    p.add_argument("--task", help=argparse.SUPPRESS)
    p.add_argument("--theta-file", help=argparse.SUPPRESS)
    p.add_argument("--theta-json", help=argparse.SUPPRESS)
    p.add_argument("--starts", help=argparse.SUPPRESS)
    p.add_argument("--steps", type=int, help=argparse.SUPPRESS)
    p.add_argument("--layers", help=argparse.SUPPRESS)
    p.add_argument("--features", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        return torch_child(args)

    import torch
    import torchdiffeq
    report = {"torch": torch.__version__, "torchdiffeq": torchdiffeq.__version__,
              "method": "rk38 (torchdiffeq rk4)", "threads": 1}
    theta_files = {}
    try:
        for name in args.cases.split(","):
            case = dict(CASES[name])
            case["data"] = args.data if name == "spiral" else args.lorenz_data
            if args.batch:
                case["batch"] = args.batch
            if args.window:
                case["window"] = args.window
            theta_files[name] = compare_case(args, name, case, report)
            if name == "spiral" and args.horizons:
                horizons(args, case, theta_files[name], report)
                print()
        if args.json:
            with open(args.json, "w") as f:
                json.dump(report, f, indent=1)
    finally:
        for f in theta_files.values():
            os.remove(f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
