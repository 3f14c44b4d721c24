"""GPU kernels without float16: :func:`float16_as_float32` runs them in float32 on float16 arrays.

Some CUDA kernels of ours exist in float32 and float64 only (convolution's im2col, pooling,
BatchNorm).  An operator defined with ``gpu_float16_as_float32=True`` (see
:class:`~lazynd.ops.opdef.OpDef`) gets its GPU kernel wrapped here when it is defined: float16
arrays are widened, computed on, and the results narrowed back, so float16 models run on the GPU
with float32 arithmetic inside those operators.  Arrays of other types go straight to the kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["float16_as_float32"]


def float16_as_float32(
    kernel: Callable[..., None], mutates: Sequence[int] | Callable[[dict], Sequence[int]] = ()
) -> Callable[..., None]:
    """A kernel that runs ``kernel`` in float32 when any of its arrays is float16 (on the GPU, for
    operators whose CUDA kernels exist in float32 and float64 only): float16 inputs, outputs and
    auxiliary states are widened, computed on, and the results narrowed back into the outputs, the
    auxiliary states (BatchNorm's moving statistics) and the inputs the kernel updates in place
    (``mutates``, as :class:`~lazynd.ops.opdef.OpDef` takes it: BatchNorm's gamma with ``fix_gamma``)."""
    import numpy as np

    half = np.dtype(np.float16)

    def widen(a: Any) -> Any:  # None: an output left out (``optional_outputs``)
        return a.astype(np.float32) if a is not None and a.dtype == half else a

    def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
        if not any(a is not None and a.dtype == half for group in (inputs, outputs, aux) for a in group):
            kernel(kctx, attrs, inputs, outputs, aux)
            return
        # outputs start from their values: a kernel may accumulate into them
        wide_inputs = [widen(x) for x in inputs]
        wide_outputs, wide_aux = [widen(o) for o in outputs], [widen(a) for a in aux]
        kernel(kctx, attrs, wide_inputs, wide_outputs, wide_aux)
        written = mutates(attrs) if callable(mutates) else mutates
        targets = [*outputs, *aux, *(inputs[i] for i in written)]
        wides = [*wide_outputs, *wide_aux, *(wide_inputs[i] for i in written)]
        for target, wide in zip(targets, wides, strict=True):
            if wide is not target:
                target[...] = wide

    return forward
