"""depth_to_space and space_to_depth (MXNet 1.x): move ``block_size x block_size`` blocks between the
channel axis and the two spatial axes of NCHW data.

``depth_to_space`` takes channels in MXNet's order (block row, block column, then output
channel: "DCR"); ``space_to_depth`` is its exact inverse, so each is the other's gradient.  The
kernels are a reshape and a transpose, written once against ``kctx.xp`` (NumPy and CuPy).
"""

from __future__ import annotations

from typing import Any

from ..errors import OperatorError, ShapeError
from .params import REQUIRED, Param, parse_int
from .registry import OpDef, register
from .shape import copy_into, unary_infer


def _check(op: str, block: int, shape: tuple) -> None:
    if block <= 0:
        raise OperatorError(f"{op}: block_size={block}, expected a positive integer")
    if len(shape) != 4:
        raise ShapeError(f"{op}: data has shape {shape}, expected 4-D (batch, channel, height, width)")


def _depth_to_space_shape(attrs: dict, shape: tuple) -> tuple:
    b = attrs["block_size"]
    _check("depth_to_space", b, shape)
    n, c, h, w = shape
    if c % (b * b):
        raise ShapeError(
            f"depth_to_space: data has {c} channels, expected a multiple of block_size^2 = {b * b} (shape {shape})"
        )
    return (n, c // (b * b), h * b, w * b)


def _space_to_depth_shape(attrs: dict, shape: tuple) -> tuple:
    b = attrs["block_size"]
    _check("space_to_depth", b, shape)
    n, c, h, w = shape
    if h % b or w % b:
        raise ShapeError(
            f"space_to_depth: data has height {h} and width {w}, expected multiples of block_size={b} (shape {shape})"
        )
    return (n, c * b * b, h // b, w // b)


def _depth_to_space(x: Any, out: Any, b: int) -> None:
    # (n, b, b, c, h, w) -> (n, c, h, b, w, b): out[n, c, h*b + i, w*b + j] = x[n, (i*b + j)*c' + c, h, w]
    n, c, h, w = x.shape
    moved = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    if out.flags.c_contiguous:
        out.reshape(moved.shape)[...] = moved
    else:
        copy_into(out, moved.reshape(out.shape))


def _space_to_depth(x: Any, out: Any, b: int) -> None:
    # (n, c, h, b, w, b) -> (n, b, b, c, h, w): the inverse of _depth_to_space
    n, c, h, w = x.shape
    moved = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    if out.flags.c_contiguous:
        out.reshape(moved.shape)[...] = moved
    else:
        copy_into(out, moved.reshape(out.shape))


_PARAMS = {"block_size": Param(parse_int, REQUIRED, "side of the square blocks moved")}

register(
    OpDef(
        "depth_to_space",
        lambda kctx, attrs, inputs, outputs, aux: _depth_to_space(inputs[0], outputs[0], attrs["block_size"]),
        params=dict(_PARAMS),
        infer_shape=unary_infer(_depth_to_space_shape),
        gradient=lambda F, attrs, inputs, outputs, og: [F.space_to_depth(og[0], block_size=attrs["block_size"])],
        doc="Move channel blocks into ``block_size x block_size`` spatial blocks: (N, C, H, W) -> "
        "(N, C / block_size^2, H * block_size, W * block_size).",
    )
)
register(
    OpDef(
        "space_to_depth",
        lambda kctx, attrs, inputs, outputs, aux: _space_to_depth(inputs[0], outputs[0], attrs["block_size"]),
        params=dict(_PARAMS),
        infer_shape=unary_infer(_space_to_depth_shape),
        gradient=lambda F, attrs, inputs, outputs, og: [F.depth_to_space(og[0], block_size=attrs["block_size"])],
        doc="Move ``block_size x block_size`` spatial blocks into channels: (N, C, H, W) -> "
        "(N, C * block_size^2, H / block_size, W / block_size).",
    )
)
