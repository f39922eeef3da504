"""rewind's command line from Python: gradients, plans, observations, fits and file contents as
Python objects.

Each function runs the subcommand of the ``rewind`` tool of the same name in this process (the
extension module ``rewind._commands``, built with the C++ tree): the same options, defaults,
checks, messages and bits as the tool. Options are keyword arguments named as the tool's flags,
dashes written as underscores (``linear_solver="gmres"`` is ``--linear-solver gmres``)::

    import rewind

    r = rewind.run("lotka_volterra", steps=1000, method="rk4", snapshots=10)
    r.loss, r.grad_y0, r.grad_theta       # J = 1/2 |y_N|^2 and its exact gradient (arrays)
    r.parameters                          # theta by name
    r.summary["recomputed_steps"], r.drift["bitwise_identical"]

    g = rewind.gradient(model="build/examples/libsir.so", parameters={"beta": 0.4})

    rewind.generate("lotka_volterra", steps=1000, observe_every=10, noise=0.01, out="lv.h5")
    f = rewind.fit("lotka_volterra", observations="lv.h5", fit=["alpha", "gamma"],
                   start={"alpha": 1.3, "gamma": 3.3})
    f.parameters["alpha"], f.loss

    rewind.plan(steps=100_000, snapshots=20)["forward_steps"]
    rewind.inspect("lv.h5")["observed_steps"]

How a keyword becomes a flag: ``True`` gives the flag alone, ``False`` and ``None`` leave it
out; a number its shortest text that reads back as the same double (``repr``); a list or tuple
its items joined by commas; a dict ``NAME=VALUE`` pairs joined by commas; a path its text. A
keyword the subcommand does not know raises InvalidArgument naming the closest one, before any
work. ``threads=T`` sets the CPU threads for that call only. ``rewind.help("run")`` gives the
tool's help page, which lists every keyword.

Errors raise rewind.InvalidArgument (bad input, before any work) or rewind.Error (a failed run,
a fit that stopped) with the tool's message; the exception's ``report`` holds what the command
reported before it failed (a stopped fit's best parameters), or None. The library's warnings
(drift, a degenerate gradient) become Python warnings of category rewind.RewindWarning and are
kept in the result's ``warnings``.
"""

from __future__ import annotations

import difflib
import os
import warnings as _warnings
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence

import numpy as np

from ._rewind import InvalidArgument

__all__ = [
    "FitResult", "RewindWarning", "RunResult", "commands_available", "fit", "generate",
    "gradient", "help", "inspect", "plan", "run",
]


class RewindWarning(UserWarning):
    """A warning of rewind's library during a command (drift found, a degenerate gradient)."""


def _commands_module():
    try:
        from . import _commands
    except ImportError as e:  # the package was installed without the C++ build's module
        raise ImportError(
            "rewind.run, gradient, plan, generate and fit need rewind._commands, which the C++ "
            "build makes (cmake -DREWIND_PYTHON=...; scripts/test.sh does) and "
            "scripts/python_test.sh installs; this installation has only the schedules") from e
    return _commands


def commands_available() -> bool:
    """Whether this installation has the command line (rewind._commands)."""
    try:
        _commands_module()
    except ImportError:
        return False
    return True


@dataclass
class RunResult:
    """What ``rewind run`` computed: J = 1/2 |y_N|^2, its exact gradient and the run's report.

    ``report`` is the whole of ``rewind run --json``'s object; the other fields are its parts.
    """

    loss: float
    grad_y0: np.ndarray     # dJ/dy0
    grad_theta: np.ndarray  # dJ/dtheta (through the initial state too, for a model that has one)
    parameters: Dict[str, float]    # theta of the run, by name (defaults and `parameters=`)
    summary: Dict[str, Any]         # the run's counts and times ("stats")
    schedule: Optional[Dict[str, Any]]  # a checkpointed run's schedule and counts, else None
    drift: Optional[Dict[str, Any]]     # the drift monitor's report of a checkpointed run
    fd_check: Optional[Dict[str, Any]]  # the finite-difference spot check, None when skipped
    report: Dict[str, Any]
    warnings: List[str] = field(default_factory=list)


@dataclass
class FitResult:
    """What ``rewind fit`` found: the fitted parameters and the fit's report.

    ``report`` is the whole of ``rewind fit --json``'s object.
    """

    parameters: Dict[str, float]  # every parameter of the problem at the fit's end, by name
    loss: float                   # the misfit J at the fitted parameters
    stop_reason: str              # why the optimiser stopped
    report: Dict[str, Any]
    warnings: List[str] = field(default_factory=list)


def _flag_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, str):
        return value
    raise InvalidArgument(f"{value!r} ({type(value).__name__}) cannot be given as an option")


def _option_words(flag: str, value: Any) -> List[str]:
    if value is None or value is False:
        return []
    if value is True:
        return [flag]
    if isinstance(value, Mapping):
        return [flag, ",".join(f"{name}={_flag_text(v)}" for name, v in value.items())]
    if isinstance(value, (list, tuple, np.ndarray)):
        return [flag, ",".join(_flag_text(v) for v in value)]
    return [flag, _flag_text(value)]


