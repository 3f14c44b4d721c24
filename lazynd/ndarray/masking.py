"""``mx.nd.contrib.boolean_mask``: an operator whose output length depends on its input's values.

No shape rule can size its output before the mask is computed, so the mask is read (this waits
for it) and the selected rows are taken with the ``take`` operator, which autograd records: the
gradient goes back to the kept rows, zeros to the others, as in MXNet.  The registered
``_contrib_boolean_mask`` (lazynd/ops/contrib_indexing.py) refuses it in a symbol graph.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import OperatorError
from ..ops import registry

NAME = "_contrib_boolean_mask"


def boolean_mask(data: Any, index: Any, axis: int = 0, out: Any = None, name: str | None = None) -> Any:
    """The rows of ``data`` (along ``axis``, which MXNet supports as 0 only) where ``index`` is nonzero.

    Examples
    --------
    >>> import lazynd as mx
    >>> x = mx.nd.array([[1, 2], [3, 4], [5, 6]])
    >>> mx.nd.contrib.boolean_mask(x, mx.nd.array([0, 1, 1])).asnumpy().tolist()
    [[3.0, 4.0], [5.0, 6.0]]
    """
    from . import NDArray, array, take  # type: ignore[attr-defined]

    if not isinstance(data, NDArray) or not isinstance(index, NDArray):
        raise OperatorError(
            f"{NAME}: 'data' and 'index' must be NDArrays, got {type(data).__name__}, {type(index).__name__}"
        )
    if registry.get(NAME).params["axis"].parse(NAME, "axis", axis) != 0:
        raise OperatorError(f"{NAME}: axis {axis} is not supported, expected 0 (as in MXNet 1.9.1)")
    if not data.ndim:
        raise OperatorError(f"{NAME}: 'data' must have at least one axis, got shape {data.shape}")
    if index.ndim != 1 or index.shape[0] != data.shape[0]:
        raise OperatorError(
            f"{NAME}: 'index' must be 1-D of length {data.shape[0]} (the length of 'data' along axis 0), "
            f"got shape {index.shape}"
        )
    positions = np.flatnonzero(index.asnumpy())
    return take(data, array(positions, ctx=data.context, dtype="int64"), axis=0, out=out)
