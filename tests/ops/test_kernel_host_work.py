"""What a GPU kernel call does on the host is done once, not at every call: a training step calls
the same kernels with the same parameters and shapes at every step (issue 26).  A geometry is
built once per (parameters, shape), a kernel source is read once per module, a launch
configuration is computed once per size; and the cached objects give the same results."""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.backend.cuda import sources
from lazynd.ops import conv_columns, mp_optimizer_ops, optimizer_ops, pooling, reduce, softmax, softmax_output


def _count_builds(monkeypatch: pytest.MonkeyPatch, cls: type) -> list[int]:
    built: list[int] = []
    original = cls.__init__

    def counting(self, *args, **kwargs) -> None:  # noqa: ANN001, ANN002, ANN003 - a spy
        built.append(1)
        original(self, *args, **kwargs)

    monkeypatch.setattr(cls, "__init__", counting)
    return built


def test_pooling_builds_its_geometry_once_per_parameters_and_shape(ctx, monkeypatch) -> None:
    x = mx.nd.array(np.arange(2 * 3 * 6 * 6, dtype=np.float32).reshape(2, 3, 6, 6), ctx=ctx)
    first = mx.nd.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max").asnumpy()
    built = _count_builds(monkeypatch, pooling.PoolGeometry)
    again = mx.nd.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max").asnumpy()
    assert built == []
    np.testing.assert_array_equal(again, first)
    # another shape is another geometry
    wide = mx.nd.Pooling(mx.nd.ones((1, 1, 4, 8), ctx=ctx), kernel=(2, 2), stride=(2, 2)).asnumpy()
    assert wide.shape == (1, 1, 2, 4) and built


def test_convolution_builds_its_geometry_once_per_parameters_and_shape(ctx, monkeypatch) -> None:
    rng = np.random.default_rng(0)
    x = mx.nd.array(rng.standard_normal((2, 3, 7, 7)).astype(np.float32), ctx=ctx)
    w = mx.nd.array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), ctx=ctx)
    b = mx.nd.zeros((4,), ctx=ctx)
    first = mx.nd.Convolution(x, w, b, kernel=(3, 3), num_filter=4).asnumpy()
    built = _count_builds(monkeypatch, conv_columns.Geometry)
    again = mx.nd.Convolution(x, w, b, kernel=(3, 3), num_filter=4).asnumpy()
    assert built == []
    np.testing.assert_array_equal(again, first)


def test_params_memo_builds_each_time_for_unhashable_parameters() -> None:
    from lazynd.ops.params_memo import ParamsMemo

    calls: list[object] = []
    memo = ParamsMemo(lambda attrs, n: calls.append(n) or len(calls))
    assert memo({"k": (1, 2)}, 3) == memo({"k": (1, 2)}, 3) == 1
    assert memo({"k": [1, 2]}, 3) == 2 and memo({"k": [1, 2]}, 3) == 3


def test_a_launch_configuration_is_computed_once_per_size() -> None:
    for n in (0, 1, 255, 256, 257, 10**6, 10**9):
        grid, block = sources.launch_config(n)
        assert block == (256,) and grid == (min(max(-(-n // 256), 1), 65535 * 8),)
        assert sources.launch_config(n) is sources.launch_config(n)
    assert sources.launch_config(1000, 128) == ((8,), (128,))


@pytest.mark.gpu
@pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)")
def test_gpu_kernels_read_their_sources_once_not_at_each_launch(monkeypatch) -> None:
    ctx = mx.gpu(0)
    w = mx.nd.ones((4, 5), ctx=ctx)
    g = mx.nd.ones((4, 5), ctx=ctx)
    mx.nd.sgd_update(w, g, lr=0.5, out=w)  # compiles outside the check
    mx.nd.softmax(w).wait_to_read()
    mx.nd.sum(w, axis=1).wait_to_read()

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a kernel source was looked up by file name at a launch")

    for module in (optimizer_ops, mp_optimizer_ops, softmax, softmax_output, reduce, sources):
        if hasattr(module, "load_file"):
            monkeypatch.setattr(module, "load_file", refuse)
    mx.nd.sgd_update(w, g, lr=0.5, out=w)
    np.testing.assert_allclose(w.asnumpy(), np.zeros((4, 5)))
    np.testing.assert_allclose(mx.nd.softmax(w).asnumpy(), np.full((4, 5), 0.2), rtol=1e-6)
    np.testing.assert_allclose(mx.nd.sum(w + 1, axis=1).asnumpy(), np.full(4, 5.0))


def test_im2col_geometry_arguments_are_converted_once_per_geometry_and_sizes() -> None:
    attrs = {"kernel": (3, 2), "stride": (2, 1), "dilate": (), "pad": (1, 0), "layout": None}
    g = conv_columns.geometry(attrs, "Convolution", 4)
    args = conv_columns._gpu_dims(g, (7, 5), (4, 4))
    assert args is conv_columns._gpu_dims(g, (7, 5), (4, 4))
    assert [int(v) for v in args] == [1, 7, 5, 1, 3, 2, 1, 4, 4, 1, 2, 1, 1, 1, 1, 0, 1, 0]
    assert all(isinstance(v, np.int32) for v in args)


@pytest.mark.gpu
@pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)")
def test_an_elementwise_kernel_is_found_by_one_lookup_once_known(monkeypatch) -> None:
    ctx = mx.gpu(0)
    a, b = mx.nd.ones((3, 4), ctx=ctx), mx.nd.full((3, 4), 2.0, ctx=ctx)
    (a + b).wait_to_read()

    def refuse(self: sources.KernelSource, device_id: int, name: str) -> None:
        raise AssertionError(f"kernel {name} was looked up again by its formatted name")

    monkeypatch.setattr(sources.KernelSource, "function", refuse)
    np.testing.assert_array_equal((a + b).asnumpy(), np.full((3, 4), 3.0))
