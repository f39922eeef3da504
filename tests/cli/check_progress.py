#!/usr/bin/env python3
"""Checks the progress bar of `rewind run` (a ctest added by tests/cli/CMakeLists.txt).

    check_progress.py path/to/rewind

1. stderr not a terminal (a pipe): a checkpointed and a store-all run write nothing to stderr.
2. stderr a pseudo-terminal: a run long enough to draw (> 0.2 s) shows "forward" and "reverse"
   percentages on stderr, erases its line at the end, and prints exactly the same J and
   dJ/dtheta on stdout (bit for bit) as the run without a terminal.
"""
import json
import os
import pty
import select
import subprocess
import sys
import time

RUN = ["run", "gray_scott", "--n", "64", "--steps", "3000", "--no-fd-check", "--json"]


def fail(message):
    print("check_progress: " + message, file=sys.stderr)
    sys.exit(1)


# Each run takes a few seconds on a quiet 2-core machine; far longer means something is wrong.
RUN_TIMEOUT = 50


def run_piped(rewind, args):
    start = time.monotonic()
    try:
        proc = subprocess.run([rewind, *args], capture_output=True, text=True,
                              timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        fail(f"{args} with stderr to a pipe did not finish in {RUN_TIMEOUT} s")
    print(f"piped run: {time.monotonic() - start:.2f} s", flush=True)
    if proc.returncode != 0:
        fail(f"{args} exited with {proc.returncode}: {proc.stderr}")
    if proc.stderr:
        fail(f"{args} with stderr not a terminal wrote to it: {proc.stderr[:200]!r}")
    return json.loads(proc.stdout)


def run_on_pty(rewind, args, parse_json=True):
    """stdout to a pipe, stderr to a pseudo-terminal; returns (report, stderr text, seconds); the
    report is stdout's JSON, or its text when parse_json is false."""
    master, slave = pty.openpty()
    start = time.monotonic()
    proc = subprocess.Popen([rewind, *args], stdout=subprocess.PIPE, stderr=slave,
                            stdin=subprocess.DEVNULL)
    os.close(slave)
    err = b""
    out_chunks = []
    # Drain both, so neither pipe fills.
    streams = {proc.stdout.fileno(): "out", master: "err"}
    while streams:
        ready, _, _ = select.select(list(streams), [], [], 5)
        if time.monotonic() - start > RUN_TIMEOUT:
            proc.kill()
            fail(f"{args} on a terminal did not finish in {RUN_TIMEOUT} s; its stderr ended "
                 f"{err[-120:]!r}")
        for fd in ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # EIO: the terminal's last writer is gone
                chunk = b""
            if not chunk:
                del streams[fd]
            elif streams[fd] == "out":
                out_chunks.append(chunk)
            else:
                err += chunk
    proc.wait()
    seconds = time.monotonic() - start
    os.close(master)
    if proc.returncode != 0:
        fail(f"{args} on a terminal exited with {proc.returncode}: {err!r}")
    out = b"".join(out_chunks)
    return (json.loads(out) if parse_json else out.decode()), err.decode(errors="replace"), seconds


def main():
    if len(sys.argv) != 2:
        fail("usage: check_progress.py REWIND")
    rewind = sys.argv[1]
    for extra in (["--snapshots", "10"], []):
        args = RUN + extra
        piped = run_piped(rewind, args)
        report, err, seconds = run_on_pty(rewind, args)
        for key in ("loss", "grad_theta", "grad_y0_norm"):
            if report[key] != piped[key]:
                fail(f"{extra}: {key} on a terminal {report[key]!r} != piped {piped[key]!r}")
        if seconds > 0.6:  # long enough that the bar must have been drawn (first draw at 0.2 s)
            if "rewind: forward" not in err or "reverse" not in err or "%" not in err:
                fail(f"{extra}: no progress bar on the terminal after {seconds:.2f} s: {err!r}")
            if not err.endswith("\r\x1b[K"):
                fail(f"{extra}: the progress line was not erased at the end: {err[-60:]!r}")
        elif err and not err.endswith("\r\x1b[K"):
            fail(f"{extra}: stray stderr output: {err!r}")
        print(f"ok: {' '.join(extra) or 'store-all'}: {seconds:.2f} s, "
              f"{err.count('rewind: forward')} draws, same J and gradient")


if __name__ == "__main__":
    main()
