"""`rewind run --model PATH` of a stencil model (a PDE loaded as a plugin, its grid sized by --n).

    check_stencil_model.py REWIND GRAY_SCOTT_PLUGIN

1. The Gray–Scott stencil plugin (tests/problems/models/stencil_plugin_models.hpp: the built-in's
   expressions and default initial state) steps the built-in gray_scott's numbers: the same loss,
   bit for bit, and a gradient that agrees with the built-in's hand-written one to 1e-12 relative
   (the derived and the hand-written vjp differ by round-off only).
2. Through the plugin the gradient's bits depend neither on --threads (1 or 2; the grid is large
   enough for the plugin's loops to use both) nor on the schedule (store-all or revolve with 4
   snapshots).
3. The reports speak the model's names: its type name, a grid of n cells per dimension, and
   --parameters by the model's own parameter names.
4. generate --model --n writes observations of the field v on a 24 × 24 grid, and fit --model
   recovers F and k from them (checkpointed gradients) within three standard errors.
"""
import json
import os
import sys
import tempfile

from cli_check import fail, run


def gradient(report):
    return report["grad_theta"]


def main():
    rewind, plugin = sys.argv[1], sys.argv[2]
    common = ["--n", "128", "--steps", "12", "--no-fd-check", "--json"]
    builtin = json.loads(run(rewind, "run", "gray_scott", *common, "--threads", "1").stdout)
    loaded = json.loads(run(rewind, "run", "--model", plugin, *common, "--threads", "1").stdout)
    if loaded["loss"] != builtin["loss"]:
        fail(f"the plugin's loss {loaded['loss']!r} is not the built-in's {builtin['loss']!r}")
    for name, ours, theirs in zip(("Du", "Dv", "F", "k"), gradient(loaded), gradient(builtin)):
        if abs(ours - theirs) > 1e-12 * max(abs(theirs), 1e-300):
            fail(f"dJ/d{name} = {ours!r} through the plugin, {theirs!r} built in")
    if loaded["problem"] != "GrayScott" or loaded["n"] != 128 or loaded["state_size"] != 2 * 128**2:
        fail(f"the report names {loaded['problem']!r}, n = {loaded['n']!r}, "
             f"{loaded['state_size']!r} values")

    two_threads = json.loads(run(rewind, "run", "--model", plugin, *common, "--threads", "2").stdout)
    revolve = json.loads(run(rewind, "run", "--model", plugin, *common, "--threads", "2",
                             "--snapshots", "4").stdout)
    for label, other in (("--threads 2", two_threads), ("--snapshots 4", revolve)):
        if gradient(other) != gradient(loaded) or other["loss"] != loaded["loss"]:
            fail(f"{label} changed the bits: {gradient(other)!r} vs {gradient(loaded)!r}")

    renamed = json.loads(run(rewind, "run", "--model", plugin, "--n", "16", "--steps", "3",
                             "--parameters", "F=0.03", "--no-fd-check", "--json").stdout)
    if renamed["parameters"]["F"] != 0.03:
        fail(f"--parameters F=0.03 gave {renamed['parameters']!r}")
    with tempfile.TemporaryDirectory() as scratch:
        observations = os.path.join(scratch, "gs.h5")
        run(rewind, "generate", "--model", plugin, "--n", "24", "--steps", "1000",
            "--observe-every", "250", "--observe", "v", "--noise", "1e-4", "--out", observations)
        fit = json.loads(run(rewind, "fit", "--model", plugin, "--observations", observations,
                             "--fit", "F,k", "--start", "F=0.03,k=0.055", "--snapshots", "8",
                             "--json").stdout)
    for name, truth in (("F", 0.037), ("k", 0.06)):
        value, error = fit["parameters"][name], fit["standard_errors"][name]
        if not abs(value - truth) <= 3 * error:
            fail(f"fit gave {name} = {value!r} +- {error!r}, truth {truth}")
    print("check_stencil_model: ok")


if __name__ == "__main__":
    main()
