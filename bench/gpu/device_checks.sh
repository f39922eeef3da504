#!/usr/bin/env bash
# bench/gpu/device_checks.sh — every check and benchmark of rewind's GPU path, in one run on a GPU
# machine (made for the workplace's device machine: an H100, no Debian -dev packages, ~6 minutes).
#
#   bench/gpu/bundle_binaries.sh                 # here: the programs and their libraries
#   bench/gpu/device_checks.sh [OUTDIR]          # there, with bench/gpu/bundle carried
#   CPU=0 LONG=0 bench/gpu/device_checks.sh      # without the CPU runs and the long horizons
#   (NEURAL=0 and BDF=0 skip the neural-ODE and the BDF runs)
#
# Writes into OUTDIR (default $OUT, else ./device-out): checks.log (everything, in order),
# tests.log (the CUDA GoogleTest suites), roofline.json, neural_rewind.json, neural_torch.json,
# neural_diffrax.json, neural_cpu.json, runs.jsonl (one `rewind run --json`
# per line, each with its "label"), ncu.log, ncu_reverse.log, sanitizer.log. Each step has a time limit and a failing step
# does not stop the ones after it; the last line of checks.log counts the failures.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-${OUT:-$root/device-out}}
mkdir -p "$out"
work=$(mktemp -d)
tar -C "$work" -xJf "$root/bench/gpu/bundle/rewind-gpu.tar.xz" || { echo "no bundle" >&2; exit 1; }
export LD_LIBRARY_PATH=$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$work/bin:/usr/local/cuda/bin:$PATH
export OMP_WAIT_POLICY=passive
log=$out/checks.log
failures=0
step() {  # step SECONDS LABEL command… — output appended to checks.log
  local limit=$1 label=$2
  shift 2
  echo "=== $label ($(date -u +%T))" | tee -a "$log"
  local t0=$(date +%s.%N)
  timeout "$limit" "$@" >>"$log" 2>&1
  local rc=$?
  echo "=== $label: exit $rc, $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b - a}') s" | tee -a "$log"
  [ $rc -eq 0 ] || failures=$((failures + 1))
}
run_json() {  # run_json LABEL rewind-run-arguments… — one JSON line in runs.jsonl
  local label=$1
  shift
  echo "=== run $label: rewind run $*" | tee -a "$log"
  local t0=$(date +%s.%N)
  if timeout "${RUN_LIMIT:-150}" rewind run "$@" --no-fd-check --json >"$work/run.json" 2>>"$log"; then
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['label']=sys.argv[2]; \
print(json.dumps(d))" "$work/run.json" "$label" >>"$out/runs.jsonl"
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); s=d['stats']; \
print('   loss', d['loss'], 'total', s['total_seconds'], 's, ratio', s.get('gradient_cost_ratio'), \
'host restores / prefetched', d['schedule'].get('host_restores'), d['schedule'].get('host_prefetches'), \
'device', d.get('device'))" "$work/run.json" | tee -a "$log"
  else
    echo "=== run $label failed" | tee -a "$log"
    failures=$((failures + 1))
  fi
  echo "=== run $label: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b - a}') s" | tee -a "$log"
}

step 20 "machine" bash -c 'nvidia-smi; nproc; ldd --version | head -1; free -g | head -2'
for t in thrust_fixed_reduction_cuda_test backend_conformance_cuda_test \
         thrust_device_errors_cuda_test thrust_gradient_cuda_test three_level_cuda_test \
         drift_monitor_cuda_test device_neural_ode_cuda_test cvodes_device_vector_cuda_test; do
  step 120 "$t" bash -c "$t 2>&1 | tee -a '$out/tests.log' | tail -3"
done
step 120 "roofline" gray_scott_roofline --sizes 1024,4096 --steps 200 --alive-steps 4000 \
  --gradient-size 1024 --gradient-steps 200 --json "$out/roofline.json"

