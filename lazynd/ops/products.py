"""Matrix products inside kernels: every one through the backend's GEMM route.

``Backend.matmul`` is the one route an operator's product takes: NumPy's ``matmul`` (or MKL) on
the host, cuBLAS's C functions on a GPU (:mod:`lazynd.backend.cuda.gemm`: plain and strided
batched GEMM, with ``cupy.matmul`` only for what cuBLAS cannot take).  A kernel that called
``xp.matmul`` itself would go through CuPy's cuBLAS bindings, which refuse every call while a
stream captures, so an executor's pass holding it could never replay as a CUDA graph
(:mod:`lazynd.backend.cuda.graphs`).  :func:`product` is ``a @ b`` into a new array for kernels
that have no output buffer of the product's shape to give the route.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def product(kctx: Any, a: Any, b: Any) -> Any:
    """``a @ b`` (NumPy's ``matmul`` rules for operands of two or more dimensions: the leading axes
    broadcast) as a new array of ``kctx``'s device, through ``kctx.backend.matmul``.

    Examples:
        >>> import numpy as np
        >>> from lazynd.backend.cpu import NumpyBackend
        >>> from lazynd.ops.opdef import KernelContext
        >>> kctx = KernelContext(np, NumpyBackend())
        >>> product(kctx, np.ones((2, 1, 1, 3)), np.ones((4, 3, 5))).shape
        (2, 4, 1, 5)
    """
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    out = kctx.xp.empty((*batch, a.shape[-2], b.shape[-1]), dtype=np.result_type(a.dtype, b.dtype))
    kctx.backend.matmul(a, b, out)
    return out
