#!/usr/bin/python3
"""torchdiffeq against rewind on the same GPU: neural-ODE training iterations at large batches.

    build/bench/gpu/neural_ode_gpu_bench --dump DIR --json rewind.json     # rewind first
    python3 bench/gpu/neural_ode_torch_gpu.py --dumps DIR --rewind-json rewind.json \
        [--iterations 20] [--dtypes float64,float32] [--json torch.json]

(--device cpu runs the same on the CPU, to try the script where there is no GPU: dump with
build/bench/gpu/neural_ode_gpu_bench_cpu.)

For every batch size rewind dumped (DIR/b<B>.json and its .bin files: rewind's initial
parameters, initial states, data and first gradient, float64), the same iteration in PyTorch on
the same GPU: dy/dt = mlp(y), the MLP of the dump (tanh, nn.Linear layers holding rewind's θ),
Kutta's 3/8 rule with a fixed step (torchdiffeq's "rk4"), the loss
J = 1/2 sum_k sum_b |y_k,b - d_k,b|^2 / B over the window's steps, its gradient, one Adam step
(lr 1e-3). Variants:
  torch-direct      backpropagation through the solver steps written in plain PyTorch
  torchdiffeq       torchdiffeq.odeint, backpropagation through its fixed-grid solver
  torchdiffeq-adj   torchdiffeq.odeint_adjoint (the continuous adjoint, solved backwards)
in float64 and float32. Reported per batch, variant and type: the first loss and the relative
difference of dJ/dθ to rewind's (max |difference| / max |rewind's|: ~1e-13 expected for the
discrete variants in float64, the discretisation error for the adjoint one, float32's precision
for float32), median milliseconds per iteration over --iterations after a warm-up, the peak
device memory PyTorch allocated (torch.cuda.max_memory_allocated) and, with --rewind-json,
rewind's time and memory beside them and the speed-up over the fastest variant of each type.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

# The model and the 3/8-rule step are the CPU comparison's (bench/neural_ode_torch_compare.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from neural_ode_torch_compare import rk38_step, torch_model  # noqa: E402


def load_dump(directory, name):
    with open(os.path.join(directory, name)) as f:
        meta = json.load(f)
    base = os.path.join(directory, name[:-len(".json")])
    read = lambda suffix: np.fromfile(base + suffix, dtype="<f8")
    b, d, s = meta["batch"], meta["dim"], meta["steps"]
    meta["theta"] = read("_theta.bin")
    meta["y0"] = read("_y0.bin").reshape(b, d)                 # rewind: sample b at [b*d, (b+1)*d)
    meta["data"] = read("_data.bin").reshape(s, b, d)
    meta["grad"] = read("_grad.bin")
    return meta


def add_common_arguments(parser, variants, device):
    """The options both GPU comparison scripts take."""
    parser.add_argument("--dumps", required=True)
    parser.add_argument("--rewind-json")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--variants", default=variants)
    parser.add_argument("--dtypes", default="float64,float32")
    parser.add_argument("--json")
    parser.add_argument("--device", default=device)
    parser.add_argument("--batches", help="only these of the dumped batch sizes (e.g. 256,65536)")


def rewind_runs(path):
    """rewind's runs by batch size, from neural_ode_gpu_bench --json (empty without one)."""
    if not path:
        return {}
    with open(path) as f:
        return {run["batch"]: run for run in json.load(f)["runs"]}


def dump_names(directory, batches=None):
    """The dumps' b<B>.json names, by batch size; only the wanted sizes when batches is given."""
    names = sorted((n for n in os.listdir(directory) if n.startswith("b") and n.endswith(".json")),
                   key=lambda n: int(n[1:-5]))
    if batches:
        wanted = {int(b) for b in batches.split(",")}
        names = [n for n in names if int(n[1:-5]) in wanted]
    return names


def speedups(rows, run, dtypes):
    """rewind's speed-up over the fastest variant of each type at the run's batch size."""
    text = ""
    for dtype_name in dtypes:
        done = [x for x in rows if x["batch"] == run["batch"] and x["dtype"] == dtype_name
                and "median_ms" in x]
        if done:
            fastest = min(done, key=lambda x: x["median_ms"])
            text += (f"   speed-up over the fastest {dtype_name} ({fastest['variant']}): "
                     f"{fastest['median_ms'] / run['median_ms']:.2f}")
    return text


def make_field(theta, dim, layers, dtype, device):
    """rewind's MLP (tanh, identity features) as nn.Linear layers, on the device, in dtype."""
    return torch_model(theta, dim, layers, "identity").to(device=device, dtype=dtype)


