"""MXNet 1.x's colour operators of ``mx.nd.image`` / ``mx.sym.image``: lighting, brightness,
contrast, saturation, hue and colour jitter.

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
- ``_image_random_hue``: turns each RGB pixel's hue by ``f`` turns (HLS, as MXNet 1.9.1).
- ``_image_random_color_jitter``: brightness, contrast, saturation and hue in a random order, each
  with ``f = 1 + U(-v, v)`` (hue: ``U(-v, v)``) where its value ``v`` is positive, each step stored
  into the image's dtype.

Differences on purpose: MXNet 1.9.1's random_saturation takes only ``0.114 B`` as the gray (its loop
overwrites the sum), ours the luminance; a ``max_factor`` below ``min_factor`` is refused (MXNet
draws from an empty range); a jitter with nothing to do returns the image (MXNet 1.9.1 returns
unwritten memory), and negative jitter values or hue jitter of a 1-channel image are refused (MXNet
gives garbage).  uint8 hues can differ from MXNet's by 1 where its float32 round trip lands just
below an integer.  The random operators are augmentations with no gradient rule (a draw
is not kept for a backward pass), so a backward pass names the operator; adjust_lighting's gradient
is the head.  Kernels are written once over ``kctx.xp`` for NumPy and CuPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import OperatorError, ShapeError
from .params import Param, float_between, parse_float, parse_float_tuple
from .registry import OpDef, register

_GRAY = (0.299, 0.587, 0.114)  # the luminance weights of R, G, B
_EIGVAL = (55.46, 4.794, 1.148)  # AlexNet's eigenvalues and eigenvectors of ImageNet's RGB covariance
_EIGVEC = ((-0.5675, 0.7192, 0.4009), (-0.5808, -0.0045, -0.8140), (-0.5836, -0.6948, 0.4203))
# for each sixth of the hue circle, which of (high, low, falling, rising) each of R, G, B takes
_HUE_SECTORS = ((0, 3, 1), (2, 0, 1), (1, 0, 3), (1, 2, 0), (3, 1, 0), (0, 1, 2))
_JITTER_STEPS = ("brightness", "contrast", "saturation", "hue")


def _check_image(op: str, data: tuple | None, channels: tuple[int, ...]) -> None:
    """Refuse a ``data`` shape that is not ``(H, W, C)`` with C among ``channels``."""
    if data is None:
        return
    expected = f"(H, W, C) with C {' or '.join(map(str, channels))}"
    if len(data) != 3 or (data[2] and data[2] not in channels):
        raise ShapeError(f"{op}: shape of 'data' is {tuple(data)}, expected {expected}")


def _image_infer(op: str, channels: tuple[int, ...]) -> Any:
    def infer(attrs: dict, in_shapes: list, aux_shapes: list) -> tuple[list, list, list]:
        data = in_shapes[0]
        _check_image(op, data, channels)
        _check_factors(op, attrs)
        if attrs.get("hue", 0) > 0 and data is not None and data[2] == 1:
            raise ShapeError(f"{op}: shape of 'data' is {tuple(data)}, expected 3 channels to jitter hue")
        return in_shapes, [in_shapes[0]], aux_shapes

    return infer


def _check_factors(op: str, attrs: dict) -> None:
    if "alpha" in attrs and len(attrs["alpha"]) != 3:
        raise OperatorError(f"{op}: alpha has {len(attrs['alpha'])} values, expected 3 (R, G, B)")
    if attrs.get("alpha_std", 0.0) < 0:
        raise OperatorError(f"{op}: alpha_std must be >= 0, got {attrs['alpha_std']}")
    for name in _JITTER_STEPS:
        if attrs.get(name, 0) < 0:
            raise OperatorError(f"{op}: {name} must be >= 0, got {attrs[name]}")
    if "min_factor" in attrs:
        low, high = attrs["min_factor"], attrs["max_factor"]
        if low < 0 or high < low:
            raise OperatorError(
                f"{op}: expected 0 <= min_factor <= max_factor, got min_factor={low}, max_factor={high}"
            )


def _working(x: Any) -> Any:
    """``x`` in the float dtype the arithmetic runs in."""
    return x if x.dtype.kind == "f" else x.astype("float32")


def _saturated(xp: Any, value: Any, dtype: Any) -> Any:
    """``value`` cast to ``dtype``, saturating into an integer dtype and truncating as MXNet's cast."""
    if np.dtype(dtype).kind in "iu":
        limits = np.iinfo(dtype)
        value = xp.clip(value, limits.min, limits.max)
    return value.astype(dtype)


def _store(xp: Any, out: Any, value: Any) -> None:
    """Write ``value`` into ``out`` as MXNet's saturating cast does."""
    out[...] = _saturated(xp, value, out.dtype)


def _gray(xp: Any, x: Any) -> Any:
    """Each pixel's luminance, shape ``(H, W, 1)``; a 1-channel image is its own gray."""
    if x.shape[-1] == 1:
        return x
    return (x * xp.asarray(_GRAY, dtype=x.dtype)).sum(axis=-1, keepdims=True)


def _draw_factor(kctx: Any, attrs: dict, dtype: Any) -> Any:
    """One factor from U(min_factor, max_factor), an array: on a GPU it stays on the device."""
    return kctx.rng.uniform(attrs["min_factor"], attrs["max_factor"], (1,)).astype(dtype)


