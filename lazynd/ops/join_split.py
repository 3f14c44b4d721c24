"""Joining and splitting arrays: Concat, SliceChannel (split) and stack (MXNet semantics and defaults),
with the backward of Concat.

Kernels use ``kctx.xp``, so NumPy and CuPy run the same code.
"""

from __future__ import annotations

import functools
from typing import Any

from ..errors import OperatorError, ShapeError
from ..util import is_np_shape
from .params import REQUIRED, Param, parse_bool, parse_int, parse_positive_int
from .registry import OpDef, merge_shape, register
from .shape import normalize_axis


@functools.lru_cache(maxsize=64)
def _numbered_outputs(count: int) -> tuple[str, ...]:
    """``output0``... ``output{count - 1}``, built once per count: a foreach's ``split`` has one
    output per step, and a graph pass asks for the names (or their count) of each of them."""
    return tuple(f"output{i}" for i in range(count))


def as_list(result: Any, n: int) -> list:
    """The outputs of a multi-output op as a list (nd gives a lone array when there is one)."""
    return [result] if n == 1 else [result[i] for i in range(n)]


# -- Concat ----------------------------------------------------------------------------------------
def _concat_infer(attrs: dict, in_shapes: list, aux_shapes: list, out_shapes: list | None = None) -> tuple:
    """Inputs agree on every axis but ``dim``; one unknown ``dim`` size is inferred from the output.

    With NumPy shape semantics on (always so for NDArrays) a 0 along ``dim`` is a zero-size input.
    """
    known = [s for s in in_shapes if s is not None]
    out = out_shapes[0] if out_shapes else None
    ref = known[0] if known else out
    if ref is None:
        return in_shapes, [None], aux_shapes
    ndim = len(ref)
    dim = normalize_axis("Concat", attrs["dim"], ndim, "dim")
    common: tuple | None = None
    for i, s in enumerate([*in_shapes, out]):
        if s is None:
            continue
        name = f"arg{i}" if i < len(in_shapes) else "output"
        if len(s) != ndim:
            raise ShapeError(f"Concat: shape of '{name}' is {tuple(s)}, expected {ndim} dims like {tuple(ref)}")
        masked = tuple(0 if a == dim else d for a, d in enumerate(s))
        if common is not None and any(g and e and g != e for g, e in zip(masked, common, strict=True)):
            wanted = tuple("_" if a == dim else d or "_" for a, d in enumerate(common))
            raise ShapeError(
                f"Concat: shape of '{name}' is {tuple(s)}, expected ({', '.join(map(str, wanted))}) "
                f"(inputs must agree on every axis but dim={dim})"
            )
        common = merge_shape("Concat", name, masked, common)
    assert common is not None
    sizes = [s[dim] if s is not None else 0 for s in in_shapes]
    sizes_known = is_np_shape() and all(s is not None for s in in_shapes)
    if out is not None and out[dim] and sizes.count(0) == 1 and not sizes_known:
        missing = sizes.index(0)
        sizes[missing] = out[dim] - sum(sizes)
        if sizes[missing] <= 0:
            raise ShapeError(f"Concat: output size {out[dim]} along dim {dim} is too small for inputs {in_shapes}")
    new_in = [common[:dim] + (d,) + common[dim + 1 :] for d in sizes]
    total = sum(sizes) if sizes_known or all(sizes) else 0
    if out is not None and out[dim] and total and out[dim] != total:
        raise ShapeError(f"Concat: output size along dim {dim} is {out[dim]}, inputs sum to {total}")
    return new_in, [common[:dim] + (total or (out[dim] if out else 0),) + common[dim + 1 :]], aux_shapes


def _concat_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    dim = normalize_axis("Concat", attrs["dim"], inputs[0].ndim, "dim")
    kctx.xp.concatenate(inputs, axis=dim, out=outputs[0])


def _concat_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    n = len(inputs)
    return as_list(F._backward_Concat(out_grads[0], *inputs, dim=attrs["dim"], num_args=n + 1), n)


register(
    OpDef(
        "Concat",
        _concat_forward,
        params={"dim": Param(parse_int, 1, "the axis to join along")},
        variadic=True,
        infer_shape=_concat_infer,
        gradient=_concat_gradient,
        aliases=("concat",),
        doc="Join arrays along ``dim``.",
    )
)


