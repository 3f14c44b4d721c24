"""MXNet 1.x's colour operators of ``mx.nd.image`` / ``mx.sym.image``: lighting, brightness,
contrast and saturation.

Each takes one ``(H, W, C)`` image (as MXNet 1.9.1, no batch) and gives the same shape and dtype.
The arithmetic runs in float32 (float64 for float64 images); integer images are then clipped to
their dtype's range and truncated toward zero, as MXNet's saturating cast (uint8 255 * 0.33 -> 84).

- ``_image_adjust_lighting``: AlexNet's PCA lighting, ``data + eigvec @ (alpha * eigval)`` per
  channel, for RGB images (3 channels: MXNet 1.9.1 gives zeros for one).
- ``_image_random_lighting``: the same with ``alpha ~ N(0, alpha_std)``, three draws per call.
- ``_image_random_brightness``: ``data * f``, ``f ~ U(min_factor, max_factor)``, one draw per call.
- ``_image_random_contrast``: ``data * f + mean(gray) * (1 - f)``, with the gray (luminance
  ``0.299 R + 0.587 G + 0.114 B``, or the channel of a 1-channel image) averaged over the image.
- ``_image_random_saturation``: ``data * f + gray * (1 - f)`` with each pixel's own gray.

Differences on purpose: MXNet 1.9.1's random_saturation takes only ``0.114 B`` as the gray (its loop
overwrites the sum), ours the luminance; a ``max_factor`` below ``min_factor`` is refused (MXNet
draws from an empty range).  The random operators are augmentations with no gradient rule (a draw
is not kept for a backward pass), so a backward pass names the operator; adjust_lighting's gradient
is the head.  Kernels are written once over ``kctx.xp`` for NumPy and CuPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from .params import Param, parse_float, parse_float_tuple
from .registry import OpDef, register

_GRAY = (0.299, 0.587, 0.114)  # the luminance weights of R, G, B
_EIGVAL = (55.46, 4.794, 1.148)  # AlexNet's eigenvalues and eigenvectors of ImageNet's RGB covariance
_EIGVEC = ((-0.5675, 0.7192, 0.4009), (-0.5808, -0.0045, -0.8140), (-0.5836, -0.6948, 0.4203))


def _check_image(op: str, data: tuple | None, channels: tuple[int, ...]) -> None:
    """Refuse a ``data`` shape that is not ``(H, W, C)`` with C among ``channels``."""
    if data is None:
        return
    expected = f"(H, W, C) with C {' or '.join(map(str, channels))}"
    if len(data) != 3 or (data[2] and data[2] not in channels):
        raise ShapeError(f"{op}: shape of 'data' is {tuple(data)}, expected {expected}")


def _image_infer(op: str, channels: tuple[int, ...]) -> Any:
    def infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        _check_image(op, in_shapes[0], channels)
        _check_factors(op, attrs)
        return in_shapes, [in_shapes[0]], aux_shapes

    return infer


def _check_factors(op: str, attrs: dict) -> None:
    if "alpha" in attrs and len(attrs["alpha"]) != 3:
        raise OperatorError(f"{op}: alpha has {len(attrs['alpha'])} values, expected 3 (R, G, B)")
    if attrs.get("alpha_std", 0.0) < 0:
        raise OperatorError(f"{op}: alpha_std must be >= 0, got {attrs['alpha_std']}")
    if "min_factor" in attrs:
        low, high = attrs["min_factor"], attrs["max_factor"]
        if low < 0 or high < low:
            raise OperatorError(
                f"{op}: expected 0 <= min_factor <= max_factor, got min_factor={low}, max_factor={high}"
            )


def _working(x: Any) -> Any:
    """``x`` in the float dtype the arithmetic runs in."""
    return x if x.dtype.kind == "f" else x.astype("float32")


def _store(xp: Any, out: Any, value: Any) -> None:
    """Write ``value`` into ``out``, saturating into an integer dtype and truncating as MXNet's cast."""
    if out.dtype.kind in "iu":
        limits = np.iinfo(out.dtype)
        value = xp.clip(value, limits.min, limits.max)
    out[...] = value.astype(out.dtype)


