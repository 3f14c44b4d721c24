"""Augmenters: callable objects that transform an (H, W, C) image NDArray, and ``CreateAugmenter``.

Resizes, crops, the flip, colour jitter, lighting noise, normalisation and casts;
the :class:`Augmenter` interface and the combinators ``SequentialAug`` and
``RandomOrderAug`` are in :mod:`~lazynd.image.augmenter_base` (and importable from here).
``aug(src)`` returns the augmented image.  ``aug.augment(src, label)`` also
transforms a detection label the way the pixels moved: ``label`` is a float
array of rows ``[class, xmin, ymin, xmax, ymax, ...]`` with coordinates as
fractions of the image width and height (MXNet's detection convention); rows
with a negative class are padding and pass through untouched.  Boxes cropped
away entirely get class -1.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..arguments import flag
from ..backend.opencv import opencv
from ..errors import OperatorError
from ..ops.params import Param, parse_shape
from . import normalize
from . import transforms as img
from .arguments import area_argument, int_argument, number_argument, ratio_argument, size_argument
from .augmenter_base import Augmenter, RandomOrderAug, SequentialAug

__all__ = [
    "Augmenter",
    "ResizeAug",
    "RandomCropAug",
    "RandomSizedCropAug",
    "CenterCropAug",
    "HorizontalFlipAug",
    "ColorJitterAug",
    "LightingAug",
    "ColorNormalizeAug",
    "CastAug",
    "RandomOrderAug",
    "SequentialAug",
    "ForceResizeAug",
    "CreateAugmenter",
]


def crop_label(label: np.ndarray | None, rect: tuple[int, int, int, int], size: tuple[int, int]) -> np.ndarray | None:
    """Boxes of ``label`` seen through the crop ``rect`` (x0, y0, w, h) of an image of ``size`` (w, h)."""
    if label is None:
        return None
    out = np.array(label, dtype=np.float32, copy=True)
    x0, y0, w, h = rect
    width, height = size
    valid = out[:, 0] >= 0
    xs = (out[:, [1, 3]] * width - x0) / w
    ys = (out[:, [2, 4]] * height - y0) / h
    xs, ys = np.clip(xs, 0, 1), np.clip(ys, 0, 1)
    out[valid, 1], out[valid, 3] = xs[valid, 0], xs[valid, 1]
    out[valid, 2], out[valid, 4] = ys[valid, 0], ys[valid, 1]
    gone = valid & ((out[:, 3] <= out[:, 1]) | (out[:, 4] <= out[:, 2]))
    out[gone, 0] = -1
    return out


def _size(src: Any) -> tuple[int, int]:
    return int(src.shape[1]), int(src.shape[0])


class ResizeAug(Augmenter):
    """Resize the shorter side to ``size`` (fractional boxes do not change)."""

    def __init__(self, size: int, interp: int = 2) -> None:
        self.size, self.interp = int_argument("ResizeAug", "size", size, low=1), interp

    def augment(self, src: Any, label: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        return img.resize_short(src, self.size, self.interp), label


class RandomCropAug(Augmenter):
    """Crop a random region of ``size`` (w, h)."""

    def __init__(self, size: tuple[int, int], interp: int = 2) -> None:
        self.size, self.interp = size_argument("RandomCropAug", "size", size), interp

    def augment(self, src: Any, label: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        out, rect = img.random_crop(src, self.size, self.interp)
        return out, crop_label(label, rect, _size(src))


class RandomSizedCropAug(Augmenter):
    """Crop a random region of random ``area`` fraction and aspect ``ratio``, resized to ``size``."""

    def __init__(
        self, size: tuple[int, int], area: float | tuple[float, float], ratio: tuple[float, float], interp: int = 2
    ) -> None:
        area_argument("RandomSizedCropAug", "area", area)
        ratio_argument("RandomSizedCropAug", "ratio", ratio)
        # kept as given, for dumps() (MXNet's JSON)
        self.size, self.area, self.ratio = size_argument("RandomSizedCropAug", "size", size), area, ratio
        self.interp = interp

    def augment(self, src: Any, label: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        out, rect = img.random_size_crop(src, self.size, self.area, self.ratio, self.interp)
        return out, crop_label(label, rect, _size(src))


class CenterCropAug(Augmenter):
    """Crop the central region of ``size`` (w, h)."""

    def __init__(self, size: tuple[int, int], interp: int = 2) -> None:
        self.size, self.interp = size_argument("CenterCropAug", "size", size), interp

    def augment(self, src: Any, label: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        out, rect = img.center_crop(src, self.size, self.interp)
        return out, crop_label(label, rect, _size(src))


# element types cv2.flip takes as they are
_CV_FLIP_TYPES = {np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16, np.int32, np.float32, np.float64)}


def _flip(src: np.ndarray, out: np.ndarray) -> None:
    if src.shape[2] <= 4 and src.dtype in _CV_FLIP_TYPES and src.flags.c_contiguous and out.flags.c_contiguous:
        # OpenCV copies whole pixels; NumPy's reversed view copies element by element (~20x slower)
        result = opencv().flip(src, 1, dst=out)
        if np.shares_memory(result, out):
            return
    out[...] = src[:, ::-1]


class HorizontalFlipAug(Augmenter):
    """Mirror left-right with probability ``p``."""

    def __init__(self, p: float) -> None:
        self.p = number_argument("HorizontalFlipAug", "p", p)

    def augment(self, src: Any, label: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        if random.random() >= self.p:
            return src, label
        out = img.image_op("flip", _flip, src, src.shape, src.data_array.dtype)
        if label is None:
            return out, None
        flipped = np.array(label, dtype=np.float32, copy=True)
        valid = flipped[:, 0] >= 0
        flipped[valid, 1], flipped[valid, 3] = 1 - label[valid, 3], 1 - label[valid, 1]
        return out, flipped


_GRAY = np.array([0.299, 0.587, 0.114], dtype=np.float32)


def _jitter(src: np.ndarray, out: np.ndarray, steps: list[tuple[str, float]]) -> None:
    x = src.astype(np.float32)
    for kind, alpha in steps:
        if kind == "brightness":
            x = x * alpha
        elif kind == "contrast":
            gray = float((x * _GRAY).sum(axis=2).mean())
            x = x * alpha + gray * (1 - alpha)
        else:
            gray = (x * _GRAY).sum(axis=2, keepdims=True)
            x = x * alpha + gray * (1 - alpha)
    out[...] = x


class ColorJitterAug(Augmenter):
    """Random brightness, contrast and saturation (each alpha in [1 - v, 1 + v]), in random order; float32
    out (into a float32 ``src`` itself, as MXNet's: see :func:`~lazynd.image.transforms.in_place_target`)."""

    def __init__(self, brightness: float, contrast: float, saturation: float) -> None:
        brightness, contrast, saturation = (
            number_argument("ColorJitterAug", name, value)
            for name, value in (("brightness", brightness), ("contrast", contrast), ("saturation", saturation))
        )
        self.brightness, self.contrast, self.saturation = brightness, contrast, saturation
        # the jitters, reshuffled in place at each call and then drawn in that order, as MXNet's
        # RandomOrderAug of three jitter augmenters does: a seeded run draws MXNet's factors
        self._jitters = [
            (kind, amount)
            for kind, amount in (("brightness", brightness), ("contrast", contrast), ("saturation", saturation))
            if amount > 0
        ]

    def augment(self, src: Any, label: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        # a grey (1-channel) image is its own grey, as in MXNet (whose weights broadcast over it)
        if img.image_shape("ColorJitterAug", src)[2] not in (1, 3) and (self.contrast or self.saturation):
            raise OperatorError(
                f"ColorJitterAug: contrast and saturation need 1 or 3 channels, image has shape {src.shape}"
            )
        random.shuffle(self._jitters)
        steps = [(kind, 1.0 + random.uniform(-amount, amount)) for kind, amount in self._jitters]
        return img.image_op(
            "color_jitter", _jitter, src, src.shape, np.float32, steps, out=img.in_place_target(src)
        ), label

    def dumps(self) -> list:  # type: ignore[override]  # MXNet's is a RandomOrderAug: a list
        """``["colorjitteraug", [the dumps() of each jitter with a non-zero amount]]``, as MXNet."""
        jitters = [
            json.dumps([f"{kind}jitteraug", {kind: amount}])
            for kind, amount in (
                ("brightness", self.brightness),
                ("contrast", self.contrast),
                ("saturation", self.saturation),
            )
            if amount > 0
        ]
        return ["colorjitteraug", jitters]


def _add_rgb(src: np.ndarray, out: np.ndarray, rgb: np.ndarray) -> None:
    np.add(src, rgb, out=out, casting="unsafe")


class LightingAug(Augmenter):
    """AlexNet-style PCA lighting noise with standard deviation ``alphastd``; float32 out (into a
    float32 ``src`` itself, as MXNet's)."""

    def __init__(self, alphastd: float, eigval: Sequence[float], eigvec: Sequence[Sequence[float]]) -> None:
        self.alphastd = number_argument("LightingAug", "alphastd", alphastd)
        # kept in the precision given (float64 for Python floats), as MXNet keeps them: dumps() shows
        # the numbers given, and the shift is computed in that precision before its cast to float32
        self.eigval = np.asarray(eigval)
        self.eigvec = np.asarray(eigvec)
        if self.eigval.shape != (3,) or self.eigvec.shape != (3, 3):
            raise OperatorError(
                f"LightingAug: eigval must have shape (3,) and eigvec (3, 3) (RGB), got {self.eigval.shape} "
                f"and {self.eigvec.shape}"
            )

    def augment(self, src: Any, label: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        alpha = np.random.normal(0, self.alphastd, size=(3,))
        rgb = (self.eigvec @ (alpha * self.eigval)).astype(np.float32)
        return img.image_op("lighting", _add_rgb, src, src.shape, np.float32, rgb, out=img.in_place_target(src)), label


class ColorNormalizeAug(Augmenter):
    """``(src - mean) / std`` per channel; float32 out (into a float32 ``src`` itself, as MXNet's)."""

    def __init__(self, mean: Any, std: Any) -> None:
        for argument, value in (("mean", mean), ("std", std)):
            if value is not None:  # checked now, not at the first image
                normalize.channel_values("ColorNormalizeAug", argument, value)
        self.mean, self.std = mean, std

    def augment(self, src: Any, label: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        return normalize.color_normalize(src, self.mean, self.std), label


def _cast(src: np.ndarray, out: np.ndarray) -> None:
    np.copyto(out, src, casting="unsafe")


class CastAug(Augmenter):
    """Convert to dtype ``typ``: always a new array, as MXNet's ``astype`` gives, even when ``src``
    already has that dtype (the colour augmenters that follow write into a float32 image, and must
    not write into the caller's)."""

    def __init__(self, typ: str = "float32") -> None:
        try:
            self.typ = np.dtype(typ)
        except TypeError:
            raise OperatorError(f"CastAug: typ must be a NumPy dtype such as 'float32', got {typ!r}") from None

    def dumps(self) -> str:
        """``["castaug", {"type": dtype name}]``, as MXNet."""
        return json.dumps(["castaug", {"type": self.typ.name}])

    def augment(self, src: Any, label: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        return img.image_op("cast", _cast, src, src.shape, self.typ), label


class ForceResizeAug(Augmenter):
    """Resize to exactly ``size`` = (width, height), whatever the aspect ratio."""

    def __init__(self, size: Sequence[int], interp: int = 2) -> None:
        self.size = size_argument("ForceResizeAug", "size", size)
        self.interp = interp

    def augment(self, src: Any, label: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        return img.imresize(src, self.size[0], self.size[1], self.interp), label


# ImageNet's RGB mean and standard deviation, for mean=True and std=True
IMAGENET_MEAN = (123.68, 116.28, 103.53)
IMAGENET_STD = (58.395, 57.12, 57.375)
_EIGVAL = [55.46, 4.794, 1.148]
_EIGVEC = [[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140], [-0.5836, -0.6948, 0.4203]]


def CreateAugmenter(  # noqa: N802 - MXNet's name
    data_shape: Sequence[int],
    resize: int = 0,
    rand_crop: bool = False,
    rand_resize: bool = False,
    rand_mirror: bool = False,
    mean: Any = None,
    std: Any = None,
    brightness: float = 0,
    contrast: float = 0,
    saturation: float = 0,
    hue: float = 0,
    pca_noise: float = 0,
    rand_gray: float = 0,
    inter_method: int = 2,
) -> list[Augmenter]:
    """The standard augmenter list for images of ``data_shape`` (C, H, W).

    ``mean=True``/``std=True`` use ImageNet's statistics.

    Examples
    --------
    >>> from lazynd import image
    >>> [type(a).__name__ for a in image.CreateAugmenter((3, 224, 224), resize=256, rand_mirror=True)]
    ['ResizeAug', 'CenterCropAug', 'HorizontalFlipAug', 'CastAug']
    """
    shape = Param(parse_shape).parse("CreateAugmenter", "data_shape", data_shape)
    if len(shape) != 3:
        raise OperatorError(f"CreateAugmenter: data_shape must be (channels, height, width), got {data_shape!r}")
    data_shape = shape
    resize = int_argument("CreateAugmenter", "resize", resize)
    rand_crop, rand_resize, rand_mirror = (
        flag("CreateAugmenter", name, value)
        for name, value in (("rand_crop", rand_crop), ("rand_resize", rand_resize), ("rand_mirror", rand_mirror))
    )
    augs: list[Augmenter] = []
    if resize > 0:
        augs.append(ResizeAug(resize, inter_method))
    crop = (int(data_shape[2]), int(data_shape[1]))
    if rand_resize:
        augs.append(RandomSizedCropAug(crop, 0.08, (3.0 / 4.0, 4.0 / 3.0), inter_method))
    elif rand_crop:
        augs.append(RandomCropAug(crop, inter_method))
    else:
        augs.append(CenterCropAug(crop, inter_method))
    if rand_mirror:
        augs.append(HorizontalFlipAug(0.5))
    augs.append(CastAug())
    augs += color_augmenters(brightness, contrast, saturation, hue, pca_noise, rand_gray, mean, std)
    return augs


def color_augmenters(
    brightness: float, contrast: float, saturation: float, hue: float, pca_noise: float, rand_gray: float,
    mean: Any, std: Any,
) -> list[Augmenter]:  # fmt: skip
    """The colour part of :func:`CreateAugmenter` (and of ``CreateDetAugmenter``), after the cast to
    float32, in MXNet's order: jitters of brightness, contrast and saturation, of hue, PCA lighting
    noise, random grey, then the normalisation by ``mean`` and/or ``std`` (``True``: ImageNet's; ``std``
    alone divides, as in MXNet)."""
    brightness, contrast, saturation, hue, pca_noise, rand_gray = (
        number_argument("CreateAugmenter", name, value)
        for name, value in (
            ("brightness", brightness),
            ("contrast", contrast),
            ("saturation", saturation),
            ("hue", hue),
            ("pca_noise", pca_noise),
            ("rand_gray", rand_gray),
        )
    )
    augs: list[Augmenter] = []
    if brightness or contrast or saturation:
        augs.append(ColorJitterAug(brightness, contrast, saturation))
    if hue:
        from .color_augmenters import HueJitterAug

        augs.append(HueJitterAug(hue))
    if pca_noise > 0:
        augs.append(LightingAug(pca_noise, _EIGVAL, _EIGVEC))
    if rand_gray > 0:
        from .color_augmenters import RandomGrayAug

        augs.append(RandomGrayAug(rand_gray))
    # float32, as MXNet's NDArrays of ImageNet's statistics (which its dumps() shows as 123.68000030517578...)
    if mean is True:
        mean = np.array(IMAGENET_MEAN, dtype=np.float32)
    if std is True:
        std = np.array(IMAGENET_STD, dtype=np.float32)
    if mean is not None or std is not None:
        augs.append(ColorNormalizeAug(mean, std))
    return augs
