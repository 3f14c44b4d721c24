"""MXNet 1.x's ``im2col`` and ``col2im``: sliding blocks of an image as columns, and back.

``im2col(data (N, C, *spatial), kernel, stride, dilate, pad)`` gives ``(N, C * prod(kernel), L)``,
``L`` the number of window positions; row ``c * prod(kernel) + k`` holds channel ``c`` at kernel
offset ``k`` (C order), column ``l`` the window at position ``l`` (C order): MXNet's layout.
``col2im(data, output_size, kernel, ...)`` is its adjoint: each column's values are added back
to the pixels they came from (overlaps sum), giving ``(N, C, *output_size)``.  Each is the
other's gradient.  1-D, 2-D and 3-D windows; the column machinery is Convolution's
(:mod:`lazynd.ops.conv_columns`), on the GPU its kernels (float16 computed in float32).
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import ShapeError
from .conv_columns import Geometry, col2im, im2col
from .params import REQUIRED, Param, parse_shape
from .registry import OpDef, register

_WINDOW = {
    "kernel": Param(parse_shape, REQUIRED, "window size: (w,), (h, w) or (d, h, w)"),
    "stride": Param(parse_shape, (), "step between windows per spatial axis (default 1)"),
    "dilate": Param(parse_shape, (), "spacing of the kernel's points per spatial axis (default 1)"),
    "pad": Param(parse_shape, (), "zero padding on both sides per spatial axis (default 0)"),
}


def _positions(name: str, g: Geometry, spatial: tuple[int, ...]) -> int:
    return math.prod(g.out_size(name, spatial))


# -- im2col ----------------------------------------------------------------------------------------
def _im2col_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data = in_shapes[0]
    if data is None:
        Geometry("im2col", attrs)  # the window's parameters are checked without a shape too
        return in_shapes, [None], aux_shapes
    g = Geometry("im2col", attrs, len(data))
    rows = data[1] * math.prod(g.kernel) if data[1] else 0
    positions = _positions("im2col", g, tuple(data[2:])) if all(data[2:]) else 0
    return in_shapes, [(data[0], rows, positions)], aux_shapes


def _im2col_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    out = outputs[0]
    out[...] = im2col(kctx, inputs[0], Geometry("im2col", attrs)).reshape(out.shape)


def _im2col_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return [F._backward_im2col(out_grads[0], inputs[0], **attrs)]


register(
    OpDef(
        "im2col",
        _im2col_forward,
        params=dict(_WINDOW),
        infer_shape=_im2col_shape,
        gradient=_im2col_gradient,
        gpu_float16_as_float32=True,
        float_data=True,
        doc="Sliding blocks of data (N, C, *spatial) as columns (N, C*prod(kernel), positions).",
    )
)


# -- col2im ----------------------------------------------------------------------------------------
def _col2im_geometry(name: str, attrs: dict) -> Geometry:
    output_size = attrs["output_size"]
    g = Geometry(name, attrs)
    if len(output_size) != g.nd or any(s < 1 for s in output_size):
        raise ShapeError(f"{name}: output_size {output_size} must have {g.nd} positive sizes like kernel {g.kernel}")
    return g


def _col2im_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    g = _col2im_geometry("col2im", attrs)
    size = math.prod(g.kernel)
    positions = _positions("col2im", g, attrs["output_size"])
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None], aux_shapes
    if len(data) != 3:
        raise ShapeError(f"col2im: data must be 3-D (N, C*prod(kernel), positions), got shape {tuple(data)}")
    if data[1] and data[1] % size:
        raise ShapeError(
            f"col2im: data's second dimension {data[1]} is not a multiple of the kernel's size {size} "
            f"(kernel {g.kernel})"
        )
    if data[2] and data[2] != positions:
        raise ShapeError(
            f"col2im: data has {data[2]} positions, expected {positions} for output_size {attrs['output_size']} "
            f"with kernel {g.kernel}, stride {g.stride}, dilate {g.dilate}, pad {g.pad}"
        )
    channels = data[1] // size if data[1] else 0
    return [(data[0], data[1], positions)], [(data[0], channels, *attrs["output_size"])], aux_shapes


def _col2im_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    out = outputs[0]
    g = _col2im_geometry("col2im", attrs)
    spatial = tuple(attrs["output_size"])
    col = inputs[0].reshape(out.shape[0], out.shape[1], *g.kernel, *g.out_size("col2im", spatial))
    result = col2im(kctx, col, spatial, g, out=out)
    if result is not out:
        out[...] = result


def _col2im_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    window = {k: attrs[k] for k in _WINDOW}
    return [F.im2col(out_grads[0], **window)]


register(
    OpDef(
        "col2im",
        _col2im_forward,
        params={
            "output_size": Param(parse_shape, REQUIRED, "spatial size of the image: (w,), (h, w) or (d, h, w)"),
            **_WINDOW,
        },  # fmt: skip
        infer_shape=_col2im_shape,
        gradient=_col2im_gradient,
        gpu_float16_as_float32=True,
        float_data=True,
        doc="Sum columns (N, C*prod(kernel), positions) back into an image (N, C, *output_size).",
    )
)


# -- im2col's gradient: col2im onto the data's shape -----------------------------------------------
def _im2col_backward_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    return in_shapes, [in_shapes[1]], aux_shapes


def _im2col_backward_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    out = outputs[0]
    g = Geometry("im2col", attrs)
    spatial = tuple(out.shape[2:])
    col = inputs[0].reshape(*out.shape[:2], *g.kernel, *g.out_size("im2col", spatial))
    result = col2im(kctx, col, spatial, g, out=out)
    if result is not out:
        out[...] = result


register(
    OpDef(
        "_backward_im2col",
        _im2col_backward_forward,
        inputs=("out_grad", "data"),
        params=dict(_WINDOW),
        infer_shape=_im2col_backward_shape,
        gradient=lambda F, attrs, ins, outs, og: [F.im2col(og[0], **attrs), None],
        shape_only_inputs=(1,),
        gpu_float16_as_float32=True,
        doc="The gradient of im2col: col2im of out_grad onto data's shape.",
    )
)
