#!/usr/bin/env bash
# The one command for a machine with an NVIDIA GPU: `make gpu-check OUT=<folder>`.
#
# From the repository root, with CuPy (and NVRTC), NumPy and pytest installed; PyTorch and
# pytest-timeout are used when present.  No network.  Steps: the environment, every CUDA source
# compiled by NVRTC (beside the tests), the gpu-marked tests (spread over pytest-xdist's workers when
# it is there, failures run again alone, then the whole suite again with executors' CUDA graphs off;
# device agreement of every operator, executor training
# passes, stream ordering: pool reuse under long compute, waitall, DLPack from PyTorch,
# write-after-read, and the mutation tests proving those checks can fail), then the GPU benchmarks
# (kernel bandwidth, copy/compute overlap and its profiler trace, the MLP epoch, LeNet and the
# autograd and seed user loops against PyTorch, and a profile of the autograd loop's host time).
# Each step runs under a timeout and the script goes on after a failure; logs and a summary of
# one line per step go to the folder given (default /tmp/lazynd-gpu-check).  The whole run is
# bounded by GPU_CHECK_BUDGET_S (default 450 s): a step that would start past it is skipped.
set -u
OUT_DIR="${1:-/tmp/lazynd-gpu-check}"
mkdir -p "$OUT_DIR"
SUMMARY="$OUT_DIR/summary.txt"
: >"$SUMMARY"
BUDGET="${GPU_CHECK_BUDGET_S:-450}"
START=$SECONDS
PY="${PYTHON:-python3}"
export PYTHONPATH=".${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export CUPY_CACHE_DIR="${CUPY_CACHE_DIR:-$OUT_DIR/.cupy-cache}"

say() { echo "$*" | tee -a "$SUMMARY"; }

# run_step NAME LIMIT_S LOG COMMAND...: the command under timeout min(LIMIT, budget left)
run_step() {
  local name="$1" limit="$2" log="$3"
  shift 3
  local left=$((BUDGET - (SECONDS - START)))
  if [ "$left" -lt 15 ]; then
    say "SKIP $name: budget of ${BUDGET}s spent"
    return 0
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  local begin=$SECONDS
  echo "### $name: $* (limit ${limit}s)" >>"$OUT_DIR/$log"
  timeout --kill-after=10 "$limit" "$@" >>"$OUT_DIR/$log" 2>&1
  local rc=$?
  local verdict="ok"
  [ "$rc" -ne 0 ] && verdict="FAILED rc=$rc"
  [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && verdict="TIMEOUT after ${limit}s"
  say "$(printf '%-34s %-22s %4ss  %s' "$name" "$verdict" $((SECONDS - begin)) "$log")"
}

[ -f lazynd/backend/cuda/backend.py ] || { echo "run from the lazynd repository root" >&2; exit 2; }

{
  echo "date $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
  "$PY" - <<'PYEOF'
import sys
import numpy
print("python", sys.version.split()[0], "numpy", numpy.__version__)
try:
    import cupy
    from cupy.cuda import nvrtc, runtime
    print("cupy", cupy.__version__, "runtime", runtime.runtimeGetVersion(), "driver", runtime.driverGetVersion(), "nvrtc", nvrtc.getVersion())
    for i in range(runtime.getDeviceCount()):
        p = runtime.getDeviceProperties(i)
        print(f"gpu({i}): {p['name'].decode()}, compute capability {p['major']}.{p['minor']}, {p['totalGlobalMem'] / 2**30:.1f} GiB")
    try:
        from cupy.cuda import nccl
        print("nccl", nccl.get_version() if getattr(nccl, "available", False) else "not available")
    except Exception as err:  # noqa: BLE001
        print("nccl: not available:", err)
except Exception as err:  # noqa: BLE001
    print("cupy: NOT USABLE:", type(err).__name__, err)
try:
    import torch
    print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())
except ImportError:
    print("torch: not installed")
import lazynd
print("lazynd", lazynd.__version__, "sees", lazynd.num_gpus(), "GPU(s)")
PYEOF
} >"$OUT_DIR/env.log" 2>&1
say "environment: $(grep -m1 '^gpu(0)' "$OUT_DIR/env.log" || echo 'no gpu(0) visible: see env.log')"

