"""Fused elementwise kernels: one operator that runs a chain of elementwise operators.

A chain is a list of :class:`FusedStep` (an operator, its parsed parameters and where
each of its inputs comes from: an input of the fused node, or ``ACC``, the value the
previous step produced).  On the CPU the chain runs the members' own NumPy
kernels, every step writing into the fused node's output buffer (``out=``), so no
intermediate array is stored; large arrays go through the whole chain one
cache-sized chunk at a time.  On the GPU the chain becomes one generated CUDA
kernel (``lazynd_fused_<hash>_<dtype>``) that loads each input once, computes every
step in registers and stores the result once; sources are compiled on first use and
cached per device.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any, NamedTuple

from lazynd.errors import OperatorError
from lazynd.ops import elemwise_binary, elemwise_unary
from lazynd.ops.cuda_elemwise import CUDA_TYPES, FLOAT_DTYPES, PRELUDE
from lazynd.ops.registry import OpDef

ACC = -1  # input reference: the previous step's result
CPU_CHUNK = 1 << 17  # elements per cache-sized chunk of a fused chain on the CPU
CPU_CHUNK_FROM = 1 << 21  # smaller arrays stay in cache anyway; chunking would only add calls

# Activation / _backward_Activation by act_type: C expressions in x (forward) or a = dy, b = y
_ACTIVATION = {
    "relu": "(x > 0 ? x : 0)",
    "sigmoid": "1 / (1 + exp(-x))",
    "tanh": "tanh(x)",
    "softrelu": "(x > 20 ? x : log1p(exp(x)))",
    "softsign": "x / (1 + (x < 0 ? -x : x))",
}
_ACTIVATION_BACKWARD = {
    "relu": "(b > 0 ? a : 0)",
    "sigmoid": "a * b * (1 - b)",
    "tanh": "a * (1 - b * b)",
    "softrelu": "a * -expm1(-b)",
    "softsign": "a * (1 - (b < 0 ? -b : b)) * (1 - (b < 0 ? -b : b))",
}
_NOT_FUSED = {"_digamma"}  # its CUDA expression is long; gains nothing from fusion


class FusedStep(NamedTuple):
    op: OpDef
    attrs: dict
    refs: tuple[int, ...]  # per operator input: an input index of the fused node, or ACC


def cuda_expression(op: OpDef, attrs: dict) -> tuple[str, str, tuple[float, ...]] | None:
    """``(kind, C expression, scalars)`` of a fusable operator, or None when it is not fusable.

    ``kind`` is ``unary`` (expression in ``x``), ``binary`` (in ``a``, ``b``), ``scalar``
    or ``rscalar`` (``a``, ``b`` with the scalar as ``b`` or ``a``) or ``clip`` (``x``
    and the scalars ``lo``, ``hi``).

    Examples
    --------
    >>> from lazynd.ops import registry
    >>> cuda_expression(registry.get("_mul_scalar"), {"scalar": 2.0})
    ('scalar', 'a * b', (2.0,))
    """
    name = op.name
    if name in _NOT_FUSED or op.aux or op.needs_random:
        return None
    if name in elemwise_unary.UNARY:
        return "unary", elemwise_unary.UNARY[name].expr, ()
    if name in elemwise_unary.BACKWARD:
        return "binary", elemwise_unary.BACKWARD[name][1], ()
    if name == "Activation":
        return "unary", _ACTIVATION[attrs["act_type"]], ()
    if name == "_backward_Activation":
        return "binary", _ACTIVATION_BACKWARD[attrs["act_type"]], ()
    if name == "clip":
        return "clip", "(x < lo ? lo : (x > hi ? hi : x))", (float(attrs["a_min"]), float(attrs["a_max"]))
    if name.endswith("_scalar"):
        base = name[1 : -len("_scalar")]
        reflected = base.startswith("r") and base[1:] in elemwise_binary.REFLECTED
        base = base[1:] if reflected else base
        if base in elemwise_binary.ARITHMETIC:
            return (
                ("rscalar" if reflected else "scalar"),
                elemwise_binary.ARITHMETIC[base][1],
                (float(attrs["scalar"]),),
            )
        return None
    if name.startswith("_") and name[1:] in elemwise_binary.ARITHMETIC:
        return "binary", elemwise_binary.ARITHMETIC[name[1:]][1], ()
    return None


def is_fusable(op: OpDef | None, attrs: dict) -> bool:
    """Whether a node of ``op`` may join a fused chain."""
    return op is not None and op.num_outputs(attrs) == 1 and cuda_expression(op, attrs) is not None


# -- CUDA source generation ------------------------------------------------------------------------
def cuda_source(steps: list[FusedStep], num_inputs: int, dtype: str) -> tuple[str, str, list[float]]:
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
    for k, step in enumerate(steps):
        found = cuda_expression(step.op, step.attrs)
        if found is None:
            raise OperatorError(f"fused kernel: operator {step.op.name} has no CUDA expression")
        kind, expr, values = found
        names = [f"s{len(scalars) + j}" for j in range(len(values))]
        scalars += values
        result = f"t{k}"
        if kind == "unary":
            body = f"{ct} x = {operand(step.refs[0], previous)};"
        elif kind == "binary":
            body = f"{ct} a = {operand(step.refs[0], previous)}; {ct} b = {operand(step.refs[1], previous)};"
        elif kind == "scalar":
            body = f"{ct} a = {operand(step.refs[0], previous)}; {ct} b = ({ct}){names[0]};"
        elif kind == "rscalar":
            body = f"{ct} a = ({ct}){names[0]}; {ct} b = {operand(step.refs[0], previous)};"
        else:  # clip
            body = (
                f"{ct} x = {operand(step.refs[0], previous)}; {ct} lo = ({ct}){names[0]}; {ct} hi = ({ct}){names[1]};"
            )
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
    from lazynd.backend.cuda_kernels import KernelSource

    source = _SOURCES.get(code)
    if source is None:
        with _SOURCES_LOCK:
            source = _SOURCES.setdefault(code, KernelSource(f"fused:{name}", code))
    return source.function(device_id, name)


# -- the fused operator ----------------------------------------------------------------------------
def _forward_cpu(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    out = outputs[0]
    steps = attrs["steps"]
    if out.size < CPU_CHUNK_FROM or not all(x.flags.c_contiguous for x in (out, *inputs)):
        _run_cpu_steps(kctx, steps, inputs, out)
        return
    # chunk by chunk, so a chunk stays in cache through every step of the chain
    flat_out = out.reshape(-1)
    flat_in = [x.reshape(-1) for x in inputs]
    for start in range(0, out.size, CPU_CHUNK):
        part = slice(start, start + CPU_CHUNK)
        _run_cpu_steps(kctx, steps, [x[part] for x in flat_in], flat_out[part])


def _run_cpu_steps(kctx: Any, steps: list[FusedStep], inputs: list, out: Any) -> None:
    for step in steps:
        step.op.forward(kctx, step.attrs, [out if r == ACC else inputs[r] for r in step.refs], [out], [])


def _forward_gpu(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    import cupy
    import numpy as np

    from lazynd.backend.cuda_kernels import launch_config

    out = outputs[0]
    dtype = out.dtype.name
    if dtype not in FLOAT_DTYPES or any(x.dtype != out.dtype for x in inputs):
        _forward_steps_gpu(kctx, attrs, inputs, out)
        return
    name, code, scalars = cuda_source(attrs["steps"], len(inputs), dtype)
    args = [cupy.ascontiguousarray(x) for x in inputs]
    target = out if out.flags.c_contiguous else cupy.empty_like(out, order="C")
    grid, block = launch_config(out.size)
    _kernel(name, code, kctx.device_id)(
        grid, block, (*args, target, *[np.float64(s) for s in scalars], np.int64(out.size))
    )
    if target is not out:
        out[...] = target


def _forward_steps_gpu(kctx: Any, attrs: dict, inputs: list, out: Any) -> None:
    """Integer dtypes: the members' own kernels, one after the other (intermediates in temporaries)."""
    previous = None
    steps = attrs["steps"]
    for k, step in enumerate(steps):
        target = out if k == len(steps) - 1 else kctx.xp.empty_like(out)
        fn = step.op.forward_gpu or step.op.forward
        fn(kctx, step.attrs, [previous if r == ACC else inputs[r] for r in step.refs], [target], [])
        previous = target


def make_fused_op(steps: list[FusedStep], num_inputs: int) -> OpDef:
    """An operator running ``steps`` over ``num_inputs`` inputs of one shape and dtype.

    Inputs read only by the first step may share storage with the output (in place).
    """
    later = {r for step in steps[1:] for r in step.refs}
    inplace = tuple((j, 0) for j in range(num_inputs) if j not in later)
    names = " -> ".join(step.op.name for step in steps)
    return OpDef(
        "_fused_elemwise",
        _forward_cpu,
        forward_gpu=_forward_gpu,
        inputs=tuple(f"in{j}" for j in range(num_inputs)),
        inplace=inplace,
        doc=f"Fused elementwise chain: {names}.",
    )


def describe(steps: list[FusedStep]) -> str:
    """The chain as text: ``exp -> _mul_scalar -> relu``."""
    return " -> ".join(step.op.name for step in steps)
