#!/usr/bin/env python3
"""Checks `rewind run --backend` (a ctest added by tests/cli/CMakeLists.txt).

    check_backend_run.py path/to/rewind

For gray_scott, heat2d and lorenz96 on --backend thrust (rwd::ThrustBackend on Thrust's CPP
device system, the GPU code path on the CPU):
- the JSON names the backend (stats.backend "thrust-cpp") and has "device": null;
- store-all, revolve with 3 snapshots, revolve with 4 snapshots on disk, three levels (device,
  host, and disk: the counts the plan predicted, the copy costs measured) and an adaptive run's
  online schedule give the store-all bits of the same backend (J, dJ/dtheta, |dJ/dy0|), with zero
  drift over every replay;
- the gradient agrees with --backend eigen to 1e-12 relative (the backends fold reductions in
  different orders, so the last bits may differ: not bitwise), and the spot check agrees;
- --backend cuda either runs (a CUDA device is there: the JSON names it and the device memory
  the run used) or is refused before any work with the reason (built without CUDA, no device);
- brusselator with --method bdf on --backend thrust (CVODES with GMRES over rewind's device
  N_Vector): revolve with 2 snapshots gives the store-all bits, the gradient agrees with
  --backend eigen (GMRES too) to 1e-7 relative at rtol 1e-9, and a matrix solver is refused
  before any work;
- brusselator with --method esdirk43 on --backend thrust (the implicit Runge–Kutta engine, its
  stages solved by GMRES over the device N_Vector, its adjoint exact): adaptive steps agree with
  --backend eigen (GMRES too) to 1e-11; fixed steps give the same bits under revolve, two levels
  on disk and a stage-aware schedule, and the spot check agrees; another solver, a Rosenbrock
  method, and an implicit method on a device problem without a jvp are refused before any work;
- an unknown backend and a problem with no device right-hand side are refused.
"""
import json
import subprocess
import sys
import tempfile


def fail(message):
    print("check_backend_run: " + message, file=sys.stderr)
    sys.exit(1)


def run(rewind, *args):
    command = [rewind, "run", *args, "--json"]
    return command, subprocess.run(command, capture_output=True, text=True)