PYTEST_ARGS=(-q -m gpu -rfEs)
"$PY" -c "import pytest_timeout" 2>/dev/null && PYTEST_ARGS+=(--timeout 180)
# With pytest-xdist the tests share the GPU across workers (the host, not the GPU, bounds most of
# them); whatever fails there runs again alone, so a failure of one test is told from a clash.
WORKERS=()
"$PY" -c "import xdist" 2>/dev/null && WORKERS=(-n "${GPU_CHECK_WORKERS:-8}")

# NVRTC's compiles use one host core: they run beside the tests and the benchmarks, and report at the end
KERNELS_LOG="$OUT_DIR/kernels.log"
timeout --kill-after=10 180 "$PY" -m lazynd.backend.cuda.check_kernels >"$KERNELS_LOG" 2>&1 &
KERNELS_PID=$!
KERNELS_BEGIN=$SECONDS
run_step "gpu-marked tests" 300 tests.log "$PY" -m pytest "${PYTEST_ARGS[@]}" "${WORKERS[@]}"
grep -E '^(FAILED|ERROR)|^SKIPPED|passed|failed' "$OUT_DIR/tests.log" | tail -n 30 | sed 's/^/    /' | tee -a "$SUMMARY"
if [ ${#WORKERS[@]} -gt 0 ] && grep -qE '^(FAILED|ERROR)' "$OUT_DIR/tests.log"; then
  # pytest's cache is off in pyproject's addopts, so the node ids come from the log
  # (a node id may hold spaces, as parameter ids do: it runs up to the " - " before pytest's message)
  mapfile -t FAILED_IDS < <(grep -E '^(FAILED|ERROR) ' "$OUT_DIR/tests.log" | sed -E 's/^(FAILED|ERROR) //; s/ - .*$//' | sort -u | head -n 200)
  run_step "failed tests again, alone" 120 tests-again.log "$PY" -m pytest "${PYTEST_ARGS[@]}" "${FAILED_IDS[@]}"
  grep -E '^(FAILED|ERROR)|passed|failed' "$OUT_DIR/tests-again.log" | tail -n 20 | sed 's/^/    /' | tee -a "$SUMMARY"
fi
# executors replay their passes as CUDA graphs by default: the suite once more with every pass eager
LAZYND_CUDA_GRAPHS=0 run_step "gpu-marked tests, graphs off" 240 tests-eager.log "$PY" -m pytest "${PYTEST_ARGS[@]}" "${WORKERS[@]}" -p no:cacheprovider
grep -E '^(FAILED|ERROR)|passed|failed' "$OUT_DIR/tests-eager.log" | tail -n 12 | sed 's/^/    /' | tee -a "$SUMMARY"
# the stream-ordering tests skip where kernels finish at launch (the CPU emulator); on a GPU that is a failure
if grep -q "^SKIPPED.*kernels finish at launch" "$OUT_DIR/tests.log" && grep -q '^gpu(0)' "$OUT_DIR/env.log"; then
  say "FAILED stream-ordering tests skipped on a real GPU: they found its stream idle (see tests.log)"
fi
run_step "bench/gpu_kernels.py" 90 bench.txt "$PY" bench/gpu_kernels.py
run_step "bench/gpu_overlap.py" 60 bench.txt "$PY" bench/gpu_overlap.py
run_step "bench/mlp_epoch.py gpu batch 128" 90 bench.txt "$PY" bench/mlp_epoch.py --ctx gpu --repeat 3 --batch 128
run_step "bench/mlp_epoch.py gpu batch 1024" 60 bench.txt "$PY" bench/mlp_epoch.py --ctx gpu --repeat 3 --batch 1024
run_step "bench/lenet_epoch.py" 60 bench.txt "$PY" bench/lenet_epoch.py --batches 200 --repeat 3
run_step "bench/user_loops.py gpu" 90 bench.txt "$PY" bench/user_loops.py --ctx gpu --loops autograd,seed --rounds 1
run_step "bench/host_profile.py gpu" 60 profile.txt "$PY" bench/host_profile.py --ctx gpu --batches 200
wait "$KERNELS_PID"  # NVRTC's compiles went on beside the tests and the benchmarks
KERNELS_RC=$?
KERNELS_VERDICT="ok"
[ "$KERNELS_RC" -ne 0 ] && KERNELS_VERDICT="FAILED rc=$KERNELS_RC"
say "$(printf '%-34s %-22s %4ss  %s' "kernels compile (NVRTC)" "$KERNELS_VERDICT" $((SECONDS - KERNELS_BEGIN)) kernels.log)"
say "total $((SECONDS - START))s; logs in $OUT_DIR"
