"""Decoding images into (height, width, channels) NDArrays: :func:`imdecode` and :func:`imread`.

Every function returns at once: the work is pushed to the engine and runs on its
workers with OpenCV, which releases the GIL, so a list comprehension of
``imdecode`` calls decodes in parallel.  Output shapes are known before the work
runs (``imdecode`` reads them from the JPEG/PNG header), so results can be
chained without waiting.

The basic transforms (:func:`imresize`, the crops, :func:`color_normalize`,
:func:`copyMakeBorder`) are in :mod:`lazynd.image.transforms`.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from ..backend.opencv import opencv
from ..context import cpu
from ..engine import get_engine
from ..errors import ArgumentTypeError, FormatError, OperatorError
from ..ndarray.dispatch import new_array
from .arguments import int_argument
from .header import claimed_size, decoded_channels, image_size, is_png_or_jpeg
from .limits import LIMIT_IN_FORCE, check_pixels, max_image_pixels

__all__ = ["as_bytes", "decode_checked", "decode_now", "imdecode", "imread", "yield_gil"]


def as_bytes(buf: Any, what: str = "imdecode") -> np.ndarray:
    """The encoded bytes of ``buf`` as a flat uint8 array; ``what`` names the caller in errors."""
    if hasattr(buf, "asnumpy"):
        buf = buf.asnumpy()
    if isinstance(buf, np.ndarray):
        return np.ascontiguousarray(buf, dtype=np.uint8).reshape(-1)
    if isinstance(buf, (bytes, bytearray, memoryview)):
        return np.frombuffer(bytes(buf), dtype=np.uint8)
    raise OperatorError(f"{what}: buf must be bytes, bytearray, a uint8 array or NDArray, got {type(buf).__name__}")


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
        cv = opencv()
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
    cv = opencv()
    if flag > 0:
        if to_rgb and hasattr(cv, "IMREAD_COLOR_RGB"):
            return cv.IMREAD_COLOR_RGB, False
        return cv.IMREAD_COLOR, to_rgb
    if flag == 0:
        return cv.IMREAD_GRAYSCALE, False
    return cv.IMREAD_UNCHANGED, to_rgb


def check_header(data: np.ndarray, source: str, limit: Any = LIMIT_IN_FORCE) -> None:
    """Refuse, before anything is allocated, an empty buffer, a PNG or JPEG whose header gives
    no size, and an image claiming more than ``lazynd.image.MAX_IMAGE_PIXELS`` pixels."""
    if data.size == 0:
        raise FormatError(f"imdecode: {source} is empty (0 bytes); expected an encoded image")
    claimed = claimed_size(data.data)
    if claimed is not None:
        check_pixels(claimed[0], claimed[1], source, limit)
    elif is_png_or_jpeg(data.data):
        raise FormatError(
            f"imdecode: {source} starts like a PNG or JPEG but its header gives no image size "
            f"({data.size} bytes): the file is truncated or corrupt"
        )


def decode_now(data: np.ndarray, cv_flag: int, source: str, limit: Any = LIMIT_IN_FORCE) -> np.ndarray:
    """Decode ``data`` on this thread with OpenCV's ``cv_flag``: OpenCV's array, or a ``FormatError`` naming ``source``."""
    cv = opencv()
    try:
        img = cv.imdecode(data, cv_flag)
    except cv.error as err:  # OpenCV's own checks (its pixel limit, an unreadable header)
        detail = str(err).strip().splitlines()[-1]
        raise FormatError(f"imdecode: cannot decode {source} ({data.size} bytes): {detail}") from None
    if img is None:
        raise FormatError(f"imdecode: cannot decode {source}: not a valid image ({data.size} bytes)")
    # formats without a header we read (BMP, TIFF...) meet the limit here, after OpenCV's own
    check_pixels(img.shape[0], img.shape[1], source, limit)
    return img


def decode_checked(data: np.ndarray, cv_flag: int, source: str) -> np.ndarray:
    """Decode ``data`` on this thread with OpenCV's ``cv_flag``, after :func:`check_header`.

    For readers that need the pixels at once (``recordio.unpack_img``).
    """
    check_header(data, source)
    return decode_now(data, cv_flag, source)


def _decode_into(data: np.ndarray, cv_flag: int, swap_channels: bool, out: np.ndarray, source: str, limit: Any) -> None:
    img = decode_now(data, cv_flag, source, limit)
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


def yield_gil() -> None:
    """After a push of a decode: hand the GIL to the workers now and then (see above)."""
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
    wait on the result.  An empty buffer, or an image whose header claims more
    than ``lazynd.image.MAX_IMAGE_PIXELS`` pixels, is refused at once, before
    anything is allocated (see :mod:`lazynd.image.limits`).

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
    data = as_bytes(buf)
    if not isinstance(flag, bool):  # (True is 1, as MXNet takes it)
        flag = int_argument("imdecode", "flag", flag)  # a comparison with None or a list failed below
    source = source or "image buffer"
    limit = max_image_pixels()  # the decode below, run later by a worker, keeps this call's limit
    check_header(data, source, limit)
    cv_flag, swap_channels = _decode_flag(flag, to_rgb)
    size = image_size(data.data)
    if size is None:
        # unknown format or EXIF orientation: the shape is only known after decoding
        img = decode_now(data, cv_flag, source, limit)
        if img.ndim == 2:
            img = img[:, :, None]
        shape = img.shape
    else:
        img = None
        shape = (size[0], size[1], decoded_channels(size[2], flag))
    if out is None:
        out = new_array(shape, np.uint8, cpu())
    elif tuple(out.shape) != shape or out.data_array.dtype != np.uint8:
        raise OperatorError(
            f"imdecode: out has shape {out.shape} and dtype {out.data_array.dtype}, expected {shape} uint8"
        )
    if img is not None:
        get_engine().push(_to_output, (img, out.data_array, swap_channels), [], [out.var], "imdecode", out.context)
    else:
        get_engine().push(
            _decode_into,
            (data, cv_flag, swap_channels, out.data_array, source, limit),
            [],
            [out.var],
            "imdecode",
            out.context,
        )
    # Hand the GIL over: a worker woken by this push needs it for a few µs to start OpenCV, but a
    # thread running Python (a list comprehension of imdecode calls) keeps it for the whole switch
    # interval (5 ms), so without this the workers sit idle until the pushing loop ends.
    yield_gil()
    return out


def imread(filename: str | os.PathLike[str], flag: int = 1, to_rgb: bool = True, out: Any = None) -> Any:
    """Read and decode an image file (decoding runs on an engine worker).

    Examples
    --------
    >>> from lazynd import image
    >>> img = image.imread('cat.jpg')  # doctest: +SKIP
    """
    try:
        path = os.fspath(filename)
    except TypeError:
        raise ArgumentTypeError(f"imread: filename must be a path (str or os.PathLike), got {filename!r}") from None
    try:
        with open(path, "rb") as f:
            buf = f.read()
    except OSError as err:
        raise FormatError(f"imread: cannot read {path!r}: {err.strerror}") from None
    return imdecode(buf, flag, to_rgb, out, source=f"file {path!r}")
