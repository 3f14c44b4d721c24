"""Class labels and indices given as numbers of any type, turned into integer classes, checked.

Labels often arrive as floats (a data iterator's ``float32`` label, an ``argmax`` read back).  A
conversion to integers of NaN, of an infinity or of a float beyond the 64-bit integers is undefined
in C and CUDA: x86 gives -2**63, aarch64 gives 0 -- class 0, silently.  So every check here looks at
the labels as given, in their own type, before any conversion, and a comparison written so that NaN
fails it (``low <= x < high`` is false for NaN) costs no separate ``isnan`` pass.

One helper, :func:`checked_classes`, serves every operator on both devices: on the host an
:class:`~lazynd.errors.OperatorError` at once; on a GPU :meth:`Backend.check_range`, raised at the
next wait, with no host read (so an executor's pass can still be captured into a CUDA graph), and
meanwhile a bad label reads ``fallback``.  Where MXNet's rule clips or wraps indices (``take``,
``pick``, ``Embedding``), every number keeps that rule (clipped as a number, so 2**63 clips to the
last position rather than overflowing); NaN names no position and is refused by name, and so is an
infinity where wrapping it has no answer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import OperatorError

_MODES = ("raise", "clip", "wrap", "ignore")


def named_classes(xp: Any, labels: Any) -> Any:
    """The class each label names: truncated toward zero, as a conversion to integers truncates,
    but in the labels' own type, so that NaN and values beyond the integers stay what they are (a
    conversion gives an undefined number for them, another on a GPU than on a CPU) and a check
    reports the label given."""
    return xp.trunc(labels) if labels.dtype.kind == "f" else labels


def shown(value: float) -> int | str:
    """A label as an error shows it: a whole number in full without its ``.0`` (2**63 too), NaN, an
    infinity and a fraction as ``%g`` writes them (2.6, not float32's 2.5999999046325684)."""
    value = float(value)
    return int(value) if value.is_integer() else f"{value:g}"


def label_error(op: str, argument: str, named: Any, low: int, high: int, expected: str | None = None) -> OperatorError:
    """The error for the first of ``named`` (host values) outside ``low..high-1`` (there must be
    one; NaN is never inside), naming ``op``, ``argument``, the value and the range (``expected``
    words the range where the classes are an axis's positions)."""
    return _error(op, argument, named[~((named >= low) & (named < high))][0], low, high, expected)


def _error(op: str, argument: str, value: Any, low: int, high: int, expected: str | None) -> OperatorError:
    described = expected or f"for {high - low} classes (expected {low}..{high - 1})"
    return OperatorError(f"{op}: {argument} {shown(value)} is out of range {described}")


def _refuse_not_a_position(backend: Any, op: str, argument: str, flat: Any, mode: str) -> Any:
    """Refuse the values ``mode`` ('clip', 'wrap' or 'ignore') gives no position (NaN; an infinity
    too when wrapping), and return where the others are."""
    biggest = float(np.finfo(flat.dtype).max)
    low, high = (-biggest, biggest) if mode == "wrap" else (-np.inf, np.inf)
    ok = (flat >= low) & (flat <= high)
    if backend.xp is np:
        if flat.size and not ok.all():
            first = flat[~ok][0]
            what = "not a number" if np.isnan(first) else f"an infinity, which mode='{mode}' cannot wrap"
            raise OperatorError(f"{op}: {argument} {shown(first)} is {what}: it names no position (expected a number)")
        return ok
    backend.check_range(
        op, f"{argument} (a number{', finite to wrap' if mode == 'wrap' else ''})", flat, low, high, True
    )
    return ok


def checked_classes(
    backend: Any,
    op: str,
    argument: str,
    labels: Any,
    high: int,
    *,
    low: int = 0,
    mode: str = "raise",
    as_given: bool = False,
    fallback: int = 0,
    expected: str | None = None,
) -> Any:
    """``labels`` (any shape and number type, on ``backend``'s device) as flat int64 classes in
    ``[low, high)``.

    ``mode='raise'`` refuses a label whose class (truncated toward zero, or the value itself with
    ``as_given``, as ``take`` checks) is outside the range; ``'clip'`` and ``'wrap'`` apply MXNet's
    rule to every number, and ``'ignore'`` gives a number out of range ``fallback`` (``one_hot``'s
    off row), refusing only what has no position (see the module docstring).  On a GPU the refusal
    is raised at the next wait and a refused label reads ``fallback`` meanwhile.  The result may be
    ``labels`` itself (int64 labels, mode='raise'): read it, never write into it.

    Examples
    --------
    >>> from lazynd.backend.cpu import NumpyBackend
    >>> checked_classes(NumpyBackend(), "pick", "index", np.array([2.7, -4.0]), 3, mode="clip").tolist()
    [2, 0]
    """
    if mode not in _MODES:
        raise OperatorError(f"{op}: mode {mode!r} is not one of {_MODES}")
    xp = backend.xp
    flat = labels.reshape(-1)
    if flat.dtype.kind == "b":
        flat = flat.astype(np.int64)
    if mode == "ignore":  # a number out of range reads ``fallback`` (one_hot's off row); NaN is refused
        if flat.dtype.kind == "f":
            _refuse_not_a_position(backend, op, argument, flat, mode)
        named = named_classes(xp, flat)
        return xp.where((named >= low) & (named < high), named, fallback).astype(np.int64)
    if mode != "raise":
        if flat.dtype.kind == "f":
            ok = _refuse_not_a_position(backend, op, argument, flat, mode)
            if xp is not np:
                flat = xp.where(ok, flat, low)
            if mode == "clip":  # clipped as numbers, then converted: every value now fits
                return xp.clip(flat, low, high - 1).astype(np.int64)
            return (xp.mod(xp.trunc(flat) - low, high - low) + low).astype(np.int64)
        flat = flat.astype(np.int64, copy=False)
        return xp.clip(flat, low, high - 1) if mode == "clip" else (flat - low) % (high - low) + low
    named = flat if as_given else named_classes(xp, flat)
    top = high - 1 if as_given else high  # as given, a fraction above the last class is out: 2.6 of [0, 2]
    inside = (named >= low) & ((named <= top) if as_given else (named < top))
    if xp is np:
        if flat.size and not inside.all():
            raise _error(op, argument, named[~inside][0], low, high, expected)
        return named.astype(np.int64, copy=False)
    backend.check_range(op, argument, named, low, top, inclusive=as_given)
    return xp.where(inside, named, fallback).astype(np.int64)
