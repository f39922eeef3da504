#!/usr/bin/env bash
# What --resume costs: the same checkpointed Gray-Scott gradient with its snapshots on disk,
# without and with --resume, alternated ROUNDS times in one run (so both see the same machine
# state); prints the median wall time of each, their ratio, and the disk traffic (progress
# records included in the bytes written). Figures: bench/results/resume.md.
#
#   bench/run_resume_overhead.sh [build/src/cli/rewind] [N] [STEPS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rewind=${1:-build/src/cli/rewind}
n=${2:-256}
steps=${3:-2000}
rounds=${4:-5}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
common=(run gray_scott --n "$n" --steps "$steps" --snapshots 10 --disk "$scratch" --no-fd-check
        --json)
python3 - "$rewind" "$rounds" "$scratch" "${common[@]}" <<'EOF'
import json, statistics, subprocess, sys, time
rewind, rounds, scratch, *common = sys.argv[1:]
variants = {"--disk": [], "--disk --resume": ["--resume"]}
walls = {name: [] for name in variants}
last = {}
for _ in range(int(rounds)):
    for name, extra in variants.items():
        start = time.monotonic()
        out = subprocess.run([rewind, *common, *extra], check=True, capture_output=True,
                             text=True).stdout
        walls[name].append(time.monotonic() - start)
        last[name] = json.loads(out)
a, b = last["--disk"], last["--disk --resume"]
if (a["loss"], a["grad_theta"]) != (b["loss"], b["grad_theta"]):
    sys.exit("the two variants gave different gradients")
print(f"gray_scott, {a['state_size']} unknowns, {a['steps']} steps, "
      f"revolve(10) on disk, {rounds} alternated rounds; the same gradient bits")
print(f"{'variant':<16}{'median wall s':>14}{'disk written':>14}{'progress records':>18}")
for name in variants:
    s = last[name]["stats"]
    print(f"{name:<16}{statistics.median(walls[name]):>14.3f}"
          f"{s['disk_bytes_written'] / 2**20:>11.1f} MiB{s['progress_records']:>18}")
ratio = statistics.median(walls["--disk --resume"]) / statistics.median(walls["--disk"])
print(f"--resume / --disk wall time: {ratio:.3f}")
EOF
