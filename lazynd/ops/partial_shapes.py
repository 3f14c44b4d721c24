"""Partial shapes, as shape rules take and give them: a shape is a tuple of dims, ``None`` an
unknown shape, and a dim of 0 an unknown dim -- except under NumPy shape semantics (an imperative
call, :func:`lazynd.util.is_np_shape`), where a 0 is a zero-size axis.  These helpers are the one
place that distinction is made: merging two partial shapes, the common shape of inputs that must
agree, comparing two dims, and refusing to take elements from an empty axis.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import ShapeError
from ..util import is_np_shape

Shape = tuple[int, ...]


def merge_shape(
    op: str, arg: str, given: Shape | None, expected: Shape | None, *, complete: bool = False
) -> Shape | None:
    """Merge two partial shapes (0 = unknown dim); raise ShapeError when they disagree.

    ``complete``: ``expected`` is made of input shapes, not a rule's guess, so under NumPy shape
    semantics (an imperative call) a 0 in either shape is a size, as in ``given`` (3,) against an
    ``expected`` (0,) taken from a zero-size batch."""
    if given is None:
        return expected
    if expected is None:
        return tuple(given)
    if len(given) != len(expected):
        raise ShapeError(f"{op}: shape of '{arg}' is {tuple(given)}, expected {tuple(expected)}")
    sizes = complete and is_np_shape()
    merged = []
    for g, e in zip(given, expected, strict=False):
        if g != e and (sizes or (g and e)):
            raise ShapeError(f"{op}: shape of '{arg}' is {tuple(given)}, expected {tuple(expected)}")
        merged.append(g or e)
    return tuple(merged)


def unify_shapes(op: str, names: Sequence[str], shapes: list[Shape | None]) -> Shape | None:
    """The common shape of inputs that must all have the same shape."""
    result: Shape | None = None
    for name, shape in zip(names, shapes, strict=False):
        result = merge_shape(op, name, shape, result) if shape is not None else result
    return result


def refuse_empty_axis(op: str, arg: str, shape: Shape, axis: int, taken: int) -> None:
    """Raise ShapeError when ``taken`` elements are to be read along ``axis`` of ``shape`` (the
    input ``arg``) and that axis is a zero-size one: there is nothing to take or pick there."""
    if taken and shape[axis] == 0 and is_np_shape():
        raise ShapeError(
            f"{op}: axis {axis} of '{arg}' {tuple(shape)} has size 0, nothing to take {taken} element(s) from"
        )


def dim_is_known(dim: int) -> bool:
    """Whether a shape rule may take ``dim`` as a size: any dim under NumPy shape semantics (an
    imperative call, where a 0 is a zero-size axis), else a nonzero one (0 = unknown)."""
    return dim > 0 or is_np_shape()


def dims_differ(a: int, b: int) -> bool:
    """Whether two dims that must be equal differ: under NumPy shape semantics (an imperative call)
    a 0 is a zero-size axis and must match exactly, else a 0 is unknown and agrees with anything.
    The one test every shape rule comparing two input dims uses."""
    return a != b and (is_np_shape() or bool(a and b))


def shape_is_known(shape: Shape | None) -> bool:
    return shape is not None and all(d > 0 for d in shape)
