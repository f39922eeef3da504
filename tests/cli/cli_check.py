"""What the check_*.py scripts of the command line share: a failure that names the script, a run
of the tool expecting an exit status, and a refusal (exit 2, one line naming the rule).

    from cli_check import fail, refused, run   # the script's own folder is on sys.path

    proc = run(rewind, "fit", ..., "--json")            # exit 0 expected; the CompletedProcess
    run(rewind, "fit", ..., expect=1)                   # another status expected
    refused(rewind, "must be > 0", "fit", ..., "--sigma", "0")
"""
import os
import subprocess
import sys

_SCRIPT = os.path.splitext(os.path.basename(sys.argv[0]))[0]


def fail(message):
    """Ends the check: the script's name and the message on stderr, exit status 1."""
    print(f"{_SCRIPT}: {message}", file=sys.stderr)
    sys.exit(1)


def run(rewind, *args, expect=0):
    """Runs `rewind ARGS...` (or any program in rewind's place), failing the check unless it exits
    with `expect`; the failure shows the end of its output and its errors."""
    proc = subprocess.run([rewind, *args], capture_output=True, text=True)
    if proc.returncode != expect:
        fail(f"{' '.join(args)} exited {proc.returncode} (expected {expect}): "
             f"{proc.stdout.strip()[-2000:]} {proc.stderr.strip()}")
    return proc


def refused(rewind, needle, *args):
    """Runs `rewind ARGS...` expecting exit 2 and one line on stderr that contains `needle`."""
    proc = run(rewind, *args, expect=2)
    lines = proc.stderr.strip().splitlines()
    if len(lines) != 1 or needle not in lines[0]:
        fail(f"{' '.join(args)}: expected one line with {needle!r}, got {proc.stderr!r}")
