"""Pooling: max/avg/sum/lp over 1-D to 3-D windows, valid/full/same conventions, layouts.

CPU kernels (:mod:`~lazynd.ops.pooling_cpu`) loop over kernel offsets (never pixels),
each step one vectorised NumPy operation over strided slabs of the input.  The avg divisor counts
padding but not the extra rows the ``full`` convention adds, as MXNet does; with
``count_include_pad=False`` (MXNet 1.x) it counts the input's elements only.
GPU kernels are in ``kernels/pooling.cu``.

Two MXNet 1.x modes run as sum pooling on both devices, so the kernels stay three:
average pooling without the padding counted (the sum, divided by each window's count
of input elements), and ``lp`` pooling, ``(sum of x ** p) ** (1 / p)`` for ``p_value``
1, 2 or 3 (for p = 1 the plain sum and for p = 3 the signed cube root, as MXNet's).
Its gradient ``dy * x ** (p - 1) / y ** (p - 1)`` is taken as 0 where a window's result
is 0 (MXNet divides by it).
"""

from __future__ import annotations

import functools
import itertools
from typing import Any

import numpy as np

from ..backend.cuda.sources import dtype_name, launch_config, load_file
from ..errors import OperatorError, ShapeError
from .conv import LAYOUTS
from .params import Param, enum, optional, parse_bool, parse_int, parse_shape
from .params_memo import ParamsMemo
from .pooling_cpu import avg_divisor, pool_backward, pool_forward
from .registry import OpDef, register

_MODES = {"max": 0, "avg": 1, "sum": 2}  # the GPU kernel's modes (lp runs as sum)
LP_VALUES = (1, 2, 3)

# MXNet's order, which its generated functions read positionally (``Pooling(x, (2, 2), "avg")``)
POOL_PARAMS = {
    "kernel": Param(parse_shape, (), "window size (ignored with global_pool)"),
    "pool_type": Param(enum("max", "avg", "sum", "lp"), "max", "reduction over the window"),
    "global_pool": Param(parse_bool, False, "pool over all spatial positions"),
    "cudnn_off": Param(parse_bool, False, "accepted for MXNet compatibility"),
    "pooling_convention": Param(
        enum("valid", "full", "same"),
        "valid",
        "round output size down (valid) or up (full); same: ceil(size / stride) windows from the first element (1-D)",
    ),
    "stride": Param(parse_shape, (), "stride per spatial axis (default 1)"),
    "pad": Param(parse_shape, (), "padding per spatial axis (default 0)"),
    "p_value": Param(optional(parse_int), None, "p of lp pooling: 1, 2 or 3 (required with pool_type='lp')"),
    "count_include_pad": Param(
        optional(parse_bool), None, "avg pooling: count the padding in each window's divisor (None: True, as MXNet)"
    ),
    "layout": Param(optional(enum(*LAYOUTS)), None, "data layout (default channels second)"),
}


