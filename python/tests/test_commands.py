"""rewind.run, gradient, plan, generate and fit: the command line inside Python.

Checked against the tool itself (build/src/cli/rewind, run as a process on the same options:
the same bits), against each other (every schedule the store-all bits), against finite
differences (the tool's spot check) and against known parameters (a fit of generated data).
"""

import json
import math
import os
import pathlib
import subprocess
import warnings

import numpy as np
import pytest

import rewind

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOOL = ROOT / "build" / "src" / "cli" / "rewind"
SIR_PLUGIN = ROOT / "build" / "tests" / "sir_model.so"
ROBERTSON_PLUGIN = ROOT / "build" / "tests" / "robertson_model.so"
BRUSSELATOR_PLUGIN = ROOT / "build" / "tests" / "brusselator_stencil_model.so"

if not rewind.commands_available():
    if os.environ.get("REWIND_PYTHON_REQUIRE_COMMANDS"):
        raise ImportError("rewind._commands is not installed, and this test run requires it "
                          "(REWIND_PYTHON_REQUIRE_COMMANDS)")
    pytest.skip("rewind._commands is not installed (the C++ build makes it: scripts/test.sh)",
                allow_module_level=True)

SMALL_LV = dict(steps=300, dt=0.01, method="rk4")


def tool_json(*words):
    if not TOOL.exists():
        pytest.skip(f"{TOOL} is not built")
    done = subprocess.run([str(TOOL), *words, "--json"], capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout)


def test_run_gives_the_tools_bits():
    result = rewind.run("lotka_volterra", **SMALL_LV, snapshots=5)
    tool = tool_json("run", "lotka_volterra", "--steps", "300", "--dt", "0.01", "--method", "rk4",
                     "--snapshots", "5")
    assert result.loss == tool["loss"]
    assert result.grad_theta.tolist() == tool["grad_theta"]
    assert result.parameters == tool["parameters"]
    assert result.report["parameter_names"] == list(result.parameters)
    assert result.schedule["recomputed_steps"] == tool["schedule"]["recomputed_steps"]
    assert result.drift["bitwise_identical"] is True
    assert result.fd_check["verdict"] == "agree"
    assert math.isclose(float(np.linalg.norm(result.grad_y0)), tool["grad_y0_norm"],
                        rel_tol=1e-14)


def test_gradients_are_arrays_and_every_schedule_gives_the_store_all_bits():
    store_all = rewind.gradient("lotka_volterra", **SMALL_LV)
    assert store_all.fd_check is None and store_all.schedule is None
    assert isinstance(store_all.grad_y0, np.ndarray) and store_all.grad_y0.dtype == np.float64
    assert store_all.grad_y0.shape == (store_all.report["state_size"],)
    assert store_all.grad_theta.shape == (store_all.report["parameter_size"],)
    for options in (dict(snapshots=1), dict(snapshots=7), dict(snapshots=40, schedule="uniform"),
                    dict(snapshots=12, stage_aware=True), dict(memory="2KiB", disk=None)):
        checkpointed = rewind.gradient("lotka_volterra", **SMALL_LV, **options)
        assert np.array_equal(checkpointed.grad_y0, store_all.grad_y0), options
        assert np.array_equal(checkpointed.grad_theta, store_all.grad_theta), options
        assert checkpointed.loss == store_all.loss


def test_parameters_as_a_dict_and_the_gradient_moves_with_them():
    base = rewind.gradient("lotka_volterra", **SMALL_LV)
    alpha = base.parameters["alpha"]
    changed = rewind.gradient("lotka_volterra", **SMALL_LV, parameters={"alpha": alpha * 1.1})
    assert changed.parameters["alpha"] == alpha * 1.1
    # dJ/dalpha against a central difference of J in alpha.
    h = 1e-6 * alpha
    up = rewind.gradient("lotka_volterra", **SMALL_LV, parameters={"alpha": alpha + h}).loss
    down = rewind.gradient("lotka_volterra", **SMALL_LV, parameters={"alpha": alpha - h}).loss
    index = base.report["parameter_names"].index("alpha")
    assert math.isclose((up - down) / (2 * h), base.grad_theta[index], rel_tol=1e-6)


def test_a_stiff_problem_with_an_implicit_method_and_kept_stages():
    options = dict(method="esdirk43", adaptive=True, linear_solver="dense", steps=None)
    kept = rewind.gradient("robertson", stage_aware=True, **options)
    store_all = rewind.gradient("robertson", **options)
    assert kept.schedule is None and kept.summary["schedule"] == "store-all-stages"
    assert kept.summary["recomputed_steps"] == 0
    assert np.array_equal(kept.grad_theta, store_all.grad_theta)


