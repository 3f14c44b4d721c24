"""The most pixels an image may have before lazynd decodes it: ``lazynd.image.MAX_IMAGE_PIXELS``.

An image header may claim any size; a decoder trusting it allocates what it
claims.  lazynd reads the PNG or JPEG header first (:mod:`lazynd.image.header`)
and refuses an image whose ``height * width`` exceeds the limit, before
allocating anything.  Images in other formats OpenCV reads (BMP, TIFF, WebP...)
are refused after decoding; while decoding, OpenCV's own limit applies
(``OPENCV_IO_MAX_IMAGE_PIXELS``, default 2**30 pixels, read when OpenCV is imported).

The limit is ``lazynd.image.MAX_IMAGE_PIXELS``: 2**28 pixels (a 16384 x 16384
image, 768 MiB in RGB) unless the environment variable ``LAZYND_MAX_IMAGE_PIXELS``
gives another number when lazynd is imported.  Assign a larger number to decode
larger images, or ``None`` to lift the limit.
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import FormatError
from ..log import warn_from_user_code

ENVIRONMENT_VARIABLE = "LAZYND_MAX_IMAGE_PIXELS"
DEFAULT_MAX_IMAGE_PIXELS = 1 << 28


def limit_from_environment() -> int | None:
    """The limit ``LAZYND_MAX_IMAGE_PIXELS`` sets (a positive integer, or ``none``), else the default."""
    text = os.environ.get(ENVIRONMENT_VARIABLE)
    if text is None or not text.strip():
        return DEFAULT_MAX_IMAGE_PIXELS
    if text.strip().lower() == "none":
        return None
    try:
        value = int(text)
        if value <= 0:
            raise ValueError
    except ValueError:
        warn_from_user_code(
            f"{ENVIRONMENT_VARIABLE}={text!r} is not a positive integer or 'none'; "
            f"using the default limit of {DEFAULT_MAX_IMAGE_PIXELS} pixels",
        )
        return DEFAULT_MAX_IMAGE_PIXELS
    return value


def max_image_pixels() -> int | None:
    """The limit in force: ``lazynd.image.MAX_IMAGE_PIXELS`` as the user last set it."""
    from .. import image

    limit = image.MAX_IMAGE_PIXELS
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0):
        raise FormatError(f"lazynd.image.MAX_IMAGE_PIXELS is {limit!r}; expected a positive int or None")
    return limit


LIMIT_IN_FORCE: Any = object()  # check_pixels' default: the limit in force at the call


def check_pixels(height: int, width: int, source: str, limit: Any = LIMIT_IN_FORCE) -> None:
    """Refuse an image of ``height x width`` pixels above the limit, naming ``source``.

    ``limit`` is the limit read when the decode was asked for (a decode pushed to the engine
    keeps the limit of its call, whatever the program sets before it runs); by default the
    limit in force now.

    Examples
    --------
    >>> check_pixels(100000, 100000, "a.png")
    Traceback (most recent call last):
    ...
    lazynd.errors.FormatError: imdecode: a.png claims 100000 x 100000 = 10000000000 pixels, more than lazynd.image.MAX_IMAGE_PIXELS = 268435456 (raise it, or set LAZYND_MAX_IMAGE_PIXELS, to decode larger images)
    """
    if limit is LIMIT_IN_FORCE:
        limit = max_image_pixels()
    if limit is not None and height * width > limit:
        raise FormatError(
            f"imdecode: {source} claims {height} x {width} = {height * width} pixels, more than "
            f"lazynd.image.MAX_IMAGE_PIXELS = {limit} (raise it, or set {ENVIRONMENT_VARIABLE}, to decode "
            "larger images)"
        )
