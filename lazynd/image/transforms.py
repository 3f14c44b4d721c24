"""Lazy transforms of (height, width, channels) image NDArrays: resize, crop, pad (normalising:
:mod:`.normalize`).

Each function pushes its work to the engine (:func:`image_op`) and returns the
output array at once, its shape computed up front, so transforms chain without
waiting.  The work runs on the engine's workers with OpenCV or NumPy, which
release the GIL.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np

from ..arguments import is_choice
from ..backend.opencv import opencv
from ..context import Context
from ..engine import get_engine
from ..errors import OperatorError
from ..ndarray import NDArray
from ..ndarray.dispatch import new_array
from ..ops.image_resize import check_resizable
from ..ops.params import Param, parse_float_tuple
from .arguments import area_argument, border_fill_argument, int_argument, nonempty_image, ratio_argument, size_argument

__all__ = [
    "image_op",
    "imresize",
    "resize_short",
    "scale_down",
    "fixed_crop",
    "random_crop",
    "center_crop",
    "random_size_crop",
    "copyMakeBorder",
]


def image_shape(name: str, src: Any) -> tuple[int, int, int]:
    """``src``'s (height, width, channels), or an ``OperatorError`` naming ``name`` if it is not
    an image NDArray."""
    if not isinstance(src, NDArray):
        raise OperatorError(f"{name}: src must be an NDArray, got {type(src).__name__}")
    if len(src.shape) != 3:
        raise OperatorError(f"{name}: src must have shape (height, width, channels), got {src.shape}")
    height, width, channels = src.shape
    return height, width, channels


def in_place_target(src: Any) -> Any:
    """Where the colour functions MXNet writes in place (``color_normalize``, the brightness,
    contrast, saturation and lighting augmenters: ``src -= mean``, ``src *= alpha``) write: ``src``
    itself when it is a float32 image, as there; else None, a new float32 array (MXNet refuses
    other dtypes, or keeps them, rounding)."""
    return src if isinstance(src, NDArray) and np.dtype(src.dtype) == np.float32 else None


def image_op(
    name: str, fn: Callable[..., None], src: Any, shape: tuple[int, ...], dtype: Any, *args: Any, out: Any = None
) -> Any:
    """Push ``fn(src_data, out_data, *args)`` writing an array of ``shape``; return it.

    The array is new, or ``out`` (an NDArray of that shape and dtype on ``src``'s context,
    as MXNet's ``out=``).
    """
    image_shape(name, src)
    ctx: Context = src.context
    if ctx.device_type == "gpu":
        raise OperatorError(f"{name}: image functions run on the CPU; src is on {ctx}")
    shape = tuple(int(s) for s in shape)
    if out is None:
        out = new_array(shape, dtype, ctx)
    else:
        _check_out(name, out, shape, np.dtype(dtype), ctx)
    get_engine().push(fn, (src.data_array, out.data_array, *args), [src.var], [out.var], name, ctx)
    return out


def _check_out(name: str, out: Any, shape: tuple[int, ...], dtype: np.dtype, ctx: Context) -> None:
    """An ``OperatorError`` naming ``name`` unless ``out`` can take the result."""
    if not isinstance(out, NDArray):
        raise OperatorError(f"{name}: out must be an NDArray, got {type(out).__name__}")
    if tuple(out.shape) != shape:
        raise OperatorError(f"{name}: out has shape {tuple(out.shape)}, expected {shape}")
    if np.dtype(out.dtype) != dtype:
        raise OperatorError(f"{name}: out has dtype {np.dtype(out.dtype).name}, expected {dtype.name}")
    if out.context != ctx:
        raise OperatorError(f"{name}: out is on {out.context}, expected {ctx} (src's context)")


def interpolation_code(interp: int, src_hw: tuple[int, int], dst_hw: tuple[int, int]) -> int:
    """OpenCV interpolation code; 9 picks by scale, 10 at random (MXNet's codes).

    9 is MXNet's rule: bicubic (2) when both sides grow, area (3) when both
    shrink, bilinear (1) otherwise (one side grows, or a side keeps its size).
    """
    if not is_choice(interp, (0, 1, 2, 3, 4, 9, 10)):
        raise OperatorError(f"interp must be 0-4, 9 (auto) or 10 (random), got {interp}")
    if interp == 9:
        (src_h, src_w), (dst_h, dst_w) = src_hw, dst_hw
        if dst_h > src_h and dst_w > src_w:
            return 2
        if dst_h < src_h and dst_w < src_w:
            return 3
        return 1
    if interp == 10:
        return random.randint(0, 4)
    return interp


def resize_into(src: np.ndarray, out: np.ndarray, interp: int) -> None:
    """Resize the host image ``src`` into ``out``'s height and width with OpenCV's ``interp`` code
    (the one resize of ``mx.image`` and of the ``mx.nd.image.resize`` operator)."""
    result = opencv().resize(src, (out.shape[1], out.shape[0]), interpolation=interp)
    out[...] = result.reshape(out.shape)


def imresize(src: Any, w: int, h: int, interp: int = 1, out: Any = None) -> Any:
    """Resize to width ``w`` and height ``h`` (into ``out`` when given, as MXNet's ``out=``).

    Examples
    --------
    >>> import lazynd as mx
    >>> from lazynd import image
    >>> image.imresize(mx.nd.zeros((8, 8, 3), dtype='uint8'), 4, 2).shape
    (2, 4, 3)
    """
    height, width, channels = image_shape("imresize", src)
    w, h = int_argument("imresize", "w", w), int_argument("imresize", "h", h)
    if w <= 0 or h <= 0:
        raise OperatorError(f"imresize: width and height must be positive, got w={w}, h={h}")
    nonempty_image("imresize", height, width)
    check_resizable("imresize", src.data_array.dtype)
    code = interpolation_code(interp, (height, width), (h, w))
    return image_op("imresize", resize_into, src, (h, w, channels), src.data_array.dtype, code, out=out)


def _size_pair(argument: str, value: Any) -> tuple[float, float]:
    """``value`` as scale_down reads a size: (w, h), two numbers, or an ``OperatorError`` naming it."""
    pair = Param(parse_float_tuple).parse("scale_down", argument, value)
    if len(pair) != 2:
        raise OperatorError(f"scale_down: {argument} must be (width, height), got {value!r}")
    return pair[0], pair[1]


def scale_down(src_size: tuple[int, int], size: tuple[int, int]) -> tuple[int, int]:
    """Shrink crop ``size`` (w, h) keeping its aspect ratio until it fits ``src_size`` (w, h).

    Examples
    --------
    >>> scale_down((640, 480), (720, 120))
    (640, 106)
    """
    w: float
    h: float
    w, h = _size_pair("size", size)
    sw, sh = _size_pair("src_size", src_size)
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


def resize_short(src: Any, size: int, interp: int = 2) -> Any:
    """Resize so that the shorter side is ``size``, keeping the aspect ratio.

    Examples
    --------
    >>> import lazynd as mx
    >>> from lazynd import image
    >>> image.resize_short(mx.nd.zeros((20, 40, 3), dtype='uint8'), 10).shape
    (10, 20, 3)
    """
    h, w, _ = image_shape("resize_short", src)
    size = int_argument("resize_short", "size", size)
    nonempty_image("resize_short", h, w)
    if h > w:
        new_h, new_w = size * h // w, size
    else:
        new_h, new_w = size, size * w // h
    return imresize(src, new_w, new_h, interp)


def _crop(src: np.ndarray, out: np.ndarray, x0: int, y0: int, w: int, h: int, interp: int) -> None:
    region = src[y0 : y0 + h, x0 : x0 + w]
    if region.shape[:2] == out.shape[:2]:
        out[...] = region
    else:
        resize_into(np.ascontiguousarray(region), out, interp)


def fixed_crop(src: Any, x0: int, y0: int, w: int, h: int, size: tuple[int, int] | None = None, interp: int = 2) -> Any:
    """Crop the (w, h) region at (x0, y0), then resize it to ``size`` (w, h) if given.

    Examples
    --------
    >>> import lazynd as mx
    >>> from lazynd import image
    >>> image.fixed_crop(mx.nd.zeros((10, 10, 3), dtype='uint8'), 2, 2, 4, 6).shape
    (6, 4, 3)
    """
    height, width, channels = image_shape("fixed_crop", src)
    x0, y0, w, h = (
        int_argument("fixed_crop", arg, value) for arg, value in (("x0", x0), ("y0", y0), ("w", w), ("h", h))
    )
    if x0 < 0 or y0 < 0 or w <= 0 or h <= 0 or x0 + w > width or y0 + h > height:
        raise OperatorError(f"fixed_crop: region x0={x0} y0={y0} w={w} h={h} is outside the {width}x{height} image")
    out_w, out_h = size_argument("fixed_crop", "size", size) if size is not None else (w, h)
    # as MXNet, the method is only chosen (and 10 only draws) when the crop is resized
    code = 0
    if (out_w, out_h) != (w, h):
        check_resizable("fixed_crop", src.data_array.dtype)
        code = interpolation_code(interp, (h, w), (out_h, out_w))
    return image_op("fixed_crop", _crop, src, (out_h, out_w, channels), src.data_array.dtype, x0, y0, w, h, code)


def random_crop(src: Any, size: tuple[int, int], interp: int = 2) -> tuple[Any, tuple[int, int, int, int]]:
    """Crop a random region of ``size`` (w, h) (scaled down to fit); return it and (x0, y0, w, h).

    Examples
    --------
    >>> import lazynd as mx
    >>> from lazynd import image
    >>> out, rect = image.random_crop(mx.nd.zeros((10, 10, 3), dtype='uint8'), (4, 4))
    >>> out.shape
    (4, 4, 3)
    """
    h, w, _ = image_shape("random_crop", src)
    size = size_argument("random_crop", "size", size)
    new_w, new_h = scale_down((w, h), size)
    x0 = random.randint(0, w - new_w)
    y0 = random.randint(0, h - new_h)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def center_crop(src: Any, size: tuple[int, int], interp: int = 2) -> tuple[Any, tuple[int, int, int, int]]:
    """Crop the central region of ``size`` (w, h) (scaled down to fit); return it and (x0, y0, w, h).

    Examples
    --------
    >>> import lazynd as mx
    >>> from lazynd import image
    >>> image.center_crop(mx.nd.zeros((10, 10, 3), dtype='uint8'), (4, 4))[1]
    (3, 3, 4, 4)
    """
    h, w, _ = image_shape("center_crop", src)
    size = size_argument("center_crop", "size", size)
    new_w, new_h = scale_down((w, h), size)
    x0 = (w - new_w) // 2
    y0 = (h - new_h) // 2
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def random_size_crop(
    src: Any,
    size: tuple[int, int],
    area: float | tuple[float, float],
    ratio: tuple[float, float],
    interp: int = 2,
    **kwargs: Any,
) -> tuple[Any, tuple[int, int, int, int]]:
    """Crop a random region covering a random fraction ``area`` of the image with aspect ``ratio``.

    Falls back to :func:`center_crop` after 10 tries that do not fit.  MXNet's
    older keyword ``min_area`` stands for ``area`` (it wins over it, as in MXNet).

    Examples
    --------
    >>> import lazynd as mx
    >>> from lazynd import image
    >>> image.random_size_crop(mx.nd.zeros((20, 20, 3), dtype='uint8'), (8, 8), 0.5, (0.75, 1.33))[0].shape
    (8, 8, 3)
    """
    h, w, _ = image_shape("random_size_crop", src)
    if "min_area" in kwargs:
        area = kwargs.pop("min_area")
    if kwargs:
        raise OperatorError(f"random_size_crop: unexpected arguments {sorted(kwargs)}")
    size = size_argument("random_size_crop", "size", size)
    ratio = ratio_argument("random_size_crop", "ratio", ratio)
    low, high = area_argument("random_size_crop", "area", area)
    for _ in range(10):
        target = random.uniform(low, high) * w * h
        log_ratio = (np.log(ratio[0]), np.log(ratio[1]))
        aspect = float(np.exp(random.uniform(*log_ratio)))
        new_w = int(round(np.sqrt(target * aspect)))
        new_h = int(round(np.sqrt(target / aspect)))
        if 0 < new_w <= w and 0 < new_h <= h:
            x0 = random.randint(0, w - new_w)
            y0 = random.randint(0, h - new_h)
            return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)
    return center_crop(src, size, interp)


# OpenCV's BORDER_ISOLATED flag, which may be added to a border type
_BORDER_ISOLATED = 16


def _border(src: np.ndarray, out: np.ndarray, top: int, bot: int, left: int, right: int, kind: int, value: Any) -> None:
    result = opencv().copyMakeBorder(src, top, bot, left, right, kind, value=value)
    out[...] = result.reshape(out.shape)


def copyMakeBorder(  # noqa: N802 - MXNet's (and OpenCV's) name
    src: Any,
    top: int,
    bot: int,
    left: int,
    right: int,
    type: int = 0,  # noqa: A002
    value: Any = 0,
    values: Any = (),
    out: Any = None,
) -> Any:
    """Pad the image by the given pixel counts (OpenCV border ``type``; 0 = constant ``value``).

    ``type`` is OpenCV's: 0 constant, 1 replicate, 2 reflect, 3 wrap, 4 reflect-101,
    each optionally with 16 (isolated).  ``values``, one fill value per channel as in
    MXNet, wins over ``value`` when given.  The result goes into ``out`` when given
    (MXNet's ``out=``).

    Examples
    --------
    >>> import lazynd as mx
    >>> from lazynd import image
    >>> image.copyMakeBorder(mx.nd.zeros((2, 2, 3), dtype='uint8'), 1, 1, 2, 2).shape
    (4, 6, 3)
    """
    top, bot, left, right = (
        int_argument("copyMakeBorder", arg, value)
        for arg, value in (("top", top), ("bot", bot), ("left", left), ("right", right))
    )
    if min(top, bot, left, right) < 0:
        raise OperatorError(f"copyMakeBorder: border sizes must be >= 0, got {(top, bot, left, right)}")
    h, w, c = image_shape("copyMakeBorder", src)
    if not isinstance(type, (int, np.integer)) or (type & ~_BORDER_ISOLATED) not in range(5):
        raise OperatorError(
            f"copyMakeBorder: type must be a border type 0-4 (constant, replicate, reflect, wrap, reflect-101), "
            f"optionally + 16 (isolated); got {type!r}"
        )
    fill = border_fill_argument(value, values)
    shape = (h + top + bot, w + left + right, c)
    return image_op(
        "copyMakeBorder", _border, src, shape, src.data_array.dtype, top, bot, left, right, type, fill, out=out
    )
