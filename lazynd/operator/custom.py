"""MXNet's custom operators: :class:`CustomOp`, :class:`CustomOpProp` and :func:`register`.

Examples
--------
>>> import lazynd as mx
>>> class Square(mx.operator.CustomOp):
...     def forward(self, is_train, req, in_data, out_data, aux):
...         self.assign(out_data[0], req[0], in_data[0] * in_data[0])
...     def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
...         self.assign(in_grad[0], req[0], 2 * in_data[0] * out_grad[0])
>>> @mx.operator.register("doc_square")
... class SquareProp(mx.operator.CustomOpProp):
...     def create_operator(self, ctx, shapes, dtypes):
...         return Square()
>>> mx.nd.Custom(mx.nd.array([1, 2, 3]), op_type="doc_square").asnumpy()
array([1., 4., 9.], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import LazyNDError
from ..ops import custom as _custom


class CustomOp:
    """The computation of a custom operator: override :meth:`forward` and :meth:`backward`.

    Both receive NDArrays over the operation's own buffers and write the results with
    :meth:`assign` (or ``out[:] = ...``); ``mx.nd`` calls inside run before the operation
    completes.
    """

    def forward(self, is_train: bool, req: list[str], in_data: list, out_data: list, aux: list) -> None:
        """Compute ``out_data`` from ``in_data``; ``req[i]`` says how to store output ``i``."""
        raise NotImplementedError(f"{type(self).__name__}.forward is not implemented")

    def backward(self, req: list[str], out_grad: list, in_data: list, out_data: list, in_grad: list, aux: list) -> None:
        """Compute ``in_grad`` (inputs not among the dependencies arrive as None)."""
        raise NotImplementedError(f"{type(self).__name__}.backward is not implemented")

    def assign(self, dst: Any, req: str, src: Any) -> None:
        """Store ``src`` into ``dst`` as ``req`` says: 'null' (nothing), 'write'/'inplace' or 'add'."""
        if req == "null":
            return
        if req in ("write", "inplace"):
            dst[:] = src
        elif req == "add":
            dst[:] = dst + src
        else:
            raise LazyNDError(f"CustomOp.assign: req must be 'null', 'write', 'inplace' or 'add', got {req!r}")


class CustomOpProp:
    """What a custom operator looks like: arguments, outputs, shapes, types, dependencies.

    Keywords given to ``Custom`` (other than ``op_type``) reach the subclass's constructor as
    strings.  ``need_top_grad=False`` makes a loss: backward gets no output gradient and the
    operator may end a graph that is differentiated without ``out_grads``.
    """

    def __init__(self, need_top_grad: bool = True) -> None:
        self.need_top_grad_ = need_top_grad

    def infer_shape(self, in_shape: list) -> tuple:
        """(argument shapes, output shapes, auxiliary shapes); by default all like the first input."""
        return in_shape, [in_shape[0]] * len(self.list_outputs()), []

    def infer_type(self, in_type: list) -> tuple:
        """(argument types, output types, auxiliary types); by default all the first input's type."""
        return (
            in_type,
            [in_type[0]] * len(self.list_outputs()),
            [in_type[0]] * len(self.list_auxiliary_states()),
        )

    def infer_storage_type(self, in_stype: list[str]) -> tuple:
        """(argument, output, auxiliary) storage types: every one ``'default'`` (dense).

        lazynd's arrays are all dense; a subclass that only passes the types on may call this.
        """
        _check_dense("infer_storage_type", "in_stype", in_stype)
        return (
            list(in_stype),
            ["default"] * len(self.list_outputs()),
            ["default"] * len(self.list_auxiliary_states()),
        )

    def infer_storage_type_backward(
        self, ograd_stype: list[str], in_stype: list[str], out_stype: list[str], igrad_stype: list[str], aux_stype: list
    ) -> tuple:
        """The storage types of backward's arrays (output gradients, inputs, outputs, input
        gradients, auxiliary states): every one ``'default'``; an unknown one (``'undefined'``) too."""
        _check_dense("infer_storage_type_backward", "ograd_stype", ograd_stype)
        _check_dense("infer_storage_type_backward", "igrad_stype", [s for s in igrad_stype if s != "undefined"])
        groups = (ograd_stype, in_stype, out_stype, igrad_stype, aux_stype)
        return tuple(["default"] * len(group) for group in groups)

    def list_arguments(self) -> list[str]:
        return ["data"]

    def list_outputs(self) -> list[str]:
        return ["output"]

    def list_auxiliary_states(self) -> list[str]:
        return []

    def need_top_grad(self) -> bool:
        return self.need_top_grad_

    def declare_backward_dependency(self, out_grad: list[int], in_data: list[int], out_data: list[int]) -> list[int]:
        """Which of these (output gradients, inputs, outputs) backward reads; by default all of them."""
        deps = list(out_grad) if self.need_top_grad() else []
        return deps + list(in_data) + list(out_data)

    def create_operator(self, ctx: Any, in_shapes: list, in_dtypes: list) -> CustomOp:
        """The :class:`CustomOp` that computes this operator on ``ctx``."""
        return CustomOp()


def _check_dense(method: str, argument: str, stypes: list[str]) -> None:
    """Refuse a storage type other than ``'default'``: lazynd's arrays are dense."""
    for i, stype in enumerate(stypes):
        if stype != "default":
            raise LazyNDError(
                f"CustomOpProp.{method}: {argument}[{i}] is {stype!r}, expected 'default' (lazynd's arrays "
                "are dense; override infer_storage_type for other storage types)"
            )


def register(reg_name: str) -> Callable[[type], type]:
    """A class decorator that registers a :class:`CustomOpProp` subclass as ``op_type=reg_name``."""
    if not isinstance(reg_name, str) or not reg_name:
        raise LazyNDError(f"operator.register: expected a non-empty name, got {reg_name!r}")

    def do_register(prop_cls: type) -> type:
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise LazyNDError(f"operator.register({reg_name!r}): expected a CustomOpProp subclass, got {prop_cls!r}")
        _custom.forget(reg_name)
        _custom.PROPERTIES[reg_name] = prop_cls
        return prop_cls

    return do_register
