"""Image sizes read from JPEG and PNG headers, without decoding the pixels.

Two uses.  ``imdecode`` must allocate its output before the decode runs on a
worker, so it needs the height, width and channel count up front
(:func:`image_size`).  And a header may claim any size: :func:`claimed_size`
gives the pixel count a decoder would allocate, so that a 79-byte file claiming
100000 x 100000 pixels is refused before anything is allocated.

JPEG: markers are walked as libjpeg walks them (bytes between segments that are
not a marker are skipped, ``0xFF`` fill bytes too); the first start-of-frame
marker (SOF0..SOF15 except DHT, JPG and DAC) before the first scan holds the
size.  PNG: the IHDR chunk, which must come first.  A JPEG carrying EXIF data
gives no :func:`image_size` (OpenCV may rotate it by its orientation tag,
swapping height and width), but its claimed size is known all the same.
"""

from __future__ import annotations

import struct

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
JPEG_SOI = b"\xff\xd8"

# channels OpenCV gives with IMREAD_UNCHANGED for each PNG colour type
_PNG_CHANNELS = {0: 1, 2: 3, 3: 3, 4: 2, 6: 4}
_SOF_MARKERS = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
_STANDALONE_MARKERS = {0x01, *range(0xD0, 0xD8)}  # TEM and RST0..7 carry no length


def _jpeg_frame(buf: bytes | memoryview) -> tuple[int, int, int, bool] | None:
    """(height, width, components, has EXIF) from a JPEG's frame header, or None."""
    if len(buf) < 4 or buf[0] != 0xFF or buf[1] != 0xD8:
        return None
    has_exif = False
    pos, end = 2, len(buf)
    while True:
        # find the next marker: skip stray bytes, then 0xFF fill bytes; FF00 is not a marker
        while pos < end and buf[pos] != 0xFF:
            pos += 1
        while pos < end and buf[pos] == 0xFF:
            pos += 1
        if pos >= end:
            return None
        marker = buf[pos]
        pos += 1
        if marker == 0 or marker in _STANDALONE_MARKERS:
            continue
        if marker in (0xD8, 0xD9, 0xDA):  # a second SOI, the end, or a scan before any frame
            return None
        if pos + 2 > end:
            return None
        length = (buf[pos] << 8) | buf[pos + 1]
        if length < 2:
            return None
        if marker == 0xE1 and bytes(buf[pos + 2 : pos + 6]) == b"Exif":
            has_exif = True
        if marker in _SOF_MARKERS:
            if pos + 8 > end:
                return None
            height, width = struct.unpack_from(">HH", buf, pos + 3)
            return height, width, buf[pos + 7], has_exif
        pos += length


def _png_header(buf: bytes | memoryview) -> tuple[int, int, int] | None:
    """(height, width, colour type) from a PNG's IHDR chunk, or None."""
    if len(buf) < 26 or bytes(buf[:8]) != PNG_SIGNATURE or bytes(buf[12:16]) != b"IHDR":
        return None
    width, height = struct.unpack(">II", bytes(buf[16:24]))
    return height, width, buf[25]


def jpeg_size(buf: bytes | memoryview) -> tuple[int, int, int] | None:
    """(height, width, components) of a JPEG, or None when unknown or EXIF-oriented."""
    frame = _jpeg_frame(buf)
    if frame is None:
        return None
    height, width, components, has_exif = frame
    if has_exif or height == 0 or width == 0 or components not in (1, 3, 4):
        return None
    return height, width, components


def png_size(buf: bytes | memoryview) -> tuple[int, int, int] | None:
    """(height, width, channels) of a PNG, or None."""
    header = _png_header(buf)
    if header is None:
        return None
    height, width, colour_type = header
    channels = _PNG_CHANNELS.get(colour_type)
    if width == 0 or height == 0 or channels is None:
        return None
    return height, width, channels


def image_size(buf: bytes | memoryview) -> tuple[int, int, int] | None:
    """(height, width, channels as stored) of a JPEG or PNG; None for other formats."""
    return jpeg_size(buf) or png_size(buf)


def is_png_or_jpeg(buf: bytes | memoryview) -> bool:
    """Whether ``buf`` starts with the PNG signature or the JPEG start-of-image marker."""
    return bytes(buf[:8]) == PNG_SIGNATURE or bytes(buf[:2]) == JPEG_SOI


def claimed_size(buf: bytes | memoryview) -> tuple[int, int] | None:
    """(height, width) that a PNG or JPEG header claims, whatever else it says; None if none is found.

    Examples
    --------
    >>> import struct
    >>> ihdr = b"\\x89PNG\\r\\n\\x1a\\n" + struct.pack(">I4sII5B", 13, b"IHDR", 100000, 100000, 8, 2, 0, 0, 0)
    >>> claimed_size(ihdr + b"\\0" * 4)
    (100000, 100000)
    """
    frame = _jpeg_frame(buf)
    if frame is not None:
        return frame[0], frame[1]
    header = _png_header(buf)
    return None if header is None else header[:2]


def decoded_channels(stored: int, flag: int) -> int:
    """Channels OpenCV returns for ``flag`` (1 colour, 0 grey, -1 unchanged)."""
    if flag > 0:
        return 3
    if flag == 0:
        return 1
    return stored
