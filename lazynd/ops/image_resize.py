"""MXNet 1.x's ``mx.nd.image.resize`` / ``mx.sym.image.resize`` (operator ``_image_resize``).

Images are ``(H, W, C)`` or a batch ``(N, H, W, C)``, channels last as decoded by ``mx.image``.
``size`` is ``(width, height)``, or one number: both sides, or with ``keep_ratio`` the shorter
side, the longer one scaled in integer arithmetic (``long * size // short``, as MXNet 1.9.1).
``keep_ratio`` is ignored when ``size`` has two values.  ``interp`` takes OpenCV's codes and
MXNet's 9 (by scale) and 10 (at random), and the pixels are resized by the same helper as
``mx.image.imresize``, so values match MXNet's CPU operator.

Differences on purpose: the dtypes OpenCV resizes (uint8, float32, float64) are taken and
others refused by name (MXNet 1.9.1 fails in OpenCV at the wait); on a GPU the images make a
round trip through the host (MXNet's GPU kernel is bilinear only); there is no gradient rule
(MXNet 1.9.1's backward fails with a shape mismatch), so a backward pass names the operator.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from .params import Param, parse_bool, parse_int, parse_shape
from .registry import OpDef, register

_OP = "_image_resize"
RESIZE_DTYPES = ("uint8", "float32", "float64")


def check_resizable(op_name: str, dtype: Any) -> None:
    """Refuse, by name, an image dtype OpenCV cannot resize (its assertion came from inside the
    kernel, at the next wait; MXNet 1.9.1 fails on int32 and float16 alike, and gives garbage for
    int8 and int64)."""
    name = np.dtype(dtype).name
    if name not in RESIZE_DTYPES:
        raise OperatorError(f"{op_name}: 'data' has dtype {name}, expected one of {', '.join(RESIZE_DTYPES)}")


_INTERP_CODES = (0, 1, 2, 3, 4, 9, 10)


def resized_size(attrs: dict, height: int, width: int) -> tuple[int, int]:
    """The ``(height, width)`` that ``_image_resize`` with ``attrs`` gives a ``height`` x ``width`` image."""
    size = attrs["size"]
    if len(size) not in (1, 2):
        raise OperatorError(f"{_OP}: size must hold 1 or 2 values (width, height), got {size}")
    if min(size) <= 0:
        raise OperatorError(f"{_OP}: size must be positive, got {size}")
    if len(size) == 2:
        return size[1], size[0]
    if not attrs["keep_ratio"]:
        return size[0], size[0]
    if height > width:
        return height * size[0] // width, size[0]
    return size[0], width * size[0] // height


def _resize_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    if attrs["interp"] not in _INTERP_CODES:
        raise OperatorError(f"{_OP}: interp must be 0-4, 9 (by scale) or 10 (random), got {attrs['interp']}")
    data = in_shapes[0]
    if data is not None and len(data) not in (3, 4):
        raise ShapeError(f"{_OP}: shape of 'data' is {tuple(data)}, expected (H, W, C) or (N, H, W, C)")
    if data is None or not data[-3] or not data[-2]:
        resized_size(attrs, 1, 1)  # refuses a bad size before the data shape is known
        return in_shapes, [None], aux_shapes
    *batch, height, width, channels = data
    return in_shapes, [(*batch, *resized_size(attrs, height, width), channels)], aux_shapes


def _resize_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    dtype = in_types[0]
    if dtype is not None:
        check_resizable(_OP, dtype)
    return in_types, [dtype], aux_types


def _resize_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    from ..image.transforms import interpolation_code, resize_into  # lazynd.image needs the ops registered first

    xp, data, out = kctx.xp, inputs[0], outputs[0]
    host = data if xp is np else data.get()
    images, host_out = host.reshape((-1, *host.shape[-3:])), np.empty((*host.shape[:-3], *out.shape[-3:]), host.dtype)
    resized = host_out.reshape((-1, *out.shape[-3:]))
    for image, target in zip(images, resized, strict=True):
        resize_into(image, target, interpolation_code(attrs["interp"], image.shape[:2], target.shape[:2]))
    out[...] = xp.asarray(host_out)


register(
    OpDef(
        _OP,
        _resize_forward,
        params={
            "size": Param(parse_shape, (), "(width, height), or one size for both (or the short side)"),
            "keep_ratio": Param(parse_bool, False, "with one size: resize the short side, keeping the ratio"),
            "interp": Param(parse_int, 1, "OpenCV interpolation code, 9 by scale, 10 random"),
        },
        infer_shape=_resize_infer,
        infer_type=_resize_type,
        doc="Resizes (H, W, C) or (N, H, W, C) images to size (width, height) with OpenCV.",
    )
)
