"""The operator registry: every operator's :class:`~lazynd.ops.opdef.OpDef` by name and alias, and
the gradient rules written with registered operators (:class:`BackwardOpGradient`,
:func:`sum_gradients`, :func:`zero_gradient`).

What a definition carries is described in :mod:`lazynd.ops.opdef`; :class:`OpDef`,
:class:`KernelContext` and the shape helpers are handed on from here, where the operator
families import them.
"""

from __future__ import annotations

from typing import Any

from ..errors import OperatorError
from .half_precision import float16_as_float32
from .opdef import FLOAT_TYPES, KernelContext, OpDef, variadic_input_names
from .partial_shapes import (
    Shape,
    dim_is_known,
    dims_differ,
    merge_shape,
    refuse_empty_axis,
    shape_is_known,
    unify_shapes,
)

__all__ = [
    "FLOAT_TYPES",
    "BackwardOpGradient",
    "KernelContext",
    "OpDef",
    "Shape",
    "all_names",
    "dim_is_known",
    "dims_differ",
    "exists",
    "float16_as_float32",
    "get",
    "list_ops",
    "merge_shape",
    "refuse_empty_axis",
    "register",
    "shape_is_known",
    "sum_gradients",
    "unify_shapes",
    "variadic_input_names",
    "zero_gradient",
]

_OPS: dict[str, OpDef] = {}
_ALIASES: dict[str, str] = {}


class BackwardOpGradient:
    """A gradient rule that is one backward operator: ``F.<name>(out_grads[0], *inputs[:reads], **attrs)``,
    whose outputs are the gradients of the inputs, in order.

    Written this way (``gradient=BackwardOpGradient("_backward_FullyConnected", 2)``), a rule
    also tells imperative autograd where each input's gradient comes from, so it can hand
    the backward operator its output buffers (:meth:`into`): a variable's own gradient
    buffer, or nothing for a gradient nobody needs, as an executor does.
    """

    __slots__ = ("name", "reads")

    def __init__(self, name: str, reads: int) -> None:
        self.name = name
        self.reads = reads  # how many of the forward inputs the backward operator reads

    def __call__(self, F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
        result = getattr(F, self.name)(out_grads[0], *inputs[: self.reads], **attrs)
        # one output is the one gradient (an array's list() would give its rows)
        return [result] if get(self.name).num_visible_outputs(attrs) == 1 else list(result)

    @property
    def skips_unneeded(self) -> bool:
        """Whether the backward operator can leave a gradient out (it has ``optional_outputs``)."""
        return get(self.name).optional_outputs

    def into(self, F: Any, attrs: dict, inputs: list, out_grads: list, out: list) -> list:
        """The rule, writing the gradient of input ``i`` into ``out[i]`` (``None``: not computed,
        where the backward operator has ``optional_outputs``); returns ``out``."""
        return list(getattr(F, self.name)(out_grads[0], *inputs[: self.reads], out=out, **attrs))


def sum_gradients(F: Any, terms: list[Any]) -> Any:
    """The sum of the gradient ``terms`` one entry receives from several readers, with the
    operators of ``F`` (the symbol namespace in the gradient pass, ``lazynd.nd`` in autograd)."""
    if len(terms) == 1:
        return terms[0]
    if len(terms) > 2 and exists("ElementWiseSum"):
        return F.ElementWiseSum(*terms)
    total = terms[0]
    for term in terms[1:]:
        total = F._plus(total, term)
    return total


def zero_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    """The gradient rule of an operator whose inputs get zero gradients (MXNet's
    ``MakeZeroGradNodes``: comparisons, box matching, anchors)."""
    return [F.zeros_like(x) for x in inputs]


def register(op: OpDef) -> OpDef:
    """Add ``op`` (and its aliases) to the registry."""
    for key in (op.name, *op.aliases):
        if key in _OPS or key in _ALIASES:
            raise ValueError(f"operator {key!r} registered twice")
    _OPS[op.name] = op
    for alias in op.aliases:
        _ALIASES[alias] = op.name
    return op


def get(name: str) -> OpDef:
    """The operator registered as ``name`` (or an alias of it)."""
    op = _OPS.get(name)
    if op is None:
        real = _ALIASES.get(name)
        if real is None:
            raise OperatorError(f"unknown operator {name!r}")
        op = _OPS[real]
    return op


def exists(name: str) -> bool:
    return name in _OPS or name in _ALIASES


def list_ops() -> list[str]:
    """Names of all registered operators (without aliases)."""
    return sorted(_OPS)


def all_names() -> dict[str, OpDef]:
    """Every name (operators and aliases) mapped to its definition."""
    names = dict(_OPS)
    for alias, real in _ALIASES.items():
        names[alias] = _OPS[real]
    return names
