"""The profiler times a custom operator's Python code in MXNet's "Custom Operator" category."""

from __future__ import annotations

import json

import pytest

import lazynd as mx
from lazynd import profiler


class _Twice(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * 2)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] * 2)


@mx.operator.register("test_profiled_twice")
class _TwiceProp(mx.operator.CustomOpProp):
    def __init__(self) -> None:
        super().__init__(need_top_grad=True)

    def create_operator(self, ctx, shapes, dtypes):
        return _Twice()


pytestmark = pytest.mark.usefixtures("stopped_profiler")  # tests/conftest.py


def _forward_and_backward() -> None:
    x = mx.nd.array([0.0, 1.0, 2.0, 3.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type="test_profiled_twice")
    y.backward()
    x.grad.asnumpy()
    mx.nd.waitall()


def test_forward_backward_and_the_operations_they_run_are_in_the_custom_operator_category(tmp_path) -> None:
    profiler.set_config(mode="all", filename=str(tmp_path / "trace.json"))
    profiler.set_state("run")
    _forward_and_backward()
    profiler.set_state("stop")
    times = json.loads(profiler.dumps(format="json"))["Time"]
    custom = times["Custom Operator"]
    assert custom["test_profiled_twice::pure_python"]["Count"] == 1
    assert custom["_backward_test_profiled_twice::pure_python"]["Count"] == 1
    assert custom["test_profiled_twice::_mul_scalar"]["Count"] == 2  # in_data * 2, out_grad * 2
    assert "_mul_scalar" not in times["operator"]
    assert "Custom" in times["operator"]  # the operator itself stays among the operators
    categories = {e.get("cat") for e in json.loads((tmp_path / "trace.json").read_text())["traceEvents"]}
    assert "Custom Operator" in categories


def test_a_stopped_profiler_records_nothing_of_a_custom_operator() -> None:
    _forward_and_backward()
    assert "Custom Operator" not in json.loads(profiler.dumps(format="json"))["Time"]
