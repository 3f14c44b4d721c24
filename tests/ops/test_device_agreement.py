"""The GPU kernels of the neural-network operators give the CPU's answers: forward and gradient,
float16, float32 and float64, NaN and padding included (NumPy's rules on both devices).

Every test here compares gpu(0) against cpu(0) through :func:`lazynd.testing.check_consistency`
and is skipped without a GPU (the CUDA kernels behind them: conv.cu, pooling.cu, norm.cu,
activation.cu and the generated elementwise families).
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.testing import check_consistency

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(mx.num_gpus() == 0, reason="needs an NVIDIA GPU with CuPy (none visible)"),
]

DTYPES = ("float16", "float32", "float64")
# float16 is stored in 16 bits on both devices and computed in float32 on the GPU
TOLERANCE = {
    "float16": dict(rtol=2e-2, atol=2e-2),
    "float32": dict(rtol=1e-4, atol=1e-4),
    "float64": dict(rtol=1e-7, atol=1e-9),
}
BOTH = [mx.cpu(0), mx.gpu(0)] if mx.num_gpus() else []


def _random(shape: tuple[int, ...], dtype: str, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(dtype)


def _agree(op: str, inputs: list[np.ndarray], params: dict, dtype: str, grad: bool = True) -> None:
    check_consistency(op, inputs, params, ctx_list=BOTH, grad=grad, **TOLERANCE[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("act_type", ["relu", "sigmoid", "tanh", "softrelu", "softsign"])
def test_activation_agrees(act_type: str, dtype: str) -> None:
    _agree("Activation", [_random((4, 33), dtype)], {"act_type": act_type}, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_convolution_agrees(dtype: str) -> None:
    x, w, b = _random((2, 4, 7, 6), dtype, 1), _random((6, 2, 3, 3), dtype, 2), _random((6,), dtype, 3)
    params = {"kernel": (3, 3), "stride": (2, 1), "pad": (1, 1), "num_filter": 6, "num_group": 2}
    _agree("Convolution", [x, w, b], params, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_deconvolution_agrees(dtype: str) -> None:
    x, w = _random((2, 3, 5, 4), dtype, 1), _random((3, 4, 3, 2), dtype, 2)
    params = {"kernel": (3, 2), "stride": (2, 2), "pad": (1, 0), "num_filter": 4, "no_bias": True}
    _agree("Deconvolution", [x, w], params, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("pool_type", ["max", "avg", "sum"])
def test_pooling_agrees(pool_type: str, dtype: str) -> None:
    params = {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "pool_type": pool_type}
    _agree("Pooling", [_random((2, 3, 7, 8), dtype)], params, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_batchnorm_agrees(dtype: str) -> None:
    channels = 3
    inputs = [
        _random((4, channels, 5, 5), dtype, 1),
        _random((channels,), dtype, 2),
        _random((channels,), dtype, 3),
        _random((channels,), dtype, 4),
        np.abs(_random((channels,), dtype, 5)) + 0.5,
    ]
    # the inference form (its gradient needs the hidden batch statistics: the executor test covers it)
    _agree("BatchNorm", inputs, {"fix_gamma": False, "use_global_stats": True}, dtype, grad=False)


@pytest.mark.parametrize("dtype", DTYPES)
def test_fully_connected_agrees(dtype: str) -> None:
    x, w, b = _random((5, 12), dtype, 1), _random((7, 12), dtype, 2), _random((7,), dtype, 3)
    _agree("FullyConnected", [x, w, b], {"num_hidden": 7}, dtype)


def test_max_pooling_over_padding_is_minus_infinity_on_both_devices() -> None:
    # a 3-D window that lies wholly in the padding: NumPy's maximum of nothing is -inf
    x = _random((1, 1, 2, 3, 3), "float32")
    params = {
        "kernel": (2, 2, 2),
        "stride": (1, 2, 2),
        "pad": (0, 1, 1),
        "pool_type": "max",
        "pooling_convention": "full",
    }
    cpu, gpu = check_consistency("Pooling", [x], params, ctx_list=BOTH, grad=False)
    assert np.isneginf(cpu[0]).any() and np.array_equal(cpu[0], gpu[0])


@pytest.mark.parametrize(
    ("op", "inputs", "params"),
    [
        ("_maximum", [np.array([np.nan, 1, 2], np.float32), np.array([0, np.nan, 1], np.float32)], {}),
        ("_minimum", [np.array([np.nan, 1, 2], np.float32), np.array([0, np.nan, 1], np.float32)], {}),
        ("relu", [np.array([np.nan, -1, 2], np.float32)], {}),
        ("Activation", [np.array([np.nan, -1, 2], np.float32)], {"act_type": "relu"}),
        ("Pooling", [np.array([[[[np.nan, 1], [2, 3]]]], np.float32)], {"kernel": (2, 2), "pool_type": "max"}),
        ("max", [np.array([[np.nan, 1, 2], [1, 2, 3]], np.float32)], {"axis": -1}),
    ],
)
def test_nan_propagates_on_both_devices(op: str, inputs: list, params: dict) -> None:
    cpu, gpu = check_consistency(op, inputs, params, ctx_list=BOTH, grad=False)
    assert np.isnan(cpu[0]).any(), "the case must hold a NaN that NumPy's rules keep"
    np.testing.assert_array_equal(gpu[0], cpu[0])


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64"])
def test_integer_power_is_exact(dtype: str) -> None:
    base = np.arange(1, 9, dtype=dtype).reshape(2, 4)
    exponent = np.array([[1, 2, 3, 1], [2, 1, 4, 3]], dtype=dtype)
    cpu, gpu = check_consistency("_power", [base, exponent], {}, ctx_list=BOTH, grad=False)
    np.testing.assert_array_equal(cpu[0], base**exponent)
    np.testing.assert_array_equal(gpu[0], cpu[0])
    cpu, gpu = check_consistency("_rpower_scalar", [base], {"scalar": 3}, ctx_list=BOTH, grad=False)
    np.testing.assert_array_equal(gpu[0], cpu[0])


def test_a_scalar_is_cast_to_the_array_dtype_on_both_devices() -> None:
    # MXNet's static_cast<uint8>(300) is 44: 1 + 44 and 2 + 44
    cpu, gpu = check_consistency(
        "_plus_scalar", [np.array([1, 2], np.uint8)], {"scalar": 300}, ctx_list=BOTH, grad=False
    )
    assert cpu[0].tolist() == [45, 46] and gpu[0].tolist() == [45, 46]


@pytest.mark.parametrize("dtype", ["int8", "int32"])
def test_rint_of_integers_is_the_identity(dtype: str) -> None:
    x = np.array([-3, 0, 7], dtype)
    cpu, gpu = check_consistency("rint", [x], {}, ctx_list=BOTH, grad=False)
    assert cpu[0].tolist() == gpu[0].tolist() == [-3, 0, 7]


def test_gpu_normal_draws_every_bit_of_float64() -> None:
    x = mx.nd.normal(shape=(1000,), ctx=mx.gpu(0), dtype="float64").asnumpy()
    assert x.dtype == np.float64
    # float32 draws widened to float64 would survive a round trip through float32
    assert np.mean(x.astype(np.float32).astype(np.float64) != x) > 0.99


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize(
    ("shape", "axis"), [((3, 1000), -1), ((40, 7), -1), ((2, 5, 7), 1)], ids=["long-rows", "short-rows", "middle-axis"]
)
def test_softmax_agrees(op: str, shape: tuple[int, ...], axis: int, dtype: str) -> None:
    x = _random(shape, dtype) * 10
    _agree(op, [x], {"axis": axis, "temperature": 2.0}, dtype)


def test_a_first_operation_compiles_its_own_kernel_not_the_family() -> None:
    from lazynd.ops import elemwise_binary

    family = elemwise_binary.GPU
    before = set(family._sources)
    x = mx.nd.ones((4,), ctx=mx.gpu(0), dtype="float64")
    assert (x * x).asnumpy().tolist() == [1.0] * 4
    new = set(family._sources) - before
    assert new <= {("mul", "float64")}
    assert not family.source._modules, "the whole family's source is for make kernels-check only"


# -- every elementwise row, every dtype it supports: one generated sweep ----------------------------
def _unary_cases() -> list:
    from lazynd.ops import elemwise_unary

    cases = []
    for name, spec in elemwise_unary.UNARY.items():
        dtypes = DTYPES if spec.float_only else (*DTYPES, "int8", "uint8", "int32", "int64")
        cases += [pytest.param(name, dtype, id=f"{name}-{dtype}") for dtype in dtypes]
    return cases


def _operand(shape: tuple[int, ...], dtype: str, name: str = "", seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(1, 9, shape).astype(dtype)
    low, high = {"arccosh": (1.2, 3.0), "arcsin": (-0.8, 0.8), "arccos": (-0.8, 0.8), "arctanh": (-0.8, 0.8)}.get(
        name, (0.2, 2.0)
    )
    return rng.uniform(low, high, shape).astype(dtype)


@pytest.mark.parametrize(("name", "dtype"), _unary_cases())
def test_every_unary_row_agrees(name: str, dtype: str) -> None:
    grad = np.dtype(dtype).kind == "f" and name not in ("gamma", "_digamma")
    tolerance = dict(rtol=3e-2, atol=3e-2) if dtype == "float16" else TOLERANCE.get(dtype, dict(rtol=1e-5, atol=1e-6))
    check_consistency(name, [_operand((3, 5), dtype, name)], {}, ctx_list=BOTH, grad=grad, **tolerance)


def _binary_cases() -> list:
    from lazynd.ops import elemwise_binary

    return [
        pytest.param(name, dtype, form, id=f"{name}-{dtype}-{form}")
        for name in elemwise_binary.ARITHMETIC
        for dtype in (*DTYPES, "int8", "uint8", "int32", "int64")
        for form in ("same", "broadcast", "scalar")
    ]


@pytest.mark.parametrize(("name", "dtype", "form"), _binary_cases())
def test_every_binary_row_agrees(name: str, dtype: str, form: str) -> None:
    from lazynd.ops import elemwise_binary

    floating = np.dtype(dtype).kind == "f"
    tolerance = dict(rtol=3e-2, atol=3e-2) if dtype == "float16" else dict(rtol=1e-5, atol=1e-6)
    if form == "same":
        op, inputs, params = f"_{name}", [_operand((3, 4), dtype, seed=1), _operand((3, 4), dtype, seed=2)], {}
    elif form == "broadcast":
        op = f"broadcast_{elemwise_binary.BROADCAST_NAMES.get(name, name)}"
        inputs, params = [_operand((3, 1, 5), dtype, seed=1), _operand((1, 4, 1), dtype, seed=2)], {}
    else:
        op, inputs, params = f"_{name}_scalar", [_operand((3, 4), dtype, seed=1)], {"scalar": 2.5}
    check_consistency(op, inputs, params, ctx_list=BOTH, grad=floating and name not in ("mod",), **tolerance)


@pytest.mark.parametrize("step", [1, -1], ids=["forward-view", "reversed-view"])
def test_the_broadcast_kernel_takes_strided_and_reversed_views(step: int) -> None:
    # a reversed view has negative strides: the 32-bit index kernel must leave it to the 64-bit one
    from lazynd.ops import elemwise_binary

    base, row = _random((6, 5), "float32"), _random((1, 5), "float32", 1)
    x, r = mx.nd.array(base, ctx=mx.gpu(0)), mx.nd.array(row, ctx=mx.gpu(0))
    out = mx.nd.empty((6, 5), ctx=mx.gpu(0))
    mx.nd.waitall()
    # launched here, outside the engine, on this thread's current stream: the engine's copy to the
    # host would not wait for it (it raced and read zeros on an H100 under load)
    import cupy

    elemwise_binary.GPU.binary(0, "plus", x.data_array[::step], r.data_array, out.data_array)
    cupy.cuda.get_current_stream().synchronize()
    np.testing.assert_allclose(out.asnumpy(), base[::step] + row, rtol=1e-6)
