"""``mx.cpu_pinned()``: host arrays (page-locked where CUDA gives it) that behave as cpu ones.

Every operator on cpu_pinned is checked against cpu by the operator sweep
(tests/ops/test_operator_sweep.py); here: creation, contexts, copies, files, iterators, and
(gpu-marked) copies to and from a GPU.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

import lazynd as mx
from lazynd.backend import get_backend, pinned_backend
from lazynd.io import NDArrayIter, PrefetchingIter

PINNED = mx.cpu_pinned()


def test_cpu_pinned_is_a_context_of_its_own() -> None:
    assert mx.cpu_pinned() == mx.cpu_pinned(0) == mx.Context("cpu_pinned", 0)
    assert mx.cpu_pinned() != mx.cpu() and mx.cpu_pinned(1) != mx.cpu_pinned(0)
    assert len({mx.cpu_pinned(), mx.cpu_pinned(0), mx.cpu()}) == 2
    assert repr(mx.cpu_pinned()) == "cpu_pinned(0)" and mx.cpu_pinned().device_typeid == 3
    assert pickle.loads(pickle.dumps(mx.cpu_pinned(2))) == mx.cpu_pinned(2)
    assert get_backend(PINNED) is pinned_backend and pinned_backend.xp is np


@pytest.mark.parametrize(
    "make",
    [
        lambda: mx.nd.array([[1, 2], [3, 4]], ctx=PINNED),
        lambda: mx.nd.zeros((2, 2), ctx=PINNED),
        lambda: mx.nd.ones((2, 2), ctx=PINNED),
        lambda: mx.nd.full((2, 2), 7, ctx=PINNED),
        lambda: mx.nd.empty((2, 2), ctx=PINNED),
        lambda: mx.nd.arange(4, ctx=PINNED).reshape((2, 2)),
    ],
    ids=["array", "zeros", "ones", "full", "empty", "arange"],
)
def test_arrays_made_on_cpu_pinned_live_there(make) -> None:
    a = make()
    assert a.context == PINNED and a.shape == (2, 2)
    b = a * 2 + 1  # an operator's outputs go on its input's context
    assert b.context == PINNED
    np.testing.assert_array_equal(b.asnumpy(), a.asnumpy() * 2 + 1)


def test_with_cpu_pinned_makes_it_the_default_context() -> None:
    with mx.cpu_pinned():
        a = mx.nd.ones((3,))
    assert a.context == PINNED


def test_cpu_and_cpu_pinned_arrays_mix_in_one_operation() -> None:
    pinned = mx.nd.array([1, 2, 3], ctx=PINNED)
    host = mx.nd.array([10, 20, 30])
    assert (pinned + host).context == PINNED and (host + pinned).context == mx.cpu()
    np.testing.assert_array_equal((host * pinned).asnumpy(), [10, 40, 90])
    assert (pinned + mx.nd.ones((3,), ctx=mx.cpu(1))).context == PINNED  # any host ids (MXNet 1.x)


def test_cpu_and_cpu_pinned_draw_from_one_generator() -> None:
    # as in MXNet, where cpu_pinned takes the CPU's random resource: two generators started from one
    # seed would hand both contexts the same numbers
    mx.random.seed(3)
    on_cpu = mx.nd.random_uniform(shape=(8,), ctx=mx.cpu()).asnumpy()
    on_pinned = mx.nd.random_uniform(shape=(8,), ctx=PINNED).asnumpy()
    assert not np.array_equal(on_cpu, on_pinned)
    mx.random.seed(3)
    np.testing.assert_array_equal(mx.nd.random_uniform(shape=(8,), ctx=PINNED).asnumpy(), on_cpu)


def test_round_trips_between_cpu_and_cpu_pinned_copy_the_values() -> None:
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    host = mx.nd.array(values)
    pinned = host.as_in_context(PINNED)
    assert pinned.context == PINNED and host.as_in_context(mx.cpu()) is host
    back = pinned.copyto(mx.cpu())
    assert back.context == mx.cpu()
    target = mx.nd.zeros((3, 4), ctx=PINNED)
    host.copyto(target)
    pinned[:] = 0  # the copies are copies
    np.testing.assert_array_equal(back.asnumpy(), values)
    np.testing.assert_array_equal(target.asnumpy(), values)
    np.testing.assert_array_equal(mx.nd.array(target).asnumpy(), values)
    assert mx.nd.array(target).context == PINNED
    assert mx.nd.array(values, ctx=PINNED, dtype="int32").asnumpy().dtype == np.int32


def test_asnumpy_gives_memory_of_its_own() -> None:
    pinned = mx.nd.ones((4,), ctx=PINNED)
    host = pinned.asnumpy()
    host[:] = 5
    np.testing.assert_array_equal(pinned.asnumpy(), [1, 1, 1, 1])


def test_views_and_assignment_stay_on_cpu_pinned() -> None:
    a = mx.nd.zeros((4, 4), ctx=PINNED)
    a[1:3] = mx.nd.ones((2, 4))
    a[0, 0] = 9
    row = a[1]
    assert row.context == PINNED and a.reshape((16,)).context == PINNED
    expected = np.zeros((4, 4), np.float32)
    expected[1:3] = 1
    expected[0, 0] = 9
    np.testing.assert_array_equal(a.asnumpy(), expected)


def test_save_and_load_keep_the_values_and_record_the_context(tmp_path: Path) -> None:
    path = str(tmp_path / "pinned.nd")
    mx.nd.save(path, {"w": mx.nd.array([1.5, 2.5], ctx=PINNED)})
    with open(path, "rb") as f:
        assert (3).to_bytes(4, "little") + (0).to_bytes(4, "little") in f.read()  # dev_type 3, as MXNet writes
    loaded = mx.nd.load(path)["w"]
    assert loaded.context == mx.cpu()
    np.testing.assert_array_equal(loaded.asnumpy(), [1.5, 2.5])
    onto_pinned = mx.nd.load(path, ctx=PINNED)["w"]
    assert onto_pinned.context == PINNED
    np.testing.assert_array_equal(onto_pinned.asnumpy(), [1.5, 2.5])


def test_the_prefetching_iterator_can_give_batches_in_cpu_pinned_memory() -> None:
    data, label = np.arange(12, dtype=np.float32).reshape(6, 2), np.arange(6, dtype=np.float32)
    plain = [b.data[0].asnumpy() for b in PrefetchingIter(NDArrayIter(data, label, batch_size=3))]
    pinned_iter = PrefetchingIter(NDArrayIter(data, label, batch_size=3), pin_memory=True)
    for _epoch in range(2):
        batches = list(pinned_iter)
        assert [b.data[0].context for b in batches] == [PINNED, PINNED]
        assert [b.label[0].context for b in batches] == [PINNED, PINNED]
        for got, want in zip(batches, plain, strict=True):
            np.testing.assert_array_equal(got.data[0].asnumpy(), want)
        np.testing.assert_array_equal(batches[1].label[0].asnumpy(), [3, 4, 5])
        pinned_iter.reset()


# -- with a GPU (also on the CPU emulator: values and ordering only) -------------------------------
requires_gpu = pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)")


@pytest.mark.gpu
@requires_gpu
def test_cpu_pinned_round_trips_through_a_gpu() -> None:
    values = np.random.default_rng(0).standard_normal((256, 257)).astype(np.float32)
    pinned = mx.nd.array(values, ctx=PINNED)
    on_gpu = pinned.copyto(mx.gpu(0))
    back = on_gpu.copyto(PINNED)
    assert back.context == PINNED
    np.testing.assert_array_equal(back.asnumpy(), values)
    np.testing.assert_array_equal(mx.nd.array(values, ctx=mx.gpu(0)).as_in_context(PINNED).asnumpy(), values)
    as_int = mx.nd.zeros((256, 257), ctx=PINNED, dtype="int32")
    on_gpu.copyto(as_int)  # dtype converted on the way
    np.testing.assert_array_equal(as_int.asnumpy(), values.astype(np.int32))
    wide = mx.nd.zeros((256, 514), ctx=PINNED)
    on_gpu.copyto(wide[:, ::2])  # a target that is not contiguous: staged, then copied into place
    np.testing.assert_array_equal(wide.asnumpy()[:, ::2], values)
    np.testing.assert_array_equal(wide.asnumpy()[:, 1::2], 0)


@pytest.mark.gpu
@requires_gpu
def test_a_pinned_source_rewritten_after_its_copy_to_the_gpu_gives_the_old_values() -> None:
    # the DMA reads the pinned array itself: a later CPU write into it must wait for the copy
    n = 1 << 22
    source = mx.nd.ones((n,), ctx=PINNED)
    targets = []
    for step in range(5):
        source[:] = float(step)  # a CPU operation on the pinned array
        targets.append(source.copyto(mx.gpu(0)))
    for step, target in enumerate(targets):
        assert float(target[n - 1].asscalar()) == float(step) and float(target.sum().asscalar()) == step * n


@pytest.mark.gpu
@requires_gpu
def test_a_gpu_copy_into_a_pinned_array_is_read_after_it_lands() -> None:
    n = 1 << 22
    target = mx.nd.zeros((n,), ctx=PINNED)
    for step in range(1, 5):
        on_gpu = mx.nd.ones((n,), ctx=mx.gpu(0)) * float(step)
        on_gpu.copyto(target)
        doubled = target * 2  # a CPU operation reading what the DMA wrote
        assert float(doubled[n - 1].asscalar()) == 2.0 * step


@pytest.mark.gpu
@requires_gpu
def test_on_a_gpu_machine_cpu_pinned_arrays_are_page_locked() -> None:
    from lazynd.backend.cuda.copies import STAGING, pinned_memory_of

    a = mx.nd.ones((1024,), ctx=PINNED)
    if not STAGING.available:
        pytest.skip("no page-locked memory here (the CPU emulator, or a locked-memory limit): ordinary host memory")
    assert pinned_memory_of(a.data_array) is not None
    assert pinned_memory_of(mx.nd.ones((1024,)).data_array) is None
