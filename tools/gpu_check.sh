#!/usr/bin/env bash
# The one command for a machine with an NVIDIA GPU: `make gpu-check OUT=<folder>`.
#
# From the repository root, with CuPy (and NVRTC), NumPy and pytest installed; PyTorch,
# pytest-xdist and pytest-timeout are used when present.  No network.  A device is lent for 15
# minutes a session, its start included, so the run is bounded by GPU_CHECK_BUDGET_S (default
# 330 s): a step that would start past it is skipped, and each step's limit is cut to what is left.
# Steps, the most informative first (issue 26 names the goals):
#   1. the gpu-marked tests of what only the CUDA emulator has run (RECENT below: edit it as code
#      lands), so that they report even if a later step runs out of time;
#   2. every gpu-marked test (over pytest-xdist's workers): device agreement of the operators,
#      executor training passes, stream ordering (pool reuse under long compute, waitall, DLPack
#      from PyTorch, write-after-read, and the mutation tests proving those checks can fail);
#      whatever failed runs again alone, so a failure of one test is told from a clash;
#   3. the goals' benchmarks: kernel bandwidth, copy/compute overlap and its profiler trace, the
#      MLP epoch at batch 128 and 1024 and LeNet against PyTorch;
#   4. the executor tests again with CUDA graphs off (both paths stay checked), then the autograd
#      and seed user loops and the autograd loop's host profile.
# NVRTC compiles every CUDA source beside them.  Every step writes its log under the folder given
# (default /tmp/lazynd-gpu-check) as it goes, even when it fails or is killed: tests one line each
# (-v), with the slowest listed at the end; summary.txt gets one line per step.
set -u
OUT_DIR="${1:-/tmp/lazynd-gpu-check}"
mkdir -p "$OUT_DIR"
SUMMARY="$OUT_DIR/summary.txt"
: >"$SUMMARY"
BUDGET="${GPU_CHECK_BUDGET_S:-330}"
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

# -v: one line per test as it ends, so a step killed at its limit still says what passed and failed
PYTEST_ARGS=(-v -m gpu -rfEs -p no:cacheprovider --durations=25 --durations-min=1)
"$PY" -c "import pytest_timeout" 2>/dev/null && PYTEST_ARGS+=(--timeout 120)
# With pytest-xdist the tests share the GPU across workers (the host, not the GPU, bounds most of them)
WORKERS=()
"$PY" -c "import xdist" 2>/dev/null && WORKERS=(-n "${GPU_CHECK_WORKERS:-8}")

# the node ids of the tests a log says failed, from pytest's verbose lines, which a run killed at its
# limit has written too: "[gw1] [ 12%] FAILED <id>" over xdist's workers, "<id> FAILED  [ 12%]" in
# one process (a node id may hold spaces and " - ", as parameter ids do: its end is the line's)
failed_ids() {
  sed -nE 's/^\[gw[0-9]+\] \[ *[0-9]+%\] (FAILED|ERROR) (.*[^ ]) *$/\2/p; s/^([^ ].*) (FAILED|ERROR) +\[ *[0-9]+%\]$/\1/p' "$1" |
    sort -u | head -n 200
}

# tests_step NAME LIMIT LOG PYTEST-ARGS...: a pytest run as a step, then its outcome in the summary
tests_step() {
  local name="$1" limit="$2" log="$3" last
  shift 3
  run_step "$name" "$limit" "$log" "$PY" -m pytest "${PYTEST_ARGS[@]}" "$@"
  [ -f "$OUT_DIR/$log" ] || return 0
  last=$(grep -E '^=+ .*[0-9]+ (passed|failed|errors?|skipped|deselected)' "$OUT_DIR/$log" | tail -n 1)
  [ -n "$last" ] || last="stopped before its end: $(grep -cE ' PASSED |PASSED +\[ *[0-9]+%\]$' "$OUT_DIR/$log") passed by then"
  { failed_ids "$OUT_DIR/$log" | sed 's/^/FAILED /'
    grep -E '^SKIPPED' "$OUT_DIR/$log" | head -n 12
    echo "$last"
  } | head -n 40 | sed 's/^/    /' | tee -a "$SUMMARY"
}

# NVRTC's compiles use one host core: they run beside the tests and the benchmarks, and report at the end
KERNELS_LOG="$OUT_DIR/kernels.log"
timeout --kill-after=10 180 "$PY" -m lazynd.backend.cuda.check_kernels >"$KERNELS_LOG" 2>&1 &
KERNELS_PID=$!
KERNELS_BEGIN=$SECONDS

