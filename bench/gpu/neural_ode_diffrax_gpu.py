#!/usr/bin/python3
"""diffrax (JAX) against rewind on the same GPU: the training iterations of neural_ode_torch_gpu.py.

    build/bench/gpu/neural_ode_gpu_bench --dump DIR --json rewind.json     # rewind first
    python3 bench/gpu/neural_ode_diffrax_gpu.py --dumps DIR --rewind-json rewind.json \
        [--iterations 20] [--dtypes float64,float32] [--batches 256,65536] [--json diffrax.json]
        [--device cpu]

For every batch size rewind dumped, the same iteration in JAX: dy/dt = mlp(y) with rewind's
initial θ, Kutta's 3/8 rule with a fixed step (a diffrax.AbstractERK with that tableau; diffrax
has no classical fourth-order method of its own), J = 1/2 sum_k sum_b |y_k,b - d_k,b|^2 / B over
the window's steps, its gradient and one Adam step (lr 1e-3, written out: the same update as
torch.optim.Adam), the whole iteration one jax.jit. Variants:
  diffrax           diffeqsolve with RecursiveCheckpointAdjoint (backpropagation through the
                    solver, diffrax's default: the discrete adjoint, like rewind's)
  diffrax-backsolve BacksolveAdjoint (the continuous adjoint, solved backwards)
Reported as in neural_ode_torch_gpu.py: the gradient's max relative difference to rewind's,
median milliseconds per iteration after a warm-up (which includes the compilation), and with
--rewind-json the speed-up of rewind over the fastest variant of each type.
"""
import argparse
import json
import os
import statistics
import sys
import time
from typing import ClassVar

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from neural_ode_torch_gpu import (add_common_arguments, dump_names, load_dump,  # noqa: E402
                                  rewind_runs, speedups)


def make_solver():
    import diffrax

    class KuttaThreeEighths(diffrax.AbstractERK):
        """Kutta's 3/8 rule (torchdiffeq's "rk4"), fixed steps only (no error estimate)."""
        tableau: ClassVar[diffrax.ButcherTableau] = diffrax.ButcherTableau(
            c=np.array([1 / 3, 2 / 3, 1.0]),
            b_sol=np.array([1 / 8, 3 / 8, 3 / 8, 1 / 8]),
            b_error=np.array([0.0, 0.0, 0.0, 0.0]),
            a_lower=(np.array([1 / 3]), np.array([-1 / 3, 1.0]), np.array([1.0, -1.0, 1.0])),
        )
        interpolation_cls: ClassVar = diffrax.ThirdOrderHermitePolynomialInterpolation.from_k

        def order(self, terms):
            return 4

    return KuttaThreeEighths()


def parameters_from_theta(theta, dim, layers, dtype):
    """rewind's flat θ (per layer W out × in column-major, then b) as [(W, b), …]."""
    import jax.numpy as jnp
    widths = [dim, *layers, dim]
    params, o = [], 0
    for n_in, n_out in zip(widths[:-1], widths[1:]):
        w = theta[o:o + n_in * n_out].reshape(n_in, n_out).T
        o += n_in * n_out
        params.append((jnp.asarray(w, dtype=dtype), jnp.asarray(theta[o:o + n_out], dtype=dtype)))
        o += n_out
    assert o == len(theta)
    return params


def flat_gradient(grads):
    return np.concatenate([np.concatenate([np.asarray(gw, dtype=np.float64).T.reshape(-1),
                                           np.asarray(gb, dtype=np.float64).reshape(-1)])
                           for gw, gb in grads])


