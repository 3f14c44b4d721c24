"""Image record payloads: the ``IRHeader`` header, labels and encoded images.

Part of :mod:`lazynd.recordio`, which hands these names on; the layout is
MXNet's, so records packed here read in MXNet and the other way round.  The
header is ``struct '<IfQQ'`` (flag, label, id, id2).  A scalar label is stored
in the header with ``flag = 0``; an array label is stored as ``flag`` float32
values right after the header, with the header's label field set to 0.
"""

from __future__ import annotations

import math
import numbers
import struct
from collections import namedtuple
from types import ModuleType
from typing import Any

import numpy as np

from ..errors import ArgumentTypeError, FormatError
from .recordio_file import bytes_like

__all__ = ["IRHeader", "pack", "pack_img", "unpack", "unpack_img"]

# MXNet names the tuple type HEADER, so a printed header reads as MXNet prints it: HEADER(flag=0, ...)
HEADER = namedtuple("HEADER", ["flag", "label", "id", "id2"])
HEADER.__doc__ = """Header of an image record: flag, label, id, id2 (MXNet's layout)."""
IRHeader = HEADER

_IR_FORMAT = struct.Struct("<IfQQ")
_IR_SIZE = _IR_FORMAT.size  # 24 bytes
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _cv2() -> ModuleType:
    try:
        import cv2
    except ImportError as error:  # pragma: no cover - opencv is a dependency
        raise ImportError("packing and unpacking images needs OpenCV: pip install opencv-python-headless") from error
    return cv2


def pack(header: Any, s: bytes | bytearray | memoryview) -> bytes:
    """Put an image record header (and array label) in front of ``s``.

    Parameters
    ----------
    header : IRHeader or tuple
        ``(flag, label, id, id2)``.  ``flag`` is ignored: it is set from the
        label (0 for a number, the number of values for an array).
    s : bytes-like
        The payload, usually an encoded image.

    Returns
    -------
    bytes
        The record, ready for :meth:`MXRecordIO.write`.

    Examples
    --------
    >>> record = pack(IRHeader(0, [1.0, 2.0], 7, 0), b"data")
    >>> header, payload = unpack(record)
    >>> header.flag, header.label.tolist(), header.id, payload
    (2, [1.0, 2.0], 7, b'data')
    """
    if not isinstance(header, (tuple, list)) or len(header) != 4:
        raise ArgumentTypeError(f"pack: header must be an IRHeader (flag, label, id, id2), got {header!r:.80}")
    header = IRHeader(*header)
    s = bytes_like("pack", s)
    label: Any = header.label
    if isinstance(label, numbers.Number):
        flag, labels = 0, b""
        # abs, not float(): an int past float's range is refused too, where float() would overflow
        if isinstance(label, numbers.Real) and _FLOAT32_MAX < abs(label) < math.inf:  # type: ignore[operator]
            # struct would raise a bare OverflowError here; MXNet 1.9.1 packs such a label as infinity
            raise FormatError(
                f"cannot pack image record header {header}: label {str(label):.40} is beyond float32's range "
                f"(|label| <= {_FLOAT32_MAX:.6g}), which the header stores it in"
            )
    else:
        try:
            values = np.asarray(header.label, dtype=np.float32)
        except (TypeError, ValueError) as error:
            raise FormatError(
                f"cannot pack image record header {header}: label must be a number or an array of numbers ({error})"
            ) from None
        flag, label, labels = values.size, 0.0, values.astype("<f4").tobytes()
    try:
        packed = _IR_FORMAT.pack(flag, label, header.id, header.id2)
    except (struct.error, TypeError) as error:  # TypeError: an id that is an array (NumPy's __index__)
        raise FormatError(
            f"cannot pack image record header {header}: {error} "
            "(label must be a number or an array of numbers; id and id2 integers in [0, 2**64))"
        ) from None
    return b"".join((packed, labels, s))