def test_a_model_plugin():
    if not SIR_PLUGIN.exists():
        pytest.skip(f"{SIR_PLUGIN} is not built")
    result = rewind.run(model=SIR_PLUGIN, steps=200, snapshots=4)
    assert result.report["problem"] == "Sir"
    assert list(result.parameters) == ["beta", "gamma", "N"]
    assert result.fd_check["verdict"] == "agree"
    tool = tool_json("run", "--model", str(SIR_PLUGIN), "--steps", "200", "--snapshots", "4")
    assert result.grad_theta.tolist() == tool["grad_theta"]


def test_a_stencil_model_plugin_on_a_grid_with_the_sparse_solver():
    if not BRUSSELATOR_PLUGIN.exists():
        pytest.skip(f"{BRUSSELATOR_PLUGIN} is not built")
    options = dict(n=8, method="esdirk43", adaptive=True, linear_solver="sparse", snapshots=3)
    result = rewind.run(model=BRUSSELATOR_PLUGIN, **options)
    assert result.report["problem"] == "Brusselator"
    assert result.report["n"] == 8 and result.report["state_size"] == 2 * 8 * 8
    assert list(result.parameters) == ["A", "B", "alpha"]
    assert result.fd_check["verdict"] == "agree"
    tool = tool_json("run", "--model", str(BRUSSELATOR_PLUGIN), "--n", "8", "--method",
                     "esdirk43", "--adaptive", "--linear-solver", "sparse", "--snapshots", "3")
    assert result.grad_theta.tolist() == tool["grad_theta"]


def test_plan_matches_the_schedule_library():
    planned = rewind.plan(steps=1000, snapshots=10)
    simulated = rewind.simulate(rewind.RevolveSchedule(1000, 10))
    assert planned["forward_steps"] == simulated.forward_evaluations
    assert planned == tool_json("plan", "--steps", "1000", "--snapshots", "10")


def test_generate_then_fit_recovers_the_parameters(tmp_path, capfd):
    data = tmp_path / "lv.h5"
    written = rewind.generate("lotka_volterra", steps=400, observe_every=20, out=data)
    assert written["file"] == str(data) and data.exists()
    assert written["observations"] == 20 and written["observed_steps"][0] == 20
    assert written["data"].shape == (20, written["values_per_observation"])
    inspected = rewind.inspect(data)
    assert inspected["problem"] == "lotka_volterra"
    assert inspected == tool_json("inspect", str(data))
    truth = rewind.gradient("lotka_volterra", steps=400).parameters
    fitted = rewind.fit("lotka_volterra", observations=data, fit=["alpha", "gamma"],
                        start={"alpha": truth["alpha"] * 1.2, "gamma": truth["gamma"] * 0.8})
    assert fitted.report["failed"] is False
    for name in ("alpha", "gamma"):
        assert math.isclose(fitted.parameters[name], truth[name], rel_tol=1e-6), name
    assert fitted.loss < 1e-10
    assert isinstance(fitted.stop_reason, str) and fitted.stop_reason
    # Nothing printed: the iterations are in the report's history instead.
    printed = capfd.readouterr()
    assert printed.out == "" and "iteration" not in printed.err
    assert len(fitted.report["history"]) == fitted.report["iterations"] + 1


def test_threads_hold_for_one_call():
    one = rewind.gradient("lotka_volterra", **SMALL_LV, threads=1)
    assert one.summary["threads"] == 1
    after = rewind.gradient("lotka_volterra", **SMALL_LV)
    assert after.summary["threads"] == rewind.gradient("lotka_volterra", **SMALL_LV).summary[
        "threads"]
    assert np.array_equal(one.grad_y0, after.grad_y0)


def test_help_lists_the_keywords():
    assert "--snapshots" in rewind.help("run")
    assert "--observe-every" in rewind.help("generate", "lotka_volterra")


def message(call, kind=rewind.InvalidArgument):
    with pytest.raises(kind) as caught:
        call()
    return caught.value


@pytest.mark.parametrize(
    "call,says",
    [
        (lambda: rewind.run("lotka_volterra", snapshot=3),
         "unknown keyword 'snapshot'; did you mean snapshots?"),
        (lambda: rewind.run("lotka_volterra", snapshots=0), "--snapshots"),
        (lambda: rewind.run("no_such_problem"), "no_such_problem"),
        (lambda: rewind.run("lotka_volterra", model="x.so"), "not both"),
        (lambda: rewind.run("lotka_volterra", method="rk5"), "rk5"),
        (lambda: rewind.run("lotka_volterra", steps=[1, 2]), "--steps"),
        (lambda: rewind.run("lotka_volterra", dt=object()), "cannot be given as an option"),
        (lambda: rewind.fit("lotka_volterra", observations="/no/such/file.h5", fit="alpha"),
         "/no/such/file.h5"),
        (lambda: rewind.generate(), "name a built-in problem"),
        (lambda: rewind.help("bogus"), "'bogus' is not a subcommand"),
    ],
)
def test_bad_input_raises_invalid_argument_with_the_tools_message(call, says):
    assert says in str(message(call))


