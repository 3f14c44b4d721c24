"""What "unknown" means to the shape pass, chosen once per inference from ``mx.np_shape``.

MXNet 1.x has two readings of a partial shape.  Outside ``mx.np_shape`` (its legacy one) a dim of
0 is unknown and no array has a zero-size axis.  Under ``mx.np_shape`` a dim of -1 is unknown and
a 0 is a zero-size axis, so ``(0, 3)`` binds an empty batch and ``infer_shape_partial`` reports
``(-1, 3)`` for a batch nobody gave.

Operator shape rules are written once, for two callers: the symbolic pass with the legacy reading
(0 = unknown, a shape ``None`` unknown as a whole), and the imperative call, whose shapes are all
known, under NumPy semantics (a 0 is a size).  :class:`ShapeSemantics` lets the pass take the
NumPy reading without a third version of every rule:

- a node whose inputs are all known runs its rule as an imperative call would (NumPy semantics);
- a node with an input still unknown runs its rule with the legacy reading: -1 becomes the rule's
  0, and a dim the rule leaves 0 comes back as -1.  A zero-size dim has no legacy spelling, so it is
  written as a large stand-in size, twice, with two different stand-ins: a dim of the result that
  is the stand-in both times is a zero-size dim passed on (an empty batch reaching a label), one
  the same both times does not depend on it, and one that follows the stand-in any other way
  (a sum or product with it) is left unknown for a later sweep, once everything is known, to fill.
"""

from __future__ import annotations

from typing import Any

from lazynd.errors import ShapeError
from lazynd.util import is_np_shape, np_shape

Shape = tuple[int, ...]
Rule = tuple[list, list, list]

# stand-ins for a zero-size dim in a legacy rule: large (no real dim equals them) and divisible by
# every small count, so that a rule splitting an axis into pieces takes them as it would take a 0
_ZERO_STAND_INS = (720720 * 1009, 720720 * 2003)


class ShapeSemantics:
    """The reading of partial shapes of one inference: ``numpy`` is ``mx.np_shape``'s (unknown -1,
    0 a size), else MXNet's legacy one (unknown 0).

    Examples
    --------
    >>> legacy, numpy = ShapeSemantics(False), ShapeSemantics(True)
    >>> legacy.known((0, 3)), numpy.known((0, 3)), numpy.known((-1, 3))
    (False, True, False)
    >>> numpy.merge("add", "lhs", (-1, 3), (0, 3))
    (0, 3)
    """

    def __init__(self, numpy: bool) -> None:
        self.numpy = numpy
        self.unknown = -1 if numpy else 0

    @classmethod
    def current(cls) -> ShapeSemantics:
        """The reading the calling thread's ``mx.np_shape`` setting selects."""
        return cls(is_np_shape())

    def known(self, shape: Shape | None) -> bool:
        """Whether every dim of ``shape`` is a size."""
        return shape is not None and all(d >= 0 if self.numpy else d > 0 for d in shape)

    def merge(self, node_name: str, arg: str, given: Shape | None, inferred: Shape | None) -> Shape | None:
        """``given`` and ``inferred`` as one shape, each filling the other's unknown dims; a
        ShapeError when their lengths or known dims differ."""
        if inferred is None:
            return given
        inferred = tuple(int(d) for d in inferred)
        if given is None:
            return inferred
        unknown = self.unknown
        if len(given) != len(inferred) or any(
            g != unknown and i != unknown and g != i for g, i in zip(given, inferred, strict=True)
        ):
            raise ShapeError(
                f"infer_shape: node '{node_name}', argument '{arg}': provided shape {given}, inferred shape {inferred}"
            )
        return tuple(i if g == unknown else g for g, i in zip(given, inferred, strict=True))

    def fill_hint(self, hint: Shape | None, given: Shape) -> Shape:
        """A shape given at inference or bind over a variable's ``shape=`` hint (the hint's dims
        fill the given shape's unknown ones)."""
        if hint is None or len(hint) != len(given):
            return given
        return tuple(h if g == self.unknown else g for g, h in zip(given, hint, strict=True))

    def run_rule(self, op: Any, attrs: dict, ins: list, aux: list, outs: list) -> Rule:
        """``op``'s shape rule on these partial shapes, read and answered in this semantics."""
        if not self.numpy:
            return op.infer_shape(attrs, ins, aux, outs)
        if all(self.known(s) for s in ins + aux):
            with np_shape(True):  # as an imperative call: every 0 is a size
                return op.infer_shape(attrs, ins, aux, [s if self.known(s) else None for s in outs])
        has_zero = any(s is not None and 0 in s for s in ins + aux + outs)
        runs = [self._legacy_run(op, attrs, (ins, aux, outs), zero) for zero in (_ZERO_STAND_INS if has_zero else (0,))]
        if len(runs) == 1:
            return _map_results(runs[0], lambda d: d if d else -1)
        return _combine(runs[0], runs[1])

    @staticmethod
    def _legacy_run(op: Any, attrs: dict, shapes: tuple[list, list, list], zero: int) -> Rule:
        def legacy(shape: Shape | None) -> Shape | None:
            return None if shape is None else tuple(0 if d == -1 else zero if d == 0 else d for d in shape)

        ins, aux, outs = ([legacy(s) for s in group] for group in shapes)
        with np_shape(False):
            return op.infer_shape(attrs, ins, aux, outs)


def _map_results(results: Rule, dim: Any) -> Rule:
    new_in, new_out, new_aux = results
    return tuple(  # type: ignore[return-value]
        [None if s is None else tuple(dim(int(d)) for d in s) for s in group] for group in (new_in, new_out, new_aux)
    )


def _combine(first: Rule, second: Rule) -> Rule:
    """One rule's answers for the two zero-size stand-ins as one answer (see the module's docstring)."""
    one, two = _ZERO_STAND_INS

    def dim(a: int, b: int) -> int:
        if a == one and b == two:
            return 0
        return a if a == b and a else -1

    def shape(a: Any, b: Any) -> Shape | None:
        if a is None or b is None or len(a) != len(b):
            return None
        return tuple(dim(int(x), int(y)) for x, y in zip(a, b, strict=True))

    return tuple(  # type: ignore[return-value]
        [shape(a, b) for a, b in zip(group_a, group_b, strict=False)]
        for group_a, group_b in zip(first, second, strict=True)
    )
