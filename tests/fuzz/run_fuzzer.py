#!/usr/bin/env python3
"""Runs one libFuzzer harness for a bounded time and sorts what it found (the ctests labelled
fuzz; tests/fuzz/CMakeLists.txt).

    python3 tests/fuzz/run_fuzzer.py HARNESS SECONDS WORK_CORPUS SEED_CORPUS ARTIFACTS [LSAN_SUPP]

The harness runs in libFuzzer's fork mode (one worker) so that a crash does not end the run:
HDF5 1.10's own parser has memory errors on malformed files (bench/results/fuzzing.md), which
rewind cannot guard. Afterwards every crash, timeout and out-of-memory input is replayed once and
classified by its stack: a finding whose first frame past the sanitizers and the allocator lies
in libhdf5 is HDF5's (reported, not failed); anything else — a frame of rewind, of the harness
or of the standard library called by rewind, an HDF5 object left open, an uncaught exception —
is rewind's, and fails the test with its stack. Without ASan (a REWIND_SANITIZE=undefined
build, for long runs) an out-of-memory input has no stack of its own: it is replayed under gdb,
stopped at its first allocation over 100 MB, and classified by that stack.
"""
import os
import re
import shutil
import subprocess
import sys

SKIP = re.compile(r"asan|ubsan|sanitizer|fuzzer::|Allocator|__interceptor|sysdeps|\bstrdup\b|"
                  r"\bmem(cpy|move)\b|\bmalloc\b|\bcalloc\b|"
                  r"\brealloc\b|\bfree\b|operator new|libc\.so|abort|raise")


def first_frame(report):
    for line in report.splitlines():
        m = re.match(r"\s+#\d+\s+0x[0-9a-f]+ (?:in )?(.*)", line)
        if m and not SKIP.search(m.group(1)):
            return m.group(1)
    return ""


def allocation_stack(harness, path, env):
    """The stack of an input's first allocation over 100 MB, from gdb: a build without ASan
    (REWIND_SANITIZE=undefined) reports an out-of-memory input with no stack at all. Empty when
    gdb is missing or the allocation was not found."""
    gdb = shutil.which("gdb")
    if not gdb:
        return ""
    big = 100_000_000
    command = [gdb, "-batch", "-ex", "break LLVMFuzzerTestOneInput", "-ex", "run",
               "-ex", f"break __libc_malloc if $rdi > {big}",
               "-ex", f"break __libc_calloc if $rdi * $rsi > {big}",
               "-ex", f"break __libc_realloc if $rsi > {big}",
               "-ex", "continue", "-ex", "bt", "--args", harness, "-rss_limit_mb=0", path]
    try:
        out = subprocess.run(command, capture_output=True, text=True, errors="replace",
                             env=env, timeout=300).stdout
    except subprocess.TimeoutExpired:
        return ""
    return "\n".join("    " + line for line in out.splitlines() if line.startswith("#"))


def main():
    if len(sys.argv) not in (6, 7):
        print(__doc__, file=sys.stderr)
        return 2
    harness, seconds, work, seeds, artifacts = sys.argv[1:6]
    env = dict(os.environ)
    if len(sys.argv) == 7:
        env["LSAN_OPTIONS"] = "suppressions=" + sys.argv[6]
    os.makedirs(work, exist_ok=True)
    os.makedirs(artifacts, exist_ok=True)
    before = set(os.listdir(artifacts))
    name = os.path.basename(harness)
    run = subprocess.run([harness, "-fork=1", "-ignore_crashes=1", "-ignore_timeouts=1",
                          "-ignore_ooms=1", f"-max_total_time={seconds}", "-timeout=10",
                          "-rss_limit_mb=2048", "-print_final_stats=1",
                          f"-artifact_prefix={os.path.join(artifacts, name)}-", work, seeds],
                         env=env, capture_output=True, text=True, errors="replace")
    stats = [l for l in run.stderr.splitlines() if l.startswith(("#", "stat::", "INFO: fuzzed"))]
    print("\n".join(stats[-6:]))
    rewind_findings = []
    for artifact in sorted(a for a in set(os.listdir(artifacts)) - before
                           if a.startswith(name + "-")):
        path = os.path.join(artifacts, artifact)
        replay = subprocess.run([harness, "-timeout=10", "-rss_limit_mb=2048", path], env=env,
                                capture_output=True, text=True, errors="replace")
        report = replay.stderr
        if "out-of-memory" in report and not first_frame(report):
            report += "\n(stack of the first large allocation, from gdb)\n" + \
                allocation_stack(harness, path, env)
        frame = first_frame(report)
        kind = re.search(r"ERROR: \w+Sanitizer: ([\w-]+)|(runtime error)|(left open)|"
                         r"(uncaught exception)|(out-of-memory)|(timeout)", report)
        kind = next((g for g in kind.groups() if g), "?") if kind else "?"
        if replay.returncode == 0:
            print(f"{artifact}: does not reproduce alone ({kind})")
        elif "libhdf5" in frame:
            print(f"{artifact}: inside HDF5 ({kind}, {frame[:100]})")
        else:
            print(f"{artifact}: REWIND ({kind}, {frame[:160]})")
            rewind_findings.append((artifact, report))
    for artifact, report in rewind_findings:
        print(f"---- {artifact}\n{report[-6000:]}")
    return 1 if rewind_findings else 0


if __name__ == "__main__":
    sys.exit(main())
