"""Contexts given as text: parsed, or refused with a ContextError naming the argument."""

from __future__ import annotations

import threading

import pytest

import lazynd as mx
import lazynd_sym as sym
from lazynd.context import as_context
from lazynd.errors import ContextError, OperatorError
from lazynd.test_utils import default_context, set_default_context


@pytest.mark.parametrize(
    "text, expected", [("cpu", mx.cpu(0)), ("gpu(1)", mx.gpu(1)), (" cpu_pinned(2) ", mx.cpu_pinned(2))]
)
def test_context_text_is_parsed(text, expected):
    assert as_context(text) == expected


@pytest.mark.parametrize("bad", ["gpuX", "cpu(x)", "gpu(-1)", "gpu(", "", 3, None], ids=repr)
def test_bad_context_is_a_context_error_naming_the_value(bad):
    with pytest.raises(ContextError, match=r"ctx is .*expected a Context"):
        as_context(bad)


def test_bind_with_a_bad_context_string():
    net = sym.Variable("x") * 2
    with pytest.raises(ContextError, match=r"bind: ctx is 'gpuX'"):
        net.bind("gpuX", {"x": mx.nd.ones((2,))})
    with pytest.raises(ContextError, match=r"simple_bind: ctx is 'cpu\(a\)'"):
        net.simple_bind("cpu(a)", x=(2,))
    assert net.bind("cpu(0)", {"x": mx.nd.ones((2,))}).forward()[0].asnumpy().tolist() == [2.0, 2.0]


def test_array_creation_with_a_bad_context_string():
    with pytest.raises(ContextError, match=r"ctx is 'cpu\(x\)'"):
        mx.nd.zeros((2,), ctx="cpu(x)")
    with pytest.raises(OperatorError, match=r"parameter 'ctx'"):
        mx.nd.random_uniform(shape=(2,), ctx="cpu(x)")


def test_device_type_tables_are_mxnets() -> None:
    # MXNet 1.9.1: Context.devtype2str[1] == 'cpu', devstr2type['gpu'] == 2
    assert mx.Context.devtype2str[1] == "cpu" and mx.Context.devtype2str[2] == "gpu"
    assert mx.cpu().devstr2type["gpu"] == 2 and mx.Context.devstr2type["cpu_pinned"] == 3


def _in_a_thread(work) -> list:
    seen: list = []
    thread = threading.Thread(target=lambda: seen.append(work()))
    thread.start()
    thread.join()
    return seen


def test_set_default_context_moves_the_calling_threads_arrays_only() -> None:
    def work():
        set_default_context(mx.cpu(3))
        return mx.Context.default_ctx, mx.nd.zeros((2,)).context, default_context()

    # MXNet 1.x: set_default_context sets the thread's default context, which arrays follow
    assert _in_a_thread(work) == [(mx.cpu(3), mx.cpu(3), mx.cpu(3))]
    assert mx.current_context() == mx.cpu(0) and mx.nd.zeros((2,)).context == mx.cpu(0)


def test_a_with_block_and_the_process_default_come_before_a_threads_own_default() -> None:
    def work():
        set_default_context(mx.cpu(3))
        with mx.cpu(4):
            inner = mx.current_context()
        mx.Context.default_ctx = mx.cpu(0)  # assigning the process-wide default takes effect here too
        return inner, mx.current_context()

    assert _in_a_thread(work) == [(mx.cpu(4), mx.cpu(0))]


def test_gpu_memory_info_names_a_gpu_that_is_not_there() -> None:
    missing = mx.num_gpus()  # the first index past the visible GPUs
    with pytest.raises(mx.ContextError, match=rf"gpu\({missing}\)"):
        mx.context.gpu_memory_info(missing)


@pytest.mark.gpu
def test_gpu_memory_info_gives_free_and_total_bytes() -> None:
    if mx.num_gpus() == 0:
        pytest.skip("no GPU")
    import cupy

    if not hasattr(cupy.cuda.runtime, "memGetInfo"):
        pytest.skip("this CuPy (the CPU emulator) has no cudaMemGetInfo")
    free, total = mx.context.gpu_memory_info(0)
    assert 0 <= free <= total and total > 0


@pytest.mark.parametrize("device_id", [None, "abc", float("nan"), float("inf"), [1], (0,), {"k": 1}], ids=repr)
@pytest.mark.parametrize("make", [mx.cpu, mx.gpu, mx.cpu_pinned, lambda i: mx.Context("cpu", i)])
def test_a_device_id_that_is_no_integer_is_a_context_error_naming_it(make, device_id):
    # int()'s TypeError, ValueError or OverflowError before
    with pytest.raises(ContextError, match=r"device id must be an integer >= 0, got "):
        make(device_id)


@pytest.mark.parametrize("device_type", [["cpu"], {"cpu": 0}, None, 1.5], ids=repr)
def test_a_device_type_that_is_no_name_is_a_context_error(device_type):
    # 'unhashable type: list' before
    with pytest.raises(ContextError, match=r"unknown device type .*expected one of"):
        mx.Context(device_type)