# 1. what no GPU has run yet: SoftmaxOutput's label checks (softmax.cu's fused one, float16's, NaN labels, in
# captured backward passes), CTCLoss's kernel (ctc.cu), every swept operator on gpu(0) against cpu(0) (issue 26), ROIPooling's table of maxima (int32 positions) and ROIAlign's products,
# LRN's hidden output, 'add' gradients added in their steps and captured, the in-place plans of
# reshapes and SoftmaxOutput, the CPU's own routes of topk, global pooling and row scatter-add
# against the GPU's, the softmax launcher's access widths, the profiler's gpu/0 rows
RECENT=(
  tests/ops/test_softmax_output_label_checks.py tests/ops/test_softmax_output_labels.py
  tests/ops/test_ctc_loss_gpu.py tests/ops/test_ctc_loss.py
  tests/ops/test_device_agreement_sweep.py
  tests/ops/test_device_agreement_host_routes.py
  tests/sym/test_executor_gpu_plans.py
  tests/sym/test_executor_grad_add.py
  tests/ops/test_roi.py tests/ops/test_roi_pooling_edges.py tests/ops/test_roi_pooling_positions.py
  tests/ops/test_roi_align_edges.py
  tests/ops/test_softmax.py
  tests/ops/test_sorting.py
  tests/test_profiler_mxnet_parity.py
)
tests_step "gpu tests of emulator-only code" 60 tests-recent.log "${WORKERS[@]}" "${RECENT[@]}"

# 2. every gpu-marked test
tests_step "gpu-marked tests" 150 tests.log "${WORKERS[@]}"
# the stream-ordering tests skip where kernels finish at launch (the CPU emulator); on a GPU that is a failure
if grep -q "^SKIPPED.*kernels finish at launch" "$OUT_DIR/tests.log" 2>/dev/null && grep -q '^gpu(0)' "$OUT_DIR/env.log"; then
  say "FAILED stream-ordering tests skipped on a real GPU: they found its stream idle (see tests.log)"
fi
if [ ${#WORKERS[@]} -gt 0 ] && [ -f "$OUT_DIR/tests.log" ]; then
  mapfile -t FAILED_IDS < <(failed_ids "$OUT_DIR/tests.log")
  [ ${#FAILED_IDS[@]} -gt 0 ] && tests_step "failed tests again, alone" 45 tests-again.log "${FAILED_IDS[@]}"
fi

# 3. issue 26's measured goals
run_step "bench/gpu_kernels.py" 60 bench.txt "$PY" bench/gpu_kernels.py
run_step "bench/mlp_epoch.py gpu batch 128" 45 bench.txt "$PY" bench/mlp_epoch.py --ctx gpu --repeat 3 --batch 128
run_step "bench/mlp_epoch.py gpu batch 1024" 30 bench.txt "$PY" bench/mlp_epoch.py --ctx gpu --repeat 3 --batch 1024
run_step "bench/lenet_epoch.py" 45 bench.txt "$PY" bench/lenet_epoch.py --batches 200 --repeat 3
run_step "bench/gpu_overlap.py" 40 bench.txt "$PY" bench/gpu_overlap.py

# 4. executors with CUDA graphs off (they replay their passes as graphs by default; only executors
# read the setting), then the loops users write
LAZYND_CUDA_GRAPHS=0 tests_step "executor tests, graphs off" 60 tests-eager.log "${WORKERS[@]}" \
  tests/sym tests/training tests/operator \
  tests/ops/test_operator_sweep.py::test_nd_executor_dunder_and_reference_agree \
  tests/ops/test_operator_sweep.py::test_autograd_gradient_matches_executor_and_central_differences
run_step "bench/user_loops.py gpu" 60 bench.txt "$PY" bench/user_loops.py --ctx gpu --loops autograd,seed --rounds 1
run_step "bench/host_profile.py gpu" 40 profile.txt "$PY" bench/host_profile.py --ctx gpu --batches 200
wait "$KERNELS_PID"  # NVRTC's compiles went on beside the tests and the benchmarks
KERNELS_RC=$?
KERNELS_VERDICT="ok"
[ "$KERNELS_RC" -ne 0 ] && KERNELS_VERDICT="FAILED rc=$KERNELS_RC"
say "$(printf '%-34s %-22s %4ss  %s' "kernels compile (NVRTC)" "$KERNELS_VERDICT" $((SECONDS - KERNELS_BEGIN)) kernels.log)"
say "total $((SECONDS - START))s; logs in $OUT_DIR"