def _rnn_param_concat_infer(attrs: dict, in_shapes: list, aux_shapes: list, out_shapes: list | None = None) -> tuple:
    """Concat's rule, except that inputs whose size along ``dim`` is unknown (0) share what the
    known output leaves over equally: Gluon's RNN layers flatten their weights into the fused
    parameter, and the two directions' first ``i2h_weight`` wait on the input size together.
    """
    out = out_shapes[0] if out_shapes else None
    known = [s for s in in_shapes if s is not None]
    if out is not None and known:
        dim = normalize_axis("_rnn_param_concat", attrs["dim"], len(known[0]), "dim")
        unknown = [i for i, s in enumerate(in_shapes) if s is not None and len(s) > dim and not s[dim]]
        if len(unknown) > 1 and len(out) > dim and out[dim]:
            left = out[dim] - sum(s[dim] for s in known if len(s) > dim)
            if left <= 0 or left % len(unknown):
                raise ShapeError(
                    f"_rnn_param_concat: output size {out[dim]} along dim {dim} leaves {left} for "
                    f"{len(unknown)} inputs of unknown size {[in_shapes[i] for i in unknown]}"
                )
            in_shapes = list(in_shapes)
            for i in unknown:
                s = in_shapes[i]
                in_shapes[i] = (*s[:dim], left // len(unknown), *s[dim + 1 :])
    return _concat_infer(attrs, in_shapes, aux_shapes, out_shapes)


register(
    OpDef(
        "_rnn_param_concat",
        _concat_forward,
        params={"dim": Param(parse_int, 1, "the axis to join along")},
        variadic=True,
        infer_shape=_rnn_param_concat_infer,
        gradient=_concat_gradient,
        doc="``Concat`` as Gluon's RNN layers write it in exported symbols: joins the flattened weights.",
    )
)


def _split_sections(xp: Any, grad: Any, sizes: list[int], axis: int, outputs: list) -> None:
    start = 0
    for size, out in zip(sizes, outputs, strict=True):
        index = (slice(None),) * axis + (slice(start, start + size),)
        out[...] = grad[index].reshape(out.shape)
        start += size


def _backward_concat_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    dim = normalize_axis("Concat", attrs["dim"], inputs[0].ndim, "dim")
    _split_sections(kctx.xp, inputs[0], [x.shape[dim] for x in inputs[1:]], dim, outputs)


register(
    OpDef(
        "_backward_Concat",
        _backward_concat_forward,
        params={"dim": Param(parse_int, 1, "the axis of the forward Concat")},
        variadic=True,
        outputs=lambda attrs: [f"grad{i}" for i in range((attrs.get("num_args") or 1) - 1)],
        infer_shape=lambda attrs, s, a: (s, list(s[1:]), a),
        infer_type=lambda attrs, t, a: (t, [t[0]] * (len(t) - 1), a),
        # the forward inputs give the pieces' sizes only: no forward value need be kept for them
        shape_only_inputs=lambda attrs: range(1, attrs.get("num_args") or 1),
        doc="Gradient of ``Concat``: the output gradient cut into the inputs' pieces (inputs: grad, *likes).",
    )
)


# -- SliceChannel -------------------------------------------------------------------------------------
def _slice_channel_infer(attrs: dict, in_shapes: list, aux_shapes: list, out_shapes: list | None = None) -> tuple:
    n, squeeze = attrs["num_outputs"], attrs["squeeze_axis"]
    if n < 1:
        raise OperatorError(f"SliceChannel: num_outputs={n} must be at least 1")
    data = in_shapes[0]
    piece = None  # every piece has one shape: what any of them knows
    for k, known in enumerate(out_shapes or []):
        piece = merge_shape("SliceChannel", f"output{k}", known, piece)
    if piece is not None and (data is None or 0 in data):
        # a known piece gives the input's unknown (0) dims, as MXNet's rule runs backwards
        axis = attrs["axis"] if attrs["axis"] >= 0 else attrs["axis"] + len(piece) + int(squeeze)
        piece = tuple(piece)
        whole = (
            (piece[:axis] + (n,) + piece[axis:]) if squeeze else piece[:axis] + (piece[axis] * n,) + piece[axis + 1 :]
        )
        data = merge_shape("SliceChannel", "data", data, whole)
    if data is None:
        return in_shapes, [None] * n, aux_shapes
    axis = normalize_axis("SliceChannel", attrs["axis"], len(data))
    if data[axis] and data[axis] % n:
        raise ShapeError(
            f"SliceChannel: size {data[axis]} of axis {axis} in {tuple(data)} does not divide into {n} outputs"
        )
    if squeeze and data[axis] and data[axis] != n:
        raise ShapeError(f"SliceChannel: squeeze_axis needs axis {axis} of size num_outputs={n}, got {tuple(data)}")
    out = data[:axis] + (() if squeeze else (data[axis] // n,)) + data[axis + 1 :]
    return [tuple(data)], [out] * n, aux_shapes


def _slice_channel_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x, n = inputs[0], attrs["num_outputs"]
    axis = normalize_axis("SliceChannel", attrs["axis"], x.ndim)
    _split_sections(kctx.xp, x, [x.shape[axis] // n] * n, axis, outputs)


def _slice_channel_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    grads = list(out_grads)
    if attrs["squeeze_axis"]:
        grads = [F.expand_dims(g, axis=attrs["axis"]) for g in grads]
    return [F.Concat(*grads, dim=attrs["axis"], num_args=len(grads))]


register(
    OpDef(
        "SliceChannel",
        _slice_channel_forward,
        params={
            "num_outputs": Param(parse_positive_int, REQUIRED, "number of equal pieces"),
            "axis": Param(parse_int, 1, "the axis to split"),
            "squeeze_axis": Param(parse_bool, False, "drop the split axis (its size must equal num_outputs)"),
        },
        outputs=lambda attrs: _numbered_outputs(attrs.get("num_outputs") or 1),
        infer_shape=_slice_channel_infer,
        gradient=_slice_channel_gradient,
        aliases=("split",),
        doc="Split an array into ``num_outputs`` equal pieces along ``axis``.",
    )
)


# -- stack -------------------------------------------------------------------------------------------
def _stack_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    common = None
    for i, s in enumerate(in_shapes):
        common = merge_shape("stack", f"arg{i}", s, common)
    if common is None:
        return in_shapes, [None], aux_shapes
    axis = normalize_axis("stack", attrs["axis"], len(common), extra=1)
    return [common] * len(in_shapes), [common[:axis] + (len(in_shapes),) + common[axis:]], aux_shapes


def _stack_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    axis = normalize_axis("stack", attrs["axis"], inputs[0].ndim, extra=1)
    kctx.xp.stack(inputs, axis=axis, out=outputs[0])


def _stack_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    n = len(inputs)
    pieces = F.SliceChannel(out_grads[0], num_outputs=n, axis=attrs["axis"], squeeze_axis=True)
    return as_list(pieces, n)


register(
    OpDef(
        "stack",
        _stack_forward,
        params={"axis": Param(parse_int, 0, "where the new axis goes")},
        variadic=True,
        infer_shape=_stack_infer,
        gradient=_stack_gradient,
        doc="Join arrays of one shape along a new axis.",
    )
)