# Neural-ODE training on the GPU (3-64-64-3 tanh, 20 RK 3/8 steps, batch 256 … 65 536): rewind,
# then torchdiffeq/PyTorch and diffrax on the same GPU from rewind's dumped inputs (same gradient
# first), then rewind's CPU model on this machine's CPU (NEURAL=0 skips them all).
# cuBLAS is loaded at run time where the loader finds libcublas.so.<major> of the toolkit the
# programs were built with: the toolkit's lib64, or the copy inside PyTorch's wheels.
cublas_dir=$(python3 -c 'import glob, os, torch
root = os.path.dirname(os.path.dirname(torch.__file__))
hits = sorted(glob.glob(os.path.join(root, "nvidia", "**", "libcublas.so.*"), recursive=True))
print(":".join(sorted({os.path.dirname(h) for h in hits})))' 2>/dev/null)
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH${cublas_dir:+:$cublas_dir}:/usr/local/cuda/lib64
if [ "${NEURAL:-1}" = 1 ]; then
  mkdir -p "$work/neural"
  step 240 "neural ODE, rewind on the GPU" neural_ode_gpu_bench --iterations 10 \
    --dump "$work/neural" --json "$out/neural_rewind.json"
  step 120 "neural ODE, rewind on the GPU, its own kernels" neural_ode_gpu_bench --iterations 5 \
    --products kernels --batches 256,4096,65536 --json "$out/neural_rewind_kernels.json"
  step 300 "neural ODE, PyTorch on the GPU" python3 "$root/bench/gpu/neural_ode_torch_gpu.py" \
    --dumps "$work/neural" --rewind-json "$out/neural_rewind.json" --iterations 10 \
    --json "$out/neural_torch.json"
  step 300 "neural ODE, diffrax on the GPU" python3 "$root/bench/gpu/neural_ode_diffrax_gpu.py" \
    --dumps "$work/neural" --rewind-json "$out/neural_rewind.json" --iterations 10 \
    --batches 256,4096,65536 --json "$out/neural_diffrax.json"
  step 120 "neural ODE, rewind on one CPU core" neural_ode_gpu_bench_cpu --batches 256,1024,4096 \
    --iterations 3 --json "$out/neural_cpu.json"
fi

# BDF with the state on the device (stretch item): the Brusselator by CVODES with GMRES over
# rewind's device N_Vector, 2×256² and 2×1024² unknowns, revolve over the intervals (BDF=0 skips).
if [ "${BDF:-1}" = 1 ]; then
  RUN_LIMIT=90 run_json bdf_gpu_256 brusselator --n 256 --backend cuda --method bdf --steps 8 \
    --dt 0.125 --snapshots 3
  RUN_LIMIT=150 run_json bdf_gpu_1024 brusselator --n 1024 --backend cuda --method bdf \
    --steps 8 --dt 0.0625 --snapshots 3
fi

# Long horizons at 2×2048² (67 MB a state; store-all of 10^4 steps would be 0.67 TB, eight times
# the device): the same device + pinned host levels for 10^3 and 10^4 steps (device memory should
# not grow), every snapshot on the device for comparison, and a disk level under them (measured
# in run 3; LONG=0 skips them, the store-all ratios stay).
gs="gray_scott --n 2048 --backend cuda"
if [ "${LONG:-1}" = 1 ]; then
  run_json three_1k   $gs --steps 1000  --device-snapshots 8 --host-snapshots 64
  run_json device_1k  $gs --steps 1000  --snapshots 72
  RUN_LIMIT=100 run_json three_10k  $gs --steps 10000 --device-snapshots 8 --host-snapshots 64
  mkdir -p /tmp/rewind-disk
  run_json disk_1k    $gs --steps 1000  --device-snapshots 4 --host-snapshots 16 \
    --disk /tmp/rewind-disk --disk-snapshots 64
  step 10 "disk level left nothing" bash -c 'ls -la /tmp/rewind-disk; [ -z "$(ls /tmp/rewind-disk)" ]'
fi
run_json store_all_gs1024 gray_scott --n 1024 --backend cuda --steps 500 --schedule store-all
run_json store_all_gs2048 $gs --steps 200 --schedule store-all
# The CPU, same machine: the Eigen backend on every core (CPU=0 skips it).
if [ "${CPU:-1}" = 1 ]; then
  run_json cpu_gs1024 gray_scott --n 1024 --backend eigen --threads "$(nproc)" --steps 100 \
    --schedule store-all
  run_json cpu_gs2048 gray_scott --n 2048 --backend eigen --threads "$(nproc)" --steps 50 \
    --schedule store-all
  RUN_LIMIT=120 run_json bdf_cpu_256 brusselator --n 256 --backend eigen --threads "$(nproc)" \
    --method bdf --linear-solver gmres --steps 8 --dt 0.125 --snapshots 3
fi
# Bad input on the device: each must be refused before any step, with a message (400 steps: the
# plan uses every slot it is given).
step 30 "more device snapshots than the device holds is refused" bash -c \
  '! rewind run gray_scott --n 8192 --backend cuda --steps 400 --device-snapshots 80 --host-snapshots 2 --no-fd-check'
step 60 "more pinned host snapshots than the host holds is refused" bash -c \
  '! rewind run gray_scott --n 8192 --backend cuda --steps 400 --device-snapshots 2 --host-snapshots 150 --no-fd-check'
step 20 "no device level and no host level is refused" bash -c \
  '! rewind run gray_scott --n 64 --backend cuda --steps 20 --device-snapshots 0 --host-snapshots 0 --no-fd-check'
# Nsight Compute: duration and DRAM throughput of the kernels of two RK4 steps at 2×2048², then
# of the reverse sweep's (a store-all gradient at 2×2048²: vjp kernels, reductions).
step 90 "ncu forward" bash -c "ncu --section SpeedOfLight --launch-skip 40 --launch-count 16 \
  gray_scott_roofline --sizes 2048 --steps 4 --alive-steps 1 --gradient-size 64 \
  --gradient-steps 2 > '$out/ncu.log' 2>&1"
step 90 "ncu reverse" bash -c "ncu --section SpeedOfLight --launch-skip 1000 --launch-count 40 \
  rewind run gray_scott --n 2048 --backend cuda --steps 60 --schedule store-all --no-fd-check \
  > '$out/ncu_reverse.log' 2>&1"
# compute-sanitizer: memory errors in the device kernels and copies.
step 120 "compute-sanitizer memcheck" bash -c "compute-sanitizer --tool memcheck --error-exitcode 9 \
  three_level_cuda_test > '$out/sanitizer.log' 2>&1 && compute-sanitizer --tool memcheck \
  --error-exitcode 9 drift_monitor_cuda_test >> '$out/sanitizer.log' 2>&1"
echo "=== failures: $failures" | tee -a "$log"
