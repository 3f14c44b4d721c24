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

from typing import Any, NamedTuple

import numpy as np

from lazynd.backend.cuda.fusion import ACC
from lazynd.errors import OperatorError
from lazynd.ops import elemwise_binary, elemwise_unary
from lazynd.ops.registry import OpDef

CPU_CHUNK = 1 << 17  # elements per cache-sized chunk of a fused chain on the CPU
CPU_CHUNK_FROM = 1 << 21  # smaller arrays stay in cache anyway; chunking would only add calls

# _digamma: its CUDA expression is long; gains nothing from fusion.  _grad_add: the links of a
# gradient sum's chain (lazynd_sym.passes.gradient_sum), fused, would be one kernel reading every
# term, so every term would live until the last is made: what the chain is there to avoid
_NOT_FUSED = {"_digamma", "_grad_add"}


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
    if name in _NOT_FUSED or op.aux or op.draws_random(attrs):
        return None
    if name in elemwise_unary.UNARY:
        return "unary", elemwise_unary.UNARY[name].expr, ()
    if name in elemwise_unary.BACKWARD:
        return "binary", elemwise_unary.BACKWARD[name][1], ()
    if name == "Activation":
        return "unary", elemwise_unary.UNARY[elemwise_unary.ACTIVATIONS[attrs["act_type"]][0]].expr, ()
    if name == "_backward_Activation":
        return "binary", elemwise_unary.BACKWARD[elemwise_unary.ACTIVATIONS[attrs["act_type"]][1]][1], ()
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


# -- CUDA source generation (in the backend) ----------------------------------------------------------
def instructions(steps: list[FusedStep]) -> list[tuple[str, str, tuple[float, ...], tuple[int, ...]]]:
    """``(kind, C expression, scalars, refs)`` per step: what :mod:`lazynd.backend.cuda.fusion`
    generates the chain's kernel from."""
    found = []
    for step in steps:
        expression = cuda_expression(step.op, step.attrs)
        if expression is None:
            raise OperatorError(f"fused kernel: operator {step.op.name} has no CUDA expression")
        found.append((*expression, tuple(step.refs)))
    return found


def cuda_source(steps: list[FusedStep], num_inputs: int, dtype: str) -> tuple[str, str, list[float]]:
    """``(kernel name, CUDA source, scalar arguments)`` of the chain for ``dtype``."""
    from lazynd.backend.cuda.fusion import chain_source

    return chain_source(instructions(steps), num_inputs, dtype)


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
    from lazynd.backend.cuda.fusion import FLOAT_DTYPES, launch_chain

    out = outputs[0]
    if out.dtype.name not in FLOAT_DTYPES or any(x.dtype != out.dtype for x in inputs):
        _forward_steps_gpu(kctx, attrs, inputs, out)
        return
    launch_chain(kctx.device_id, instructions(attrs["steps"]), inputs, out)


def _forward_steps_gpu(kctx: Any, attrs: dict, inputs: list, out: Any) -> None:
    """Integer dtypes: the members' own kernels, one after the other (intermediates in temporaries)."""
    previous = None
    steps = attrs["steps"]
    for k, step in enumerate(steps):
        target = out if k == len(steps) - 1 else kctx.xp.empty_like(out)
        fn = step.op.forward_gpu or step.op.forward
        fn(kctx, step.attrs, [previous if r == ACC else inputs[r] for r in step.refs], [target], [])
        previous = target


def chain_intermediates(kctx: Any, attrs: dict, inputs: list, like: Any) -> list[tuple[str, Any]]:
    """The output of each member of a fused chain but the last, by the name a monitor shows
    (``attrs["monitor_names"]``), computed anew from the chain's inputs with the members' own kernels.

    For a monitor, which shows every operator's output as MXNet's does; the fused kernel keeps
    no intermediate.  Call it before the chain runs: the chain may write over an input.
    """
    steps, names = attrs["steps"], attrs["monitor_names"]
    values: list[tuple[str, Any]] = []
    previous = None
    for step, name in zip(steps[:-1], names[:-1], strict=True):
        target = kctx.xp.empty_like(like)
        fn = step.op.forward if kctx.xp is np else (step.op.forward_gpu or step.op.forward)
        fn(kctx, step.attrs, [previous if r == ACC else inputs[r] for r in step.refs], [target], [])
        values.append((name, target))
        previous = target
    return values


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
