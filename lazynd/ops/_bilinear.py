"""Bilinear reads of a feature map at real-valued pixel positions, shared by the sampling operators
(``BilinearSampler``, ``SpatialTransformer``, the deformable convolutions and region poolings).

A point ``(y, x)`` reads the four pixels around it, ``(floor(y) + dy, floor(x) + dx)`` for ``dy, dx``
in ``{0, 1}``, weighted ``(1 - |y - row|) * (1 - |x - col|)``; a pixel outside the map counts as 0
(its weight is 0).  Each tap also carries its weight's derivatives with respect to ``y`` and ``x``,
for the gradients of the positions.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Tap(NamedTuple):
    """One of the four pixels a point reads: its flat index ``row * width + col`` (clipped into the
    map where the pixel is outside it), its weight and the weight's derivatives."""

    index: Any
    weight: Any
    dweight_dy: Any
    dweight_dx: Any


def _clip_finite(xp: Any, position: Any, size: int) -> Any:
    """``position`` clipped into ``[0, size - 1]``, with a NaN or infinite one at 0: a point that lies
    nowhere reads pixel 0 with a weight of NaN (0 inside), never an index cast from NaN."""
    return xp.clip(xp.where(xp.isfinite(position), position, 0), 0, size - 1)


def bilinear_taps(xp: Any, y: Any, x: Any, height: int, width: int) -> list[Tap]:
    """The four taps of the points ``(y, x)`` (arrays of one shape) in a ``height`` x ``width`` map."""
    y0, x0 = xp.floor(y), xp.floor(x)
    fy, fx = y - y0, x - x0
    taps = []
    for dy in (0, 1):
        for dx in (0, 1):
            row, col = y0 + dy, x0 + dx
            inside = ((row >= 0) & (row <= height - 1) & (col >= 0) & (col <= width - 1)).astype(y.dtype)
            wy, wx = (fy if dy else 1 - fy), (fx if dx else 1 - fx)
            index = (_clip_finite(xp, row, height) * width + _clip_finite(xp, col, width)).astype(xp.int64)
            taps.append(Tap(index, wy * wx * inside, (1 if dy else -1) * wx * inside, (1 if dx else -1) * wy * inside))
    return taps
