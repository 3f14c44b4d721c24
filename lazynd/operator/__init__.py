"""``mx.operator``: operators written in Python.

- :class:`CustomOp` / :class:`CustomOpProp` with :func:`register` (MXNet's custom operators),
  called as ``mx.nd.Custom(..., op_type=name)`` and ``mx.sym.Custom(..., op_type=name)``;
- :class:`NumpyOp` and :class:`NDArrayOp`, MXNet 0.9's older Python operators, called on
  symbols (``MyOp()(data=x, name='op')``);
- :func:`get_operator_arguments`: a registered operator's arguments and their types, as MXNet lists them.

The engine runs them through the ``Custom`` operator (:mod:`lazynd.ops.custom`).
"""

from __future__ import annotations

from .arguments import OperatorArguments, get_operator_arguments
from .custom import CustomOp, CustomOpProp, register
from .python_op import NDArrayOp, NumpyOp, PythonOp

__all__ = [
    "CustomOp",
    "CustomOpProp",
    "register",
    "PythonOp",
    "NumpyOp",
    "NDArrayOp",
    "OperatorArguments",
    "get_operator_arguments",
]
