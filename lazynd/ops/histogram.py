"""MXNet 1.x's ``_histogram``: counts of the (flattened) data in bins, and the bins' edges.

Two forms, as MXNet's:

- ``_histogram(data, bin_cnt=n, range=(lo, hi))``: ``n`` equal bins over ``[lo, hi]`` (over
  ``[lo - 0.5, hi + 0.5]`` where ``lo == hi``); the edges (``n + 1``) come back in the data's dtype;
- ``_histogram(data, bins)``: the edges are the 1-D array ``bins`` (rising: a falling or NaN edge is
  refused when the kernel reads it), handed back as they are.

Every bin is half-open ``[e_i, e_i+1)`` except the last, which holds its right edge too;
values outside the edges are not counted.  Counts are int64.  ``mx.nd.histogram(a, bins=10,
range=None)`` is MXNet's Python function over this operator.  No gradient (none in MXNet).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from .params import Param, optional, parse_float_tuple, parse_int
from .registry import OpDef, register


def _positive(value: Any) -> int:
    number = parse_int(value)
    if number < 1:
        raise ValueError("expected an integer >= 1")
    return number


def _range(value: Any) -> tuple[float, float]:
    bounds = parse_float_tuple(value)
    if len(bounds) != 2 or not bounds[0] <= bounds[1]:
        raise ValueError("expected (low, high) with low <= high")
    return bounds[0], bounds[1]


def _uniform(attrs: dict) -> bool:
    """Equal bins from parameters (else edges from the ``bins`` input); both or neither given."""
    if (attrs["bin_cnt"] is None) != (attrs["range"] is None):
        raise OperatorError(
            f"_histogram: bin_cnt and range are given together or not at all (bin_cnt={attrs['bin_cnt']}, "
            f"range={attrs['range']}); without them the edges come from the input 'bins'"
        )
    return attrs["bin_cnt"] is not None


def _inputs(attrs: dict) -> list[str]:
    return ["data"] if attrs.get("bin_cnt") is not None else ["data", "bins"]


def _infer_shape(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    if _uniform(attrs):
        n = attrs["bin_cnt"]
        return in_shapes, [(n,), (n + 1,)], aux_shapes
    bins = in_shapes[1]
    if bins is None:
        return in_shapes, [None, None], aux_shapes
    if len(bins) != 1 or (bins[0] and bins[0] < 2):
        raise ShapeError(f"_histogram: shape of 'bins' is {tuple(bins)}, expected (n,) with n >= 2 edges")
    return in_shapes, [(bins[0] - 1 if bins[0] else 0,), (bins[0],)], aux_shapes


def _infer_type(attrs: dict, in_types: list, aux_types: list) -> tuple[list, list, list]:
    edges = in_types[0] if _uniform(attrs) else in_types[1]
    return in_types, ["int64", edges], aux_types


def _forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp = kctx.xp
    data = inputs[0].reshape(-1).astype(np.float64)
    counts, edges_out = outputs
    if attrs["bin_cnt"] is not None:
        n = attrs["bin_cnt"]
        low, high = attrs["range"]
        if low == high:  # as MXNet (and NumPy): an empty range is widened by 0.5 each way
            low, high = low - 0.5, high + 0.5
        edges_out[...] = xp.linspace(low, high, n + 1)
        scale = n / (high - low)
        index = xp.floor((data - low) * scale).astype(np.int64)
    else:
        edges = inputs[1].astype(np.float64)
        # edges that fall (or are NaN) bin by no rule (MXNet 1.9.1 counts anyway; NumPy refuses them);
        # equal neighbours make an empty bin, as in NumPy
        rises = edges[1:] >= edges[:-1]
        steps = xp.where(rises, 0.0, edges[1:] - edges[:-1])
        kctx.backend.check_range("_histogram", "step between neighbouring edges of 'bins'", steps, 0, np.inf, True)
        low, high, n = edges[0], edges[-1], edges.size - 1
        edges_out[...] = inputs[1]
        index = xp.searchsorted(edges, data, side="right") - 1
    inside = (data >= low) & (data <= high)
    index = xp.minimum(index, n - 1)  # the right edge belongs to the last bin
    if xp is np:
        counts[...] = np.bincount(index[inside], minlength=n)[:n]
    else:
        counts[...] = _counts_on_device(xp, xp.where(inside, index, n), n)


def _counts_on_device(xp: Any, index: Any, n: int) -> Any:
    """How many of ``index`` (bin numbers, ``n`` for a value outside every bin) fall in each of the
    ``n`` bins, from where each bin starts in the sorted numbers: a mask or ``bincount`` would make
    CuPy read a count back to the host, a wait for the device that also keeps an executor's pass
    from being captured into a CUDA graph (lazynd/backend/cuda/graphs.py)."""
    starts = xp.searchsorted(xp.sort(index), xp.arange(n + 1, dtype=index.dtype), side="left")
    return starts[1:] - starts[:-1]


register(
    OpDef(
        "_histogram",
        _forward,
        inputs=_inputs,
        outputs=("output0", "output1"),
        params={
            "bin_cnt": Param(optional(_positive), None, "number of equal bins (with range)"),
            "range": Param(optional(_range), None, "(low, high) of the equal bins (with bin_cnt)"),
        },
        infer_shape=_infer_shape,
        infer_type=_infer_type,
        gradient=lambda F, attrs, ins, outs, og: [None] * len(ins),
        doc="Counts of data in bins (int64) and the bins' edges: bin_cnt equal bins over range, or edges bins.",
    )
)
