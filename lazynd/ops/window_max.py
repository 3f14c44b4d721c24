"""Maxima of many rectangles of a stack of maps at once, with the position of each maximum.

ROIPooling asks for the maximum of every bin of every region: thousands of small rectangles of
different sizes.  Looping over them in Python cost seconds; padding each to the largest one
wastes memory in proportion to the largest region.  A sparse table answers them all with a
few whole-array operations: level ``(i, j)`` holds, at each cell, the maximum of the ``2**i`` x
``2**j`` rectangle whose top-left corner is that cell (and where in it the maximum sits), built
from level ``(i - 1, j)`` or ``(i, j - 1)`` by one elementwise maximum.  Any rectangle of
``kh`` x ``kw`` cells is then the union of four (overlapping) rectangles of level
``(floor(log2 kh), floor(log2 kw))``, anchored at its corners, so every query is four gathers
and three comparisons.

Ties go to the first cell in row-major order (NumPy's ``argmax`` of the flattened
rectangle) and a NaN counts above every number (the first NaN wins, and the maximum is
NaN), as the loop did.  The maps are laid out (batch, height, width, channels) so that each
gather moves whole rows of channels.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# the most cells (values and positions each) the table of levels may hold at once: 32 Mi
TABLE_CELLS = 1 << 25


def _join(xp: Any, values: Any, positions: Any, levels: tuple[int, int], shift: int, axis: int, nan: bool) -> None:
    """Level ``levels[1]`` from level ``levels[0]`` along ``axis`` (2: rows, 3: columns): each
    cell's rectangle joined to the one ``shift`` cells on, which starts where it ends.  Cells whose
    doubled rectangle would leave the map keep the source's values (no query reaches them).
    ``nan``: the maps hold a NaN (the rule for it costs three passes more)."""
    source, target = levels
    size = values.shape[axis]
    head = [source] + [slice(None)] * (values.ndim - 1)
    tail, rest, into = list(head), list(head), list(head)
    head[axis], tail[axis], rest[axis] = slice(0, size - shift), slice(shift, size), slice(size - shift, size)
    into[0] = target
    first, second = values[tuple(head)], values[tuple(tail)]
    later = _beats(xp, second, first, nan)
    into[axis] = slice(0, size - shift)
    xp.maximum(first, second, out=values[tuple(into)])  # (a NaN on either side stays)
    xp.copyto(positions[tuple(into)], positions[tuple(head)])
    xp.copyto(positions[tuple(into)], positions[tuple(tail)], where=later)
    into[axis] = rest[axis]
    values[tuple(into)] = values[tuple(rest)]
    positions[tuple(into)] = positions[tuple(rest)]


def _beats(xp: Any, challenger: Any, holder: Any, nan: bool) -> Any:
    """Where ``challenger`` is above ``holder``, a NaN counting above every number (but not
    above another NaN)."""
    if not nan:
        return challenger > holder
    return (challenger > holder) | (xp.isnan(challenger) & ~xp.isnan(holder))


def _levels(xp: Any, maps: Any, row_levels: int, col_levels: int, nan: bool) -> tuple[Any, Any]:
    """Values and positions of every level ``(i, j)`` up to the given ones, level ``(i, j)`` at
    ``i * (col_levels + 1) + j`` of each; ``maps`` is (batch, height, width, channels), a position
    is ``row * width + column`` in the map."""
    count = (row_levels + 1) * (col_levels + 1)
    values = xp.empty((count, *maps.shape), maps.dtype)
    _, height, width, _ = maps.shape
    positions = xp.empty((count, *maps.shape), position_type(height * width))
    values[0] = maps
    positions[0] = xp.arange(height * width, dtype=positions.dtype).reshape(1, height, width, 1)
    for j in range(1, col_levels + 1):
        _join(xp, values, positions, (j - 1, j), 1 << (j - 1), axis=3, nan=nan)
    for i in range(1, row_levels + 1):
        for j in range(col_levels + 1):
            level = i * (col_levels + 1) + j
            _join(xp, values, positions, (level - col_levels - 1, level), 1 << (i - 1), axis=2, nan=nan)
    return values, positions


def position_type(cells: int) -> type:
    """The smallest integer type that counts ``cells`` cells (a table of int16 positions is moved
    at half the cost of int32)."""
    return np.int16 if cells <= np.iinfo(np.int16).max else np.int32


def _floor_log2(sizes: np.ndarray) -> np.ndarray:
    """``floor(log2(size))`` of positive integer sizes, exactly (no float rounding)."""
    levels = np.zeros(sizes.shape, np.int64)
    while (sizes >> (levels + 1)).any():
        levels += (sizes >> (levels + 1)) > 0
    return levels


def rectangle_max(
    xp: Any, maps: Any, image: np.ndarray, top: np.ndarray, left: np.ndarray, rows: np.ndarray, cols: np.ndarray
) -> tuple[Any, Any]:
    """Maximum and its position of rectangles of ``maps`` (batch, height, width, channels).

    Rectangle ``k`` is ``rows[k]`` x ``cols[k]`` cells (both at least 1) from ``(top[k], left[k])``
    of map ``image[k]``, inside the map; the host integer arrays (any shape, the same for all) give
    answers of that shape plus (channels,).  The position counts cells of one map, row-major.
    The table holds every level for the channels it covers, so the channels go a group at a time
    small enough to keep it under ``TABLE_CELLS`` cells.
    """
    batch, height, width, channels = maps.shape
    row_level, col_level = _floor_log2(rows), _floor_log2(cols)
    row_levels, col_levels = int(row_level.max(initial=0)), int(col_level.max(initial=0))
    bottom = top + rows - (1 << row_level)  # the top row of the lower pair of rectangles
    right = left + cols - (1 << col_level)
    level_cells = batch * height * width
    offset = ((row_level * (col_levels + 1) + col_level) * batch + image) * (height * width)
    corners = [
        xp.asarray((offset + y * width + x).reshape(-1))
        for y, x in ((top, left), (bottom, left), (top, right), (bottom, right))
    ]
    # one look for a NaN (a read back to the host on a device, which has just read the regions)
    # saves the join and the query three passes each where there is none
    nan = bool(xp.isnan(maps).any())
    group = max(1, TABLE_CELLS // (level_cells * (row_levels + 1) * (col_levels + 1)))
    best = xp.empty((top.size, channels), maps.dtype)
    position = xp.empty((top.size, channels), position_type(height * width))
    for start in range(0, channels, group):
        part = slice(start, start + group)
        table = _levels(xp, maps[..., part], row_levels, col_levels, nan)
        best[:, part], position[:, part] = _query(xp, *table, corners, nan)
    shape = (*top.shape, channels)
    return best.reshape(shape), position.reshape(shape)


def _query(xp: Any, values: Any, positions: Any, corners: list, nan: bool) -> tuple[Any, Any]:
    """The four corners' rectangles (top-left, bottom-left, top-right, bottom-right) of each
    query joined: the maximum and its position.

    A lower rectangle of the same columns wins only by a greater value: a tie of its first
    maximum with the upper one's lies in their common rows, where the upper one met it first.
    Left and right rectangles share rows, so a tie there can go either way: the positions decide.
    """
    channels = values.shape[-1]
    values, positions = values.reshape(-1, channels), positions.reshape(-1, channels)
    sides = []
    for upper, lower in (corners[:2], corners[2:]):
        best, position = xp.take(values, upper, axis=0), xp.take(positions, upper, axis=0)
        value, where = xp.take(values, lower, axis=0), xp.take(positions, lower, axis=0)
        xp.copyto(position, where, where=_beats(xp, value, best, nan))
        xp.maximum(best, value, out=best)
        sides.append((best, position))
    (best, position), (value, where) = sides
    same = (value == best) | (xp.isnan(value) & xp.isnan(best)) if nan else value == best
    wins = _beats(xp, value, best, nan) | (same & (where < position))
    xp.maximum(best, value, out=best)
    xp.copyto(position, where, where=wins)
    return best, position
