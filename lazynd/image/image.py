"""Decoding and basic transforms of images held in (height, width, channels) NDArrays.

Every function returns at once: the work is pushed to the engine and runs on its
workers with OpenCV, which releases the GIL, so a list comprehension of
``imdecode`` calls decodes in parallel.  Output shapes are known before the work
runs (``imdecode`` reads them from the JPEG/PNG header), so results can be
chained without waiting.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from ..context import Context, cpu
from ..engine import get_engine
from ..errors import FormatError, OperatorError
from ..ndarray.dispatch import new_array
from .header import decoded_channels, image_size

cv2: ModuleType | None
try:
    import cv2
except ImportError:  # pragma: no cover - opencv-python-headless is a dependency
    cv2 = None

__all__ = [
    "imdecode",
    "imread",
    "imresize",
    "resize_short",
    "scale_down",
    "fixed_crop",
    "random_crop",
    "center_crop",
    "random_size_crop",
    "color_normalize",
    "copyMakeBorder",
]


def _opencv() -> Any:
    if cv2 is None:
        raise ImportError("lazynd.image needs OpenCV: pip install opencv-python-headless")
    return cv2


def _as_bytes(buf: Any) -> np.ndarray:
    if hasattr(buf, "asnumpy"):
        buf = buf.asnumpy()
    if isinstance(buf, np.ndarray):
        return np.ascontiguousarray(buf, dtype=np.uint8).reshape(-1)
    if isinstance(buf, (bytes, bytearray, memoryview)):
        return np.frombuffer(bytes(buf), dtype=np.uint8)
    raise OperatorError(f"imdecode: buf must be bytes, bytearray, a uint8 array or NDArray, got {type(buf).__name__}")


def _to_output(img: np.ndarray, out: np.ndarray, swap_channels: bool) -> None:
    """Write an OpenCV result into ``out`` of shape (H, W, C), swapping B and R if asked.

    OpenCV does the swap and the copy (one pass, GIL released); a NumPy copy
    through a reversed channel view is element by element and costs as much as
    the JPEG decode itself.
    """
    if img.ndim == 2:
        img = img[:, :, None]
    if img.shape != out.shape:
        raise FormatError(f"decoded image has shape {img.shape}, header said {out.shape}")
    if img.dtype != out.dtype:  # e.g. a 16-bit PNG read unchanged: cast like MXNet
        if swap_channels and img.shape[2] >= 3:
            img = np.concatenate([img[:, :, 2::-1], img[:, :, 3:]], axis=2)
        out[...] = img
    elif swap_channels and img.shape[2] in (3, 4):
        cv = _opencv()
        code = cv.COLOR_BGR2RGB if img.shape[2] == 3 else cv.COLOR_BGRA2RGBA
        result = cv.cvtColor(img, code, dst=out)
        if not np.shares_memory(result, out):  # OpenCV allocated its own output: copy it in
            np.copyto(out, result.reshape(out.shape))
    else:
        np.copyto(out, img)


def _decode_flag(flag: int, to_rgb: bool) -> tuple[int, bool]:
    """OpenCV's read flag, and whether B and R still need swapping after the decode.

    OpenCV 4.11+ decodes colour straight to RGB (libjpeg-turbo writes RGB at
    no extra cost), which saves a pass over the pixels.
    """
    cv = _opencv()
    if flag > 0:
        if to_rgb and hasattr(cv, "IMREAD_COLOR_RGB"):
            return cv.IMREAD_COLOR_RGB, False
        return cv.IMREAD_COLOR, to_rgb
    if flag == 0:
        return cv.IMREAD_GRAYSCALE, False
    return cv.IMREAD_UNCHANGED, to_rgb


def _decode_now(data: np.ndarray, cv_flag: int, source: str) -> np.ndarray:
    img = _opencv().imdecode(data, cv_flag)
    if img is None:
        raise FormatError(f"imdecode: cannot decode {source}: not a valid image ({data.size} bytes)")
    return img


def _decode_into(data: np.ndarray, cv_flag: int, swap_channels: bool, out: np.ndarray, source: str) -> None:
    img = _decode_now(data, cv_flag, source)
    try:
        _to_output(img, out, swap_channels)
    except FormatError as err:
        raise FormatError(f"imdecode: {source}: {err}") from None


# A worker woken by a push, or back from a decode, needs the GIL for a few µs before OpenCV lets
# go of it again; a thread running Python (a loop of imdecode calls) holds the GIL for the whole
# switch interval (5 ms), so without help the workers sit idle until the pushing loop ends.  Every
# _YIELD_NS the pushing thread hands the GIL over: often enough against decodes of hundreds of µs,
# rarely enough that the hand-overs (thread switches) cost little.  A yield at every push costs
# more CPU than it wins on two cores.
_YIELD_NS = 200_000
_last_yield = 0


def _yield_gil() -> None:
    global _last_yield
    now = time.perf_counter_ns()
    if now - _last_yield >= _YIELD_NS:
        _last_yield = now
        # releases the GIL; a thread waiting for it runs.  It costs 50-80 us (the kernel's timer
        # slack), paid for nothing when no worker waits: NaiveEngine decodes on this thread
        if get_engine().has_workers:
            time.sleep(0)


def imdecode(buf: Any, flag: int = 1, to_rgb: bool = True, out: Any = None, source: str | None = None) -> Any:
    """Decode an encoded image (JPEG, PNG, ...) into a uint8 NDArray of shape (H, W, C).

    Returns at once; the decode runs on an engine worker.  Bytes that are not
    an image raise :class:`lazynd.FormatError` naming ``source`` — at once when
    even the header is unreadable, otherwise (as an ``EngineError``) at the next
    wait on the result.

    Parameters
    ----------
    buf : bytes, bytearray, uint8 numpy array or NDArray
        The encoded image.
    flag : int
        1: 3 colour channels, 0: 1 grey channel, -1: as stored.
    to_rgb : bool
        Give channels in RGB order (OpenCV decodes to BGR).
    out : NDArray, optional
        uint8 array of the decoded shape to write into.
    source : str, optional
        What the bytes are (a file name, a record) for error messages.

    Examples
    --------
    >>> import cv2, numpy as np
    >>> from lazynd import image
    >>> png = cv2.imencode('.png', np.zeros((4, 6, 3), np.uint8))[1].tobytes()
    >>> image.imdecode(png).shape
    (4, 6, 3)
    """
    data = _as_bytes(buf)
    source = source or "image buffer"
    cv_flag, swap_channels = _decode_flag(flag, to_rgb)
    size = image_size(buf if isinstance(buf, bytes) else data.data)
    if size is None:
        # unknown format or EXIF orientation: the shape is only known after decoding
        img = _decode_now(data, cv_flag, source)
        if img.ndim == 2:
            img = img[:, :, None]
        shape = img.shape
    else:
        img = None
        shape = (size[0], size[1], decoded_channels(size[2], flag))
    if out is None:
        out = new_array(shape, np.uint8, cpu())
    elif tuple(out.shape) != shape or out._data.dtype != np.uint8:
        raise OperatorError(f"imdecode: out has shape {out.shape} and dtype {out._data.dtype}, expected {shape} uint8")
    if img is not None:
        get_engine().push(_to_output, (img, out._data, swap_channels), [], [out._var], "imdecode", out._ctx)
    else:
        get_engine().push(
            _decode_into, (data, cv_flag, swap_channels, out._data, source), [], [out._var], "imdecode", out._ctx
        )
    # Hand the GIL over: a worker woken by this push needs it for a few µs to start OpenCV, but a
    # thread running Python (a list comprehension of imdecode calls) keeps it for the whole switch
    # interval (5 ms), so without this the workers sit idle until the pushing loop ends.
    _yield_gil()
    return out


def imread(filename: str | os.PathLike[str], flag: int = 1, to_rgb: bool = True, out: Any = None) -> Any:
    """Read and decode an image file (decoding runs on an engine worker).

    Examples
    --------
    >>> from lazynd import image
    >>> img = image.imread('cat.jpg')  # doctest: +SKIP
    """
    path = os.fspath(filename)
    try:
        with open(path, "rb") as f:
            buf = f.read()
    except OSError as err:
        raise FormatError(f"imread: cannot read {path!r}: {err.strerror}") from None
    return imdecode(buf, flag, to_rgb, out, source=f"file {path!r}")


# -- lazy transforms -------------------------------------------------------------------------------
def image_op(name: str, fn: Callable[..., None], src: Any, shape: tuple[int, ...], dtype: Any, *args: Any) -> Any:
    """Push ``fn(src_data, out_data, *args)`` writing a new array of ``shape``; return it."""
    if not hasattr(src, "_var"):
        raise OperatorError(f"{name}: src must be an NDArray, got {type(src).__name__}")
    if len(src.shape) != 3:
        raise OperatorError(f"{name}: src must have shape (height, width, channels), got {src.shape}")
    ctx: Context = src._ctx
    if ctx.device_type == "gpu":
        raise OperatorError(f"{name}: image functions run on the CPU; src is on {ctx}")
    out = new_array(tuple(int(s) for s in shape), dtype, ctx)
    get_engine().push(fn, (src._data, out._data, *args), [src._var], [out._var], name, ctx)
    return out


def _interp(interp: int, src_hw: tuple[int, int], dst_hw: tuple[int, int]) -> int:
    """OpenCV interpolation code; 9 picks by scale, 10 at random (MXNet's codes)."""
    if interp == 9:
        return 3 if dst_hw[0] * dst_hw[1] < src_hw[0] * src_hw[1] else 2
    if interp == 10:
        return random.randint(0, 4)
    if interp not in (0, 1, 2, 3, 4):
        raise OperatorError(f"interp must be 0-4, 9 (auto) or 10 (random), got {interp}")
    return interp


def _resize(src: np.ndarray, out: np.ndarray, interp: int) -> None:
    result = _opencv().resize(src, (out.shape[1], out.shape[0]), interpolation=interp)
    out[...] = result.reshape(out.shape)


def imresize(src: Any, w: int, h: int, interp: int = 1) -> Any:
    """Resize to width ``w`` and height ``h``.

    Examples
    --------
    >>> import lazynd as mx
    >>> from lazynd import image
    >>> image.imresize(mx.nd.zeros((8, 8, 3), dtype='uint8'), 4, 2).shape
    (2, 4, 3)
    """
    if w <= 0 or h <= 0:
        raise OperatorError(f"imresize: width and height must be positive, got w={w}, h={h}")
    code = _interp(interp, src.shape[:2], (h, w))
    return image_op("imresize", _resize, src, (h, w, src.shape[2]), src._data.dtype, code)


def scale_down(src_size: tuple[int, int], size: tuple[int, int]) -> tuple[int, int]:
    """Shrink crop ``size`` (w, h) keeping its aspect ratio until it fits ``src_size`` (w, h).

    Examples
    --------
    >>> scale_down((640, 480), (720, 120))
    (640, 106)
    """
    w: float
    h: float
    w, h = size
    sw, sh = src_size
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
    h, w = src.shape[:2]
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
        _resize(np.ascontiguousarray(region), out, interp)


def fixed_crop(src: Any, x0: int, y0: int, w: int, h: int, size: tuple[int, int] | None = None, interp: int = 2) -> Any:
    """Crop the (w, h) region at (x0, y0), then resize it to ``size`` (w, h) if given.

    Examples
    --------
    >>> import lazynd as mx
    >>> from lazynd import image
    >>> image.fixed_crop(mx.nd.zeros((10, 10, 3), dtype='uint8'), 2, 2, 4, 6).shape
    (6, 4, 3)
    """
    height, width = src.shape[:2]
    if x0 < 0 or y0 < 0 or w <= 0 or h <= 0 or x0 + w > width or y0 + h > height:
        raise OperatorError(f"fixed_crop: region x0={x0} y0={y0} w={w} h={h} is outside the {width}x{height} image")
    out_w, out_h = size if size is not None else (w, h)
    code = _interp(interp, (h, w), (out_h, out_w))
    return image_op("fixed_crop", _crop, src, (out_h, out_w, src.shape[2]), src._data.dtype, x0, y0, w, h, code)


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
    h, w = src.shape[:2]
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
    h, w = src.shape[:2]
    new_w, new_h = scale_down((w, h), size)
    x0 = (w - new_w) // 2
    y0 = (h - new_h) // 2
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def random_size_crop(
    src: Any, size: tuple[int, int], area: float | tuple[float, float], ratio: tuple[float, float], interp: int = 2
) -> tuple[Any, tuple[int, int, int, int]]:
    """Crop a random region covering a random fraction ``area`` of the image with aspect ``ratio``.

    Falls back to :func:`center_crop` after 10 tries that do not fit.

    Examples
    --------
    >>> import lazynd as mx
    >>> from lazynd import image
    >>> image.random_size_crop(mx.nd.zeros((20, 20, 3), dtype='uint8'), (8, 8), 0.5, (0.75, 1.33))[0].shape
    (8, 8, 3)
    """
    h, w = src.shape[:2]
    low, high = (area, 1.0) if isinstance(area, (int, float)) else area
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


def _per_row(values: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    """Per-channel ``values`` repeated along one image row of (H, W, C) ``shape``, or None if not per-channel."""
    if (
        len(shape) != 3
        or values.size not in (1, shape[2])
        or values.ndim > 1
        and values.shape[:-1] != (1,) * (values.ndim - 1)
    ):
        return None
    return np.tile(values.reshape(-1), shape[1] * shape[2] // values.size)


def _normalize(src: np.ndarray, out: np.ndarray, mean: np.ndarray, std: np.ndarray | None) -> None:
    row_mean = _per_row(mean, out.shape)
    row_std = None if std is None else _per_row(std, out.shape)
    if row_mean is not None and (std is None or row_std is not None) and src.flags.c_contiguous:
        # A length-C operand makes NumPy's inner loop C elements long (slow for C = 3); as one
        # image row repeats the channel pattern, work on (H, W*C) rows instead: same arithmetic.
        height = out.shape[0]
        src, out, mean, std = src.reshape(height, -1), out.reshape(height, -1), row_mean, row_std
    np.subtract(src, mean, out=out, casting="unsafe")
    if std is not None:
        np.divide(out, std, out=out)


def color_normalize(src: Any, mean: Any, std: Any = None) -> Any:
    """``(src - mean) / std`` per channel, as float32.

    Examples
    --------
    >>> import lazynd as mx
    >>> from lazynd import image
    >>> image.color_normalize(mx.nd.ones((1, 1, 3)) * 4, [1, 2, 3], [1, 2, 3]).asnumpy().ravel().tolist()
    [3.0, 1.0, 0.33333334326744385]
    """
    mean_np = np.asarray(mean.asnumpy() if hasattr(mean, "asnumpy") else mean, dtype=np.float32)
    std_np = None if std is None else np.asarray(std.asnumpy() if hasattr(std, "asnumpy") else std, dtype=np.float32)
    return image_op("color_normalize", _normalize, src, src.shape, np.float32, mean_np, std_np)


def _border(src: np.ndarray, out: np.ndarray, top: int, bot: int, left: int, right: int, kind: int, value: Any) -> None:
    result = _opencv().copyMakeBorder(src, top, bot, left, right, kind, value=value)
    out[...] = result.reshape(out.shape)


def copyMakeBorder(  # noqa: N802 - MXNet's (and OpenCV's) name
    src: Any,
    top: int,
    bot: int,
    left: int,
    right: int,
    type: int = 0,
    value: Any = 0,  # noqa: A002
) -> Any:
    """Pad the image by the given pixel counts (OpenCV border ``type``; 0 = constant ``value``).

    Examples
    --------
    >>> import lazynd as mx
    >>> from lazynd import image
    >>> image.copyMakeBorder(mx.nd.zeros((2, 2, 3), dtype='uint8'), 1, 1, 2, 2).shape
    (4, 6, 3)
    """
    if min(top, bot, left, right) < 0:
        raise OperatorError(f"copyMakeBorder: border sizes must be >= 0, got {(top, bot, left, right)}")
    h, w, c = src.shape
    fill = value if isinstance(value, (list, tuple)) else [value] * 4
    shape = (h + top + bot, w + left + right, c)
    return image_op("copyMakeBorder", _border, src, shape, src._data.dtype, top, bot, left, right, type, fill)