def flat_gradient(field):
    """dJ/dθ in rewind's layout (per layer W column-major, then b), on the host in float64."""
    parts = []
    for layer in field.linears:
        parts.append(layer.weight.grad.detach().double().cpu().numpy().T.reshape(-1))
        parts.append(layer.bias.grad.detach().double().cpu().numpy().reshape(-1))
    return np.concatenate(parts)


def trajectory(variant, field, y0, times, step):
    import torch
    if variant == "torch-direct":
        out, y = [], y0
        for i in range(len(times) - 1):
            y = rk38_step(field, times[i], y, step)
            out.append(y)
        return torch.stack(out)
    import torchdiffeq
    solver = torchdiffeq.odeint if variant == "torchdiffeq" else torchdiffeq.odeint_adjoint
    return solver(field, y0, times, method="rk4", options={"step_size": step})[1:]


def synchronize(device):
    import torch
    if device.type == "cuda":
        torch.cuda.synchronize()


def run_case(meta, variant, dtype_name, iterations, device):
    import torch
    dtype = getattr(torch, dtype_name)
    field = make_field(meta["theta"], meta["dim"], meta["layers"], dtype, device)
    y0 = torch.from_numpy(meta["y0"]).to(device=device, dtype=dtype)
    data = torch.from_numpy(meta["data"]).to(device=device, dtype=dtype)
    steps, dt, batch = meta["steps"], meta["dt"], meta["batch"]
    times = torch.tensor([k * dt for k in range(steps + 1)], device=device, dtype=dtype)
    optimizer = torch.optim.Adam(field.parameters(), lr=1e-3)

    def loss_and_gradient():
        optimizer.zero_grad(set_to_none=True)
        ys = trajectory(variant, field, y0, times, dt)
        loss = 0.5 * ((ys - data) ** 2).sum() / batch
        loss.backward()
        return loss

    synchronize(device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    first = loss_and_gradient()
    gradient = flat_gradient(field)
    diff = np.max(np.abs(gradient - meta["grad"])) / np.max(np.abs(meta["grad"]))
    optimizer.step()
    times_ms = []
    for _ in range(iterations):
        synchronize(device)
        start = time.perf_counter()
        loss_and_gradient()
        optimizer.step()
        synchronize(device)
        times_ms.append((time.perf_counter() - start) * 1e3)
    return {"batch": batch, "variant": variant, "dtype": dtype_name, "loss_first": float(first),
            "grad_rel_diff": float(diff), "median_ms": statistics.median(times_ms),
            "best_ms": min(times_ms),
            "peak_bytes": torch.cuda.max_memory_allocated() if device.type == "cuda" else 0}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_common_arguments(parser, "torch-direct,torchdiffeq,torchdiffeq-adj", "cuda")
    args = parser.parse_args()

    import torch
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        sys.exit("neural_ode_torch_gpu: PyTorch sees no CUDA device")
    device_name = torch.cuda.get_device_name() if device.type == "cuda" else "CPU"
    print(f"PyTorch {torch.__version__} on {device_name}")
    rewind = rewind_runs(args.rewind_json)
    names = dump_names(args.dumps, args.batches)
    rows = []
    print(f"{'batch':>7} {'variant':>16} {'dtype':>8} {'loss':>14} {'grad diff':>10} "
          f"{'median ms':>10} {'peak MB':>9}")
    for name in names:
        meta = load_dump(args.dumps, name)
        for dtype_name in args.dtypes.split(","):
            for variant in args.variants.split(","):
                try:
                    row = run_case(meta, variant, dtype_name, args.iterations, device)
                except torch.cuda.OutOfMemoryError:
                    row = {"batch": meta["batch"], "variant": variant, "dtype": dtype_name,
                           "error": "out of device memory"}
                    torch.cuda.empty_cache()
                    print(f"{meta['batch']:>7} {variant:>16} {dtype_name:>8}  out of device memory")
                    rows.append(row)
                    continue
                rows.append(row)
                print(f"{row['batch']:>7} {variant:>16} {dtype_name:>8} {row['loss_first']:>14.6e} "
                      f"{row['grad_rel_diff']:>10.1e} {row['median_ms']:>10.3f} "
                      f"{row['peak_bytes'] / 1e6:>9.1f}", flush=True)
        if meta["batch"] in rewind:
            r = rewind[meta["batch"]]
            line = (f"{meta['batch']:>7} {'rewind':>16} {'float64':>8} {r['loss_first']:>14.6e} "
                    f"{'':>10} {r['median_ms']:>10.3f} {r['memory_bytes'] / 1e6:>9.1f}")
            print(line + speedups(rows, r, args.dtypes.split(",")), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"torch": torch.__version__, "device": device_name,
                       "rows": rows, "rewind": list(rewind.values())}, f, indent=1)


if __name__ == "__main__":
    main()
