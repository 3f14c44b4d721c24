"""MXNet 0.9's ``Convolution_v1`` and ``Pooling_v1``, kept by MXNet 1.x beside the newer
operators: their parameter sets as MXNet 1.9.1 defines them, computed by ``Convolution`` and
``Pooling`` (``BatchNorm_v1`` is in :mod:`~lazynd.ops.norm_variants`).

Each definition completes its parameters with the newer operator's defaults and hands its
kernel, shape rule and gradient on, so symbols name the legacy operators (and save them to
JSON under those names, as MXNet writes them) while one implementation computes both.

One difference is MXNet's: ``Pooling_v1``'s average divides every window's sum by the kernel's
area, also where a ``full``-convention window reaches past the padded input (``Pooling``
divides by the part of the window inside it); it is computed as a sum pooling, scaled.
MXNet 1.9.1 runs the legacy operators on 2-D windows only; here they take what the newer ones
take (1-D to 3-D).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .conv import _common_params
from .params import Param, enum
from .pooling import POOL_PARAMS
from .registry import OpDef, get, register

_CONVOLUTION_V1_NAMES = (
    "kernel",
    "stride",
    "dilate",
    "pad",
    "num_filter",
    "num_group",
    "workspace",
    "no_bias",
    "cudnn_tune",
    "cudnn_off",
    "layout",
)
CONVOLUTION_V1_PARAMS = {name: _common_params(False)[name] for name in _CONVOLUTION_V1_NAMES}
POOLING_V1_PARAMS = {  # MXNet's order, which its generated functions read positionally
    "kernel": POOL_PARAMS["kernel"],
    "pool_type": Param(enum("max", "avg", "sum"), "max", "reduction over the window"),
    "global_pool": POOL_PARAMS["global_pool"],
    "pooling_convention": Param(enum("full", "valid"), "valid", "output size rounding: 'valid' floors, 'full' ceils"),
    **{name: POOL_PARAMS[name] for name in ("stride", "pad")},
}


def _completed(target: OpDef, attrs: dict) -> dict:
    """``attrs`` with the parameters the newer operator has and the legacy one lacks at their defaults."""
    return {name: attrs.get(name, param.default) for name, param in target.params.items()}


def _convolution_attrs(attrs: dict) -> dict:
    return _completed(get("Convolution"), attrs)


def _pooling_attrs(attrs: dict) -> dict:
    """Pooling's parameters; a windowed average is computed as a sum, divided afterwards (see the module)."""
    full = _completed(get("Pooling"), attrs)
    if _average_divisor(attrs) is not None:
        full["pool_type"] = "sum"
    return full


def _average_divisor(attrs: dict) -> int | None:
    """The kernel's area for a windowed average (a global one is Pooling's own), else None."""
    if attrs.get("pool_type") != "avg" or attrs["global_pool"]:
        return None
    return math.prod(attrs["kernel"])


def _no_divisor(attrs: dict) -> None:
    return None


def _delegating(
    name: str,
    target: str,
    params: dict[str, Param],
    translate: Callable[[dict], dict],
    divisor: Callable[[dict], int | None],
    doc: str,
    **options: Any,
) -> OpDef:
    """An operator computed by ``target`` with its parameters translated by ``translate``, its
    output divided by ``divisor(attrs)`` where that is not None."""
    op = get(target)

    def run(kernel: Callable[..., None]) -> Callable[..., None]:
        def forward(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
            kernel(kctx, translate(attrs), inputs, outputs, aux)
            by = divisor(attrs)
            if by is not None:
                outputs[0] /= outputs[0].dtype.type(by)

        return forward

    def gradient(F: Any, attrs: dict, inputs: list, outputs: list, out_grads: list) -> list:
        grads = op.gradient(F, translate(attrs), inputs, outputs, out_grads)  # type: ignore[misc]
        by = divisor(attrs)
        if by is None:
            return grads
        return [F._div_scalar(grads[0], scalar=float(by)), *grads[1:]]

    return OpDef(
        name,
        run(op.forward),
        forward_gpu=run(op.forward_gpu or op.forward),
        inputs=lambda attrs: op.input_names(translate(attrs)),
        params=dict(params),
        infer_shape=lambda attrs, in_shapes, aux_shapes: op.infer_shape(translate(attrs), in_shapes, aux_shapes),
        infer_type=lambda attrs, in_types, aux_types: op.infer_type(translate(attrs), in_types, aux_types),
        gradient=gradient,
        doc=doc,
        **options,
    )


register(
    _delegating(
        "Convolution_v1",
        "Convolution",
        CONVOLUTION_V1_PARAMS,
        _convolution_attrs,
        _no_divisor,
        "MXNet 0.9's convolution (``Convolution``'s computation).",
        blas_heavy=True,
    )
)
register(
    _delegating(
        "Pooling_v1",
        "Pooling",
        POOLING_V1_PARAMS,
        _pooling_attrs,
        _average_divisor,
        "MXNet 0.9's pooling (``Pooling``'s computation; an average divides by the kernel's area).",
        float_data=lambda attrs: attrs["pool_type"] != "max",
    )
)