def _gray(xp: Any, x: Any) -> Any:
    """Each pixel's luminance, shape ``(H, W, 1)``; a 1-channel image is its own gray."""
    if x.shape[-1] == 1:
        return x
    return (x * xp.asarray(_GRAY, dtype=x.dtype)).sum(axis=-1, keepdims=True)


def _draw_factor(kctx: Any, attrs: dict, dtype: Any) -> Any:
    """One factor from U(min_factor, max_factor), an array: on a GPU it stays on the device."""
    return kctx.rng.uniform(attrs["min_factor"], attrs["max_factor"], (1,)).astype(dtype)


def _lighting(xp: Any, x: Any, alpha: Any) -> Any:
    """``x`` plus AlexNet's PCA noise for the three ``alpha`` weights."""
    weights = alpha * xp.asarray(_EIGVAL, dtype=x.dtype)
    return x + xp.asarray(_EIGVEC, dtype=x.dtype) @ weights


def _adjust_lighting(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x = _working(inputs[0])
    _store(kctx.xp, outputs[0], _lighting(kctx.xp, x, kctx.xp.asarray(attrs["alpha"], dtype=x.dtype)))


def _random_lighting(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x = _working(inputs[0])
    alpha = kctx.rng.normal(0.0, attrs["alpha_std"], (3,)).astype(x.dtype)
    _store(kctx.xp, outputs[0], _lighting(kctx.xp, x, alpha))


def _random_brightness(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x = _working(inputs[0])
    _store(kctx.xp, outputs[0], x * _draw_factor(kctx, attrs, x.dtype))


def _random_contrast(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x = _working(inputs[0])
    factor = _draw_factor(kctx, attrs, x.dtype)
    _store(kctx.xp, outputs[0], x * factor + _gray(kctx.xp, x).mean() * (1 - factor))


def _random_saturation(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x = _working(inputs[0])
    factor = _draw_factor(kctx, attrs, x.dtype)
    _store(kctx.xp, outputs[0], x * factor + _gray(kctx.xp, x) * (1 - factor))


_FACTORS = {
    "min_factor": Param(parse_float, doc="smallest factor drawn"),
    "max_factor": Param(parse_float, doc="largest factor drawn"),
}

register(
    OpDef(
        "_image_adjust_lighting",
        _adjust_lighting,
        params={"alpha": Param(parse_float_tuple, doc="the lighting weights of the R, G, B eigenvectors")},
        infer_shape=_image_infer("_image_adjust_lighting", (3,)),
        gradient=lambda F, attrs, inputs, outputs, out_grads: [F.identity(out_grads[0])],
        takes_bool=False,
        doc="Adds AlexNet's PCA lighting noise for weights alpha to an (H, W, 3) image.",
    )
)
register(
    OpDef(
        "_image_random_lighting",
        _random_lighting,
        params={"alpha_std": Param(parse_float, 0.05, "standard deviation of the drawn lighting weights")},
        infer_shape=_image_infer("_image_random_lighting", (3,)),
        needs_random=True,
        takes_bool=False,
        doc="adjust_lighting with weights drawn from N(0, alpha_std) (no gradient).",
    )
)
for _name, _kernel, _doc in (
    ("brightness", _random_brightness, "data * f"),
    ("contrast", _random_contrast, "data * f + mean gray * (1 - f)"),
    ("saturation", _random_saturation, "data * f + gray * (1 - f)"),
):
    register(
        OpDef(
            f"_image_random_{_name}",
            _kernel,
            params=dict(_FACTORS),
            infer_shape=_image_infer(f"_image_random_{_name}", (1, 3)),
            needs_random=True,
            takes_bool=False,
            doc=f"{_doc} for an (H, W, C) image, f drawn from U(min_factor, max_factor) (no gradient).",
        )
    )
