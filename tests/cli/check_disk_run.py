#!/usr/bin/env python3
"""Checks `rewind run --disk`, `rewind plan` with two levels and `rewind inspect` (a ctest added
by tests/cli/CMakeLists.txt).

    check_disk_run.py path/to/rewind

- gray_scott --n 16 --steps 300: revolve with 5 snapshots in memory, the same 5 on disk
  (--disk DIR --snapshots 5, background and --sync-io), and two levels (--ram-snapshots 2
  --disk-snapshots 6): J, dJ/dtheta, |dJ/dy0| and <dJ/dy0, d> bit for bit the store-all run's
  (the JSON prints each double as the shortest text that reads back as it); the disk counts are
  those `rewind plan` predicts; the snapshot file is gone afterwards.
- --keep-snapshots leaves the file; `rewind inspect --json` finds every slot intact (exit 0);
  after one flipped bit in a stored state it reports that slot corrupt and exits 1.
- `rewind plan` with two levels prints disk counts and a predicted time no worse than
  memory-only revolve; --ram-snapshots without --disk is refused by `run` (exit 2).
"""
import json
import os
import struct
import sys
import tempfile

from cli_check import fail, run


def run_json(rewind, *args):
    proc = run(rewind, *args, "--json")
    if proc.stderr:
        fail(f"{' '.join(args)} wrote to stderr: {proc.stderr!r}")
    return json.loads(proc.stdout)


def same_gradient(a, b, what):
    for key in ("loss", "grad_theta", "grad_y0_norm", "grad_theta_norm"):
        if a[key] != b[key]:
            fail(f"{what}: {key} differs from the store-all run: {a[key]!r} vs {b[key]!r}")
    if a["fd_check"]["directional_adjoint"] != b["fd_check"]["directional_adjoint"]:
        fail(f"{what}: <dJ/dy0, d> differs from the store-all run")


def main():
    rewind = sys.argv[1]
    base = ["run", "gray_scott", "--n", "16", "--steps", "300"]
    reference = run_json(rewind, *base)
    with tempfile.TemporaryDirectory() as scratch:
        variants = {
            "memory": ["--snapshots", "5"],
            "disk": ["--disk", scratch, "--snapshots", "5"],
            "disk inline": ["--disk", scratch, "--snapshots", "5", "--sync-io"],
            "two levels": ["--disk", scratch, "--ram-snapshots", "2", "--disk-snapshots", "6",
                           "--disk-write-cost", "3", "--disk-read-cost", "2"],
        }
        for name, extra in variants.items():
            report = run_json(rewind, *base, *extra)
            same_gradient(report, reference, name)
            stats = report["stats"]
            if report["drift"]["bitwise_identical"] is not True:
                fail(f"{name}: replays were not bitwise identical")
            if name == "memory":
                if stats["disk_stores"] != 0:
                    fail("memory run wrote to disk")
                continue
            if stats["disk_stores"] <= 0 or stats["disk_restores"] <= 0:
                fail(f"{name}: no disk traffic: {stats}")
            if stats["disk_bytes_written"] != stats["disk_stores"] * (8 * 512 + 48):
                fail(f"{name}: disk_bytes_written {stats['disk_bytes_written']} is not "
                     f"{stats['disk_stores']} snapshots of {8 * 512 + 48} bytes")
            if stats["disk_asynchronous"] != ("inline" not in name):
                fail(f"{name}: disk_asynchronous is {stats['disk_asynchronous']}")
            schedule = report["schedule"]
            if schedule["predicted_disk_stores"] != stats["disk_stores"] or \
               schedule["predicted_disk_restores"] != stats["disk_restores"]:
                fail(f"{name}: disk counts {stats['disk_stores']}/{stats['disk_restores']} differ "
                     f"from the plan's {schedule['predicted_disk_stores']}/"
                     f"{schedule['predicted_disk_restores']}")
            if os.listdir(scratch):
                fail(f"{name}: the snapshot file was left behind: {os.listdir(scratch)}")

        # --keep-snapshots, then rewind inspect: intact, then one flipped bit.
        report = run_json(rewind, *base, "--disk", scratch, "--snapshots", "5", "--keep-snapshots")
        path = report["stats"]["snapshot_file"]
        if not path or not os.path.exists(path):
            fail(f"--keep-snapshots left no file ({path!r})")
        inspected = json.loads(run(rewind, "inspect", path, "--json").stdout)
        if not inspected["intact"] or inspected["written_slots"] != 5 or inspected["slots"] != 5:
            fail(f"inspect of an intact file: {inspected}")
        if inspected["state_size"] != 512 or inspected["meta_size"] != 48:
            fail(f"inspect sizes: {inspected['state_size']}, {inspected['meta_size']}")
        text = run(rewind, "inspect", path).stdout
        if "every written slot is intact" not in text:
            fail(f"inspect text: {text}")
        # Flip one bit inside the state of the slot holding y_0 (u = 1 away from the seed).
        data = bytearray(open(path, "rb").read())
        one = struct.pack("<d", 1.0)
        offset = data.find(one * 4)
        if offset < 0:
            fail("could not find a stored state in the file")
        data[offset + 3] ^= 0x10
        open(path, "r+b").write(data)
        proc = run(rewind, "inspect", path, "--json", expect=1)
        damaged = json.loads(proc.stdout)
        if damaged["intact"] or damaged["corrupt_slots"] != 1:
            fail(f"inspect of a damaged file: {damaged}")
        bad = [s for s in damaged["slot_records"] if s["status"] == "corrupt"]
        if "checksum mismatch" not in (bad[0]["problem"] or ""):
            fail(f"inspect gave no checksum mismatch: {bad}")
        if "corrupt" not in proc.stderr:
            fail(f"inspect's error line: {proc.stderr!r}")

    plan = json.loads(run(rewind, "plan", "--steps", "100000", "--ram-snapshots", "4",
                          "--disk-snapshots", "100", "--disk-write-cost", "2",
                          "--disk-read-cost", "1", "--json").stdout)
    for key in ("memory_snapshots", "disk_snapshots", "disk_stores", "disk_restores",
                "predicted_time_ratio", "memory_only_time_ratio", "free_io_time_ratio"):
        if plan.get(key) is None:
            fail(f"plan JSON lacks {key}")
    if plan["predicted_time_ratio"] > plan["memory_only_time_ratio"]:
        fail(f"two levels predicted slower than memory only: {plan}")
    if plan["predicted_time_ratio"] < plan["free_io_time_ratio"] - 1e-9:
        fail(f"two levels predicted faster than free I/O: {plan}")
    proc = run(rewind, *base, "--ram-snapshots", "2", "--disk-snapshots", "6", expect=2)
    if "--disk DIR" not in proc.stderr:
        fail(f"--ram-snapshots without --disk: {proc.stderr!r}")


if __name__ == "__main__":
    main()
