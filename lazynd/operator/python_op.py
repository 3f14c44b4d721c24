"""MXNet 0.9's older Python operators: :class:`NumpyOp` (NumPy arrays) and :class:`NDArrayOp`.

An instance is called on symbols (``op(data=x, name='softmax')``) and becomes a ``Custom``
node: each instance is registered under an ``op_type`` of its own.

Examples
--------
>>> import numpy as np
>>> import lazynd as mx
>>> class Double(mx.operator.NumpyOp):
...     def forward(self, in_data, out_data):
...         out_data[0][:] = 2 * in_data[0]
...     def backward(self, out_grad, in_data, out_data, in_grad):
...         in_grad[0][:] = 2 * out_grad[0]
>>> y = Double()(data=mx.sym.Variable("x"), name="double")
>>> exe = y.simple_bind(mx.cpu(), x=(2,))
>>> exe.forward(x=mx.nd.array([1, 2]))[0].asnumpy()
array([2., 4.], dtype=float32)
"""

from __future__ import annotations

import itertools
from typing import Any

from .custom import CustomOp, CustomOpProp, register

_serial = itertools.count()


class PythonOp:
    """What :class:`NumpyOp` and :class:`NDArrayOp` share: the operator's description."""

    def __init__(self, need_top_grad: bool = True) -> None:
        self.need_top_grad_ = need_top_grad
        self._op_type: str | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.get_symbol(*args, **kwargs)

    def get_symbol(self, *args: Any, **kwargs: Any) -> Any:
        """A ``Custom`` symbol running this operator on the given symbols."""
        import lazynd

        if self._op_type is None:
            self._op_type = f"_python_op_{type(self).__name__}_{next(_serial)}"
            register(self._op_type)(_properties_of(self))
        return lazynd.sym.Custom(*args, op_type=self._op_type, **kwargs)

    def forward(self, in_data: list, out_data: list) -> None:
        """Write the outputs; by default (as in MXNet) the first output is a copy of the first input."""
        out_data[0][:] = in_data[0]

    def backward(self, out_grad: list, in_data: list, out_data: list, in_grad: list) -> None:
        """Write the input gradients; by default (as in MXNet) the first one is all ones, as for a loss."""
        in_grad[0][:] = 1.0

    def infer_shape(self, in_shape: list) -> tuple:
        """(argument shapes, output shapes); by default one output like the first input."""
        return in_shape, [in_shape[0]]

    def list_outputs(self) -> list[str]:
        return ["output"]

    def list_arguments(self) -> list[str]:
        return ["data"]

    def need_top_grad(self) -> bool:
        return self.need_top_grad_

    def declare_backward_dependency(self, out_grad: list[int], in_data: list[int], out_data: list[int]) -> list[int]:
        deps = list(out_grad) if self.need_top_grad() else []
        return deps + list(in_data) + list(out_data)

    # how the arrays reach forward/backward (NumpyOp: NumPy arrays; NDArrayOp: NDArrays)
    def _call(self, method: Any, groups: list[list], written: int) -> None:
        """Call ``method(*groups)``; ``groups[written]`` holds the arrays it writes."""
        method(*groups)


class NumpyOp(PythonOp):
    """A Python operator on NumPy arrays: write the results into ``out_data``/``in_grad`` in place.

    On the CPU the arrays are the operation's own buffers; on a GPU they are host copies,
    copied back after the call.
    """

    def _call(self, method: Any, groups: list[list], written: int) -> None:
        host = [[None if a is None else _host(a) for a in group] for group in groups]
        method(*host)
        for device_array, host_array in zip(groups[written], host[written], strict=True):
            if device_array.context.device_type != "cpu":
                device_array[:] = host_array


def _host(a: Any) -> Any:
    return a.data_array if a.context.device_type == "cpu" else a.asnumpy()


class NDArrayOp(PythonOp):
    """A Python operator on NDArrays (``declare_backward_dependency`` may trim what backward reads)."""


def _properties_of(python_op: PythonOp) -> type:
    """A CustomOpProp subclass that describes ``python_op`` and runs it."""

    class _Operator(CustomOp):
        def forward(self, is_train: bool, req: list[str], in_data: list, out_data: list, aux: list) -> None:
            python_op._call(python_op.forward, [in_data, out_data], written=1)

        def backward(
            self, req: list[str], out_grad: list, in_data: list, out_data: list, in_grad: list, aux: list
        ) -> None:
            python_op._call(python_op.backward, [out_grad, in_data, out_data, in_grad], written=3)

    class _Properties(CustomOpProp):
        def __init__(self) -> None:
            super().__init__(need_top_grad=python_op.need_top_grad())

        def list_arguments(self) -> list[str]:
            return python_op.list_arguments()

        def list_outputs(self) -> list[str]:
            return python_op.list_outputs()

        def infer_shape(self, in_shape: list) -> tuple:
            shapes = python_op.infer_shape(in_shape)
            return shapes[0], shapes[1], []

        def declare_backward_dependency(
            self, out_grad: list[int], in_data: list[int], out_data: list[int]
        ) -> list[int]:
            return python_op.declare_backward_dependency(out_grad, in_data, out_data)

        def create_operator(self, ctx: Any, in_shapes: list, in_dtypes: list) -> CustomOp:
            return _Operator()

    _Properties.__name__ = f"{type(python_op).__name__}Properties"
    return _Properties
