#!/usr/bin/env python3
"""Checks `rewind run --model PATH --disk DIR --resume` (a ctest added by tests/cli/CMakeLists.txt).

    check_model_resume.py path/to/rewind path/to/sir_model.so

- A model's run on disk stopped by SIGTERM and started again continues its snapshot file and
  gives J and dJ/dtheta bit for bit those of an uninterrupted run, leaving no file behind.
- A resumed run identifies the model by its file's bytes: after the plugin file changes (here a
  byte appended, as a rebuild would change it), the stopped run's file is refused naming the
  model (exit 1) and left in place, rather than continued with other code.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ENV = dict(os.environ, OMP_NUM_THREADS="1")


def fail(message):
    print("check_model_resume: " + message, file=sys.stderr)
    sys.exit(1)


def run(*args, expect=0):
    proc = subprocess.run(list(args), capture_output=True, text=True, env=ENV)
    if proc.returncode != expect:
        fail(f"{' '.join(args)} exited {proc.returncode} (expected {expect}): "
             f"{proc.stdout.strip()} {proc.stderr.strip()}")
    return proc


def stop_once(command, scratch):
    """Starts `command` and stops it by SIGTERM once its snapshot file exists."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=ENV)
    while "rewind-resume.h5" not in os.listdir(scratch) and proc.poll() is None:
        time.sleep(0.002)
    time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate()
    if proc.returncode != 143:
        fail(f"the run was not stopped (exit {proc.returncode}; make it longer): {err.strip()}")


def main():
    rewind, plugin = sys.argv[1:3]
    with tempfile.TemporaryDirectory() as scratch:
        model = os.path.join(scratch, "sir.so")
        shutil.copyfile(plugin, model)
        disk = os.path.join(scratch, "snapshots")
        os.mkdir(disk)
        base = [rewind, "run", "--model", model, "--steps", "100000", "--dt", "0.0001",
                "--snapshots", "6", "--no-fd-check", "--json"]
        reference = json.loads(run(*base).stdout)
        resumable = [*base, "--disk", disk, "--resume"]

        stop_once(resumable, disk)
        continued = json.loads(run(*resumable).stdout)
        for key in ("loss", "grad_theta", "grad_y0_norm"):
            if continued[key] != reference[key]:
                fail(f"{key} of the continued run differs: {continued[key]!r} vs "
                     f"{reference[key]!r}")
        if continued["schedule"]["resumed"] is None:
            fail("the second attempt did not resume the first's file")
        if os.listdir(disk):
            fail(f"a completed run left {os.listdir(disk)}")

        stop_once(resumable, disk)
        with open(model, "ab") as f:
            f.write(b"\0")  # another build of the model
        err = run(*resumable, expect=1).stderr
        if "model" not in err or "another run configuration" not in err:
            fail(f"a changed model's resume was not refused naming the model: {err.strip()}")
        if os.listdir(disk) != ["rewind-resume.h5"]:
            fail(f"the refused resume touched the file: {os.listdir(disk)}")
    print("check_model_resume: ok")


if __name__ == "__main__":
    main()
