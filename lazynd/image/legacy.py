"""MXNet 0.9's ``mx.nd.imdecode``: decode into a (channels, height, width) float array.

The older of MXNet's two decoders, kept for the programs that call it.  It differs
from :func:`lazynd.image.imdecode` (MXNet 1.x's ``mx.image.imdecode``) in every
convention, and follows MXNet 0.9's:

* layout (channels, height, width); or one slot ``index`` of a 4-d batch ``out``
  of shape (batch, channels, height, width);
* the channels in the order OpenCV stores them: **B, G, R** (A) for colour
  images, not swapped.  The image is read as stored (OpenCV's
  ``IMREAD_UNCHANGED``) and its first ``channels`` channels are kept; with
  ``channels=1`` it is read as grey;
* dtype float32, or the dtype of ``mean`` when one is given; a given ``out``
  keeps its own dtype;
* ``clip_rect = (x0, y0, x1, y1)`` keeps columns ``x0:x1`` and rows ``y0:y1``;
  a rectangle with ``y0 == y1`` (the default ``(0, 0, 0, 0)``) means the whole
  image;
* ``mean``, a (channels, height, width) array of the clipped size on the CPU,
  is subtracted from the pixels.

The decode runs on an engine worker like every decode (see :mod:`.image`); the
result lives on the CPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backend.opencv import opencv
from ..context import cpu
from ..engine import get_engine
from ..errors import ContextError, FormatError, OperatorError, ShapeError
from ..ndarray.dispatch import new_array
from .header import image_size
from .image import as_bytes, check_header, decode_now, yield_gil
from .limits import max_image_pixels

__all__ = ["imdecode_chw"]

Rect = tuple[int, int, int, int]


def _parse_rect(clip_rect: Any) -> Rect:
    try:
        x0, y0, x1, y1 = (int(v) for v in clip_rect)
    except (TypeError, ValueError):
        raise OperatorError(f"imdecode: clip_rect must be 4 integers (x0, y0, x1, y1), got {clip_rect!r}") from None
    if min(x0, y0, x1, y1) < 0:
        raise OperatorError(f"imdecode: clip_rect {clip_rect!r} has a negative coordinate")
    if y1 != y0 and (x1 <= x0 or y1 < y0):
        raise OperatorError(
            f"imdecode: clip_rect (x0, y0, x1, y1) = {(x0, y0, x1, y1)} must have x0 < x1 and y0 < y1 "
            "(or y0 == y1 for the whole image)"
        )
    return x0, y0, x1, y1


def _resolve_rect(rect: Rect, height: int, width: int, source: str) -> Rect:
    """The rectangle to keep in an image of ``height`` x ``width``: the whole image when y0 == y1."""
    x0, y0, x1, y1 = rect
    if y1 == y0:
        return 0, 0, width, height
    if x1 > width or y1 > height:
        raise ShapeError(f"imdecode: clip_rect {rect} reaches outside {source} of {height} x {width} (height x width)")
    return rect


def _write_chw(
    img: np.ndarray, rect: Rect, channels: int, mean: np.ndarray | None, out: np.ndarray, source: str
) -> None:
    """Clip, keep the first ``channels`` channels, subtract ``mean``, and write (C, H, W) into ``out``."""
    if img.ndim == 2:
        img = img[:, :, None]
    if img.dtype != np.uint8:
        raise FormatError(
            f"imdecode: {source} decodes to {img.dtype} pixels; mx.nd.imdecode reads 8-bit images only "
            "(use lazynd.image.imdecode for others)"
        )
    if channels > img.shape[2]:
        raise ShapeError(f"imdecode: channels={channels}, but {source} has {img.shape[2]} channel(s)")
    x0, y0, x1, y1 = _resolve_rect(rect, img.shape[0], img.shape[1], source)
    pixels = img[y0:y1, x0:x1, :channels].transpose(2, 0, 1)
    if pixels.shape != out.shape:
        raise ShapeError(f"imdecode: {source} gives {pixels.shape} (channels, height, width), out has {out.shape}")
    if mean is None:
        np.copyto(out, pixels, casting="unsafe")
    else:
        np.subtract(pixels, mean, out=out, dtype=out.dtype, casting="unsafe")


def _decode_chw(
    data: np.ndarray,
    cv_flag: int,
    rect: Rect,
    channels: int,
    mean: np.ndarray | None,
    out: np.ndarray,
    source: str,
    limit: Any,
) -> None:
    _write_chw(decode_now(data, cv_flag, source, limit), rect, channels, mean, out, source)


def _check_out(out: Any, index: int, shape: tuple[int, int, int]) -> Any:
    """The (C, H, W) slot of ``out`` to write: ``out`` itself, or ``out[index]`` of a 4-d batch."""
    if out.context.device_type == "gpu":
        raise ContextError(f"imdecode: out must be on the CPU, got {out.context}")
    if out.ndim == 3:
        slot = out
    elif out.ndim == 4:
        if not 0 <= index < out.shape[0]:
            raise OperatorError(f"imdecode: index {index} is outside out's batch of {out.shape[0]}")
        slot = out[index]
    else:
        raise ShapeError(f"imdecode: out must be 3-d (C, H, W) or 4-d (N, C, H, W), got shape {out.shape}")
    if tuple(slot.shape) != shape:
        raise ShapeError(
            f"imdecode: out's image has shape {tuple(slot.shape)}, expected {shape} (channels, height, width)"
        )
    return slot


def imdecode_chw(
    str_img: Any,
    clip_rect: Any = (0, 0, 0, 0),
    out: Any = None,
    index: int = 0,
    channels: int = 3,
    mean: Any = None,
) -> Any:
    """Decode an encoded image into a (channels, height, width) NDArray, as MXNet 0.9's ``mx.nd.imdecode``.

    Parameters
    ----------
    str_img : bytes, bytearray, uint8 numpy array or NDArray
        The encoded image (JPEG, PNG, ...).
    clip_rect : 4 ints
        (x0, y0, x1, y1): keep columns x0:x1 and rows y0:y1; y0 == y1 keeps the whole image.
    out : NDArray, optional
        CPU array to write into: (channels, height, width), or (batch, channels, height, width)
        written at ``index``.
    index : int
        The slot of a 4-d ``out``.
    channels : int
        Channels to keep, in OpenCV's order (B, G, R, A); 1 reads the image as grey.
    mean : NDArray, optional
        (channels, height, width) CPU array subtracted from the pixels; the result takes its dtype.

    Returns
    -------
    NDArray
        ``out``, or a new float32 (or ``mean``'s dtype) array on the CPU.

    Examples
    --------
    >>> import cv2, numpy as np
    >>> import lazynd as mx
    >>> picture = np.zeros((4, 6, 3), np.uint8); picture[0, 0] = (255, 0, 0)  # blue in OpenCV's BGR
    >>> png = cv2.imencode('.png', picture)[1].tobytes()
    >>> img = mx.nd.imdecode(png)
    >>> img.shape, img.dtype.__name__, img.asnumpy()[:, 0, 0].tolist()
    ((3, 4, 6), 'float32', [255.0, 0.0, 0.0])
    """
    data = as_bytes(str_img, "imdecode")
    source = "image buffer"
    rect = _parse_rect(clip_rect)
    channels = int(channels)
    if channels < 1:
        raise OperatorError(f"imdecode: channels must be at least 1, got {channels}")
    index = int(index)
    if mean is not None and mean.context.device_type == "gpu":
        raise ContextError(f"imdecode: mean must be on the CPU, got {mean.context}")
    limit = max_image_pixels()  # the decode below, run later by a worker, keeps this call's limit
    check_header(data, source, limit)
    cv = opencv()
    cv_flag = cv.IMREAD_GRAYSCALE if channels == 1 else cv.IMREAD_UNCHANGED
    img = None
    size = image_size(data.data)
    if size is None and rect[1] == rect[3]:
        # a format whose header we do not read, and the whole image asked for: decode now for its size
        img = decode_now(data, cv_flag, source, limit)
        size = img.shape
    if size is not None:  # a rectangle outside the image is refused before anything is pushed
        rect = _resolve_rect(rect, size[0], size[1], source)
    x0, y0, x1, y1 = rect
    shape = (channels, y1 - y0, x1 - x0)
    if mean is not None and tuple(mean.shape) != shape:
        raise ShapeError(f"imdecode: mean has shape {tuple(mean.shape)}, expected {shape} (channels, height, width)")
    if out is None:
        dtype = np.float32 if mean is None else mean.data_array.dtype
        out = new_array(shape, dtype, cpu())
        slot = out
    else:
        slot = _check_out(out, index, shape)
    if mean is not None and mean.data_array.dtype != slot.data_array.dtype:
        raise OperatorError(f"imdecode: mean has dtype {mean.data_array.dtype}, out has {slot.data_array.dtype}")
    mean_data = None if mean is None else mean.data_array
    reads = [] if mean is None else [mean.var]
    if img is not None:
        args: tuple[Any, ...] = (img, rect, channels, mean_data, slot.data_array, source)
        get_engine().push(_write_chw, args, reads, [slot.var], "imdecode", slot.context)
    else:
        args = (data, cv_flag, rect, channels, mean_data, slot.data_array, source, limit)
        get_engine().push(_decode_chw, args, reads, [slot.var], "imdecode", slot.context)
    yield_gil()
    return out
