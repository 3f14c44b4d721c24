"""The parts of MXNet's default image augmenter (``aug_default``) that ``ImageRecordIter`` adds
to the resize / crop / mirror of :mod:`lazynd.image.record_iter`.

In MXNet 1.9.1's order, on the decoded (H, W, C) uint8 image:

1. one affine warp (before the crop) made of a rotation by an integer angle drawn in
   ``[-max_rotate_angle, max_rotate_angle]`` (or ``rotate`` when > 0), a shear ``(x, y) ->
   (x + m y, y)`` with ``m`` in ``[-max_shear_ratio, max_shear_ratio]``, a scale ``s`` in
   ``[min_random_scale, max_random_scale]`` and an aspect ``r`` in ``[1 - max_aspect_ratio,
   1 + max_aspect_ratio]``, or ``[min_aspect_ratio, max_aspect_ratio]`` when ``min_aspect_ratio``
   is given (heights scaled by ``2 s / (1 + r)``, widths by ``r`` times that; ``r`` is 1 with
   ``random_resized_crop``, whose crop takes the aspect range).  Each side of the output is
   ``max(min_img_size, min(max_img_size, s * side))``, the image's centre kept at the centre and
   the uncovered border filled with ``fill_value``;
2. ``pad`` pixels of ``fill_value`` on every side (before the crop);
3. the crop: ``random_resized_crop`` or ``max_crop_size`` / ``min_crop_size``
   (:mod:`lazynd.image.record_crop`, both resized to ``data_shape``), else the iterator's own;
4. after the crop: integer offsets drawn in ``[-random_h, random_h]``, ``[-random_s,
   random_s]`` and ``[-random_l, random_l]`` added to the pixels in OpenCV's 8-bit HLS space
   (hue 0-180, lightness and saturation 0-255), clipped to those ranges;
5. at normalisation (float32 data only, as MXNet): ``((x - mean) * c + i) * scale / std`` with a
   contrast ``c`` in ``[1 - max_random_contrast, 1 + max_random_contrast]`` and an illumination
   ``i`` in ``[-max_random_illumination, max_random_illumination]`` drawn per image (the mean is
   0 when none is given: MXNet 1.9.1 applies both without a mean too).

The random draws happen when an image is pushed (not on the engine's workers), from
``numpy.random.RandomState(seed_aug)`` when ``seed_aug`` is given, else from NumPy's global
generator (which the iterator's ``seed`` seeds), so runs are reproducible; the pixel work runs
on the engine's workers as the decode does.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ..backend.opencv import opencv
from ..errors import OperatorError
from .augmenter_base import Augmenter
from .record_crop import CropSizeAug, ResizedCropAug
from .transforms import image_op, image_shape, interpolation_code

__all__ = ["AUG_DEFAULTS", "RecordAugmenters", "take_record_augmenters"]

# the arguments implemented here, with MXNet's defaults (which leave the data unchanged)
AUG_DEFAULTS: dict[str, Any] = {
    "max_rotate_angle": 0,
    "rotate": -1,
    "max_shear_ratio": 0.0,
    "max_aspect_ratio": 0.0,
    "min_aspect_ratio": None,
    "min_random_scale": 1.0,
    "max_random_scale": 1.0,
    "max_img_size": 1e10,
    "min_img_size": 0.0,
    "random_resized_crop": False,
    "min_random_area": 1.0,
    "max_random_area": 1.0,
    "max_crop_size": -1,
    "min_crop_size": -1,
    "random_h": 0,
    "random_s": 0,
    "random_l": 0,
    "fill_value": 255,
    "pad": 0,
    "max_random_contrast": 0.0,
    "max_random_illumination": 0.0,
    "seed_aug": None,
}

# (lowest, highest) allowed value of each numeric argument; None: no bound
_RANGES: dict[str, tuple[float | None, float | None]] = {
    "max_rotate_angle": (0, 360),
    "rotate": (-1, 360),
    "max_shear_ratio": (0.0, None),
    "max_aspect_ratio": (0.0, None),  # below 1 too unless min_aspect_ratio is given (_check_aspect)
    "min_random_scale": (1e-3, None),
    "max_random_scale": (1e-3, None),
    "max_img_size": (1.0, None),
    "min_img_size": (0.0, None),
    "min_random_area": (0.0, 1.0),
    "max_random_area": (0.0, 1.0),
    "max_crop_size": (-1, None),
    "min_crop_size": (-1, None),
    "random_h": (0, 180),
    "random_s": (0, 255),
    "random_l": (0, 255),
    "fill_value": (0, 255),
    "pad": (0, None),
    "max_random_contrast": (0.0, None),
    "max_random_illumination": (0.0, None),
}
_INTEGERS = {
    "max_rotate_angle",
    "rotate",
    "max_crop_size",
    "min_crop_size",
    "random_h",
    "random_s",
    "random_l",
    "fill_value",
    "pad",
}
# arguments whose "min_x <= max_x" MXNet requires (or that the warp needs to mean anything)
_ORDERED = (
    ("min_random_scale", "max_random_scale"),
    ("min_img_size", "max_img_size"),
    ("min_random_area", "max_random_area"),
    ("min_crop_size", "max_crop_size"),
)


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


def _aspect_range(name: str, options: dict[str, Any]) -> tuple[float, float]:
    """The aspect range: ``[min_aspect_ratio, max_aspect_ratio]`` when ``min_aspect_ratio`` is
    given, else ``[1 - max_aspect_ratio, 1 + max_aspect_ratio]`` (refused unless positive, as MXNet)."""
    high = options["max_aspect_ratio"]
    if options["min_aspect_ratio"] is None:
        if high >= 1:
            raise OperatorError(
                f"{name}: max_aspect_ratio must be < 1 without min_aspect_ratio (the aspect range is "
                f"[1 - max_aspect_ratio, 1 + max_aspect_ratio]), got {high}"
            )
        return 1 - high, 1 + high
    low = options["min_aspect_ratio"]
    try:
        low = float(low)
    except (TypeError, ValueError):
        raise OperatorError(f"{name}: min_aspect_ratio must be a number or None, got {low!r}") from None
    if not 0 < low <= high:
        raise OperatorError(
            f"{name}: min_aspect_ratio must be in (0, max_aspect_ratio={high}], got {options['min_aspect_ratio']!r}"
        )
    return low, high


def _check_crops(name: str, options: dict[str, Any], rand_crop: bool) -> None:
    """Refuse what MXNet refuses around the two crops (conflicts, empty crops)."""
    sized = options["max_crop_size"] != -1 or options["min_crop_size"] != -1
    if options["random_resized_crop"]:
        conflicts = [key for key in ("min_random_scale", "max_random_scale") if options[key] != 1]
        conflicts += ["max_crop_size/min_crop_size"] * sized + ["rand_crop"] * bool(rand_crop)
        if conflicts:
            raise OperatorError(f"{name}: random_resized_crop=True conflicts with {', '.join(conflicts)} (as in MXNet)")
    elif sized and options["min_crop_size"] < 1:
        raise OperatorError(
            f"{name}: min_crop_size must be >= 1 when max_crop_size is given, got {options['min_crop_size']}"
        )


class _AffineAug(Augmenter):
    """MXNet's random rotation, shear, scale and aspect change, as one ``warpAffine``."""

    def __init__(self, options: dict[str, Any], aspect: tuple[float, float], interp: int, rng: Any) -> None:
        self.options, self.aspect, self.interp, self.rng = options, aspect, interp, rng

    def matrix(self, width: int, height: int) -> tuple[np.ndarray, int, int]:
        """A random forward matrix (source to output pixels) and the output's width and height."""
        o = self.options
        shear = (self.rng.uniform(0, 1) * 2 - 1) * o["max_shear_ratio"]
        angle = int(self.rng.randint(-o["max_rotate_angle"], o["max_rotate_angle"] + 1))
        if o["rotate"] > 0:
            angle = o["rotate"]
        cos, sin = math.cos(math.radians(angle)), math.sin(math.radians(angle))
        scale = self.rng.uniform(0, 1) * (o["max_random_scale"] - o["min_random_scale"]) + o["min_random_scale"]
        ratio = self.rng.uniform(*self.aspect)
        height_scale = 2 * scale / (1 + ratio)
        width_scale = ratio * height_scale
        # each side is s times the input's, bounded by min/max_img_size
        sizes = [max(o["min_img_size"], min(o["max_img_size"], scale * side)) for side in (width, height)]
        m = np.empty((2, 3), np.float32)
        m[0, 0], m[0, 1] = (
            height_scale * cos - shear * sin * width_scale,
            height_scale * sin + shear * cos * width_scale,
        )
        m[1, 0], m[1, 1] = -sin * width_scale, cos * width_scale
        # the image's centre goes to the output's centre
        m[0, 2] = (sizes[0] - (m[0, 0] * width + m[0, 1] * height)) / 2
        m[1, 2] = (sizes[1] - (m[1, 0] * width + m[1, 1] * height)) / 2
        return m, int(sizes[0]), int(sizes[1])

    def augment(self, src: Any, label: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        height, width, channels = image_shape("ImageRecordIter (affine augmentation)", src)
        m, new_width, new_height = self.matrix(width, height)
        if new_width < 1 or new_height < 1:
            raise OperatorError(
                f"ImageRecordIter: min_random_scale {self.options['min_random_scale']} and "
                f"max_img_size {self.options['max_img_size']} make a {width}x{height} image empty"
            )
        code = interpolation_code(self.interp, (height, width), (new_height, new_width))
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


class _Lighting:
    """MXNet's random contrast and illumination, drawn per image when a batch is pushed."""

    def __init__(self, max_contrast: float, max_illumination: float, rng: Any) -> None:
        self.max_contrast, self.max_illumination, self.rng = max_contrast, max_illumination, rng

    def __call__(self, count: int) -> np.ndarray:
        """A (count, 2) float32 array of (contrast, illumination) pairs."""
        draws = np.empty((count, 2), np.float32)
        for row in draws:
            row[0] = (self.rng.uniform(0, 1) * 2 - 1) * self.max_contrast + 1
            row[1] = (self.rng.uniform(0, 1) * 2 - 1) * self.max_illumination
        return draws


class RecordAugmenters(NamedTuple):
    """What :func:`take_record_augmenters` gives the iterator.

    ``crop`` replaces the iterator's own crop when not None; ``lighting(n)`` draws the contrast
    and illumination of ``n`` images (None when both are off).
    """

    before_crop: list[Augmenter]
    crop: Augmenter | None
    after_crop: list[Augmenter]
    lighting: _Lighting | None


def _options(name: str, kwargs: dict[str, Any], rand_crop: bool) -> tuple[dict[str, Any], tuple[float, float], Any]:
    """This module's arguments taken out of ``kwargs`` and checked, the aspect range and the generator."""
    options = {key: kwargs.pop(key, default) for key, default in AUG_DEFAULTS.items()}
    seed = options.pop("seed_aug")
    for key in _RANGES:
        options[key] = _checked(name, key, options[key])
    for low, high in _ORDERED:
        if options[low] > options[high]:
            raise OperatorError(f"{name}: {low} {options[low]} must be <= {high} {options[high]}")
    options["random_resized_crop"] = bool(options["random_resized_crop"])
    aspect = _aspect_range(name, options)
    _check_crops(name, options, rand_crop)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise OperatorError(f"{name}: seed_aug must be a non-negative integer, got {seed!r}")
    rng: Any = np.random if seed is None else np.random.RandomState(int(seed))
    return options, aspect, rng


def take_record_augmenters(
    name: str, kwargs: dict[str, Any], interp: int, size: tuple[int, int], rand_crop: bool
) -> RecordAugmenters:
    """Remove this module's arguments from ``kwargs``, check them and return the augmenters of
    ``data_shape``'s ``size`` (w, h): before the crop (affine warp, pad), the crop when one of
    MXNet's replaces the iterator's, after it (HLS offsets), and the contrast / illumination draw."""
    options, aspect, rng = _options(name, kwargs, rand_crop)
    resized_crop = options["random_resized_crop"]
    before: list[Augmenter] = []
    warps = (
        any(options[key] > 0 for key in ("max_rotate_angle", "rotate", "max_shear_ratio"))
        or any(options[key] != AUG_DEFAULTS[key] for key in ("min_random_scale", "max_random_scale"))
        or any(options[key] != AUG_DEFAULTS[key] for key in ("max_img_size", "min_img_size"))
    )
    aspect_warps = not resized_crop and (options["max_aspect_ratio"] > 0 or options["min_aspect_ratio"] is not None)
    if warps or aspect_warps:
        before.append(_AffineAug(options, aspect if aspect_warps else (1.0, 1.0), interp, rng))
    if options["pad"] > 0:
        before.append(_PadAug(options["pad"], options["fill_value"]))
    crop: Augmenter | None = None
    if resized_crop:
        area = (options["min_random_area"], options["max_random_area"])
        crop = ResizedCropAug(area, aspect, size, interp, rng)
    elif options["max_crop_size"] != -1 or options["min_crop_size"] != -1:
        crop = CropSizeAug(options["min_crop_size"], options["max_crop_size"], size, rand_crop, interp, rng)
    after: list[Augmenter] = []
    if options["random_h"] or options["random_s"] or options["random_l"]:
        after.append(_HLSAug(options["random_h"], options["random_s"], options["random_l"], rng))
    lighting = None
    if options["max_random_contrast"] or options["max_random_illumination"]:
        lighting = _Lighting(options["max_random_contrast"], options["max_random_illumination"], rng)
    return RecordAugmenters(before, crop, after, lighting)


def applies_default_augmentation(name: str, aug_seq: Any) -> bool:
    """Whether MXNet's ``aug_seq`` asks for its default augmenter (``'aug_default'``) or none (``''``);
    an ``OperatorError`` naming ``name`` for any other list (MXNet 1.9.1 crashes on an unknown name)."""
    if aug_seq == "aug_default" or aug_seq == "":
        return bool(aug_seq)
    if isinstance(aug_seq, str) and "det_aug_default" in aug_seq:
        raise OperatorError(f"{name}: aug_seq {aug_seq!r} is the detection augmenter: use ImageDetRecordIter")
    raise OperatorError(
        f"{name}: aug_seq must be 'aug_default' (the default augmentation) or '' (none), got {aug_seq!r}"
    )
