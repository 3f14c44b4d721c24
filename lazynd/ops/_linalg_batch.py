"""What MXNet 1.x's ``linalg_*`` operators share: batched matrices in the last two axes, float32 and
float64 only, and gradients computed by one backward operator each (``_backward_linalg_*``).

The kernels are written once with ``xp`` (``numpy.linalg`` on the CPU, ``cupy.linalg`` on the GPU);
a LAPACK failure (a singular matrix, one not positive definite) is raised as an
:class:`~lazynd.errors.OperatorError` naming the operator.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from .join_split import as_list
from .params import Param
from .registry import OpDef, dims_differ, register

LINALG_TYPES = ("float32", "float64")

# a kernel body: (xp, attrs, inputs) -> output arrays; a gradient body: (xp, attrs, out_grads,
# inputs, outputs) -> one gradient per input
Compute = Callable[[Any, dict, list], Sequence[Any]]
GradientCompute = Callable[[Any, dict, list, list, list], Sequence[Any]]


def transposed(xp: Any, x: Any) -> Any:
    """The matrices of ``x`` (its last two axes) transposed."""
    return xp.swapaxes(x, -1, -2)


def triangle(xp: Any, x: Any, lower: bool) -> Any:
    """The lower (or upper) triangle of each matrix of ``x``, the rest zero."""
    return xp.tril(x) if lower else xp.triu(x)


def check_matrices(op: str, arg: str, shape: tuple | None, square: bool = False) -> None:
    """``shape`` holds matrices in its last two axes (square ones where ``square``)."""
    if shape is None:
        return
    if len(shape) < 2:
        raise ShapeError(f"{op}: input '{arg}' must have at least 2 dims (a batch of matrices), got {tuple(shape)}")
    if square and dims_differ(shape[-1], shape[-2]):
        raise ShapeError(f"{op}: input '{arg}' must hold square matrices, got shape {tuple(shape)}")


def check_same_batch(op: str, a: tuple, b: tuple, a_batch: tuple, b_batch: tuple) -> None:
    """A's and B's batch dims (``a_batch``, ``b_batch``; 0 where unknown) must be equal: MXNet does
    not broadcast them.  ``a`` and ``b`` are the shapes the message names."""
    if len(a_batch) != len(b_batch) or any(dims_differ(x, y) for x, y in zip(a_batch, b_batch, strict=True)):
        raise ShapeError(
            f"{op}: A {tuple(a)} and B {tuple(b)} have different batch dims {tuple(a_batch)} and "
            f"{tuple(b_batch)}, expected equal ones (they are not broadcast)"
        )


def batch_scalar_shape(shape: tuple) -> tuple:
    """The shape of one value per matrix (``(1,)`` for a single matrix, as MXNet)."""
    return tuple(shape[:-2]) or (1,)


def _linalg_type_infer(op: str, num_outputs: int) -> Callable[..., tuple[list, list, list]]:
    def infer(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
        dtype = next((t for t in in_types if t is not None), None)
        for t in in_types:
            if t is not None and t not in LINALG_TYPES:
                raise OperatorError(f"{op}: inputs have dtype {t}, expected float32 or float64 (as in MXNet)")
            if t is not None and t != dtype:
                raise OperatorError(f"{op}: inputs have dtypes {dtype} and {t}, expected one dtype")
        return [dtype] * len(in_types), [dtype] * num_outputs, aux_types

    return infer


def _kernel(op: str, compute: Compute, kernel_context: bool = False) -> Callable[..., None]:
    def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        try:
            results = compute(kctx if kernel_context else kctx.xp, attrs, inputs)
        except np.linalg.LinAlgError as err:  # CuPy's solvers raise NumPy's too
            raise OperatorError(f"{op}: {err}") from None
        for out, value in zip(outputs, results, strict=True):
            out[...] = value.reshape(out.shape)

    return forward


def register_linalg(
    name: str,
    compute: Compute,
    *,
    inputs: Sequence[str] = ("A",),
    outputs: Sequence[str] = ("output",),
    params: dict[str, Param] | None = None,
    infer_shape: Callable[..., tuple[list, list, list]],
    gradient: GradientCompute | Callable[..., list] | None = None,
    gradient_is_rule: bool = False,
    kernel_context: bool = False,
    doc: str = "",
) -> None:
    """Register ``_linalg_<name>`` (alias ``linalg_<name>``) and, where ``gradient`` is a gradient
    body, ``_backward_linalg_<name>`` taking the output gradients, the inputs and the outputs.

    ``gradient_is_rule``: ``gradient`` is a rule written with ``F`` (the products) instead.
    ``kernel_context``: ``compute`` takes the kernel context instead of the array module (for
    products through the backend's GEMM route, :func:`lazynd.ops.products.product`).
    """
    op = f"_linalg_{name}"
    params = dict(params or {})
    n_in, n_out = len(inputs), len(outputs)
    rule: Callable[..., list] | None = None
    if gradient is not None and gradient_is_rule:
        rule = gradient  # type: ignore[assignment]  # a rule written with F
    elif gradient is not None:
        backward = f"_backward_linalg_{name}"
        body: GradientCompute = gradient  # type: ignore[assignment]

        def backward_compute(xp: Any, attrs: dict, arrays: list) -> Sequence[Any]:
            return body(xp, attrs, arrays[:n_out], arrays[n_out : n_out + n_in], arrays[n_out + n_in :])

        register(
            OpDef(
                backward,
                _kernel(backward, backward_compute),
                inputs=[f"{o}_grad" for o in outputs] + list(inputs) + [f"{o}_value" for o in outputs],
                outputs=[f"{i}_grad" for i in inputs],
                params=dict(params),
                infer_shape=lambda attrs, s, a: (s, list(s[n_out : n_out + n_in]), a),
                infer_type=_linalg_type_infer(backward, n_in),
                doc=f"Gradient of ``{op}`` with respect to its inputs.",
            )
        )

        def rule(F: Any, attrs: dict, ins: list, outs: list, out_grads: list) -> list:  # type: ignore[misc]
            grads = getattr(F, backward)(*out_grads, *ins, *outs, **attrs)
            return as_list(grads, n_in)

    register(
        OpDef(
            op,
            _kernel(op, compute, kernel_context),
            inputs=tuple(inputs),
            outputs=tuple(outputs),
            params=params,
            infer_shape=infer_shape,
            infer_type=_linalg_type_infer(op, n_out),
            gradient=rule,
            aliases=(f"linalg_{name}",),
            doc=doc,
        )
    )