class PoolGeometry:
    def __init__(self, attrs: dict, shape: tuple) -> None:
        nd = len(shape) - 2
        if nd not in (1, 2, 3):
            raise ShapeError(f"Pooling: data must be 3-D to 5-D, got shape {tuple(shape)}")
        layout = attrs.get("layout")
        self.channel_last = layout is not None and layout.endswith("C")
        if layout is not None and len(layout) != len(shape):
            raise ShapeError(f"Pooling: layout {layout} does not fit data of shape {tuple(shape)}")
        spatial = tuple(shape[1:-1]) if self.channel_last else tuple(shape[2:])
        self.nd = nd
        if attrs["pool_type"] == "lp" and attrs.get("p_value") not in LP_VALUES:
            raise OperatorError(
                f"Pooling: pool_type='lp' needs p_value in {LP_VALUES}, got p_value={attrs.get('p_value')}"
            )
        if attrs["pooling_convention"] == "same" and nd != 1:
            raise OperatorError(
                f"Pooling: pooling_convention='same' supports 1-D data (batch, channel, width) only, "
                f"as MXNet 1.9.1; got data of shape {tuple(shape)}"
            )
        if attrs["global_pool"]:
            self.kernel, self.stride, self.pad = spatial, (1,) * nd, (0,) * nd
        else:
            self.kernel = tuple(attrs["kernel"])
            if len(self.kernel) != nd or any(k <= 0 for k in self.kernel):
                raise OperatorError(
                    f"Pooling: kernel {self.kernel} must have {nd} positive sizes for data {tuple(shape)}"
                )
            self.stride = tuple(attrs["stride"]) or (1,) * nd
            self.pad = _same_pad(attrs) if attrs["pooling_convention"] == "same" else tuple(attrs["pad"]) or (0,) * nd
            if len(self.stride) != nd or len(self.pad) != nd:
                raise OperatorError(f"Pooling: stride {self.stride} and pad {self.pad} must have {nd} entries")
            if any(s <= 0 for s in self.stride) or any(p < 0 for p in self.pad):
                raise OperatorError(f"Pooling: stride {self.stride} must be positive and pad {self.pad} non-negative")
            if attrs["pool_type"] in ("max", "avg") and any(p >= k for p, k in zip(self.pad, self.kernel, strict=True)):
                # the windows wholly in the padding have no value (max gave -inf); MXNet 1.9.1 refuses too
                raise OperatorError(
                    f"Pooling: pad {self.pad} must be smaller than kernel {self.kernel} on every axis "
                    f"for pool_type={attrs['pool_type']!r}"
                )
        convention = "valid" if attrs["global_pool"] else attrs["pooling_convention"]
        out = []
        for size, k, s, p in zip(spatial, self.kernel, self.stride, self.pad, strict=True):
            if size and size + 2 * p < k:
                raise ShapeError(f"Pooling: kernel {self.kernel} is larger than the padded input {spatial}")
            span = size + 2 * p - k
            if not size:
                out.append(0)
            elif convention == "same":
                out.append(-(-size // s))
            else:
                out.append((-(-span // s) if convention == "full" else span // s) + 1)
        self.spatial, self.out = spatial, tuple(out)

    def to_nc(self, x: Any) -> Any:
        return x.transpose((0, x.ndim - 1, *range(1, x.ndim - 1))) if self.channel_last else x

    @functools.cached_property
    def gpu_args(self) -> tuple:
        """The geometry as pooling.cu's kernels take it: sizes, windows, outputs, strides, pads,
        each padded to three axes, as 32-bit integers."""
        fill = 3 - self.nd
        dims = [1] * fill + list(self.spatial) + [1] * fill + list(self.kernel) + [1] * fill + list(self.out)
        dims += [1] * fill + list(self.stride) + [0] * fill + list(self.pad)
        return tuple(np.int32(v) for v in dims)

    def out_shape(self, shape: tuple) -> tuple:
        if self.channel_last:
            return (shape[0], *self.out, shape[-1])
        return (shape[0], shape[1], *self.out)

    def padded(self) -> tuple[int, ...]:
        # room for the last window of the full convention, beyond the symmetric padding
        return tuple(
            max(s + 2 * p, (o - 1) * st + k)
            for s, p, o, st, k in zip(self.spatial, self.pad, self.out, self.stride, self.kernel, strict=True)
        )

    def windows(self) -> Any:
        for offset in itertools.product(*[range(k) for k in self.kernel]):
            yield (slice(None), slice(None)) + tuple(
                slice(o, o + s * (n - 1) + 1, s) for o, s, n in zip(offset, self.stride, self.out, strict=True)
            )

    def inner(self) -> tuple:
        return (slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in zip(self.pad, self.spatial, strict=True))


# the geometry of the data a training step pools at every call, built once
pool_geometry = ParamsMemo(PoolGeometry)


def _same_pad(attrs: dict) -> tuple[int, ...]:
    """The padding of ``pooling_convention='same'``: none before the first element.

    As in MXNet 1.9.1, 'same' pools 1-D data only and takes no ``pad``: its ``ceil(size / stride)``
    windows start at the first element, and those that run past the last element hold only the
    elements inside the input (max ignores the rest, avg divides by their count), as the full
    convention's extra windows do.  A ``pad`` of zeros of any length is accepted (MXNet 1.9.1 itself
    needs it written ``(0, 0, 0)``)."""
    if any(p != 0 for p in attrs["pad"]):
        raise OperatorError(f"Pooling: pooling_convention='same' takes no padding, got pad={tuple(attrs['pad'])}")
    return (0,)


_SOURCE = load_file("pooling.cu")


def _gpu_kernel(kctx: Any, which: str, dtype: Any) -> Any:
    name = dtype_name(dtype)
    if name not in ("float32", "float64"):
        raise OperatorError(f"Pooling on the GPU supports float32 and float64, got {name}")
    return _SOURCE.function(kctx.device_id, f"lazynd_pool_{which}_{name}")


def _as_sum(attrs: dict) -> dict:
    return {**attrs, "pool_type": "sum"}


def _excludes_pad(attrs: dict) -> bool:
    """Average pooling whose divisor counts only the input's elements (``count_include_pad=False``)."""
    return attrs["pool_type"] == "avg" and attrs.get("count_include_pad") is False


def _widened(attrs: dict, x: Any) -> bool:
    """Whether lp pooling runs in float32: float16 powers overflow (``x ** 3`` from 41, ``x ** 2`` from
    256) where the norm itself fits, and a window whose cubes nearly cancel lost half its gradient to
    float16 rounding.  MXNet accumulates in float32 too."""
    return attrs["pool_type"] == "lp" and attrs["p_value"] > 1 and x.dtype == np.float16


def _sum_based_forward(kctx: Any, attrs: dict, inputs: list, outputs: list) -> None:
    """Forward of lp pooling and of average pooling without the padding counted: sum pooling."""
    xp, x, out = kctx.xp, inputs[0], outputs[0]
    if _widened(attrs, x):
        wide = xp.empty(out.shape, dtype=xp.float32)
        _sum_based_forward(kctx, attrs, [x.astype(xp.float32)], [wide])
        out[...] = wide
        return
    g = PoolGeometry(attrs, x.shape)
    p = attrs["p_value"] if attrs["pool_type"] == "lp" else 1
    _pool_forward(kctx, _as_sum(attrs), [x if p == 1 else x**p], outputs, [])
    if attrs["pool_type"] == "avg":
        nc_out = g.to_nc(out)
        nc_out /= xp.asarray(avg_divisor(g, out.dtype, include_pad=False))
    elif p == 2:
        xp.sqrt(out, out=out)
    elif p == 3:
        xp.cbrt(out, out=out)


def _sum_based_backward(kctx: Any, attrs: dict, inputs: list, outputs: list) -> None:
    """Gradient of lp pooling and of average pooling without the padding counted: that of sum
    pooling, of the head gradient scaled per window (and, for lp, per element)."""
    xp = kctx.xp
    dy, x, y = inputs
    if _widened(attrs, x):
        wide = xp.empty(outputs[0].shape, dtype=xp.float32)
        _sum_based_backward(kctx, attrs, [a.astype(xp.float32) for a in inputs], [wide])
        outputs[0][...] = wide
        return
    g = PoolGeometry(attrs, x.shape)
    p = attrs["p_value"] if attrs["pool_type"] == "lp" else 1
    if attrs["pool_type"] == "avg":
        scaled = dy.copy()
        nc_scaled = g.to_nc(scaled)
        nc_scaled /= xp.asarray(avg_divisor(g, dy.dtype, include_pad=False))
    elif p == 1:
        scaled = dy
    else:
        nonzero = y != 0
        scaled = xp.where(nonzero, dy / xp.where(nonzero, y, 1) ** (p - 1), 0).astype(dy.dtype)
    _pool_backward(kctx, _as_sum(attrs), [scaled, x, y], outputs, [])
    if p > 1:
        outputs[0] *= x ** (p - 1)


def _pool_forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    if attrs["pool_type"] == "lp" or _excludes_pad(attrs):
        _sum_based_forward(kctx, attrs, inputs, outputs)
        return
    xp = kctx.xp
    g = pool_geometry(attrs, tuple(inputs[0].shape))
    x = g.to_nc(inputs[0])
    out = g.to_nc(outputs[0])
    mode = attrs["pool_type"]
    if xp is not np:
        # straight into the output when it is laid out as the kernel writes (NC order, contiguous),
        # reading a copy of an input that overlaps it (out= the data itself or a view of it): a
        # window reads its neighbours' elements, which other threads may have written already
        y = out if out.flags.c_contiguous else xp.empty(out.shape, dtype=x.dtype)
        x = xp.ascontiguousarray(x)
        if xp.may_share_memory(x, y):
            x = x.copy()
        grid, block = launch_config(y.size)
        _gpu_kernel(kctx, "fwd", x.dtype)(grid, block, (x, y, np.int64(y.size), np.int32(_MODES[mode]), *g.gpu_args))
        if y is not out:
            out[...] = y
        return
    pool_forward(g, x, out, mode)


def _pool_backward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    if attrs["pool_type"] == "lp" or _excludes_pad(attrs):
        _sum_based_backward(kctx, attrs, inputs, outputs)
        return
    xp = kctx.xp
    g = pool_geometry(attrs, tuple(inputs[1].shape))
    dy, x, y = (g.to_nc(a) for a in inputs)
    dx = g.to_nc(outputs[0])
    mode = attrs["pool_type"]
    if xp is not np:
        # the kernel adds each output's gradient into its window: into the zeroed gradient itself
        # when it is laid out as the kernel writes (NC order, contiguous) and overlaps no input
        x, y, dy = (xp.ascontiguousarray(a) for a in (x, y, dy))
        if dx.flags.c_contiguous and not any(xp.may_share_memory(a, dx) for a in (x, y, dy)):
            result = dx
            result.fill(0)
        else:
            result = xp.zeros(x.shape, dtype=x.dtype)
        grid, block = launch_config(dy.size)
        args = (x, y, dy, result, np.int64(dy.size), np.int32(_MODES[mode]), *g.gpu_args)
        _gpu_kernel(kctx, "bwd", x.dtype)(grid, block, args)
        if result is not dx:
            dx[...] = result
        return
    pool_backward(g, x, y, dy, dx, mode)


def _pool_infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
    data = in_shapes[0]
    if data is None:
        return in_shapes, [None], aux_shapes
    return in_shapes, [PoolGeometry(attrs, tuple(data)).out_shape(tuple(data))], aux_shapes


def _pool_gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
    return [F._backward_Pooling(out_grads[0], inputs[0], outputs[0], **attrs)]


register(
    OpDef(
        "Pooling",
        _pool_forward,
        gpu_float16_as_float32=True,
        params=dict(POOL_PARAMS),
        infer_shape=_pool_infer,
        float_data=lambda attrs: attrs["pool_type"] != "max",  # an average cannot be stored in integers
        gradient=_pool_gradient,
        doc="Max, average, sum or lp pooling over 1-D to 3-D windows.",
    )
)
register(
    OpDef(
        "_backward_Pooling",
        _pool_backward,
        gpu_float16_as_float32=True,
        inputs=("out_grad", "data", "output"),
        params=dict(POOL_PARAMS),
        infer_shape=lambda attrs, s, a: (s, [s[1]], a),
        doc="Gradient of Pooling with respect to its data.",
    )
)
