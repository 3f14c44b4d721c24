"""Image sizes read from JPEG and PNG headers, without decoding the pixels.

``imdecode`` must allocate its output before the decode runs on a worker, so it
needs the height, width and channel count up front.  JPEG: the first
start-of-frame marker (SOF0..SOF15 except DHT, JPG and DAC) holds them.  PNG: the
IHDR chunk.  Anything else, or a JPEG carrying EXIF data (OpenCV may rotate it
by its orientation tag, swapping height and width), gives ``None`` and the
caller decodes synchronously instead.
"""

from __future__ import annotations

import struct

# channels OpenCV gives with IMREAD_UNCHANGED for each PNG colour type
_PNG_CHANNELS = {0: 1, 2: 3, 3: 3, 4: 2, 6: 4}
_SOF_MARKERS = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def jpeg_size(buf: bytes | memoryview) -> tuple[int, int, int] | None:
    """(height, width, components) of a JPEG, or None when unknown or EXIF-oriented."""
    if len(buf) < 4 or buf[0] != 0xFF or buf[1] != 0xD8:
        return None
    pos, end = 2, len(buf)
    while pos + 4 <= end:
        if buf[pos] != 0xFF:
            return None
        marker = buf[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # markers without a length
            pos += 2
            continue
        length = (buf[pos + 2] << 8) | buf[pos + 3]
        if length < 2:
            return None
        if marker == 0xE1 and buf[pos + 4 : pos + 8] == b"Exif":
            return None
        if marker in _SOF_MARKERS:
            if pos + 10 > end:
                return None
            height, width = struct.unpack_from(">HH", buf, pos + 5)
            components = buf[pos + 9]
            if height == 0 or width == 0 or components not in (1, 3, 4):
                return None
            return height, width, components
        if marker == 0xDA:  # start of scan before any frame header
            return None
        pos += 2 + length
    return None


def png_size(buf: bytes | memoryview) -> tuple[int, int, int] | None:
    """(height, width, channels) of a PNG, or None."""
    if len(buf) < 26 or bytes(buf[:8]) != b"\x89PNG\r\n\x1a\n" or bytes(buf[12:16]) != b"IHDR":
        return None
    width, height = struct.unpack(">II", bytes(buf[16:24]))
    channels = _PNG_CHANNELS.get(buf[25])
    if width == 0 or height == 0 or channels is None:
        return None
    return height, width, channels


def image_size(buf: bytes | memoryview) -> tuple[int, int, int] | None:
    """(height, width, channels as stored) of a JPEG or PNG; None for other formats."""
    return jpeg_size(buf) or png_size(buf)


def decoded_channels(stored: int, flag: int) -> int:
    """Channels OpenCV returns for ``flag`` (1 colour, 0 grey, -1 unchanged)."""
    if flag > 0:
        return 3
    if flag == 0:
        return 1
    return stored
