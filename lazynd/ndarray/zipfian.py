"""``mx.nd.contrib.rand_zipfian`` and ``mx.sym.contrib.rand_zipfian``: candidate sampling from
an approximately log-uniform (Zipfian) distribution over ``[0, range_max)``, as MXNet 1.x's.

A class ``c`` has probability ``log((c + 2) / (c + 1)) / log(range_max + 1)``; the samples are
``floor(exp(u)) - 1`` for ``u`` uniform on ``[0, log(range_max + 1))``, wrapped into range.
Written once over the operators of a namespace ``F`` (``mx.nd`` or ``mx.sym``), as MXNet writes
both faces from one formula.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import LazyNDError


def _expected_count(F: Any, classes: Any, num_sampled: int, log_range: float) -> Any:
    """``num_sampled`` times the probability of each of ``classes`` (float64)."""
    wide = F.Cast(classes, dtype="float64")
    ratio = F._div(F._plus_scalar(wide, scalar=2.0), F._plus_scalar(wide, scalar=1.0))
    return F._mul_scalar(F.log(ratio), scalar=num_sampled / log_range)


def sample_zipfian(F: Any, true_classes: Any, num_sampled: int, range_max: int, **context: Any) -> tuple:
    """``(samples int64, expected count of true_classes float64, expected count of samples float64)``.

    ``context`` is ``ctx=`` for the NDArray face (default: the current context).
    """
    for name, value in (("num_sampled", num_sampled), ("range_max", range_max)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise LazyNDError(f"rand_zipfian: {name} must be a positive integer, got {value!r}")
    log_range = math.log(range_max + 1)
    draws = F._random_uniform(low=0.0, high=log_range, shape=(num_sampled,), dtype="float64", **context)
    samples = F._mod_scalar(F.Cast(F._minus_scalar(F.exp(draws), scalar=1.0), dtype="int64"), scalar=range_max)
    return (
        samples,
        _expected_count(F, true_classes, num_sampled, log_range),
        _expected_count(F, samples, num_sampled, log_range),
    )


def rand_zipfian(true_classes: Any, num_sampled: int, range_max: int, ctx: Any = None) -> tuple:
    """Draw ``num_sampled`` classes of ``[0, range_max)`` from the log-uniform distribution, with
    the expected counts of ``true_classes`` and of the samples (``mx.nd.contrib.rand_zipfian``).

    Examples
    --------
    >>> import lazynd as mx
    >>> samples, count_true, count_sampled = mx.nd.contrib.rand_zipfian(mx.nd.array([3]), 4, 5)
    >>> samples.dtype.__name__, samples.shape, round(float(count_true.asnumpy()[0]), 6)
    ('int64', (4,), 0.498155)
    """
    from .. import context
    from .. import ndarray as nd

    ctx = ctx if ctx is not None else context.current_context()
    return sample_zipfian(nd, true_classes.as_in_context(ctx), num_sampled, range_max, ctx=ctx)