def _option_arguments(command: Sequence[str], options: Mapping[str, Any]) -> List[str]:
    """The tool's words for keyword `options` of `command`, each keyword checked first."""
    known = set(_commands_module().option_names(list(command))) | {"--threads"}
    known -= {"--help", "--json"}
    words: List[str] = []
    for keyword, value in options.items():
        flag = "--" + keyword.replace("_", "-")
        if flag not in known:
            names = sorted(n[2:].replace("-", "_") for n in known)
            close = difflib.get_close_matches(keyword, names, n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise InvalidArgument(
                f"rewind.{command[0]}: unknown keyword '{keyword}'{hint} "
                f"(rewind.help({', '.join(repr(c) for c in command)}) lists them)")
        words += _option_words(flag, value)
    return words


def _execute(words: List[str]):
    report, vectors, warned = _commands_module().execute(words)
    for message in warned:
        _warnings.warn(message, RewindWarning, stacklevel=3)
    return report, vectors, list(warned)


def _problem_words(command: str, problem: Optional[str], model: Any) -> List[str]:
    if problem is not None and model is not None:
        raise InvalidArgument(
            f"rewind.{command}: give a built-in problem or model=PATH, not both")
    words = [command]
    if problem is not None:
        words.append(_flag_text(problem))
    if model is not None:
        words += ["--model", _flag_text(model)]
    return words


def run(problem: Optional[str] = None, *, model: Any = None, **options: Any) -> RunResult:
    """Integrates a built-in problem or a model plugin and returns J = 1/2 |y_N|^2 with its
    exact gradient, as ``rewind run --json`` (with its finite-difference spot check unless
    ``no_fd_check=True``; rewind.gradient leaves it out).

    ``problem``: a built-in problem's name; ``model``: instead, the path of a model plugin
    (rewind_add_model, docs/models.md). Every other option of ``rewind run`` is a keyword:
    ``n``, ``steps``, ``dt``, ``method``, ``adaptive``, ``rtol``, ``parameters`` (a dict),
    ``snapshots``, ``memory``, ``schedule``, ``disk``, ``stage_aware``, … (rewind.help("run")).
    """
    words = _problem_words("run", problem, model) + _option_arguments(["run"], options)
    report, vectors, warned = _execute(words + ["--json"])
    return RunResult(
        loss=report["loss"],
        grad_y0=vectors["grad_y0"],
        grad_theta=vectors["grad_theta"],
        parameters=dict(report["parameters"]),
        summary=report["stats"],
        schedule=report.get("schedule"),
        drift=report.get("drift"),
        fd_check=report.get("fd_check"),
        report=report,
        warnings=warned,
    )


def gradient(problem: Optional[str] = None, *, model: Any = None, **options: Any) -> RunResult:
    """rewind.run without the finite-difference spot check (which costs 10 to 30 forward runs):
    J and its exact gradient alone, for an optimisation loop. Same keywords as rewind.run."""
    options.setdefault("no_fd_check", True)
    return run(problem, model=model, **options)


def plan(**options: Any) -> Dict[str, Any]:
    """The schedule ``rewind plan`` chooses and its counts, as ``rewind plan --json``'s object:
    ``steps`` and ``snapshots`` or ``memory`` (with ``state_bytes`` or ``model``), ``schedule``,
    the disk and stage-aware options, ``online`` … (rewind.help("plan"))."""
    report, _, _ = _execute(["plan"] + _option_arguments(["plan"], options) + ["--json"])
    return report


def generate(problem: Optional[str] = None, *, model: Any = None, **options: Any) -> Dict[str, Any]:
    """Writes observations of a built-in problem or a model plugin for rewind.fit, as
    ``rewind generate PROBLEM``: ``out`` (the .h5 file), ``steps``, ``observe_every``,
    ``observe``, ``noise``, ``seed``, the method's options (rewind.help("generate", problem)).

    Returns what was written: the file, problem, field, number of observations and their steps,
    ``data`` (observations × values per observation) and the run's ``initial_state``.
    """
    if problem is None and model is None:
        raise InvalidArgument("rewind.generate: name a built-in problem or give model=PATH")
    if problem is not None and model is not None:
        raise InvalidArgument("rewind.generate: give a built-in problem or model=PATH, not both")
    command = ["generate", _flag_text(problem)] if problem is not None else ["generate"]
    words = command + _option_arguments(command, options)
    if model is not None:
        words += ["--model", _flag_text(model)]
    report, vectors, _ = _execute(words)
    report = dict(report)
    count = report["values_per_observation"]
    report["data"] = vectors["data"].reshape(-1, count)
    report["initial_state"] = vectors["initial_state"]
    return report


def fit(problem: Optional[str] = None, *, model: Any = None, **options: Any) -> FitResult:
    """Fits a problem's parameters (and optionally its initial state) to observations, as
    ``rewind fit --json``: ``observations`` (a file of rewind.generate) or ``data`` (a CSV
    series), ``fit`` (the names to estimate), ``start``, ``bounds``, ``log_scale``, the
    optimiser's and the method's options (rewind.help("fit")).

    A fit that stops without converging raises rewind.Error; its ``report`` has the best
    parameters found. The tool's line per iteration is not printed: ``report["history"]`` has
    every iteration (J, |grad J|, the parameters, seconds).
    """
    words = _problem_words("fit", problem, model) + _option_arguments(["fit"], options)
    report, _, warned = _execute(words + ["--json"])
    return FitResult(
        parameters=dict(report["parameters"]),
        loss=report["loss"],
        stop_reason=report["stop_reason"],
        report=report,
        warnings=warned,
    )


def inspect(path: Any) -> Dict[str, Any]:
    """What a file rewind wrote holds, as ``rewind inspect FILE --json``'s object: a snapshot
    file (its slots, every checksum verified: ``intact``), an observation file (problem, method
    and its settings, observed steps), a model or parameter file, or a time series.

    A snapshot file with a corrupt slot raises rewind.Error, its ``report`` naming the slot."""
    report, _, _ = _execute(["inspect", _flag_text(path), "--json"])
    return report


def help(command: str, *subcommand: str) -> str:  # noqa: A001 (the tool's word)
    """The help page of ``rewind COMMAND [SUBCOMMAND]``: every option, its keyword being the
    flag without dashes, dashes written as underscores."""
    return _commands_module().help_text([command, *subcommand])
