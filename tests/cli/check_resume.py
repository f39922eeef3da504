#!/usr/bin/env python3
"""Checks `rewind run ... --disk DIR --resume` against kills (a ctest added by tests/cli/CMakeLists.txt).

    check_resume.py path/to/rewind [--cycles N] [--seed S] [--mpiexec PATH --ranks N]

- A Gray-Scott run with every snapshot on disk, or on two levels (memory and disk), or on three
  (device, host and disk; the plans of the last two weigh copy and disk costs measured by the
  first attempt, which later attempts read back from the file), or -- one process -- with
  adaptive steps on the online schedule with its snapshots on disk (no counting sweep; its
  reference is the same run in memory), is killed at random instants of
  its forward and reverse sweeps -- SIGKILL, SIGTERM or SIGINT, chosen at random -- and started
  again with the same command until it completes, N kill cycles in all. Every completed run gives
  J and dJ/dtheta bit for bit those of an uninterrupted run (the JSON prints each double as the
  shortest text that reads back as it), with zero drift, and leaves no file behind.
- SIGTERM/SIGINT stop at a step boundary: exit status 143/130 and a message saying where the run
  stopped and that running it again continues it (or, when the signal lands before the handler
  is installed or after the run, the default action). With 40 kill cycles or more, a signal
  must have stopped each sweep of each schedule; where the random instants missed the forward
  sweep (only a fresh attempt has one, and under a launcher it is a small part of the run), a
  SIGTERM as the snapshot files of a ten times longer run appear stops it for certain, and that
  run continues to its uninterrupted bits.
- A file left by another configuration (--steps) is refused naming the difference (exit 1) and
  is left in place; --resume without --disk, or with --compression, is refused (exit 2).
- With --mpiexec and --ranks, the same under `mpiexec -np N` with the state split across the
  ranks (a file per rank, rewind-resume.rank<K>.h5): SIGTERM/SIGINT go to the launcher, which
  passes them on to the ranks; SIGKILL goes to the launcher and every rank at once (a node lost,
  a batch system's hard kill). After each attempt no rank is left running. Every completed run
  gives the uninterrupted bits (dJ/dtheta those of one process). N + 1 ranks, or one
  process, continuing the files are refused naming the difference, and leave them alone.
"""
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time


def fail(message):
    print("check_resume: " + message, file=sys.stderr)
    sys.exit(1)


ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMP_NUM_THREADS="1", OMP_WAIT_POLICY="passive", OMPI_MCA_mpi_yield_when_idle="1")


# The disk probe's scratch file (measure_disk_costs): left only by an attempt killed while it
# measured, and removed by the next attempt.
PROBE = re.compile(r"rewind-disk-probe-[0-9]+-[0-9]+\.h5")


def run(rewind, *args, expect=0):
    """rewind: the command that starts the tool (a list: the tool, or a launcher and the tool)."""
    proc = subprocess.run([*rewind, *args], capture_output=True, text=True, env=ENV)
    if proc.returncode != expect and (expect is not None or proc.returncode == 0):
        fail(f"{' '.join(args)} exited with {proc.returncode} (expected {expect}): "
             f"{proc.stderr.strip()}")
    return proc


def same_gradient(a, b, what):
    for key in ("loss", "grad_theta", "grad_y0_norm", "grad_theta_norm"):
        if a[key] != b[key]:
            fail(f"{what}: {key} differs from the uninterrupted run: {a[key]!r} vs {b[key]!r}")


def files_in(directory):
    return sorted(os.listdir(directory))


def session_members(session):
    """The processes of a session (Open MPI puts each rank in a process group of its own, in the
    launcher's session)."""
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getsid(int(entry)) == session:
                    members.append(int(entry))
            except (ProcessLookupError, PermissionError):
                pass
    return members


def zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[-1][:1] == "Z"
    except FileNotFoundError:
        return True


