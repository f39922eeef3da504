#!/usr/bin/python3
"""Checks scripts/plot_plan.py on sample plans (made by plan_plot_sample.py beside this file).

    /usr/bin/python3 tests/cli/check_plan_plot.py scripts/plot_plan.py

Passes when, for each sample, the script exits 0 silently and writes a PNG of plausible size that
is not blank, two panels wide when the plan has actions and one panel otherwise; when every kind
of bad input (no file, invalid JSON, a missing key, a bad action, wrong arguments) exits 2 with
one line on stderr and writes nothing; and when an unwritable output exits 1.
Needs numpy and matplotlib, as plot_plan.py does (Debian: python3-numpy python3-matplotlib).
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plan_plot_sample as sample  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def fail(message):
    print("check_plan_plot: " + message, file=sys.stderr)
    sys.exit(1)


def run(script, *args):
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True)


def png_size(path):
    """(width, height) from the IHDR chunk, which a valid PNG has right after the signature."""
    with open(path, "rb") as f:
        head = f.read(24)
    if len(head) < 24 or head[:8] != PNG_SIGNATURE or head[12:16] != b"IHDR":
        fail(f"{path} is not a PNG")
    return struct.unpack(">II", head[16:24])


def ink(path):
    """Fraction of pixels that are not white: a figure that drew nothing has almost none."""
    import matplotlib.image  # only here: the checks above need no matplotlib

    pixels = matplotlib.image.imread(path)[..., :3]
    return float((pixels.min(axis=2) < 0.95).mean())


def check_picture(script, name, plan, directory):
    plan_path = os.path.join(directory, name + ".json")
    png = os.path.join(directory, name + ".png")
    with open(plan_path, "w") as f:
        json.dump(plan, f)
    proc = run(script, plan_path, png)
    if proc.returncode != 0:
        fail(f"{name}: exited with {proc.returncode}: {proc.stderr.strip()}")
    # The caller's stdout may carry `rewind plan --json`; the terminal wants no noise.
    if proc.stdout or proc.stderr:
        fail(f"{name}: printed something: stdout {proc.stdout!r}, stderr {proc.stderr!r}")
    if not os.path.isfile(png):
        fail(f"{name}: no {png}")
    width, height = png_size(png)
    if not (400 <= height <= 1500 and 600 <= width <= 3000):
        fail(f"{name}: {width}x{height} pixels is not a readable figure size")
    two_panels = plan.get("actions") is not None
    if two_panels != (width >= 2 * height):
        fail(f"{name}: {width}x{height} pixels, expected {2 if two_panels else 1} panel(s)")
    if os.path.getsize(png) < 20_000 or ink(png) < 0.02:
        fail(f"{name}: {png} looks blank ({os.path.getsize(png)} bytes, {ink(png):.1%} ink)")
    print(f"ok: {name}: {width}x{height}, {ink(png):.0%} ink")


def check_refused(script, name, args, directory, expected=2):
    png = args[-1] if args else None
    proc = run(script, *args)
    if proc.returncode != expected:
        fail(f"{name}: exited with {proc.returncode}, expected {expected}; "
             f"stderr {proc.stderr!r}")
    lines = proc.stderr.strip().splitlines()
    if len(lines) != 1:
        fail(f"{name}: stderr should be one line, got {proc.stderr!r}")
    if expected == 2 and png and png.endswith(".png") and os.path.exists(png):
        fail(f"{name}: wrote {png} from bad input")
    print(f"ok: {name} refused: {lines[0]}")


def without(plan, *path):
    """A copy of plan with the key at path (e.g. "tradeoff", "memory") removed."""
    plan = json.loads(json.dumps(plan))
    inner = plan
    for key in path[:-1]:
        inner = inner[key]
    del inner[path[-1]]
    return plan


def check_bad_input(script, good, directory):
    def write(name, content):
        path = os.path.join(directory, name)
        with open(path, "w") as f:
            f.write(content if isinstance(content, str) else json.dumps(content))
        return path

    def out(name):
        return os.path.join(directory, name + ".png")

    check_refused(script, "missing file",
                  [os.path.join(directory, "no-such-plan.json"), out("missing")], directory)
    check_refused(script, "invalid JSON",
                  [write("broken.json", '{"steps": 30, '), out("broken")], directory)
    first_reverse = next(i for i, a in enumerate(good["actions"]) if a["kind"] == "reverse")
    for path in (("steps",), ("chosen",), ("tradeoff",), ("tradeoff", "memory"),
                 ("chosen", "ratio"), ("actions", first_reverse, "step")):
        name = "no " + ".".join(str(p) for p in path)
        check_refused(script, name, [write(name + ".json", without(good, *path)), out(name)],
                      directory)
    bad_action = json.loads(json.dumps(good))
    bad_action["actions"][3] = {"kind": "jump", "step": 2}
    check_refused(script, "unknown action",
                  [write("jump.json", bad_action), out("jump")], directory)
    bad_level = json.loads(json.dumps(good))
    bad_level["actions"][0]["level"] = "tape"
    check_refused(script, "unknown level",
                  [write("tape.json", bad_level), out("tape")], directory)
    two_level = sample.two_level_plan(30, 2, 3, with_actions=False)
    check_refused(script, "two-level without chosen.time_ratio",
                  [write("tl.json", without(two_level, "chosen", "time_ratio")), out("tl")],
                  directory)
    check_refused(script, "not a JSON object", [write("list.json", "[1, 2]"), out("list")],
                  directory)
    check_refused(script, "no arguments", [], directory)
    unwritable = os.path.join(directory, "no-such-dir", "plan.png")
    check_refused(script, "unwritable output", [write("good.json", good), unwritable], directory,
                  expected=1)


def check_rewind_plan_plot(rewind, directory):
    """`rewind plan --plot` writes the PNG and, beside it, the data it drew: the plan's own
    actions (every step reversed once, in order) and its trade-off with the chosen point."""
    cases = {
        "revolve": ["--steps", "60", "--snapshots", "5"],
        "two_level": ["--steps", "150", "--ram-snapshots", "3", "--disk-snapshots", "6",
                      "--disk-write-cost", "3", "--disk-read-cost", "2"],
        "long": ["--steps", "100000", "--snapshots", "20"],
    }
    for name, args in cases.items():
        png = os.path.join(directory, f"rewind_{name}.png")
        result = subprocess.run([rewind, "plan", *args, "--plot", png], capture_output=True, text=True)
        if result.returncode != 0:
            fail(f"rewind plan --plot ({name}) exited {result.returncode}: {result.stderr.strip()}")
        if png_size(png)[0] < 400:
            fail(f"rewind plan --plot ({name}): {png} is not a picture")
        with open(os.path.join(directory, f"rewind_{name}.plan.json")) as f:
            data = json.load(f)
        steps = data["steps"]
        reversed_steps = [a["step"] for a in data.get("actions", []) if a["kind"] == "reverse"]
        if steps <= 200 and reversed_steps != list(range(steps - 1, -1, -1)):
            fail(f"rewind plan --plot ({name}): the actions do not reverse every step once")
        if steps > 200 and "actions" in data:
            fail(f"rewind plan --plot ({name}): actions sent for l = {steps}")
        if data["tradeoff"]["memory"][-1][0] != steps:
            fail(f"rewind plan --plot ({name}): the trade-off does not reach c = l")
        if name == "two_level" and "two_level" not in data["tradeoff"]:
            fail("rewind plan --plot (two-level): no two-level curve")
        if name == "two_level" and not any(a.get("level") == "disk" for a in data["actions"]):
            fail("rewind plan --plot (two-level): no disk action")


def main():
    if len(sys.argv) not in (2, 3):
        fail("usage: check_plan_plot.py path/to/plot_plan.py [path/to/rewind]")
    script = sys.argv[1]
    if not os.path.isfile(script):
        fail(f"no {script}")
    samples = {
        "revolve_l30_c4": sample.revolve_plan(30, 4, with_actions=True),
        "revolve_l200_c10": sample.revolve_plan(200, 10, with_actions=True),
        "two_level_l200_k4_d6": sample.two_level_plan(200, 4, 6, with_actions=True),
        "store_all_l50": sample.store_all_plan(50, with_actions=True),
        "revolve_l1e6_c20_tradeoff_only": sample.revolve_plan(10**6, 20, with_actions=False),
        "revolve_l1_c1": sample.revolve_plan(1, 1, with_actions=True),
    }
    with tempfile.TemporaryDirectory() as directory:
        for name, plan in samples.items():
            check_picture(script, name, plan, directory)
        check_bad_input(script, samples["revolve_l30_c4"], directory)
        if len(sys.argv) == 3:
            check_rewind_plan_plot(sys.argv[2], directory)
    print("ok: plot_plan.py draws every sample and refuses bad input")


if __name__ == "__main__":
    main()
