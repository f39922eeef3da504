#!/usr/bin/env python3
"""Checks `rewind run ... --disk DIR --resume` against kills (a ctest added by src/cli/CMakeLists.txt).

    check_resume.py path/to/rewind [--cycles N] [--seed S]

- A Gray-Scott run with every snapshot on disk, or two levels, is killed at random instants of
  its forward and reverse sweeps -- SIGKILL, SIGTERM or SIGINT, chosen at random -- and started
  again with the same command until it completes, N kill cycles in all. Every completed run gives
  J and dJ/dtheta bit for bit those of an uninterrupted run (the JSON prints each double as the
  shortest text that reads back as it), with zero drift, and leaves no file behind.
- SIGTERM/SIGINT stop at a step boundary: exit status 143/130 and a message saying where the run
  stopped and that running it again continues it (or, when the signal lands before the handler
  is installed or after the run, the default action).
- A file left by another configuration (--steps) is refused naming the difference (exit 1) and
  is left in place; --resume without --disk, or with --compression, is refused (exit 2).
"""
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time


def fail(message):
    print("check_resume: " + message, file=sys.stderr)
    sys.exit(1)


def run(rewind, *args, expect=0):
    proc = subprocess.run([rewind, *args], capture_output=True, text=True)
    if proc.returncode != expect:
        fail(f"{' '.join(args)} exited with {proc.returncode} (expected {expect}): "
             f"{proc.stderr.strip()}")
    return proc


def same_gradient(a, b, what):
    for key in ("loss", "grad_theta", "grad_y0_norm", "grad_theta_norm"):
        if a[key] != b[key]:
            fail(f"{what}: {key} differs from the uninterrupted run: {a[key]!r} vs {b[key]!r}")


def files_in(directory):
    return sorted(os.listdir(directory))


def kill_cycles(rewind, command, reference, seconds, cycles, rng, scratch, what):
    """Kills `command` `cycles` times at random instants, restarting it until it completes after
    the last kill; returns counts of what was seen."""
    seen = {"forward": 0, "reverse": 0, "resumed": 0, "completed": 0, "killed": 0}
    kills = 0
    while True:
        proc = subprocess.Popen([rewind, *command], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        if kills < cycles:
            time.sleep(rng.uniform(0.02, 1.1) * seconds)
            sig = rng.choice([signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
            proc.send_signal(sig)
            kills += 1
        else:
            sig = None
        out, err = proc.communicate(timeout=600)
        if proc.returncode == 0:
            result = json.loads(out)
            same_gradient(result, reference, f"{what}, after {kills} kills")
            if not result["drift"]["bitwise_identical"]:
                fail(f"{what}: a resumed run drifted: {result['drift']}")
            if result["schedule"]["resumed"] is not None:
                seen["resumed"] += 1
            seen["completed"] += 1
            if files_in(scratch):
                fail(f"{what}: a completed run left {files_in(scratch)}")
            if kills >= cycles:
                return seen
            continue
        if sig is None:
            fail(f"{what}: the last attempt failed ({proc.returncode}): {err.strip()}")
        seen["killed"] += 1
        if proc.returncode == -sig:
            # SIGKILL, or a signal outside the driver: the default action. Killed while creating
            # its file, a run leaves only the temporary name, which the next attempt removes.
            left = set(files_in(scratch))
            if not left <= {"rewind-resume.h5", "rewind-resume.h5.creating"}:
                fail(f"{what}: a killed run left {sorted(left)}")
            continue
        expected = 128 + int(sig)
        if proc.returncode != expected:
            fail(f"{what}: after {sig.name} the run exited with {proc.returncode} "
                 f"(expected {expected} or -{int(sig)}): {err.strip()}")
        if "run it again with resume to continue" not in err:
            fail(f"{what}: the stop message does not say how to continue: {err.strip()}")
        if "forward sweep" in err:
            seen["forward"] += 1
        elif "reverse sweep" in err:
            seen["reverse"] += 1
        else:
            fail(f"{what}: the stop message does not say where the run stopped: {err.strip()}")
        if files_in(scratch) != ["rewind-resume.h5"]:
            fail(f"{what}: a stopped run left {files_in(scratch)}, not its snapshot file")


def main():
    rewind = sys.argv[1]
    cycles = int(sys.argv[sys.argv.index("--cycles") + 1]) if "--cycles" in sys.argv else 8
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 7
    rng = random.Random(seed)
    base = ["run", "gray_scott", "--n", "24", "--steps", "1200", "--no-fd-check", "--json"]
    start = time.monotonic()
    reference = json.loads(run(rewind, *base, "--snapshots", "6").stdout)
    variants = {
        "revolve(6) on disk": ["--snapshots", "6"],
        "two levels 2 + 5": ["--ram-snapshots", "2", "--disk-snapshots", "5",
                             "--disk-write-cost", "2", "--disk-read-cost", "1"],
    }
    totals = {}
    for what, flags in variants.items():
        with tempfile.TemporaryDirectory() as scratch:
            command = [*base, *flags, "--disk", scratch, "--resume"]
            began = time.monotonic()
            plain = json.loads(run(rewind, *command).stdout)
            seconds = time.monotonic() - began
            same_gradient(plain, reference, what + ", never killed")
            if plain["schedule"]["resumed"] is not None or files_in(scratch):
                fail(f"{what}: a run never killed says it resumed, or left {files_in(scratch)}")
            seen = kill_cycles(rewind, command, reference, seconds, cycles, rng, scratch, what)
            if seen["resumed"] == 0:
                fail(f"{what}: no completed run was a resumed one: {seen}")
            totals[what] = seen
    if cycles >= 40:
        for what, seen in totals.items():
            if seen["forward"] == 0 or seen["reverse"] == 0:
                fail(f"{what}: {cycles} kills never stopped both sweeps by a signal: {seen}")

    with tempfile.TemporaryDirectory() as scratch:
        command = [*base, "--snapshots", "6", "--disk", scratch, "--resume"]
        proc = subprocess.Popen([rewind, *command], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        # Stopped (SIGTERM) once its file has its name: a fixed delay is too long on a fast
        # machine, and one killed while creating its file leaves only "<name>.creating".
        while "rewind-resume.h5" not in files_in(scratch) and proc.poll() is None:
            time.sleep(0.002)
        time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        proc.communicate()
        if files_in(scratch) != ["rewind-resume.h5"]:
            fail(f"a stopped run left {files_in(scratch)}")
        other = [a if a != "1200" else "1100" for a in command]
        err = run(rewind, *other, expect=1).stderr
        if "another run configuration" not in err or "1100" not in err:
            fail(f"a file of another configuration was not refused naming it: {err.strip()}")
        if files_in(scratch) != ["rewind-resume.h5"]:
            fail("a refused resume touched the file")
        err = run(rewind, *base, "--snapshots", "6", "--resume", expect=2).stderr
        if "--resume needs --disk" not in err:
            fail(f"--resume without --disk: {err.strip()}")
        err = run(rewind, *command, "--compression", "3", expect=2).stderr
        if "uncompressed" not in err:
            fail(f"--resume with --compression: {err.strip()}")
    print(f"check_resume: {cycles} kills per schedule, every completed run bit for bit; "
          f"{json.dumps(totals)}; {time.monotonic() - start:.1f} s")


if __name__ == "__main__":
    main()
