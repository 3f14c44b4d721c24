"""``lazynd.test_utils``: the testing helpers under the module name MXNet users know.

Everything in :mod:`lazynd.testing` is here, plus the symbolic checks of
:mod:`lazynd.testing_symbolic` and :mod:`lazynd.testing_consistency` (``check_numeric_gradient``,
``check_symbolic_forward``, ``check_symbolic_backward``, MXNet 0.9's ``check_consistency(sym, ctx_list)`` and
``check_speed``), which take a ``lazynd_sym.Symbol`` (so ``lazynd`` never depends on
``lazynd_sym`` at import time), MXNet 0.9's ``almost_equal_ignore_nan`` and
``default_numerical_threshold``, and MXNet 1.x's helpers: the small ones of :mod:`lazynd.test_helpers`
(``get_mnist``, ``random_arrays``, ``assert_exception``, ``simple_forward``...), the tolerance tables
of :mod:`lazynd.testing_tolerances`, the generator checks of :mod:`lazynd.testing_statistics`, the
test arrays of :mod:`lazynd.testing_arrays`, the set-up helpers of :mod:`lazynd.testing_environment`,
``numeric_grad`` of :mod:`lazynd.testing_executor` and the downloaders of :mod:`lazynd.testing_downloads`.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

import lazynd as mx
from lazynd.context import Context, current_context
from lazynd.ndarray import array

# MXNet 1.x's helpers, one module per idea; each module's __all__ is what is handed on
from . import (
    testing_arrays,
    testing_downloads,
    testing_environment,
    testing_executor,
    testing_statistics,
    testing_tolerances,
)
from .test_helpers import (
    assert_allclose,
    assert_almost_equal_ignore_nan,
    assert_exception,
    checkShapes,
    default_dtype,
    download,
    get_mnist,
    get_mnist_iterator,
    get_mnist_ubyte,
    list_gpus,
    rand_coord_2d,
    rand_shape_3d,
    random_arrays,
    random_sample,
    random_uniform_arrays,
    same_array,
    simple_forward,
)
from .testing import (
    DEFAULT_TOLERANCES,
    almost_equal,
    assert_almost_equal,
    check_forward,
    check_gradient,
    default_context,
    np_reduce,
    rand_ndarray,
    rand_shape_2d,
    rand_shape_nd,
    reldiff,
    same,
    set_default_context,
)
from .testing import check_consistency as check_op_consistency
from .testing_arrays import *  # noqa: F403
from .testing_consistency import check_consistency
from .testing_downloads import *  # noqa: F403
from .testing_environment import *  # noqa: F403
from .testing_executor import *  # noqa: F403
from .testing_speed import check_speed
from .testing_statistics import *  # noqa: F403
from .testing_symbolic import (
    check_numeric_gradient,
    check_symbolic_backward,
    check_symbolic_forward,
    same_symbol_structure,
)
from .testing_tolerances import *  # noqa: F403

__all__ = [
    "DEFAULT_TOLERANCES",
    "almost_equal",
    "assert_almost_equal",
    "check_consistency",
    "check_forward",
    "check_gradient",
    "default_context",
    "np_reduce",
    "rand_ndarray",
    "rand_shape_2d",
    "rand_shape_nd",
    "reldiff",
    "same",
    "set_default_context",
    "check_numeric_gradient",
    "check_speed",
    "check_symbolic_forward",
    "check_symbolic_backward",
    "check_op_consistency",
    "almost_equal_ignore_nan",
    "default_numerical_threshold",
    "assert_allclose",
    "assert_almost_equal_ignore_nan",
    "assert_exception",
    "default_dtype",
    "download",
    "get_mnist",
    "get_mnist_ubyte",
    "get_mnist_iterator",
    "list_gpus",
    "rand_shape_3d",
    "random_arrays",
    "random_sample",
    "checkShapes",
    "same_array",
    "simple_forward",
    "rand_coord_2d",
    "random_uniform_arrays",
    "same_symbol_structure",
    *testing_tolerances.__all__,
    *testing_statistics.__all__,
    *testing_arrays.__all__,
    *testing_environment.__all__,
    *testing_executor.__all__,
    *testing_downloads.__all__,
]


def default_numerical_threshold() -> float:
    """MXNet 0.9's default threshold for numerical comparisons."""
    return 1e-6


def almost_equal_ignore_nan(a: Any, b: Any, rtol: float | None = None, atol: float | None = None) -> bool:
    """:func:`almost_equal` where a NaN in either array counts as equal to anything.

    Examples
    --------
    >>> almost_equal_ignore_nan(np.array([1.0, np.nan]), np.array([1.0, 5.0]))
    True
    """
    a = np.array(a.asnumpy() if hasattr(a, "asnumpy") else a, dtype=np.float64)
    b = np.array(b.asnumpy() if hasattr(b, "asnumpy") else b, dtype=np.float64)
    nan = np.isnan(a) | np.isnan(b)
    a[nan] = 0
    b[nan] = 0
    return almost_equal(a, b, rtol, atol)


# MXNet's test_utils has no __all__, so ``from mxnet.test_utils import *`` also hands on what it imports,
# and MXNet's own test files lean on that (``np.zeros``, ``mx.nd.ones``, ``os.path``, ``array(w, dtype=...)``)
__all__ += ["mx", "np", "os", "sys", "array", "Context", "current_context"]
