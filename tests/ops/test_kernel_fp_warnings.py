"""No operator leaks NumPy's floating-point warnings: MXNet computes inf and NaN silently.

Every swept operator (tests/ops/sweep_cases.py) runs forward and backward on inputs full of
inf, -inf, NaN, signed zeros, values near float32's limits and subnormals, with NumPy's
RuntimeWarnings turned into errors.  The CPU kernels run quietly because ``OpDef`` wraps each one
(lazynd.backend.fperr); a ``Custom`` operator runs the user's Python under the user's settings.
"""

from __future__ import annotations

import warnings
import zlib

import numpy as np
import pytest
from sweep_cases import CASES, auto_case

import lazynd as mx
from lazynd.ops import registry

SPECIAL = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 3e38, -3e38, 1e-40, -1.5, 2.0], np.float32)


def _cases() -> list[str]:
    names = []
    for name in registry.list_ops():
        if name.startswith(("_backward", "_test_", "_sym_test_")) or name == "Custom":
            continue
        case = CASES.get(name) or auto_case(name)
        if case is not None and not case.random and case.inputs:
            names.append(name)
    return names


def _special_inputs(name: str) -> tuple[list, list, bool]:
    case = CASES.get(name) or auto_case(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    arrays = []
    for k, spec in enumerate(case.inputs):
        value = spec.make(rng)
        if not spec.integer and spec.values is None and np.dtype(spec.dtype) == np.float32 and value.size:
            value = np.resize(np.roll(SPECIAL, 3 * k), value.size).reshape(value.shape)
        arrays.append(value)
    return arrays, [spec.make(rng) for spec in case.aux], case.grad


@pytest.mark.parametrize("name", _cases())
def test_operators_compute_inf_and_nan_without_numpy_warnings(name):
    case = CASES.get(name) or auto_case(name)
    values, aux, grad = _special_inputs(name)
    inputs = [mx.nd.array(v, dtype=v.dtype) for v in values]
    floats = [x for x in inputs if np.dtype(x.dtype).kind == "f"]
    for x in floats:
        x.attach_grad()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", RuntimeWarning)
        try:
            with mx.autograd.record():
                out = getattr(mx.nd, name)(*inputs, *[mx.nd.array(a, dtype=a.dtype) for a in aux], **case.params)
            outs = [o for o in (out if isinstance(out, (list, tuple)) else [out]) if np.dtype(o.dtype).kind == "f"]
            if grad and floats and outs:
                outs[0].backward()
            mx.nd.waitall()
        except mx.LazyNDError:
            pass  # special values an operator refuses (an index that is NaN): refused, not warned about
    leaked = [f"{w.message} ({w.filename}:{w.lineno})" for w in seen if issubclass(w.category, RuntimeWarning)]
    assert not leaked, f"{name}: NumPy warnings {leaked}"


@pytest.mark.parametrize(
    ("source", "dtype"),
    [([np.nan, np.inf, -np.inf], "int32"), ([1e300, -1e300, np.nan], "float32")],
    ids=["int", "narrow"],
)
def test_copies_into_another_dtype_cast_without_numpy_warnings(source, dtype):
    # NaN and inf into integers, float64 past float32's range: cast silently, as MXNet's copies
    x = mx.nd.array(source, dtype="float64")
    target = mx.nd.zeros((3,), dtype=dtype)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", RuntimeWarning)
        x.copyto(target)
        target[:] = x
        target.wait_to_read()
    assert not [w for w in seen if issubclass(w.category, RuntimeWarning)]
    np.testing.assert_array_equal(target.asnumpy(), np.array(source).astype(dtype))


class _Log(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], mx.nd.array(np.log(in_data[0].asnumpy())))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] / in_data[0])


@mx.operator.register("_fp_warning_log")
class _LogProp(mx.operator.CustomOpProp):
    def list_arguments(self):
        return ["data"]

    def infer_shape(self, in_shape):
        return in_shape, in_shape, []

    def create_operator(self, ctx, shapes, dtypes):
        return _Log()


def test_a_custom_operator_runs_under_the_users_numpy_settings():
    # the user's Python in a Custom operator warns (or raises) as the user asked NumPy to
    x = mx.nd.array([0.0, 1.0])
    with np.errstate(divide="raise"):
        with pytest.raises(mx.LazyNDError, match="divide by zero"):
            mx.nd.Custom(x, op_type="_fp_warning_log").wait_to_read()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", RuntimeWarning)
        mx.nd.Custom(x, op_type="_fp_warning_log").wait_to_read()
    assert any("divide by zero" in str(w.message) for w in seen)


