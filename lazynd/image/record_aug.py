"""The parts of MXNet's default image augmenter (``aug_default``) that ``ImageRecordIter`` adds
to the resize / crop / mirror of :mod:`lazynd.image.record_iter`.

In MXNet 1.9.1's order, on the decoded (H, W, C) uint8 image:

1. one affine warp (before the crop) made of a rotation by an integer angle drawn in
   ``[-max_rotate_angle, max_rotate_angle]`` (or ``rotate`` when > 0), a shear ``(x, y) ->
   (x + m y, y)`` with ``m`` in ``[-max_shear_ratio, max_shear_ratio]``, a scale ``s`` in
   ``[min_random_scale, max_random_scale]`` and an aspect ``r`` in ``[1 - max_aspect_ratio,
   1 + max_aspect_ratio]`` (heights scaled by ``2 s / (1 + r)``, widths by ``r`` times that).
   The output is ``s`` times the input's size, the image's centre kept at the centre and the
   uncovered border filled with ``fill_value``;
2. ``pad`` pixels of ``fill_value`` on every side (before the crop);
3. after the crop: integer offsets drawn in ``[-random_h, random_h]``, ``[-random_s,
   random_s]`` and ``[-random_l, random_l]`` added to the pixels in OpenCV's 8-bit HLS space
   (hue 0-180, lightness and saturation 0-255), clipped to those ranges.

The random draws happen when an image is pushed (not on the engine's workers), from
``numpy.random.RandomState(seed_aug)`` when ``seed_aug`` is given, else from NumPy's global
generator (which the iterator's ``seed`` seeds), so runs are reproducible; the pixel work runs
on the engine's workers as the decode does.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..backend.opencv import opencv
from ..errors import OperatorError
from .augmenter_base import Augmenter
from .transforms import _interp, image_op, image_shape

__all__ = ["AUG_DEFAULTS", "take_record_augmenters"]

# the arguments implemented here, with MXNet's defaults (which leave the data unchanged)
AUG_DEFAULTS: dict[str, Any] = {
    "max_rotate_angle": 0,
    "rotate": -1,
    "max_shear_ratio": 0.0,
    "max_aspect_ratio": 0.0,
    "min_random_scale": 1.0,
    "max_random_scale": 1.0,
    "random_h": 0,
    "random_s": 0,
    "random_l": 0,
    "fill_value": 255,
    "pad": 0,
    "seed_aug": None,
}

# (lowest, highest) allowed value of each numeric argument; None: no bound
_RANGES: dict[str, tuple[float | None, float | None]] = {
    "max_rotate_angle": (0, 360),
    "rotate": (-1, 360),
    "max_shear_ratio": (0.0, None),
    "max_aspect_ratio": (0.0, 0.999),
    "min_random_scale": (1e-3, None),
    "max_random_scale": (1e-3, None),
    "random_h": (0, 180),
    "random_s": (0, 255),
    "random_l": (0, 255),
    "fill_value": (0, 255),
    "pad": (0, None),
}
_INTEGERS = {"max_rotate_angle", "rotate", "random_h", "random_s", "random_l", "fill_value", "pad"}


def _checked(name: str, key: str, value: Any) -> float:
    """``value`` as a number inside ``key``'s range, or an ``OperatorError`` naming ``key``."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise OperatorError(f"{name}: {key} must be a number, got {value!r}") from None
    low, high = _RANGES[key]
    integral = key not in _INTEGERS or number == int(number)
    if not integral or (low is not None and number < low) or (high is not None and number > high):
        kind = "an integer" if key in _INTEGERS else "a number"
        bounds = f"[{low}, {high if high is not None else 'inf'}]"
        raise OperatorError(f"{name}: {key} must be {kind} in {bounds}, got {value!r}")
    return int(number) if key in _INTEGERS else number


