"""Fused optimizer updates: one call per parameter, writing the weight and its states in place.

Call them as MXNet does, with ``out=weight``::

    nd.sgd_mom_update(weight, grad, mom, out=weight, lr=0.1, momentum=0.9, wd=1e-4)

States (``mom``, ``mean``, ``var``, ``n``) are declared in ``mutates`` so the engine schedules them as
writes.  The CPU kernels work in place with NumPy ``out=`` and two scratch blocks, over cache-sized blocks
of the parameter, so each array is read and written once per update; the GPU kernels
(``kernels/optimizer.cu``) do the whole update in one launch.  ``clip_gradient < 0`` means no clipping.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from ..backend import cpu_backend
from ..backend.cuda.elementwise import unaliased
from ..backend.cuda.sources import dtype_name, launch_config, load_file
from ..backend.pool import MIN_POOLED_BYTES, aligned_empty
from .params import Param, parse_bool, parse_float
from .registry import KernelContext, OpDef, register

_KERNEL_DTYPES = ("float32", "float64")
_SOURCE = load_file("optimizer.cu")  # read once; each kernel compiles on first use


_COMMON = {
    "lr": Param(parse_float, doc="learning rate"),
    "wd": Param(parse_float, 0.0, "weight decay"),
    "rescale_grad": Param(parse_float, 1.0, "multiply the gradient by this first"),
    "clip_gradient": Param(parse_float, -1.0, "clip the gradient to [-c, c]; negative: no clipping"),
}


# The CPU kernels walk the parameter in blocks of BLOCK_BYTES per array, so that a block of
# every array plus two scratch blocks (4-6 x 1 MiB) can stay in the last-level cache between
# the update's NumPy passes.  Measured on the 2-core CI machine (1M float32 elements, best of
# 8): sgd_update 128 KiB blocks 610-653 us, 512 KiB 427-523, 1 MiB 400-478, 2 MiB 399-458,
# whole arrays 403-504; sgd_mom_update likewise (1 MiB: 793-1037 us, whole: 830-1104).  On the
# AMD EPYC machine of later sessions (32 MiB of L3, page-aligned scratch; minimum of 40):
# sgd_update 1 MiB 251 us, 2 MiB 236, whole 235; sgd_mom_update 539, 523, 538.
# Smaller blocks lose to the Python cost of ~15 ufunc calls per block.
BLOCK_BYTES = 1 << 21
_HOST = KernelContext(np, cpu_backend, 0, False)  # what _run_blocked needs of a kernel context on the CPU


def _scaled_gradient_into(
    xp: Any, grad: Any, attrs: dict, g: Any, scratch: Any, weight: Any = None, scale: float = 1.0
) -> None:
    """``g = scale * clip(rescale_grad * grad [+ wd * weight])``, with ``scale > 0`` folded into the constants.

    ``scale * clip(x, -c, c) == clip(scale * x, -scale * c, scale * c)`` for ``scale > 0``, so the
    scaling costs no pass of its own.
    """
    xp.multiply(grad, scale * attrs["rescale_grad"], out=g)
    wd = attrs["wd"]
    if weight is not None and wd:
        xp.multiply(weight, scale * wd, out=scratch)
        g += scratch
    clip = attrs["clip_gradient"]
    if clip >= 0:
        xp.clip(g, -scale * clip, scale * clip, out=g)


_scratch = threading.local()


def _cpu_scratch(dtype: np.dtype, n: int) -> tuple[Any, Any]:
    """Two scratch blocks of ``n`` elements, kept per worker thread and dtype (one block each)."""
    try:
        buffers = _scratch.buffers
    except AttributeError:
        buffers = _scratch.buffers = {}
    pair = buffers.get(dtype)
    if pair is None or pair[0].size < n:
        # on a page, as the pool's buffers are: with malloc's placement the 1M-element sgd_update
        # took 248-264 us against 239-249 us
        nbytes = n * dtype.itemsize
        pair = buffers[dtype] = (aligned_empty((n,), dtype, nbytes), aligned_empty((n,), dtype, nbytes))
    return pair[0][:n], pair[1][:n]


def _run_blocked(kctx: Any, update: Callable[..., None], attrs: dict, arrays: list) -> None:
    """Call ``update(xp, attrs, *arrays, g, scratch)`` block by block (whole arrays on the GPU, and
    arrays small enough for malloc on the CPU: see :data:`MIN_POOLED_BYTES`)."""
    xp = kctx.xp
    first = arrays[0]
    if xp is np and first.nbytes >= MIN_POOLED_BYTES:
        size, dtype = first.size, first.dtype
        step = BLOCK_BYTES // dtype.itemsize
        if size <= step:
            # one block (any layout): the scratch blocks take the arrays' shape, nothing is flattened
            g, scratch = _cpu_scratch(dtype, size)
            shape = first.shape
            update(xp, attrs, *arrays, g.reshape(shape), scratch.reshape(shape))
            return
        if all(a.flags.c_contiguous for a in arrays):
            flat = [a.reshape(-1) for a in arrays]
            g, scratch = _cpu_scratch(dtype, step)
            for begin in range(0, size, step):
                end = min(begin + step, size)
                n = end - begin
                update(xp, attrs, *[a[begin:end] for a in flat], g[:n], scratch[:n])
            return
    update(xp, attrs, *arrays, xp.empty(first.shape, first.dtype), xp.empty(first.shape, first.dtype))


def _gpu_ready(kctx: Any, arrays: list) -> bool:
    return (
        kctx.xp is not np
        and dtype_name(arrays[0].dtype) in _KERNEL_DTYPES
        and all(a.flags.c_contiguous for a in arrays)
    )


def _launch(kctx: Any, kernel: str, arrays: list, scalars: list, rates: tuple = ()) -> None:
    """Run optimizer.cu's ``kernel`` on ``arrays``: weight, gradient, the states it updates in
    place, then the output; the weight and gradient are read from copies where they overlap the
    output other than element for element (``out=weight[1:]`` of ``weight[:-1]``).

    ``rates`` = ``(lrs, wds, k)``: the ``preloaded_`` kernel, which reads the learning rate and
    weight decay from float32 device arrays at ``k`` (``scalars`` then leave them out)."""
    out = arrays[-1]
    arrays = [unaliased(arrays[0], out), unaliased(arrays[1], out), *arrays[2:]]
    dtype = arrays[0].dtype
    name = f"lazynd_preloaded_{kernel}_" if rates else f"lazynd_{kernel}_"
    fn = _SOURCE.function(kctx.device_id, name + dtype_name(dtype))
    grid, block = launch_config(arrays[0].size)
    rate_args = (rates[0], rates[1], np.int64(rates[2])) if rates else ()
    fn(grid, block, (*arrays, np.int64(arrays[0].size), *rate_args, *[dtype.type(s) for s in scalars]))


# Each CPU block update below takes the fewest NumPy passes we found for its formula:
# every constant factor is folded into a multiply that happens anyway, every ufunc
# writes into a given buffer (no temporaries), and Python floats keep float32 math in
# float32 (NumPy's scalar promotion rules).
# -- sgd -------------------------------------------------------------------------------------------
def _sgd_block(xp: Any, attrs: dict, weight: Any, grad: Any, out: Any, g: Any, scratch: Any) -> None:
    lr, wd = attrs["lr"], attrs["wd"]
    _scaled_gradient_into(xp, grad, attrs, g, scratch, scale=lr)
    if wd:
        xp.multiply(weight, 1 - lr * wd, out=out)
        out -= g
    else:
        xp.subtract(weight, g, out=out)


def sgd_on_host(weight: Any, grad: Any, out: Any, lr: float, wd: float, rescale: float) -> None:
    """``sgd_update`` of one host parameter without gradient clipping: two NumPy passes.

    ``w - lr * (rescale * g + wd * w) = w * (1 - lr * wd) - (lr * rescale) * g``.  A weight of at
    most ``BLOCK_BYTES`` is updated whole, with one temporary for the scaled gradient (as
    ``w -= lr * g`` makes); a larger one takes the blocked walk of :func:`_sgd_block`.  The same
    results as the blocked walk, bit for bit, for ``sgd_update`` and ``multi_sgd_update`` alike.
    """
    if weight.nbytes > BLOCK_BYTES:
        params = {"lr": lr, "wd": wd, "rescale_grad": rescale, "clip_gradient": -1.0}
        _run_blocked(_HOST, _sgd_block, params, [weight, grad, out])
        return
    # a temporary of at most BLOCK_BYTES: cheaper to take from malloc than to slice scratch
    scaled = np.multiply(grad, lr * rescale)
    if wd:
        np.multiply(weight, 1 - lr * wd, out=out)
        out -= scaled
    else:
        np.subtract(weight, scaled, out=out)


def _sgd_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    arrays = [*inputs, outputs[0]]
    if kctx.xp is np and attrs["clip_gradient"] < 0:
        sgd_on_host(inputs[0], inputs[1], outputs[0], attrs["lr"], attrs["wd"], attrs["rescale_grad"])
    elif _gpu_ready(kctx, arrays):
        _launch(kctx, "sgd_update", arrays, [attrs["lr"], attrs["wd"], attrs["rescale_grad"], attrs["clip_gradient"]])
    else:
        _run_blocked(kctx, _sgd_block, attrs, arrays)


def _sgd_mom_block(xp: Any, attrs: dict, weight: Any, grad: Any, mom: Any, out: Any, g: Any, scratch: Any) -> None:
    lr, wd = attrs["lr"], attrs["wd"]
    _scaled_gradient_into(xp, grad, attrs, g, scratch, scale=lr)
    mom *= attrs["momentum"]
    mom -= g
    if wd:
        xp.multiply(weight, lr * wd, out=g)
        mom -= g
    xp.add(weight, mom, out=out)


def _sgd_mom_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    arrays = [*inputs, outputs[0]]
    if _gpu_ready(kctx, arrays):
        scalars = [attrs["lr"], attrs["momentum"], attrs["wd"], attrs["rescale_grad"], attrs["clip_gradient"]]
        _launch(kctx, "sgd_mom_update", arrays, scalars)
    else:
        _run_blocked(kctx, _sgd_mom_block, attrs, arrays)


def _nag_mom_block(xp: Any, attrs: dict, weight: Any, grad: Any, mom: Any, out: Any, g: Any, scratch: Any) -> None:
    """MXNet 1.x's NAG: ``step = lr*(clip(rescale_grad*grad) + wd*weight)``, ``m = momentum*mom``,
    ``out = weight + momentum*m - (1+momentum)*step``, ``mom = m - lr*(clip(...) + wd*weight)``.

    The momentum's weight-decay term reads ``weight`` after ``out`` is written, as MXNet's kernel
    does: called in place (``out=weight``, as its optimizer calls it) that is the updated weight;
    with another ``out`` it is the weight given.
    """
    lr, momentum, wd = attrs["lr"], attrs["momentum"], attrs["wd"]
    _scaled_gradient_into(xp, grad, attrs, g, scratch, scale=lr)  # g = lr * clip(rescale * grad)
    mom *= momentum
    if wd:
        xp.multiply(weight, lr * wd, out=scratch)
        scratch += g
        scratch *= 1.0 + momentum
    else:
        xp.multiply(g, 1.0 + momentum, out=scratch)
    xp.subtract(weight, scratch, out=out)  # the weight is not read after this: out may be it
    xp.multiply(mom, momentum, out=scratch)
    out += scratch
    mom -= g
    if wd:
        xp.multiply(weight, lr * wd, out=scratch)  # the new weight where out is the weight
        mom -= scratch


def _nag_mom_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    arrays = [*inputs, outputs[0]]
    if _gpu_ready(kctx, arrays):
        scalars = [attrs["lr"], attrs["momentum"], attrs["wd"], attrs["rescale_grad"], attrs["clip_gradient"]]
        _launch(kctx, "nag_mom_update", arrays, scalars)
    else:
        _run_blocked(kctx, _nag_mom_block, attrs, arrays)


# -- adam ------------------------------------------------------------------------------------------
def _adam_block(
    xp: Any, attrs: dict, weight: Any, grad: Any, mean: Any, var: Any, out: Any, g: Any, scratch: Any
) -> None:
    # 1 - beta in the weight's precision, as MXNet's kernel (float32: 1 - 0.999 = 0.00099998713); g holds
    # sqrt(1 - beta2) * gradient, its square var's increment (a beta2 >= 1, which MXNet takes: g, 1 - beta2 g^2)
    keep1, keep2 = (float(1 - weight.dtype.type(attrs[beta])) for beta in ("beta1", "beta2"))
    root = math.sqrt(keep2) if keep2 > 0 else 1.0
    _scaled_gradient_into(xp, grad, attrs, g, scratch, weight, scale=root)
    mean *= attrs["beta1"]
    xp.multiply(g, keep1 / root, out=scratch)
    mean += scratch
    xp.multiply(g, g if keep2 > 0 else keep2 * g, out=g)
    var *= attrs["beta2"]
    var += g
    xp.sqrt(var, out=g)
    g += attrs["epsilon"]
    xp.divide(mean, g, out=g)
    g *= attrs["lr"]
    xp.subtract(weight, g, out=out)


def _adam_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    arrays = [*inputs, outputs[0]]
    if _gpu_ready(kctx, arrays):
        scalars = [
            attrs["lr"],
            attrs["beta1"],
            attrs["beta2"],
            attrs["epsilon"],
            attrs["wd"],
            attrs["rescale_grad"],
            attrs["clip_gradient"],
        ]
        _launch(kctx, "adam_update", arrays, scalars)
    else:
        _run_blocked(kctx, _adam_block, attrs, arrays)


# -- rmsprop ---------------------------------------------------------------------------------------
def _rmsprop_block(xp: Any, attrs: dict, weight: Any, grad: Any, state: Any, out: Any, g: Any, scratch: Any) -> None:
    gamma1, clip_weights = attrs["gamma1"], attrs["clip_weights"]
    # g holds sqrt(1 - gamma1) * gradient, so that its square is already the state's increment (as in adam)
    root = math.sqrt(1.0 - gamma1) if gamma1 < 1 else 1.0
    _scaled_gradient_into(xp, grad, attrs, g, scratch, weight, scale=root)
    state *= gamma1
    xp.multiply(g, g if gamma1 < 1 else (1.0 - gamma1) * g, out=scratch)
    state += scratch
    xp.add(state, attrs["epsilon"], out=scratch)
    xp.sqrt(scratch, out=scratch)
    xp.divide(g, scratch, out=g)
    g *= attrs["lr"] / root
    xp.subtract(weight, g, out=out)
    if clip_weights >= 0:
        xp.clip(out, -clip_weights, clip_weights, out=out)


def _rmsprop_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    arrays = [*inputs, outputs[0]]
    if _gpu_ready(kctx, arrays):
        scalars = [
            attrs["lr"],
            attrs["gamma1"],
            attrs["epsilon"],
            attrs["wd"],
            attrs["rescale_grad"],
            attrs["clip_gradient"],
            attrs["clip_weights"],
        ]
        _launch(kctx, "rmsprop_update", arrays, scalars)
    else:
        _run_blocked(kctx, _rmsprop_block, attrs, arrays)


# the options MXNet lists after the common parameters (see ``_register``)
_TRAILING_OPTIONS = ("lazy_update", "clip_weights", "wd_lh")


def _register(
    name: str,
    forward: Callable,
    inputs: tuple[str, ...],
    extra: dict[str, Param],
    doc: str,
    infer_type: Callable[..., tuple[list, list, list]] | None = None,
) -> None:
    """Register an update whose inputs after the weight and gradient are states it writes in place.

    Its parameters take MXNet's order, which its generated functions read positionally
    (``sgd_mom_update(w, g, m, 0.1, 0.9)``: lr, momentum): ``lr``, the update's own
    hyper-parameters (``extra``), ``wd``, ``rescale_grad``, ``clip_gradient``, then its options
    (``lazy_update``, ``clip_weights``, ``wd_lh``)."""
    own = {k: p for k, p in extra.items() if k not in _TRAILING_OPTIONS}
    options = {k: p for k, p in extra.items() if k in _TRAILING_OPTIONS}
    params = {"lr": own.pop("lr", _COMMON["lr"]), **own, **{k: p for k, p in _COMMON.items() if k != "lr"}, **options}
    register(
        OpDef(
            name,
            forward,
            inputs=inputs,
            params=params,
            infer_type=infer_type,
            gradient=lambda F, attrs, ins, outs, og: [None] * len(ins),
            inplace=((0, 0),),
            mutates=tuple(range(2, len(inputs))),
            float_data=True,  # MXNet: "only support floating point types"
            doc=doc,
        )
    )


# MXNet 1.x's row-sparse option: it changes nothing on dense arrays (the only kind here)
_LAZY_UPDATE = {"lazy_update": Param(parse_bool, True, "accepted for MXNet compatibility (dense arrays)")}

_register(
    "sgd_update",
    _sgd_forward,
    ("weight", "grad"),
    {**_LAZY_UPDATE},
    "weight = (1 - lr*wd) * weight - lr * clip(rescale_grad * grad).",
)
_register(
    "sgd_mom_update",
    _sgd_mom_forward,
    ("weight", "grad", "mom"),
    {"momentum": Param(parse_float, 0.0, "momentum"), **_LAZY_UPDATE},
    "mom = momentum*mom - lr*wd*weight - lr*clip(rescale_grad*grad); weight += mom (mom updated in place).",
)
_register(
    "nag_mom_update",
    _nag_mom_forward,
    ("weight", "grad", "mom"),
    {"momentum": Param(parse_float, 0.0, "momentum")},
    "Nesterov momentum: step = lr*(clip(rescale_grad*grad) + wd*weight); mom = momentum*mom; "
    "weight += momentum*mom - (1+momentum)*step; mom -= lr*(clip(rescale_grad*grad) + wd*weight), "
    "the weight read after out is written (the new weight when out=weight), as in MXNet.",
)
_register(
    "adam_update",
    _adam_forward,
    ("weight", "grad", "mean", "var"),
    {
        "beta1": Param(parse_float, 0.9, "decay of the first moment"),
        "beta2": Param(parse_float, 0.999, "decay of the second moment"),
        "epsilon": Param(parse_float, 1e-8, "added to the denominator"),
        **_LAZY_UPDATE,
    },
    "g = clip(rescale_grad*grad + wd*weight); Adam moments updated in place; weight -= lr*mean/(sqrt(var)+epsilon).",
)
_register(
    "rmsprop_update",
    _rmsprop_forward,
    ("weight", "grad", "n"),
    {
        "gamma1": Param(parse_float, 0.95, "decay of the squared-gradient average"),
        "epsilon": Param(parse_float, 1e-8, "added inside the square root"),
        "clip_weights": Param(parse_float, -1.0, "clip the weights to [-c, c]; negative: no clipping"),
    },
    "n = (1-gamma1)*g^2 + gamma1*n; weight -= lr*g/sqrt(n+epsilon), g = clip(rescale_grad*grad + wd*weight).",
)