def _log_net() -> mx.sym.Symbol:
    x = mx.sym.Variable("x")
    return mx.sym.sqrt(mx.sym.log(x) / x, name="out")


@pytest.mark.parametrize("monitored", [False, True])
@pytest.mark.parametrize("bulk", ["1", "0"])
def test_an_executors_passes_compute_inf_and_nan_without_numpy_warnings(monkeypatch, monitored, bulk):
    # a host executor runs each pass inside one switch of NumPy's state, its kernels raw
    monkeypatch.setenv("LAZYND_EXEC_BULK", bulk)
    ex = _log_net().simple_bind(mx.cpu(), x=(4,))
    assert all(step[0] is step[6].opdef.raw_forward for step in ex._steps[True])
    if monitored:
        ex.set_monitor_callback(lambda name, array: None)
    ex.arg_dict["x"][:] = np.array([0.0, -1.0, np.inf, 1.0])
    with warnings.catch_warnings(record=True) as seen, np.errstate(all="raise"):
        warnings.simplefilter("always", RuntimeWarning)
        ex.forward(is_train=True)
        ex.backward(mx.nd.ones((4,)))
        mx.nd.waitall()
    assert not [w for w in seen if issubclass(w.category, RuntimeWarning)]
    np.testing.assert_array_equal(np.isnan(ex.outputs[0].asnumpy()), [True, True, True, False])


def test_an_executors_monitor_and_custom_operators_keep_the_users_numpy_settings():
    states = []
    ex = _log_net().simple_bind(mx.cpu(), x=(2,))
    ex.set_monitor_callback(lambda name, array: states.append(np.geterr()["divide"]))
    ex.arg_dict["x"][:] = np.array([1.0, 2.0])
    with np.errstate(divide="raise"):
        ex.forward()
        mx.nd.waitall()
    assert states and set(states) <= {"raise", "warn"}  # the user's (or a worker's default), never "ignore"

    custom = mx.sym.Custom(mx.sym.Variable("x"), op_type="_fp_warning_log", name="log")
    ex = (custom * 2).simple_bind(mx.cpu(), x=(2,))
    assert all(step[0] is step[6].opdef.forward for step in ex._steps[False])  # each kernel switches for itself
    ex.arg_dict["x"][:] = np.array([0.0, 1.0])
    with np.errstate(divide="raise"):
        ex.forward()
        with pytest.raises(mx.LazyNDError, match="divide by zero"):
            mx.nd.waitall()


# statistics over an empty axis: NaN (or an empty result) as NumPy gives, without its "Mean of empty
# slice" warnings (MXNet is silent), forward and backward, on every context
EMPTY_AXIS_CASES = {
    "LayerNorm": ((3, 0), lambda x, ctx: mx.nd.LayerNorm(x, mx.nd.ones((0,), ctx=ctx), mx.nd.zeros((0,), ctx=ctx))),
    "GroupNorm": (
        (3, 2, 0),
        lambda x, ctx: mx.nd.GroupNorm(x, mx.nd.ones((1,), ctx=ctx), mx.nd.zeros((1,), ctx=ctx), num_groups=1),
    ),
    "moments": ((3, 0), lambda x, ctx: mx.nd.moments(x, axes=(1,))[1]),
}


@pytest.mark.parametrize("name", list(EMPTY_AXIS_CASES))
def test_statistics_over_an_empty_axis_compute_without_numpy_warnings(name, ctx):
    shape, statistic = EMPTY_AXIS_CASES[name]
    x = mx.nd.zeros(shape, ctx=ctx)
    x.attach_grad()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", RuntimeWarning)
        with mx.autograd.record():
            out = statistic(x, ctx)
        out.backward()
        values, grad = out.asnumpy(), x.grad.asnumpy()
    leaked = [f"{w.message} ({w.filename}:{w.lineno})" for w in seen if issubclass(w.category, RuntimeWarning)]
    assert not leaked, f"{name}: NumPy warnings {leaked}"
    assert grad.shape == shape
    assert values.size == 0 or np.isnan(values).all()
