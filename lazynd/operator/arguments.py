"""``mx.operator.get_operator_arguments``: an operator's arguments as MXNet 1.9.1 lists them.

The answer is built from the operator registry: the inputs (auxiliary states included) in
the order MXNet's generated functions take them, then the parameters in declaration order,
each described by its parser (:func:`lazynd.ops.params.describe_param`).
"""

from __future__ import annotations

from collections import namedtuple

from ..errors import OperatorError
from ..ops import registry
from ..ops.params import describe_param

__all__ = ["OperatorArguments", "get_operator_arguments"]

OperatorArguments = namedtuple("OperatorArguments", ["narg", "names", "types"])

INPUT = "NDArray-or-Symbol"
VARIADIC_INPUT = "NDArray-or-Symbol[]"

# MXNet counts these operators' inputs itself: no num_args among their arguments
_NO_NUM_ARGS = ("ElementWiseSum",)

# the name MXNet gives the list of inputs of an operator of any number of them ('data' elsewhere)
_VARIADIC_NAMES = {"ElementWiseSum": "args", "khatri_rao": "args", "_backward_khatri_rao": "args"}


def _input_names(op: registry.OpDef) -> list[str]:
    if op.variadic:
        return [_VARIADIC_NAMES.get(op.name, "data")]
    names = op.positional_input_names()
    if names is None:  # the inputs depend on a required parameter: those of any setting, in order
        names = op.input_names({k: None for k in op.params}) + list(op.aux)
    return names


def get_operator_arguments(op_name: str) -> OperatorArguments:
    """``OperatorArguments(narg, names, types)`` of the operator ``op_name`` (or an alias), as MXNet's
    ``mx.operator.get_operator_arguments``: its inputs (``'NDArray-or-Symbol'``, one
    ``'NDArray-or-Symbol[]'`` for any number of them), then its parameters with MXNet's type text.

    Examples
    --------
    >>> import lazynd as mx
    >>> args = mx.operator.get_operator_arguments('Activation')
    >>> args.narg, args.names
    (2, ['data', 'act_type'])
    >>> args.types[1]
    "{'relu', 'sigmoid', 'softrelu', 'softsign', 'tanh'}, required"
    """
    if not isinstance(op_name, str):
        raise OperatorError(f"get_operator_arguments: op_name must be an operator's name, got {type(op_name).__name__}")
    if not registry.exists(op_name):
        raise OperatorError(
            f"get_operator_arguments: operator {op_name!r} is not registered "
            "(lazynd.ops.registry.list_ops() lists those that are)"
        )
    op = registry.get(op_name)
    inputs = _input_names(op)
    types = [VARIADIC_INPUT if op.variadic else INPUT] * len(inputs)
    names = list(inputs)
    for name, param in op.params.items():
        if op.variadic and name == "num_args":  # lazynd counts the inputs given; MXNet requires it
            if op.name in _NO_NUM_ARGS:
                continue
            names.append(name)
            types.append("int, required")
            continue
        names.append(name)
        types.append(describe_param(param))
    return OperatorArguments(len(names), names, types)
