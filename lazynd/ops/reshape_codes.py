"""The arithmetic of ``Reshape``'s shape codes (MXNet's): the output shape for an input shape.

Used by the ``Reshape`` operator's shape rule and by ``NDArray.reshape``.
"""

from __future__ import annotations

import math

from ..errors import ShapeError
from .partial_shapes import dim_is_known

__all__ = ["legacy_target_shape", "reshape_shape"]


def reshape_shape(spec: tuple[int, ...], dshape: tuple[int, ...], reverse: bool = False) -> tuple[int, ...]:
    """The output shape of ``Reshape(shape=spec)`` for input shape ``dshape`` (0 in dshape = unknown).

    Codes: 0 copies an input dim, -1 infers one dim, -2 copies the remaining dims, -3 merges two
    input dims, -4 splits one input dim into the next two values (one may be -1).

    Examples
    --------
    >>> reshape_shape((0, -1), (2, 3, 4))
    (2, 12)
    >>> reshape_shape((-4, 1, -1, -2), (6, 5))
    (1, 6, 5)
    """
    dims = list(reversed(dshape)) if reverse else list(dshape)
    codes = list(reversed(spec)) if reverse else list(spec)
    given = f"shape={tuple(spec)} on input {tuple(dshape)}"
    out: list[int] = []
    src, infer_at, i = 0, -1, 0

    def take_dim(code: int) -> int:
        if src >= len(dims):
            raise ShapeError(f"Reshape: code {code} needs an input dim that {given} does not have")
        return dims[src]

    while i < len(codes):
        code = codes[i]
        if code == 0:
            out.append(take_dim(0))
            src += 1
        elif code == -1:
            if infer_at >= 0:
                raise ShapeError(f"Reshape: only one -1 is allowed, {given}")
            infer_at = len(out)
            out.append(1)
            src += 1
        elif code == -2:
            out.extend(dims[src:])
            src = len(dims)
        elif code == -3:
            first = take_dim(-3)
            src += 1
            out.append(first * take_dim(-3))
            src += 1
        elif code == -4:
            if i + 2 >= len(codes):
                raise ShapeError(f"Reshape: -4 must be followed by two values, {given}")
            whole = take_dim(-4)
            src += 1
            a, b = codes[i + 1], codes[i + 2]
            i += 2
            if a == -1 and b == -1 or a < -1 or b < -1 or a == 0 or b == 0:
                raise ShapeError(f"Reshape: -4 must split into two positive values (one may be -1), {given}")
            if whole:
                a = whole // b if a == -1 else a
                b = whole // a if b == -1 else b
                if a * b != whole:
                    raise ShapeError(f"Reshape: -4 cannot split dim {whole} into ({a}, {b}), {given}")
            else:
                a, b = max(a, 0), max(b, 0)
            out.extend((a, b))
        elif code > 0:
            out.append(code)
            src += 1
        else:
            raise ShapeError(f"Reshape: invalid code {code} (allowed: positive, 0, -1, -2, -3, -4), {given}")
        i += 1
    known = all(dim_is_known(d) for d in dshape)
    total = math.prod(dshape)
    if infer_at >= 0:
        rest = math.prod(out[:infer_at] + out[infer_at + 1 :])
        if not known:
            out[infer_at] = 0
        elif rest == 0:
            # any size fits beside a zero-size dim: NumPy refuses, as lazynd does (MXNet 1.9.1 dies
            # of a division by zero)
            raise ShapeError(
                f"Reshape: cannot infer -1 beside a zero-size dim: the input {tuple(dshape)} has no elements, {given}"
            )
        elif total % rest:
            raise ShapeError(f"Reshape: cannot infer -1, {total} elements do not divide by {rest}, {given}")
        else:
            out[infer_at] = total // rest
    if reverse:
        out.reverse()
    if known and math.prod(out) != total:
        raise ShapeError(f"Reshape: {given} gives {tuple(out)} with {math.prod(out)} elements, expected {total}")
    return tuple(out)


def legacy_target_shape(target: tuple[int, ...], dshape: tuple[int, ...], keep_highest: bool) -> tuple[int, ...]:
    """MXNet's older ``Reshape(target_shape=..., keep_highest=...)``: one 0 is inferred; keep_highest keeps dim 0.

    Examples
    --------
    >>> legacy_target_shape((5, 0, 2), (2, 3, 4), keep_highest=True)
    (2, 6, 2)
    """
    out = list(target)
    if keep_highest:
        out[0] = dshape[0]
    unknown = [i for i in range(1 if keep_highest else 0, len(out)) if out[i] == 0]
    given = f"target_shape={tuple(target)} on input {tuple(dshape)}"
    if len(unknown) > 1:
        raise ShapeError(f"Reshape: only one 0 (inferred) is allowed, {given}")
    total = math.prod(dshape)
    known = all(dim_is_known(d) for d in dshape)
    if unknown and known:
        rest = math.prod(d for i, d in enumerate(out) if i != unknown[0])
        out[unknown[0]] = total // rest if rest else 0
    if known and math.prod(out) != total:
        raise ShapeError(f"Reshape: {given} gives {tuple(out)} with {math.prod(out)} elements, expected {total}")
    return tuple(out)
