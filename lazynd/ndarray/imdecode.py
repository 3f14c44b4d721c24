"""``mx.nd.imdecode``: MXNet 0.9's decoder into (channels, height, width) arrays.

The work is in :mod:`lazynd.image.legacy`; ``lazynd.image`` imports ``lazynd.io``,
which imports this package, so it is imported at the first call.
"""

from __future__ import annotations

from typing import Any


def imdecode(
    str_img: Any,
    clip_rect: Any = (0, 0, 0, 0),
    out: Any = None,
    index: int = 0,
    channels: int = 3,
    mean: Any = None,
) -> Any:
    """Decode an image into a (channels, height, width) NDArray as MXNet 0.9 did (B, G, R order, float32).

    See :func:`lazynd.image.legacy.imdecode_chw` for the conventions.
    """
    from ..image.legacy import imdecode_chw

    return imdecode_chw(str_img, clip_rect, out, index, channels, mean)