def run_case(meta, variant, dtype_name, iterations, solver):
    import diffrax
    import jax
    import jax.numpy as jnp

    dtype = jnp.float64 if dtype_name == "float64" else jnp.float32
    params = parameters_from_theta(meta["theta"], meta["dim"], meta["layers"], dtype)
    y0 = jnp.asarray(meta["y0"], dtype=dtype)
    data = jnp.asarray(meta["data"], dtype=dtype)
    steps, dt, batch = meta["steps"], meta["dt"], meta["batch"]
    ts = jnp.asarray([k * dt for k in range(1, steps + 1)], dtype=dtype)
    adjoint = (diffrax.RecursiveCheckpointAdjoint() if variant == "diffrax"
               else diffrax.BacksolveAdjoint())

    def field(t, y, p):
        h = y
        for w, b in p[:-1]:
            h = jnp.tanh(h @ w.T + b)
        w, b = p[-1]
        return h @ w.T + b

    # The discrete variant saves the state after every step (SaveAt(steps=True)); saving at the
    # times through diffrax's interpolation gives the same values but a gradient 2 % off rewind's
    # and PyTorch's (measured: 1.8e-2 against 4.6e-16). BacksolveAdjoint takes times only.
    saveat = diffrax.SaveAt(steps=True) if variant == "diffrax" else diffrax.SaveAt(ts=ts)

    def loss(p):
        solution = diffrax.diffeqsolve(
            diffrax.ODETerm(field), solver, t0=0.0, t1=steps * dt, dt0=dt, y0=y0, args=p,
            saveat=saveat, stepsize_controller=diffrax.ConstantStepSize(), adjoint=adjoint,
            max_steps=steps)
        return 0.5 * jnp.sum((solution.ys[:steps] - data) ** 2) / batch

    value_and_grad = jax.jit(jax.value_and_grad(loss))
    b1, b2, eps, lr = 0.9, 0.999, 1e-8, 1e-3

    @jax.jit
    def iteration(p, m, v, t):
        value, g = jax.value_and_grad(loss)(p)
        m = jax.tree_util.tree_map(lambda a, x: b1 * a + (1 - b1) * x, m, g)
        v = jax.tree_util.tree_map(lambda a, x: b2 * a + (1 - b2) * x * x, v, g)
        c1, c2 = 1 - b1 ** t, 1 - b2 ** t
        p = jax.tree_util.tree_map(
            lambda x, a, s: x - lr * (a / c1) / (jnp.sqrt(s / c2) + eps), p, m, v)
        return p, m, v, value

    first, grads = value_and_grad(params)
    diff = np.max(np.abs(flat_gradient(grads) - meta["grad"])) / np.max(np.abs(meta["grad"]))
    m = jax.tree_util.tree_map(jnp.zeros_like, params)
    v = jax.tree_util.tree_map(jnp.zeros_like, params)
    p, m, v, value = iteration(params, m, v, 1.0)  # compiles
    jax.block_until_ready(value)
    times_ms = []
    for k in range(iterations):
        start = time.perf_counter()
        p, m, v, value = iteration(p, m, v, float(k + 2))
        jax.block_until_ready(value)
        times_ms.append((time.perf_counter() - start) * 1e3)
    return {"batch": batch, "variant": variant, "dtype": dtype_name, "loss_first": float(first),
            "grad_rel_diff": float(diff), "median_ms": statistics.median(times_ms),
            "best_ms": min(times_ms)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_common_arguments(parser, "diffrax,diffrax-backsolve", "gpu")
    args = parser.parse_args()

    import jax
    jax.config.update("jax_enable_x64", True)
    if args.device == "cpu":
        jax.config.update("jax_platforms", "cpu")
    elif not any(d.platform == "gpu" for d in jax.devices()):
        sys.exit("neural_ode_diffrax_gpu: JAX sees no GPU")
    import diffrax
    print(f"JAX {jax.__version__}, diffrax {diffrax.__version__} on {jax.devices()[0]}")
    solver = make_solver()
    rewind = rewind_runs(args.rewind_json)
    names = dump_names(args.dumps, args.batches)
    rows = []
    print(f"{'batch':>7} {'variant':>18} {'dtype':>8} {'loss':>14} {'grad diff':>10} "
          f"{'median ms':>10}")
    for name in names:
        meta = load_dump(args.dumps, name)
        for dtype_name in args.dtypes.split(","):
            for variant in args.variants.split(","):
                row = run_case(meta, variant, dtype_name, args.iterations, solver)
                rows.append(row)
                print(f"{row['batch']:>7} {variant:>18} {dtype_name:>8} {row['loss_first']:>14.6e} "
                      f"{row['grad_rel_diff']:>10.1e} {row['median_ms']:>10.3f}", flush=True)
        if meta["batch"] in rewind:
            r = rewind[meta["batch"]]
            line = (f"{meta['batch']:>7} {'rewind':>18} {'float64':>8} {r['loss_first']:>14.6e} "
                    f"{'':>10} {r['median_ms']:>10.3f}")
            print(line + speedups(rows, r, args.dtypes.split(",")), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"jax": jax.__version__, "diffrax": diffrax.__version__,
                       "device": str(jax.devices()[0]), "rows": rows,
                       "rewind": list(rewind.values())}, f, indent=1)


if __name__ == "__main__":
    main()
