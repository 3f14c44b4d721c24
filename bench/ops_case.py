"""The operator benchmark's rows and their inputs: the ``Case`` record, page-aligned inputs shared by every column."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import lazynd as mx
from lazynd.backend.pool import aligned_empty

try:
    import torch
    import torch.nn.functional as TF
except ImportError:  # PyTorch is optional
    torch = None
    TF = None

N = 1000  # 1000 x 1000 = 1M elements
RNG = np.random.default_rng(0)


@dataclass
class Case:
    """One row of the table: an operator's lazynd call, its hand-NumPy reference and its PyTorch call."""

    family: str
    name: str
    lazynd: Callable[[], object]  # returns an NDArray or a list of them
    numpy: Callable[[], object]
    torch: Callable[[], object] | None = None
    check: bool = True
    # counted against the 1.2x goal; False for a row with no work on the elements (a view's O(1)
    # Python call against NumPy's C attribute), which is shown for information
    goal: bool = True


def rand(*shape: int, low: float = -1.0, high: float = 1.0, dtype: str = "float32") -> np.ndarray:
    """Uniform values in an array aligned as lazynd's own large buffers are (on a page).

    malloc gives a large block 16-byte alignment, and OpenBLAS's dot runs 1.5x slower there:
    without this, the ``norm`` row measured the reference array's alignment, not the code.
    """
    return aligned(RNG.uniform(low, high, size=shape).astype(dtype))


def aligned(values: np.ndarray) -> np.ndarray:
    """A copy of ``values`` starting on a page, as every input array of the benchmark does (see :func:`rand`)."""
    copy = aligned_empty(values.shape, values.dtype, values.nbytes)
    copy[...] = values
    return copy


def nd(*arrays: np.ndarray) -> list:
    """lazynd arrays on the very memory of the NumPy references' inputs (as ``torch.from_numpy`` gives PyTorch).

    Every column then reads the same bytes: ``mx.nd.array`` would copy each input to an
    address of its own, and a copy kernel such as ``broadcast_to`` runs 10-30% faster or
    slower with where its source row sits relative to the rows it writes (most likely 4K
    aliasing), so the comparison would measure that placement instead of the operator.
    """
    for v in arrays:
        assert v.flags.c_contiguous and v.__array_interface__["data"][0] % 4096 == 0, "inputs come from rand/aligned"
    return [mx.nd.from_numpy(v, zero_copy=True) for v in arrays]


def torch_view(a: np.ndarray) -> object:
    """``a`` as a PyTorch tensor on the same memory (None without PyTorch: its column is left out)."""
    return torch.from_numpy(a) if torch is not None else None


def torch_index(a: np.ndarray) -> object:
    """Float indices ``a`` as the int64 tensor PyTorch's indexing takes (None without PyTorch)."""
    return torch.from_numpy(a.astype(np.int64)) if torch is not None else None


def torch_full(n: int, value: float) -> object:
    """A float32 tensor of ``n`` values ``value`` (None without PyTorch)."""
    return torch.full((n,), value) if torch is not None else None
