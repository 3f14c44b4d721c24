"""The 'device' store: where keys live, how pushes are summed (NCCL, peer copies, plain sum)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import lazynd as mx
import lazynd_kv
from lazynd.context import cpu, gpu
from lazynd.errors import LazyNDError
from lazynd_kv import device
from lazynd_kv.device import choose_home, merge_plan

GPU_COUNT = mx.num_gpus()
two_gpus = pytest.mark.skipif(GPU_COUNT < 2, reason=f"needs 2 GPUs with CuPy ({GPU_COUNT} visible)")
one_gpu = pytest.mark.skipif(GPU_COUNT < 1, reason="needs an NVIDIA GPU with CuPy (none visible)")
SHAPE = (64, 33)


def _nccl_available() -> bool:
    from lazynd_kv.nccl_reduce import nccl_available

    return GPU_COUNT >= 2 and nccl_available()


def _never_asked() -> bool:
    raise AssertionError("NCCL availability was checked for a push that cannot use NCCL")


# -- placement (runs without a GPU) ------------------------------------------------------------------
def test_home_is_the_values_gpu_holding_the_fewest_bytes():
    assert choose_home([gpu(0), gpu(2)], {gpu(0): 1 << 20, gpu(2): 4096}) == gpu(2)


def test_home_ties_go_to_the_lowest_gpu_id():
    assert choose_home([gpu(3), gpu(1), gpu(3)], {}) == gpu(1)


def test_home_ignores_gpus_that_hold_no_pushed_value():
    assert choose_home([gpu(1)], {gpu(0): 0, gpu(1): 1 << 30}) == gpu(1)


def test_home_of_cpu_values_is_the_cpu():
    assert choose_home([cpu(), cpu()], {gpu(0): 0}) == cpu()


# -- merge plan (runs without a GPU) ----------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_one_value_per_gpu_including_home_is_summed_with_nccl(dtype):
    assert merge_plan([gpu(0), gpu(1), gpu(2)], gpu(1), dtype, lambda: True) == "nccl"


def test_without_nccl_values_on_several_gpus_are_copied_home():
    assert merge_plan([gpu(0), gpu(1)], gpu(0), "float32", lambda: False) == "copy"


@pytest.mark.parametrize(
    ("contexts", "home", "dtype", "contiguous"),
    [
        ([gpu(0), gpu(0), gpu(1)], gpu(0), "float32", True),  # two values on one GPU
        ([gpu(1), gpu(2)], gpu(0), "float32", True),  # home holds no value
        ([gpu(0), gpu(1)], gpu(0), "int32", True),  # a dtype the store does not sum with NCCL
        ([gpu(0), gpu(1)], gpu(0), "float32", False),  # a strided value
    ],
)
def test_pushes_nccl_cannot_take_are_copied_home_without_asking_for_nccl(contexts, home, dtype, contiguous):
    assert merge_plan(contexts, home, dtype, _never_asked, contiguous) == "copy"


def test_single_value_at_home_is_used_as_is():
    assert merge_plan([gpu(1)], gpu(1), "float32", _never_asked) == "as_is"
    assert merge_plan([cpu()], cpu(), "float32", _never_asked) == "as_is"


def test_values_on_one_device_are_summed_there_without_asking_for_nccl():
    assert merge_plan([gpu(0), gpu(0)], gpu(0), "float32", _never_asked) == "copy"
    assert merge_plan([cpu(), cpu()], cpu(), "float32", _never_asked) == "copy"


def test_cpu_values_with_a_gpu_value_are_copied_home():
    assert merge_plan([cpu(), gpu(0)], gpu(0), "float32", _never_asked) == "copy"


# -- the store on the CPU ---------------------------------------------------------------------------
def test_cpu_keys_stay_on_the_cpu_and_sum_pushes():
    kv = lazynd_kv.create("device")
    kv.init("w", mx.nd.ones(SHAPE))
    kv.push("w", [mx.nd.ones(SHAPE) * i for i in range(1, 4)])
    out = mx.nd.zeros(SHAPE)
    kv.pull("w", out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 6, np.float32))
    assert kv._store["w"].context == cpu()


def test_cpu_only_use_of_the_device_store_never_imports_cupy():
    script = (
        "import sys, lazynd as mx, lazynd_kv\n"
        "kv = lazynd_kv.create('device')\n"
        "kv.init(0, mx.nd.ones((4,)))\n"
        "kv.set_optimizer(mx.optimizer.create('sgd', learning_rate=0.5))\n"
        "kv.push(0, [mx.nd.ones((4,)), mx.nd.ones((4,))])\n"
        "out = mx.nd.zeros((4,))\n"
        "kv.pull(0, out=out)\n"
        "assert out.asnumpy().tolist() == [0.0] * 4, out.asnumpy()\n"
        "print('cupy' in sys.modules)\n"
    )
    root = Path(__file__).resolve().parents[2]
    env = {"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


# -- GPU: one device --------------------------------------------------------------------------------
@pytest.mark.gpu
@one_gpu
def test_one_gpu_sums_on_that_gpu_and_a_cpu_key_moves_there():
    kv = lazynd_kv.create("device")
    kv.init(0, mx.nd.zeros(SHAPE))
    values = [mx.nd.ones(SHAPE, ctx=gpu(0)) * i for i in range(1, 4)]
    kv.push(0, values)
    assert kv._store[0].context == gpu(0)
    outs = [mx.nd.zeros(SHAPE, ctx=gpu(0)), mx.nd.zeros(SHAPE)]
    kv.pull(0, out=outs)
    for out in outs:
        np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 6, np.float32))


# -- GPU: several devices ---------------------------------------------------------------------------
def _push_from_two_gpus(kv: lazynd_kv.KVStore, dtype: str, key: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    hosts = [rng.standard_normal(SHAPE).astype(dtype) for _ in range(2)]
    kv.init(key, mx.nd.zeros(SHAPE, ctx=gpu(1), dtype=dtype))
    # values computed by lazy ops just before the push: the reduce must wait for them
    values = [mx.nd.array(h, ctx=gpu(i), dtype=dtype) * 2 for i, h in enumerate(hosts)]
    kv.push(key, values)
    # writing a value right after the push must not change the sum
    for v in values:
        v[:] = 1000
    return [2 * h for h in hosts]


@pytest.mark.gpu
@two_gpus
@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
def test_two_gpus_sum_with_nccl(dtype):
    if not _nccl_available():
        pytest.skip("NCCL is not loadable (pip install nvidia-nccl-cu12)")
    kv = lazynd_kv.create("device")
    expected = sum(_push_from_two_gpus(kv, dtype))
    assert kv._merge_buffers[0].context == gpu(1)  # summed by NCCL into gpu(1)'s merge buffer
    outs = [mx.nd.zeros(SHAPE, ctx=gpu(0), dtype=dtype), mx.nd.zeros(SHAPE, ctx=gpu(1), dtype=dtype)]
    kv.pull(0, out=outs)
    tol = 1e-2 if dtype == "float16" else 1e-6
    for out in outs:
        np.testing.assert_allclose(out.asnumpy(), expected, rtol=tol, atol=tol)


@pytest.mark.gpu
@two_gpus
def test_two_gpus_without_nccl_sum_by_peer_copies(monkeypatch):
    monkeypatch.setattr(device, "_nccl_available", lambda: False)
    kv = lazynd_kv.create("device")
    expected = sum(_push_from_two_gpus(kv, "float32"))
    out = mx.nd.zeros(SHAPE, ctx=gpu(0))
    kv.pull(0, out=out)
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-6)


@pytest.mark.gpu
@two_gpus
def test_two_gpus_train_with_an_optimizer_and_keys_spread_over_the_gpus():
    kv = lazynd_kv.create("device")
    kv.set_optimizer(mx.optimizer.create("sgd", learning_rate=0.5))
    for key in range(4):
        kv.init(key, mx.nd.ones(SHAPE))
    for _ in range(2):
        for key in range(4):
            kv.push(key, [mx.nd.ones(SHAPE, ctx=gpu(0)), mx.nd.ones(SHAPE, ctx=gpu(1))])
    homes = sorted(kv._store[key].context.device_id for key in range(4))
    assert homes == [0, 0, 1, 1]
    for key in range(4):
        out = mx.nd.zeros(SHAPE, ctx=gpu(key % 2))
        kv.pull(key, out=out)
        np.testing.assert_allclose(out.asnumpy(), np.full(SHAPE, 1 - 2 * 0.5 * 2, np.float32))


def test_nccl_reduce_rejects_cpu_values():
    from lazynd_kv.nccl_reduce import push_reduce

    with pytest.raises(LazyNDError, match=r"push_reduce: needs one value per GPU.*cpu\(0\)"):
        push_reduce([mx.nd.ones(SHAPE), mx.nd.ones(SHAPE)], mx.nd.zeros(SHAPE))


@pytest.mark.gpu
@one_gpu
def test_nccl_reduce_rejects_two_values_on_one_gpu():
    from lazynd_kv.nccl_reduce import push_reduce

    values = [mx.nd.ones(SHAPE, ctx=gpu(0)), mx.nd.ones(SHAPE, ctx=gpu(0))]
    with pytest.raises(LazyNDError, match="one value per GPU"):
        push_reduce(values, mx.nd.zeros(SHAPE, ctx=gpu(0)))
