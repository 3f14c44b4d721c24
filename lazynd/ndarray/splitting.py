"""``split_v2``: MXNet 1.x's split at indices (or into equal sections), from ``slice_axis``.

The same rule serves NDArrays (``mx.nd.split_v2``, ``x.split_v2``) and symbols
(``mx.sym.split_v2``): ``apply`` is the face's ``slice_axis`` (and ``squeeze``), so
gradients flow through the existing operators.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..errors import OperatorError, ShapeError


def section_bounds(
    length: int | None, indices_or_sections: int | Sequence[int], what: str = "split_v2"
) -> list[tuple[int, int | None]]:
    """The ``(begin, end)`` of each piece of an axis of ``length`` (None: not known yet, a symbol's).

    With ``length`` None the last piece ends at the axis' end (``end`` None), and an int of
    sections cannot be resolved (a symbol splits into sections with the ``split`` operator).

    Examples
    --------
    >>> section_bounds(6, 3)
    [(0, 2), (2, 4), (4, 6)]
    >>> section_bounds(6, (1, 3))
    [(0, 1), (1, 3), (3, 6)]
    """
    if isinstance(indices_or_sections, int) and not isinstance(indices_or_sections, bool):
        if length is None:
            raise OperatorError(f"{what}: sections of an axis of unknown length (use the split operator)")
        sections = indices_or_sections
        if sections <= 0 or length % sections:
            raise ShapeError(f"{what}: an axis of length {length} does not split into {sections} equal sections")
        step = length // sections
        return [(i * step, (i + 1) * step) for i in range(sections)]
    if not isinstance(indices_or_sections, (tuple, list)) or not all(isinstance(i, int) for i in indices_or_sections):
        raise OperatorError(
            f"{what}: indices_or_sections must be an int or a tuple of ints, got {indices_or_sections!r}"
        )
    starts = [0, *indices_or_sections]
    ends: list[int | None] = [*indices_or_sections, length]
    for begin, end in zip(starts, ends, strict=True):
        stop = begin if end is None else end  # end None: the end of an axis of unknown length
        if begin < 0 or stop < begin or (length is not None and stop > length):
            raise ShapeError(
                f"{what}: indices {tuple(indices_or_sections)} must rise within [0, {length or 'the axis length'}], "
                f"a piece would be [{begin}, {end})"
            )
    return list(zip(starts, ends, strict=True))


def split_v2(
    data: Any,
    length: int,
    indices_or_sections: int | Sequence[int],
    axis: int,
    squeeze_axis: bool,
    slice_axis: Callable[..., Any],
    squeeze: Callable[..., Any],
) -> Any:
    """The pieces of ``data`` along ``axis`` (one piece is returned bare, as MXNet's operator does)."""
    bounds = section_bounds(length, indices_or_sections)
    if squeeze_axis and any(end is None or end - begin != 1 for begin, end in bounds):
        raise ShapeError(f"split_v2: squeeze_axis needs pieces of length 1 along axis {axis}, got bounds {bounds}")
    pieces = [slice_axis(data, axis=axis, begin=begin, end=end) for begin, end in bounds]
    if squeeze_axis:
        pieces = [squeeze(piece, axis=axis) for piece in pieces]
    return pieces[0] if len(pieces) == 1 else pieces
