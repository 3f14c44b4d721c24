"""MXNet 1.x's multi-head attention products over interleaved projections (``contrib``):
``interleaved_matmul_selfatt_qk``, ``interleaved_matmul_selfatt_valatt``,
``interleaved_matmul_encdec_qk`` and ``interleaved_matmul_encdec_valatt``.

MXNet's layout: a projection tensor is ``(seq, batch, heads * parts * head_dim)``, whose last
axis reshaped to ``(heads, parts, head_dim)`` holds, per head, the query, key and value rows
(``parts`` 3, self-attention) or the key and value rows (``parts`` 2, encoder-decoder); plain
queries have ``parts`` 1.  A head's rows are gathered as ``(batch * heads, seq, head_dim)``,
batch-major.  Then:

- ``*_qk``: ``(q / sqrt(head_dim)) @ k^T``, shape ``(batch * heads, q_seq, k_seq)``;
- ``*_valatt``: ``attention @ v`` with ``attention`` ``(batch * heads, q_seq, k_seq)``, given
  back in the query layout ``(q_seq, batch, heads * head_dim)``.

Kernels are written once over ``kctx.xp``; the gradients with registered operators
(``reshape``'s special codes keep them free of shapes, so the symbolic gradient pass can build
them before shapes are known).
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import ShapeError
from .params import Param, parse_int
from .products import product
from .registry import OpDef, merge_shape, register

PREFIX = "_contrib_interleaved_matmul_"
_HEADS = {"heads": Param(parse_int, doc="the number of attention heads")}


# -- the layout, over arrays ----------------------------------------------------------------------
def _head_width(op: str, attrs: dict, arg: str, shape: tuple[int, ...], parts: int) -> int:
    """``head_dim`` of a projection ``(seq, batch, heads * parts * head_dim)`` (checked)."""
    heads = attrs["heads"]
    if heads < 1:
        raise ShapeError(f"{op}: heads must be at least 1, got {heads}")
    if len(shape) != 3 or shape[2] % (heads * parts):
        raise ShapeError(
            f"{op}: '{arg}' must be (seq_length, batch_size, heads * {parts} * head_dim) with heads={heads}, "
            f"got shape {tuple(shape)}"
        )
    return shape[2] // (heads * parts)


def _rows(x: Any, heads: int, parts: int, part: int) -> Any:
    """Part ``part`` of each head of a projection, as ``(batch * heads, seq, head_dim)``."""
    seq, batch, width = x.shape
    split = x.reshape(seq, batch, heads, parts, width // (heads * parts))[:, :, :, part, :]
    return split.transpose(1, 2, 0, 3).reshape(batch * heads, seq, -1)


def _scaled_rows(x: Any, heads: int, parts: int, part: int) -> Any:
    rows = _rows(x, heads, parts, part)
    # the scale is a host number: CuPy's sqrt of a Python int is a device array, which NumPy's
    # scalar types refuse to convert implicitly
    return rows / x.dtype.type(math.sqrt(rows.shape[-1]))


def _qk_forward(parts_q: int, parts_k: int) -> Any:
    def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        heads = attrs["heads"]
        queries, keys = inputs[0], inputs[-1]
        q = _scaled_rows(queries, heads, parts_q, 0)
        k = _rows(keys, heads, parts_k, 1 if parts_k == 3 else 0)
        kctx.backend.matmul(q, k.transpose(0, 2, 1), outputs[0])

    return forward


def _valatt_forward(parts: int) -> Any:
    def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        heads = attrs["heads"]
        projections, attention = inputs
        out = outputs[0]
        seq, batch, _ = out.shape
        result = product(kctx, attention, _rows(projections, heads, parts, parts - 1))
        out[...] = result.reshape(batch, heads, seq, -1).transpose(2, 0, 1, 3).reshape(out.shape)

    return forward


# -- the layout, over the operators of F (gradients) ----------------------------------------------
def _f_rows(F: Any, x: Any, heads: int, parts: int, part: int) -> Any:
    split = F.reshape(x, shape=(0, 0, heads, parts, -1))
    one = F.reshape(F.slice_axis(split, axis=3, begin=part, end=part + 1), shape=(0, 0, 0, -1))
    return F.reshape(F.transpose(one, axes=(1, 2, 0, 3)), shape=(-3, 0, 0))


def _f_interleave(F: Any, rows: Any, heads: int, parts: int, part: int) -> Any:
    """The projection-shaped tensor holding ``rows`` as part ``part`` of each head, zeros elsewhere."""
    per_head = F.transpose(F.reshape(rows, shape=(-4, -1, heads, 0, 0)), axes=(2, 0, 1, 3))
    one = F.expand_dims(per_head, axis=3)
    if parts == 1:
        return F.reshape(one, shape=(0, 0, -1))
    zeros = F.zeros_like(one)
    pieces = [one if p == part else zeros for p in range(parts)]
    return F.reshape(F.concat(*pieces, dim=3), shape=(0, 0, -1))


# -- shape rules ----------------------------------------------------------------------------------
def _selfatt_qk_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    qkv = in_shapes[0]
    if qkv is None:
        return list(in_shapes), [None], list(aux_shapes)
    _head_width(f"{PREFIX}selfatt_qk", attrs, "queries_keys_values", qkv, 3)
    return list(in_shapes), [(qkv[1] * attrs["heads"], qkv[0], qkv[0])], list(aux_shapes)


def _encdec_qk_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    op = f"{PREFIX}encdec_qk"
    queries, kv = in_shapes
    if queries is None or kv is None:
        return list(in_shapes), [None], list(aux_shapes)
    width = _head_width(op, attrs, "queries", queries, 1)
    if _head_width(op, attrs, "keys_values", kv, 2) != width or kv[1] != queries[1]:
        raise ShapeError(
            f"{op}: 'keys_values' has shape {tuple(kv)}, expected (k_seq, {queries[1]}, {2 * queries[2]}) "
            f"to match 'queries' {tuple(queries)}"
        )
    return list(in_shapes), [(queries[1] * attrs["heads"], queries[0], kv[0])], list(aux_shapes)


def _valatt_infer(name: str, arg: str, parts: int) -> Any:
    op = f"{PREFIX}{name}"

    def infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        projections, attention = in_shapes
        if projections is None:
            return list(in_shapes), [None], list(aux_shapes)
        width = _head_width(op, attrs, arg, projections, parts)
        k_seq, batch = projections[0], projections[1]
        q_seq = attention[1] if attention is not None and len(attention) == 3 else (k_seq if parts == 3 else 0)
        attention = merge_shape(op, "attention", attention, (batch * attrs["heads"], q_seq, k_seq), complete=True)
        out = (q_seq, batch, attrs["heads"] * width) if q_seq else None
        return [projections, attention], [out], list(aux_shapes)

    return infer


# -- gradients ------------------------------------------------------------------------------------
def _selfatt_qk_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    heads, qkv, head = attrs["heads"], inputs[0], out_grads[0]
    q, k = _f_rows(F, qkv, heads, 3, 0), _f_rows(F, qkv, heads, 3, 1)
    dq = F._contrib_div_sqrt_dim(F.batch_dot(head, k))
    dk = F._contrib_div_sqrt_dim(F.batch_dot(head, q, transpose_a=True))
    return [F._plus(_f_interleave(F, dq, heads, 3, 0), _f_interleave(F, dk, heads, 3, 1))]


def _encdec_qk_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    heads, (queries, kv), head = attrs["heads"], inputs, out_grads[0]
    q, k = _f_rows(F, queries, heads, 1, 0), _f_rows(F, kv, heads, 2, 0)
    dq = F._contrib_div_sqrt_dim(F.batch_dot(head, k))
    dk = F._contrib_div_sqrt_dim(F.batch_dot(head, q, transpose_a=True))
    return [_f_interleave(F, dq, heads, 1, 0), _f_interleave(F, dk, heads, 2, 0)]


def _valatt_gradient(parts: int) -> Any:
    def gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
        heads, (projections, attention) = attrs["heads"], inputs
        head = _f_rows(F, out_grads[0], heads, 1, 0)  # the output is in the query layout
        v = _f_rows(F, projections, heads, parts, parts - 1)
        dv = F.batch_dot(attention, head, transpose_a=True)
        return [_f_interleave(F, dv, heads, parts, parts - 1), F.batch_dot(head, v, transpose_b=True)]

    return gradient


# -- registration ---------------------------------------------------------------------------------
def _register(name: str, forward: Any, inputs: tuple[str, ...], infer: Any, gradient: Any, doc: str) -> None:
    register(
        OpDef(
            PREFIX + name,
            forward,
            inputs=inputs,
            params=dict(_HEADS),
            infer_shape=infer,
            gradient=gradient,
            float_data=True,
            doc=f"{doc} (``mx.nd.contrib.interleaved_matmul_{name}``).",
        )
    )


_register(
    "selfatt_qk",
    _qk_forward(3, 3),
    ("queries_keys_values",),
    _selfatt_qk_infer,
    _selfatt_qk_gradient,
    "Scaled query-key products of interleaved self-attention projections",
)
_register(
    "selfatt_valatt",
    _valatt_forward(3),
    ("queries_keys_values", "attention"),
    _valatt_infer("selfatt_valatt", "queries_keys_values", 3),
    _valatt_gradient(3),
    "Attention-weighted values of interleaved self-attention projections",
)
_register(
    "encdec_qk",
    _qk_forward(1, 2),
    ("queries", "keys_values"),
    _encdec_qk_infer,
    _encdec_qk_gradient,
    "Scaled products of queries with the keys of interleaved key-value projections",
)
_register(
    "encdec_valatt",
    _valatt_forward(2),
    ("keys_values", "attention"),
    _valatt_infer("encdec_valatt", "keys_values", 2),
    _valatt_gradient(2),
    "Attention-weighted values of interleaved key-value projections",
)