def test_a_failed_run_raises_error_not_invalid_argument():
    # An explicit step far beyond stability: the state overflows, and the run says so.
    caught = message(lambda: rewind.run("van_der_pol", dt=5.0, steps=200, no_fd_check=True),
                     rewind.Error)
    assert not isinstance(caught, rewind.InvalidArgument)
    assert "non-finite" in str(caught) or "NaN" in str(caught) or "Inf" in str(caught)


def test_warnings_become_python_warnings():
    # A horizon beyond the stage-aware tables' limit: the library warns and plans revolve.
    with pytest.warns(rewind.RewindWarning, match="no stage-aware plan") as caught:
        result = rewind.gradient("lotka_volterra", steps=100001, dt=1e-4, method="rk4",
                                 snapshots=20, stage_aware=True)
    assert [str(w.message) for w in caught] == result.warnings
    assert len(result.warnings) == 1 and "above 100000" in result.warnings[0]


def test_a_stiff_model_fitted_to_a_measured_series_with_an_implicit_method(tmp_path):
    # A stiff model of one's own (Robertson's kinetics as a plugin): y1 and y3 generated with
    # esdirk43 at the true k1, written as a CSV series and fitted back from 50 % off — the
    # implicit and Rosenbrock methods' exact gradients find k1 again.
    if not ROBERTSON_PLUGIN.exists():
        pytest.skip(f"{ROBERTSON_PLUGIN} is not built")
    written = rewind.generate(model=ROBERTSON_PLUGIN, method="esdirk43", dt=0.001, steps=4000,
                              observe_every=200, out=tmp_path / "robertson.h5")
    times = [0.001 * step for step in written["observed_steps"]]
    series = tmp_path / "robertson.csv"
    rows = ["t,y1,y3"] + [f"{t!r},{d[0]!r},{d[2]!r}" for t, d in zip(times, written["data"])]
    series.write_text("\n".join(rows) + "\n")
    truth = 0.04
    for method, tolerance in (("esdirk43", 1e-7), ("rodas4", 1e-3)):  # rodas4: another's data
        fitted = rewind.fit(model=ROBERTSON_PLUGIN, data=series, method=method, dt=0.001,
                            fit="k1", start={"k1": truth * 1.5}, sigma=1e-3)
        assert fitted.report["failed"] is False, method
        assert fitted.report["method"] == method
        assert math.isclose(fitted.parameters["k1"], truth, rel_tol=tolerance), method
    said = str(message(lambda: rewind.fit(model=ROBERTSON_PLUGIN, data=series, method="bdf",
                                          fit="k1")))
    assert "--method bdf: a data fit takes steps that land on every data time" in said
    # Adaptive steps instead, landing on every row: the same k1, in far fewer steps.
    adaptive = rewind.fit(model=ROBERTSON_PLUGIN, data=series, method="esdirk43", adaptive=True,
                          rtol=1e-9, atol=1e-12, fit="k1", start={"k1": truth * 1.5},
                          sigma=1e-3)
    assert adaptive.report["failed"] is False
    assert adaptive.report["adaptive"] is True and adaptive.report["steps_settled"] is True
    assert adaptive.report["steps"] < 1000  # fixed: 4000
    assert math.isclose(adaptive.parameters["k1"], truth, rel_tol=1e-5)


def test_commands_from_several_python_threads_keep_their_own_reports():
    import concurrent.futures

    serial = {n: rewind.gradient("lotka_volterra", **SMALL_LV, snapshots=n) for n in (2, 3, 5)}
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        futures = {n: pool.submit(rewind.gradient, "lotka_volterra", **SMALL_LV, snapshots=n)
                   for n in serial}
        for n, future in futures.items():
            result = future.result()
            assert result.schedule["snapshots"] == n
            assert np.array_equal(result.grad_theta, serial[n].grad_theta)


def test_a_fit_that_fails_raises_error_with_its_report(tmp_path):
    # From a start whose run overflows (the prey's growth rate 10^3 over 400 steps), the fit has
    # no finite J to descend: rewind.Error, its report the tool's (failed, the reason, the start).
    data = tmp_path / "lv.h5"
    rewind.generate("lotka_volterra", steps=400, observe_every=20, out=data)
    caught = message(lambda: rewind.fit("lotka_volterra", observations=data, fit="alpha",
                                        start={"alpha": 1e3}, bounds={"alpha": "0:1e4"}),
                     rewind.Error)
    assert "the fit stopped" in str(caught)
    assert caught.report["failed"] is True and caught.report["failure"]
    assert caught.report["start"]["alpha"] == 1e3