def unpack(s: bytes | bytearray | memoryview) -> tuple[IRHeader, bytes]:
    """Split an image record into its header and its payload.

    Returns
    -------
    header : IRHeader
        ``label`` is a float, or a float32 array of ``flag`` values when
        ``flag > 0``.
    payload : bytes
        What follows the header and the array label.

    Examples
    --------
    >>> unpack(pack(IRHeader(0, 3.0, 1, 0), b"img"))
    (HEADER(flag=0, label=3.0, id=1, id2=0), b'img')
    """
    s = bytes_like("unpack", s)
    if len(s) < _IR_SIZE:
        raise FormatError(f"an image record is at least {_IR_SIZE} bytes (its header); given {len(s)}")
    flag, label, record_id, record_id2 = _IR_FORMAT.unpack_from(s)
    end = _IR_SIZE
    if flag > 0:
        end += 4 * flag
        if len(s) < end:
            raise FormatError(
                f"image record header announces {flag} float32 labels ({end} bytes with the "
                f"header) but the record has only {len(s)} bytes"
            )
        label = np.frombuffer(s, dtype="<f4", count=flag, offset=_IR_SIZE).astype(np.float32)
    return IRHeader(flag, label, record_id, record_id2), bytes(s[end:])


def pack_img(header: Any, img: np.ndarray, quality: int = 95, img_fmt: str = ".jpg") -> bytes:
    """Encode an image with OpenCV and pack it behind ``header``.

    Parameters
    ----------
    header : IRHeader or tuple
        ``(flag, label, id, id2)``, as for :func:`pack`.
    img : numpy.ndarray
        An OpenCV image: ``(H, W)`` or ``(H, W, C)`` in BGR(A) order.
    quality : int
        JPEG quality (0-100) for ``.jpg``; for ``.png`` the zlib compression
        level 0-9 (larger values mean 9, so MXNet's default of 95 works).
    img_fmt : str
        Encoding, as a file extension understood by ``cv2.imencode``.

    Examples
    --------
    >>> import numpy as np
    >>> img = np.full((8, 8, 3), 128, dtype=np.uint8)
    >>> header, decoded = unpack_img(pack_img(IRHeader(0, 1.0, 5, 0), img, img_fmt=".png"))
    >>> header.id, decoded.shape, bool((decoded == img).all())
    (5, (8, 8, 3), True)
    """
    cv2 = _cv2()
    if not isinstance(img, np.ndarray) or img.ndim not in (2, 3):
        shape = getattr(img, "shape", None)
        raise FormatError(
            f"pack_img: img must be a numpy array of shape (H, W) or (H, W, C); given {type(img).__name__} with shape {shape}"
        )
    if isinstance(quality, bool) or not isinstance(quality, numbers.Real) or math.isnan(quality):
        raise FormatError(f"pack_img: quality must be a number; given {quality!r}")
    if quality < 0:
        raise FormatError(f"pack_img: quality must be >= 0; given {quality}")
    if not isinstance(img_fmt, str):
        raise FormatError(f"pack_img: img_fmt must be an extension such as '.jpg' or '.png'; given {img_fmt!r}")
    fmt = img_fmt.lower()
    params: list[int] = []
    if fmt in (".jpg", ".jpeg"):
        if quality > 100:
            raise FormatError(f"pack_img: JPEG quality must be in [0, 100]; given {quality}")
        params = [cv2.IMWRITE_JPEG_QUALITY, int(quality)]
    elif fmt == ".png":
        params = [cv2.IMWRITE_PNG_COMPRESSION, min(int(quality), 9)]
    try:
        ok, encoded = cv2.imencode(fmt, img, params)
    except cv2.error as error:
        ok, encoded = False, str(error).strip().splitlines()[-1]
    if not ok:
        raise FormatError(
            f"pack_img: OpenCV cannot encode an image of shape {img.shape} and dtype {img.dtype} as "
            f"{img_fmt!r}" + (f": {encoded}" if isinstance(encoded, str) else "")
        )
    return pack(header, encoded.tobytes())


def unpack_img(s: bytes | bytearray | memoryview, iscolor: int = -1) -> tuple[IRHeader, np.ndarray]:
    """Split an image record into its header and the decoded image.

    Parameters
    ----------
    s : bytes-like
        A record made by :func:`pack_img`.
    iscolor : int
        OpenCV's imread flag: ``-1`` as stored, ``0`` grayscale, ``1`` BGR.

    Examples
    --------
    >>> import numpy as np
    >>> record = pack_img(IRHeader(0, 2.0, 0, 0), np.zeros((4, 6), np.uint8), img_fmt=".png")
    >>> unpack_img(record, iscolor=1)[1].shape
    (4, 6, 3)
    """
    from lazynd.image.image import decode_checked

    header, payload = unpack(s)
    source = f"image record id {header.id}"
    return header, decode_checked(np.frombuffer(payload, dtype=np.uint8), iscolor, source)
