"""MXNet 0.9's Python-level ``mx.nd`` functions whose signatures are not an operator's.

``imdecode(str_img, clip_rect, out, index, channels, mean)`` decodes into (channels,
height, width) arrays (the work is in :mod:`lazynd.image.legacy`; ``lazynd.image``
imports ``lazynd.io``, which imports this package, so it is imported at the first
call); ``onehot_encode(indices, out)`` names its target ``out``, so
``onehot_encode(indices, out=arr)`` is the call MXNet 0.9's tests make.
"""

from __future__ import annotations

from typing import Any

from ..ops import registry
from .dispatch import invoke


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


def onehot_encode(indices: Any, out: Any) -> Any:
    """Write the one-hot rows of ``indices`` (n,) into ``out`` (n, depth) and return ``out``.

    Examples
    --------
    >>> import lazynd as mx
    >>> out = mx.nd.zeros((2, 3))
    >>> mx.nd.onehot_encode(mx.nd.array([2, 0]), out=out).asnumpy()
    array([[0., 0., 1.],
           [1., 0., 0.]], dtype=float32)
    """
    return invoke(registry.get("onehot_encode"), (indices, out), {}, out)