def kill_session(session, sig):
    for pid in session_members(session):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def end_group(proc):
    """Kills whatever is left of the attempt (ranks a launcher left behind) and waits until it is
    gone: a rank still alive would hold its snapshot file (HDF5 locks it) from the next attempt."""
    kill_session(proc.pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        alive = [pid for pid in session_members(proc.pid) if not zombie(pid)]
        if not alive:
            return
        time.sleep(0.01)
    fail(f"processes {alive} of an attempt did not end")


def kill_cycles(rewind, command, reference, seconds, cycles, rng, scratch, what, files):
    """Kills `command` `cycles` times at random instants, restarting it until it completes after
    the last kill; returns counts of what was seen. files: the snapshot files of a stopped run."""
    seen = {"forward": 0, "reverse": 0, "resumed": 0, "completed": 0, "killed": 0}
    kills = 0
    launched = len(rewind) > 1
    while True:
        proc = subprocess.Popen([*rewind, *command], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=ENV,
                                start_new_session=True)
        if kills < cycles:
            # Under a launcher the first tenth or so of the time is its start-up; the forward
            # sweep follows (a sixth of revolve(6)'s work), so the window starts just after.
            time.sleep(rng.uniform(0.1, 0.95) * seconds if launched
                       else rng.uniform(0.02, 1.1) * seconds)
            sig = rng.choice([signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
            if sig == signal.SIGKILL and launched:
                kill_session(proc.pid, sig)
            else:
                proc.send_signal(sig)
            kills += 1
        else:
            sig = None
        try:
            out, err = proc.communicate(timeout=120 if launched else 600)
        except subprocess.TimeoutExpired:
            # A launcher that never returns after passing a signal on: ended as a batch system
            # ends a job past its grace period. The run must continue from what it left.
            end_group(proc)
            out, err = proc.communicate()
            seen["launcher_hung"] = seen.get("launcher_hung", 0) + 1
            sig = signal.SIGKILL
        finally:
            end_group(proc)
        if proc.returncode == 0:
            result = json.loads(out)
            same_gradient(result, reference, f"{what}, after {kills} kills")
            if not result["drift"]["bitwise_identical"]:
                fail(f"{what}: a resumed run drifted: {result['drift']}")
            if result["schedule"]["resumed"] is not None:
                seen["resumed"] += 1
            if result["schedule"]["measured_costs_from_earlier_attempt"]:
                seen["costs_kept"] = seen.get("costs_kept", 0) + 1
            seen["completed"] += 1
            if files_in(scratch):
                fail(f"{what}: a completed run left {files_in(scratch)}")
            if kills >= cycles:
                return seen
            continue
        if sig is None:
            fail(f"{what}: the last attempt failed ({proc.returncode}): {err.strip()}")
        seen["killed"] += 1
        if proc.returncode == -sig or (launched and sig == signal.SIGKILL):
            # SIGKILL, or a signal outside the driver: the default action. Killed while creating
            # its file, a run leaves only the temporary name, and killed while measuring the
            # disk its probe file; the next attempt removes both.
            left = set(files_in(scratch))
            if not {f for f in left if not PROBE.fullmatch(f)} <= (
                    set(files) | {f + ".creating" for f in files}):
                fail(f"{what}: a killed run left {sorted(left)}")
            continue
        expected = 128 + int(sig)
        if launched and "run it again with resume to continue" not in err:
            # The launcher passes SIGTERM on to every rank and reports a status of its own; a
            # signal that reached the ranks before they installed their handlers (or after the
            # run) ends them at once. The files must still be only the run's.
            left = set(files_in(scratch))
            if not {f for f in left if not PROBE.fullmatch(f)} <= (
                    set(files) | {f + ".creating" for f in files}):
                fail(f"{what}: a stopped run left {sorted(left)}")
            continue
        if not launched and proc.returncode != expected:
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
        if files_in(scratch) != files:
            fail(f"{what}: a stopped run left {files_in(scratch)}, not its snapshot files")


def stop_once(rewind, command, scratch, files, delay=0.05):
    """Starts `command` and stops it by SIGTERM `delay` seconds after its snapshot files have their
    names (a fixed delay from the start is too long on a fast machine, and one killed while
    creating its file leaves only "<name>.creating"); returns its stderr."""
    proc = subprocess.Popen([*rewind, *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=ENV, start_new_session=True)
    while not set(files) <= set(files_in(scratch)) and proc.poll() is None:
        time.sleep(0.002)
    time.sleep(delay)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate()
    end_group(proc)
    if files_in(scratch) != files:
        fail(f"a stopped run left {files_in(scratch)}")
    return err


def stop_in_forward_sweep(rewind, command, scratch, files, what):
    """Stops a fresh run by SIGTERM as soon as its snapshot files appear (the disk level opens
    them before the forward sweep), checks that it says it stopped there, and continues it to the
    bits of the same command run uninterrupted: the forward-sweep stop for certain, where random
    kill instants missed it. The run is ten times longer than the cycles' (--steps × 10): under
    a launcher a 6000-step forward sweep can end before a signal passed on by it reaches the
    ranks, and resumed attempts have no forward sweep at all."""
    longer = list(command)
    steps = longer.index("--steps") + 1
    longer[steps] = str(int(longer[steps]) * 10)
    with tempfile.TemporaryDirectory() as alone:
        uninterrupted = json.loads(run(rewind, *[a if a != scratch else alone
                                                 for a in longer]).stdout)
    err = stop_once(rewind, longer, scratch, files, delay=0.0)
    if "run it again with resume to continue" not in err or "forward sweep" not in err:
        fail(f"{what}: SIGTERM as the snapshot files appeared did not stop the forward sweep: "
             f"{err.strip()}")
    continued = json.loads(run(rewind, *longer).stdout)
    same_gradient(continued, uninterrupted, f"{what}, continued after a forward-sweep stop")
    if continued["schedule"]["resumed"] is None:
        fail(f"{what}: the run continued after a forward-sweep stop did not resume")
    if files_in(scratch):
        fail(f"{what}: a completed run left {files_in(scratch)}")


def option(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def main():
    tool = [sys.argv[1]]
    cycles = int(option("--cycles", 8))
    seed = int(option("--seed", 7))
    ranks = int(option("--ranks", 1))
    rng = random.Random(seed)
    base = ["run", "gray_scott", "--n", "24", "--steps", "1200", "--no-fd-check", "--json"]
    start = time.monotonic()
    reference = json.loads(run(tool, *base, "--snapshots", "6").stdout)
    rewind = tool
    files = ["rewind-resume.h5"]
    if "--mpiexec" in sys.argv:
        # Long enough that most kills land in the run, not in the launcher's start-up.
        base[base.index("1200")] = "6000"
        reference = json.loads(run(tool, *base, "--snapshots", "6").stdout)
        rewind = [option("--mpiexec", None), "-q", "-np", str(ranks), "--oversubscribe", *tool]
        files = sorted(f"rewind-resume.rank{k}.h5" for k in range(ranks)) if ranks > 1 else files
        # dJ/dtheta is the one-process bits; J and |dJ/dy0| are summed by the distributed
        # backend's reductions (the same bits for any rank count, not the serial backend's), so
        # the reference is the uninterrupted run with the same ranks.
        split = json.loads(run(rewind, *base, "--snapshots", "6").stdout)
        if split["grad_theta"] != reference["grad_theta"]:
            fail(f"{ranks} ranks: dJ/dtheta differs from one process: {split['grad_theta']!r}")
        reference = split
    # The two-level and three-level plans weigh costs measured before the run; a resumed attempt
    # must plan with the first attempt's figures (kept in the file), or its file is refused.
    variants = {
        "revolve(6) on disk": ["--snapshots", "6"],
        "two levels 2 + 5": ["--ram-snapshots", "2", "--disk-snapshots", "5"],
        "three levels 1 + 1 + 4": ["--device-snapshots", "1", "--host-snapshots", "1",
                                   "--disk-snapshots", "4"],
    }
    # A run of unknown length (adaptive steps) runs the online schedule with its snapshots on
    # disk and no counting sweep; its reference is the same run with them in memory.
    adaptive = ["--method", "dopri5", "--adaptive", "--rtol", "1e-5", "--atol", "1e-8",
                "--snapshots", "6"]
    if len(rewind) == 1:
        variants["online on disk (adaptive steps)"] = adaptive
    references = {"online on disk (adaptive steps)":
                  json.loads(run(rewind, *base, *adaptive).stdout) if len(rewind) == 1 else None}
    totals = {}
    for what, flags in variants.items():
        with tempfile.TemporaryDirectory() as scratch:
            command = [*base, *flags, "--disk", scratch, "--resume"]
            began = time.monotonic()
            plain = json.loads(run(rewind, *command).stdout)
            seconds = time.monotonic() - began
            expected = references.get(what) or reference
            if what in references and plain["schedule"]["counting_steps"]:
                fail(f"{what}: counted its steps first: {plain['schedule']['counting_steps']}")
            same_gradient(plain, expected, what + ", never killed")
            if plain["schedule"]["resumed"] is not None or files_in(scratch):
                fail(f"{what}: a run never killed says it resumed, or left {files_in(scratch)}")
            seen = kill_cycles(rewind, command, expected, seconds, cycles, rng, scratch, what,
                               files)
            if cycles >= 40 and seen["forward"] == 0:
                stop_in_forward_sweep(rewind, command, scratch, files, what)
                seen["forward"] = seen["forward_stopped_for_certain"] = 1
            # (Under a launcher the kill instants drift with the machine's load, and all of them
            # may land after the run; the stop below checks a resumed completion for certain.)
            if seen["resumed"] == 0 and len(rewind) == 1:
                fail(f"{what}: no completed run was a resumed one: {seen}")
            totals[what] = seen
    if cycles >= 40:
        for what, seen in totals.items():
            if seen["forward"] == 0 or seen["reverse"] == 0:
                fail(f"{what}: {cycles} kills never stopped both sweeps by a signal: {seen}")
    if len(rewind) > 1:
        # Another rank count, or one process, is refused naming the difference; the files stay
        # and the run then continues with its own rank count.
        with tempfile.TemporaryDirectory() as scratch:
            command = [*base, "--snapshots", "6", "--disk", scratch, "--resume"]
            stop_once(rewind, command, scratch, files)
            more = [rewind[0], "-q", "-np", str(ranks + 1), "--oversubscribe", *tool]
            err = run(more, *command, expect=None).stderr
            if f"the file says 'ranks = {ranks}', this run 'ranks = {ranks + 1}'" not in err:
                fail(f"{ranks + 1} ranks continuing a run of {ranks}: {err.strip()}")
            err = run(tool, *command, expect=1).stderr
            if "left by a run split across ranks" not in err:
                fail(f"one process continuing a run of {ranks} ranks: {err.strip()}")
            if files_in(scratch) != files:
                fail(f"a refused resume touched the files: {files_in(scratch)}")
            continued = json.loads(run(rewind, *command).stdout)
            same_gradient(continued, reference, "continued after the refusals")
            if continued["schedule"]["resumed"] is None:
                fail("the run continued after the refusals did not resume")
            if files_in(scratch):
                fail(f"a completed run left {files_in(scratch)}")
        print(f"check_resume: {ranks} ranks, {cycles} kills per schedule, every completed run "
              f"bit for bit the uninterrupted run (dJ/dtheta one process's); {json.dumps(totals)}; "
              f"{time.monotonic() - start:.1f} s")
        return

    with tempfile.TemporaryDirectory() as scratch:
        command = [*base, "--snapshots", "6", "--disk", scratch, "--resume"]
        stop_once(rewind, command, scratch, files)
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