def _lighting(kctx: Any, x: Any, alpha: Any) -> Any:
    """``x`` plus AlexNet's PCA noise for the three ``alpha`` weights.  The tables are constants of the
    device and the 3 x 3 product is elementwise: an upload or a cuBLAS call through CuPy at every call
    could not be captured into a CUDA graph (lazynd/backend/cuda/graphs.py)."""
    eigval = kctx.backend.constant("image lighting eigenvalues", lambda: np.array(_EIGVAL), x.dtype)
    eigvec = kctx.backend.constant("image lighting eigenvectors", lambda: np.array(_EIGVEC), x.dtype)
    return x + (eigvec * (alpha * eigval)).sum(axis=1)


def _adjust_lighting(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x = _working(inputs[0])
    given = tuple(attrs["alpha"])
    alpha = kctx.backend.constant(("image lighting alpha", given), lambda: np.array(given), x.dtype)
    _store(kctx.xp, outputs[0], _lighting(kctx, x, alpha))


def _random_lighting(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x = _working(inputs[0])
    alpha = kctx.rng.normal(0.0, attrs["alpha_std"], (3,)).astype(x.dtype)
    _store(kctx.xp, outputs[0], _lighting(kctx, x, alpha))


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


def _shifted_hue(xp: Any, x: Any, alpha: Any) -> Any:
    """RGB pixels ``x`` (0-255) with their hue turned by ``alpha`` turns, through HLS as MXNet 1.9.1."""
    rgb = x / x.dtype.type(255)
    red, green, blue = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    vmax, vmin = rgb.max(axis=-1), rgb.min(axis=-1)
    spread, light = vmax - vmin, (vmax + vmin) * 0.5
    coloured = spread > np.finfo(np.float32).eps  # grays keep hue and saturation 0
    spread = xp.where(coloured, spread, 1)
    sat = spread / xp.where(light < 0.5, vmax + vmin, 2 - vmax - vmin).clip(np.finfo(np.float32).eps)
    sat = xp.where(coloured, sat, 0)
    degrees = xp.where(
        vmax == red,
        (green - blue) * 60 / spread,
        xp.where(vmax == green, (blue - red) * 60 / spread + 120, (red - green) * 60 / spread + 240),
    )
    # a turn count past float32's 2**24 is whole: one whose degrees overflow turns the hue by nothing
    turn = alpha * 360
    degrees = xp.where(coloured, degrees, 0) + xp.where(xp.isinf(turn), 0, turn)
    sixths = (degrees / 60) % 6
    sector = sixths.astype("int32")
    frac = sixths - sector
    high = xp.where(light <= 0.5, light * (1 + sat), light + sat - light * sat)
    low = 2 * light - high
    taps = xp.stack([high, low, low + (high - low) * (1 - frac), low + (high - low) * frac], axis=-1)
    out = xp.take_along_axis(taps, xp.asarray(_HUE_SECTORS)[sector], axis=-1)
    return xp.where((sat == 0)[..., None], light[..., None], out) * 255


def _random_hue(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    x = _working(inputs[0])
    _store(kctx.xp, outputs[0], _shifted_hue(kctx.xp, x, _draw_factor(kctx, attrs, x.dtype)))


def _random_color_jitter(kctx: Any, attrs: dict, inputs: list, outputs: list, aux: list) -> None:
    xp, dtype = kctx.xp, outputs[0].dtype
    x = _working(inputs[0])
    keys = kctx.rng.uniform(0.0, 1.0, (4,))  # sorting uniform keys gives a uniform random order
    for step in (keys if xp is np else keys.get()).argsort().tolist():
        spread = attrs[_JITTER_STEPS[step]]
        if spread <= 0:
            continue
        factor = kctx.rng.uniform(-spread, spread, (1,)).astype(x.dtype)
        if step == 0:
            x = x * (1 + factor)
        elif step == 1:
            x = x * (1 + factor) - _gray(xp, x).mean() * factor
        elif step == 2:
            x = x * (1 + factor) - _gray(xp, x) * factor
        else:
            x = _shifted_hue(xp, x, factor)
        x = _working(_saturated(xp, x, dtype))  # each step stores into the image's dtype, as MXNet
    outputs[0][...] = _saturated(xp, x, dtype)


# a random draw's bounds: finite float32s, as MXNet's float parser reads them (NaN, infinity or a span
# past the float range failed NumPy's uniform inside the engine; MXNet draws garbage or crashes there)
FINITE_FLOAT32 = float_between(float(-np.finfo(np.float32).max), float(np.finfo(np.float32).max))
_FACTORS = {
    "min_factor": Param(FINITE_FLOAT32, doc="smallest factor drawn"),
    "max_factor": Param(FINITE_FLOAT32, doc="largest factor drawn"),
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
register(
    OpDef(
        "_image_random_hue",
        _random_hue,
        params=dict(_FACTORS),
        infer_shape=_image_infer("_image_random_hue", (3,)),
        needs_random=True,
        takes_bool=False,
        doc="Turns the hue of an (H, W, 3) image by f turns, f drawn from U(min_factor, max_factor) (no gradient).",
    )
)
register(
    OpDef(
        "_image_random_color_jitter",
        _random_color_jitter,
        params={name: Param(FINITE_FLOAT32, doc=f"how much to jitter {name}") for name in _JITTER_STEPS},
        infer_shape=_image_infer("_image_random_color_jitter", (1, 3)),
        needs_random=True,
        takes_bool=False,
        doc="Brightness, contrast, saturation and hue jitter in a random order (no gradient).",
    )
)