def run_json(rewind, *args):
    command, proc = run(rewind, *args)
    if proc.returncode != 0:
        fail(f"{' '.join(command)} exited with {proc.returncode}: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def refused(rewind, *args, needle):
    command, proc = run(rewind, *args)
    if proc.returncode != 2 or needle not in proc.stderr:
        fail(f"{' '.join(command)} should be refused (exit 2) with '{needle}': "
             f"exit {proc.returncode}, {proc.stderr!r}")


KEYS = ("loss", "grad_theta", "grad_y0_norm", "grad_theta_norm")


def same_bits(a, b, what):
    for key in KEYS:
        if a[key] != b[key]:
            fail(f"{what}: {key} differs: {a[key]!r} vs {b[key]!r}")


def close(a, b, what, tol=1e-12):
    pairs = [(a["loss"], b["loss"]), (a["grad_y0_norm"], b["grad_y0_norm"])]
    pairs += list(zip(a["grad_theta"], b["grad_theta"]))
    scale = max(abs(x) for x, _ in pairs)
    for x, y in pairs:
        if abs(x - y) > tol * max(abs(x), abs(y), 1e-300) and abs(x - y) > tol * 1e-3 * scale:
            fail(f"{what}: {x!r} and {y!r} differ by more than {tol} relative")


def check_problem(rewind, problem, size, steps, adaptive):
    base = [problem, "--n", str(size), "--steps", str(steps), "--no-fd-check"]
    thrust = ["--backend", "thrust"]
    store_all = run_json(rewind, *base, *thrust)
    if store_all["stats"]["backend"] != "thrust-cpp" or store_all["device"] is not None:
        fail(f"{problem}: expected backend thrust-cpp and device null, got "
             f"{store_all['stats']['backend']!r}, {store_all['device']!r}")
    revolve = run_json(rewind, *base, *thrust, "--snapshots", "3")
    same_bits(store_all, revolve, f"{problem} thrust revolve(3)")
    with tempfile.TemporaryDirectory() as directory:
        disk = run_json(rewind, *base, *thrust, "--snapshots", "4", "--disk", directory)
    same_bits(store_all, disk, f"{problem} thrust revolve(4) on disk")
    for name, result in (("revolve(3)", revolve), ("disk", disk)):
        if not result["drift"]["bitwise_identical"] or result["drift"]["replayed_steps_checked"] < 1:
            fail(f"{problem} thrust {name}: replays not checked or not bitwise: {result['drift']!r}")
    # Three levels: device (the backend's memory here), host, and disk; costs measured first.
    with tempfile.TemporaryDirectory() as directory:
        for levels in (["--device-snapshots", "2", "--host-snapshots", "3"],
                       ["--device-snapshots", "1", "--host-snapshots", "1", "--disk", directory,
                        "--disk-snapshots", "3"]):
            three = run_json(rewind, *base, *thrust, *levels)
            what = f"{problem} thrust {' '.join(levels[:4])}"
            same_bits(store_all, three, what)
            plan = three["schedule"]
            if not plan["name"].startswith("three-level") or not three["drift"]["bitwise_identical"]:
                fail(f"{what}: ran {plan['name']!r}, drift {three['drift']!r}")
            if (plan["host_stores"], plan["host_restores"]) != (
                    plan["predicted_host_stores"], plan["predicted_host_restores"]):
                fail(f"{what}: host stores/restores {plan['host_stores']}/{plan['host_restores']}"
                     f" but the plan predicted {plan['predicted_host_stores']}/"
                     f"{plan['predicted_host_restores']}")
            if not 0 <= plan["host_prefetches"] <= plan["host_restores"]:
                fail(f"{what}: {plan['host_prefetches']} host prefetches for "
                     f"{plan['host_restores']} host restores")
            if plan["measured_host_write_seconds"] is None or plan["measured_step_seconds"] is None:
                fail(f"{what}: the level costs were not measured: {plan!r}")
    close(store_all, run_json(rewind, *base), f"{problem} thrust against eigen")
    if adaptive:
        a = [problem, "--n", str(size), "--method", "tsit5", "--adaptive", "--t-final", "1",
             "--no-fd-check", *thrust]
        online = run_json(rewind, *a, "--snapshots", "3")
        if not online["stats"]["schedule"].startswith("online"):
            fail(f"{problem}: adaptive --snapshots 3 ran {online['stats']['schedule']!r}")
        same_bits(run_json(rewind, *a), online, f"{problem} thrust adaptive online(3)")
    checked = run_json(rewind, problem, "--n", str(size), "--steps", str(steps), *thrust)
    if checked["fd_check"]["verdict"] != "agree":
        fail(f"{problem} thrust: the spot check says {checked['fd_check']['verdict']!r}")


def check_bdf(rewind):
    # Tight tolerances: the two backends' reductions add in different orders, so their adaptive
    # solves part at the tolerance's scale (4e-7 relative at rtol 1e-6, 4e-10 at 1e-9).
    base = ["brusselator", "--n", "10", "--steps", "4", "--dt", "0.5", "--method", "bdf",
            "--rtol", "1e-9", "--atol", "1e-11", "--no-fd-check"]
    thrust = ["--backend", "thrust"]
    store_all = run_json(rewind, *base, *thrust)
    if store_all["stats"]["backend"] != "thrust-cpp" or "gmres" not in store_all["stats"]["method"]:
        fail(f"brusselator bdf thrust: ran {store_all['stats']['backend']!r} "
             f"{store_all['stats']['method']!r}")
    same_bits(store_all, run_json(rewind, *base, *thrust, "--snapshots", "2"),
              "brusselator bdf thrust revolve(2)")
    close(store_all, run_json(rewind, *base, "--linear-solver", "gmres"),
          "brusselator bdf thrust against eigen", tol=1e-7)
    refused(rewind, *base, *thrust, "--linear-solver", "band", needle="GMRES")


def check_implicit(rewind):
    thrust = ["--backend", "thrust"]
    adaptive = ["brusselator", "--n", "12", "--method", "esdirk43", "--adaptive", "--t-final", "1",
                "--rtol", "1e-8", "--atol", "1e-10", "--linear-solver", "gmres"]
    device = run_json(rewind, *adaptive, *thrust)
    if device["stats"]["backend"] != "thrust-cpp" or device["fd_check"]["verdict"] != "agree":
        fail(f"brusselator esdirk43 thrust: ran {device['stats']['backend']!r}, spot check "
             f"{device['fd_check']['verdict']!r}")
    close(device, run_json(rewind, *adaptive), "brusselator esdirk43 thrust against eigen",
          tol=1e-11)
    fixed = ["brusselator", "--n", "10", "--method", "esdirk43", "--steps", "12", "--dt", "0.05",
             "--linear-solver", "gmres", "--no-fd-check", *thrust]
    store_all = run_json(rewind, *fixed)
    with tempfile.TemporaryDirectory() as directory:
        for extra in (["--snapshots", "3"], ["--snapshots", "3", "--stage-aware"],
                      ["--ram-snapshots", "1", "--disk-snapshots", "2", "--disk", directory]):
            other = run_json(rewind, *fixed, *extra)
            what = f"brusselator esdirk43 thrust {' '.join(extra[:3])}"
            same_bits(store_all, other, what)
            if not other["drift"]["bitwise_identical"]:
                fail(f"{what}: replays not bitwise: {other['drift']!r}")
    dense = [a if a != "gmres" else "dense" for a in fixed]
    refused(rewind, *dense, needle="GMRES")
    refused(rewind, "brusselator", "--n", "10", "--method", "rodas4", "--steps", "4", *thrust,
            needle="runs on the CPU backend (Eigen), not on thrust-cpp")
    refused(rewind, "heat2d", "--n", "10", "--method", "sdirk2", "--steps", "4", "--dt", "0.5",
            *thrust, needle="needs the problem's Jacobian-vector product")


def check_cuda(rewind):
    command, proc = run(rewind, "gray_scott", "--n", "32", "--steps", "20", "--backend", "cuda",
                        "--no-fd-check")
    if proc.returncode == 0:
        report = json.loads(proc.stdout)
        device = report["device"]
        if report["stats"]["backend"] != "thrust-cuda" or not device or not device["name"]:
            fail(f"--backend cuda ran but reports {report['stats']['backend']!r}, {device!r}")
        if not 0 < device["memory_used_bytes"] < device["memory_total_bytes"]:
            fail(f"--backend cuda: device memory used {device!r} is not plausible")
        return
    reasons = ("built without CUDA", "no usable CUDA device", "no CUDA device")
    if proc.returncode != 2 or not any(r in proc.stderr for r in reasons) or proc.stdout:
        fail(f"{' '.join(command)}: expected a run or a refusal (exit 2) naming why there is no "
             f"CUDA device, got exit {proc.returncode}: {proc.stderr!r}")


def main():
    if len(sys.argv) != 2:
        fail("usage: check_backend_run.py path/to/rewind")
    rewind = sys.argv[1]
    check_problem(rewind, "gray_scott", 24, 60, adaptive=False)
    check_problem(rewind, "heat2d", 16, 80, adaptive=False)
    check_problem(rewind, "lorenz96", 40, 150, adaptive=True)
    check_bdf(rewind)
    check_implicit(rewind)
    check_cuda(rewind)
    refused(rewind, "gray_scott", "--backend", "gpu", needle="--backend = 'gpu' is not a backend")
    refused(rewind, "lorenz63", "--backend", "thrust",
            needle="lorenz63 has no device right-hand side")
    refused(rewind, "heat2d", "--backend", "thrust", "--device-snapshots", "0",
            "--host-snapshots", "0", needle="needs a snapshot in memory")
    refused(rewind, "heat2d", "--backend", "thrust", "--device-snapshots", "2",
            "--disk-snapshots", "3", needle="--disk-snapshots 3 needs --disk DIR")
    print("check_backend_run: thrust-cpp = its own store-all bitwise for every schedule, "
          "= eigen to 1e-12; bdf and esdirk43 over device vectors likewise; cuda runs or is "
          "refused with the reason")


if __name__ == "__main__":
    main()