class _AffineAug(Augmenter):
    """MXNet's random rotation, shear, scale and aspect change, as one ``warpAffine``."""

    def __init__(self, options: dict[str, Any], interp: int, rng: Any) -> None:
        self.options, self.interp, self.rng = options, interp, rng

    def matrix(self, width: int, height: int) -> tuple[np.ndarray, int, int]:
        """A random forward matrix (source to output pixels) and the output's width and height."""
        o = self.options
        shear = (self.rng.uniform(0, 1) * 2 - 1) * o["max_shear_ratio"]
        angle = int(self.rng.randint(-o["max_rotate_angle"], o["max_rotate_angle"] + 1))
        if o["rotate"] > 0:
            angle = o["rotate"]
        cos, sin = math.cos(math.radians(angle)), math.sin(math.radians(angle))
        scale = self.rng.uniform(0, 1) * (o["max_random_scale"] - o["min_random_scale"]) + o["min_random_scale"]
        ratio = (self.rng.uniform(0, 1) * 2 - 1) * o["max_aspect_ratio"] + 1
        height_scale = 2 * scale / (1 + ratio)
        width_scale = ratio * height_scale
        new_width, new_height = int(scale * width), int(scale * height)
        m = np.empty((2, 3), np.float32)
        m[0, 0], m[0, 1] = (
            height_scale * cos - shear * sin * width_scale,
            height_scale * sin + shear * cos * width_scale,
        )
        m[1, 0], m[1, 1] = -sin * width_scale, cos * width_scale
        # the image's centre goes to the output's centre
        m[0, 2] = (scale * width - (m[0, 0] * width + m[0, 1] * height)) / 2
        m[1, 2] = (scale * height - (m[1, 0] * width + m[1, 1] * height)) / 2
        return m, new_width, new_height

    def augment(self, src: Any, label: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        height, width, channels = image_shape("ImageRecordIter (affine augmentation)", src)
        m, new_width, new_height = self.matrix(width, height)
        if new_width < 1 or new_height < 1:
            raise OperatorError(
                f"ImageRecordIter: min_random_scale {self.options['min_random_scale']} makes a "
                f"{width}x{height} image empty"
            )
        code = _interp(self.interp, (height, width), (new_height, new_width))
        fill = self.options["fill_value"]
        out = image_op("warpAffine", _warp, src, (new_height, new_width, channels), src.dtype, m, code, fill)
        return out, label


def _warp(src: np.ndarray, out: np.ndarray, m: np.ndarray, code: int, fill: int) -> None:
    size = (out.shape[1], out.shape[0])
    border = (fill,) * 4
    result = opencv().warpAffine(src, m, size, flags=code, borderMode=opencv().BORDER_CONSTANT, borderValue=border)
    out[...] = result.reshape(out.shape)


class _PadAug(Augmenter):
    """``pad`` pixels of ``fill_value`` on every side."""

    def __init__(self, pad: int, fill_value: int) -> None:
        self.pad, self.fill_value = pad, fill_value

    def augment(self, src: Any, label: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        height, width, channels = image_shape("ImageRecordIter (pad)", src)
        shape = (height + 2 * self.pad, width + 2 * self.pad, channels)
        return image_op("pad", _pad, src, shape, src.dtype, self.pad, self.fill_value), label


def _pad(src: np.ndarray, out: np.ndarray, pad: int, fill: int) -> None:
    out[...] = fill
    out[pad : pad + src.shape[0], pad : pad + src.shape[1]] = src


class _HLSAug(Augmenter):
    """Random offsets of hue, lightness and saturation in OpenCV's 8-bit HLS space."""

    def __init__(self, random_h: int, random_s: int, random_l: int, rng: Any) -> None:
        self.random_h, self.random_s, self.random_l, self.rng = random_h, random_s, random_l, rng

    def augment(self, src: Any, label: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        _, _, channels = image_shape("ImageRecordIter (random_h/s/l)", src)
        if channels != 3:
            raise OperatorError(f"ImageRecordIter: random_h/s/l need 3-channel images, got {channels} channel(s)")
        # truncated towards zero, as MXNet's int conversion; the HLS channel order is h, l, s
        h, s, lightness = (
            int((self.rng.uniform(0, 1) * 2 - 1) * v) for v in (self.random_h, self.random_s, self.random_l)
        )
        offsets = np.array([h, lightness, s], np.int16)
        return image_op("random_hls", _shift_hls, src, src.shape, src.dtype, offsets), label


def _shift_hls(src: np.ndarray, out: np.ndarray, offsets: np.ndarray) -> None:
    cv2 = opencv()
    hls = cv2.cvtColor(np.ascontiguousarray(src, np.uint8), cv2.COLOR_RGB2HLS).astype(np.int16) + offsets
    hls = np.clip(hls, 0, np.array([180, 255, 255], np.int16)).astype(np.uint8)
    out[...] = cv2.cvtColor(hls, cv2.COLOR_HLS2RGB)


def take_record_augmenters(name: str, kwargs: dict[str, Any], interp: int) -> tuple[list[Augmenter], list[Augmenter]]:
    """Remove this module's arguments from ``kwargs``, check them and return the augmenters to
    run before the crop (affine warp, pad) and after it (HLS offsets)."""
    options = {key: kwargs.pop(key, default) for key, default in AUG_DEFAULTS.items()}
    seed = options.pop("seed_aug")
    for key in _RANGES:
        options[key] = _checked(name, key, options[key])
    if options["min_random_scale"] > options["max_random_scale"]:
        raise OperatorError(
            f"{name}: min_random_scale {options['min_random_scale']} must be <= "
            f"max_random_scale {options['max_random_scale']}"
        )
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise OperatorError(f"{name}: seed_aug must be a non-negative integer, got {seed!r}")
    rng: Any = np.random if seed is None else np.random.RandomState(int(seed))
    before: list[Augmenter] = []
    affine_keys = ("max_rotate_angle", "rotate", "max_shear_ratio", "max_aspect_ratio")
    if (
        any(options[key] > 0 for key in affine_keys)
        or options["min_random_scale"] != 1
        or options["max_random_scale"] != 1
    ):
        before.append(_AffineAug(options, interp, rng))
    if options["pad"] > 0:
        before.append(_PadAug(options["pad"], options["fill_value"]))
    after: list[Augmenter] = []
    if options["random_h"] or options["random_s"] or options["random_l"]:
        after.append(_HLSAug(options["random_h"], options["random_s"], options["random_l"], rng))
    return before, after
