"""User CUDA kernels for ``mx.rtc``: compiled with NVRTC (through CuPy) and launched on the current stream.

The kernel source is built by :mod:`lazynd.cuda_rtc`; here it is compiled once per device
and launched with one device pointer per array, as MXNet's ``MXRtcPush`` did.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .sources import KernelSource


def compile_kernel(name: str, code: str) -> KernelSource:
    """A kernel source for ``code`` (not registered with the project's kernels; compiled on first launch)."""
    return KernelSource(f"rtc:{name}", code)


def launch(
    source: KernelSource,
    device_id: int,
    name: str,
    grid: Sequence[int],
    block: Sequence[int],
    arrays: Sequence[Any],
) -> None:
    """Launch ``name`` from ``source`` on ``device_id`` with the arrays' device pointers as arguments."""
    function = source.function(device_id, name)
    function(tuple(grid), tuple(block), tuple(arrays))
