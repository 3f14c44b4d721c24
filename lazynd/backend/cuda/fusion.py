"""CUDA kernels of fused elementwise chains, generated from the steps' C expressions.

The symbolic fusion pass (``lazynd_sym.fused_kernel``) gives a chain as instructions
``(kind, C expression, scalars, refs)``; :func:`chain_source` writes one grid-stride kernel for
it, and :func:`launch_chain` compiles it once per source and device and runs it.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from .elementwise import CUDA_TYPES, FLOAT_DTYPES, PRELUDE, unaliased
from .sources import KernelSource, launch_config

__all__ = ["ACC", "FLOAT_DTYPES", "Instruction", "chain_source", "launch_chain"]

ACC = -1  # input reference: the previous step's result
# kind (unary, binary, scalar, rscalar, clip), C expression, scalar values, input references
Instruction = tuple[str, str, tuple[float, ...], tuple[int, ...]]


def chain_source(chain: Sequence[Instruction], num_inputs: int, dtype: str) -> tuple[str, str, list[float]]:
    """``(kernel name, CUDA source, scalar arguments)`` of the chain for ``dtype``.

    The kernel takes ``in0 .. in{k-1}``, ``out``, one ``double`` per scalar and ``n``.
    Scalars are arguments, not literals, so chains that differ only in their scalars
    share one compiled kernel.
    """
    st, ct = CUDA_TYPES[dtype]
    lines: list[str] = []
    scalars: list[float] = []

    def operand(ref: int, previous: str) -> str:
        return previous if ref == ACC else f"v{ref}"

    previous = ""
    for k, (kind, expr, values, refs) in enumerate(chain):
        names = [f"s{len(scalars) + j}" for j in range(len(values))]
        scalars += values
        result = f"t{k}"
        if kind == "unary":
            body = f"{ct} x = {operand(refs[0], previous)};"
        elif kind == "binary":
            body = f"{ct} a = {operand(refs[0], previous)}; {ct} b = {operand(refs[1], previous)};"
        elif kind == "scalar":
            body = f"{ct} a = {operand(refs[0], previous)}; {ct} b = ({ct}){names[0]};"
        elif kind == "rscalar":
            body = f"{ct} a = ({ct}){names[0]}; {ct} b = {operand(refs[0], previous)};"
        else:  # clip
            body = f"{ct} x = {operand(refs[0], previous)}; {ct} lo = ({ct}){names[0]}; {ct} hi = ({ct}){names[1]};"
        lines.append(f"    {ct} {result}; {{ {body} {result} = ({ct})({expr}); }}")
        previous = result
    params = [f"const {st}* in{j}" for j in range(num_inputs)] + [f"{st}* out"]
    params += [f"double s{j}" for j in range(len(scalars))] + ["long long n"]
    loads = [f"    {ct} v{j} = lazynd_load(in{j}[i]);" for j in range(num_inputs)]
    # no __restrict__: the output may overwrite an input (every input is loaded first)
    body = "\n".join(loads + lines + [f"    out[i] = lazynd_store<{st}, {ct}>({previous});"])
    signature = hashlib.sha1((",".join(params) + body).encode()).hexdigest()[:12]
    name = f"lazynd_fused_{signature}_{dtype}"
    code = (
        PRELUDE
        + f'extern "C" __global__ void {name}({", ".join(params)}) {{\n'
        + "  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;"
        + " i += (long long)gridDim.x * blockDim.x) {\n"
        + body
        + "\n  }\n}\n"
    )
    return name, code, scalars


_SOURCES: dict[str, Any] = {}
_SOURCES_LOCK = threading.Lock()


def _kernel(name: str, code: str, device_id: int) -> Any:
    source = _SOURCES.get(code)
    if source is None:
        with _SOURCES_LOCK:
            source = _SOURCES.setdefault(code, KernelSource(f"fused:{name}", code))
    return source.function(device_id, name)


def launch_chain(device_id: int, chain: Sequence[Instruction], inputs: Sequence[Any], out: Any) -> None:
    """Run the fused kernel of ``chain`` over ``inputs`` into ``out`` (one float dtype) on the current stream."""
    import cupy

    name, code, scalars = chain_source(chain, len(inputs), out.dtype.name)
    target = out if out.flags.c_contiguous else cupy.empty_like(out, order="C")
    args = [unaliased(cupy.ascontiguousarray(x), target) for x in inputs]
    grid, block = launch_config(out.size)
    _kernel(name, code, device_id)(grid, block, (*args, target, *[np.float64(s) for s in scalars], np.int64(out.size)))
    if target is not out:
        out[...] = target
