"""Detection augmenters (MXNet's ``mx.image.Det*Aug``): they transform an image and its boxes together.

A detection label here is a float array of shape ``(objects, B)``, one row
``[class, xmin, ymin, xmax, ymax, ...]`` per object with coordinates as
fractions of the image width and height.  ``aug(src, label)`` returns the new
``(src, label)``; crops clip the boxes to the window and drop the objects that
keep less than ``min_eject_coverage`` of their area.  The random draws are the
ones MXNet makes (Python's ``random``, in the same order), so a seeded run
picks MXNet's windows.  The interface :class:`DetAugmenter` and the combinators
``DetBorrowAug`` and ``DetRandomSelectAug`` are in :mod:`~lazynd.image.augmenter_base`
(and importable from here).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from math import sqrt
from typing import Any

import numpy as np

from ..errors import OperatorError
from ..log import warn_from_user_code
from . import transforms as img
from .augmenter_base import DetAugmenter, DetBorrowAug, DetRandomSelectAug, Label
from .augmenters import IMAGENET_MEAN, IMAGENET_STD, CastAug, ForceResizeAug, ResizeAug, _flip, color_augmenters

__all__ = [
    "DetAugmenter",
    "DetBorrowAug",
    "DetRandomSelectAug",
    "DetHorizontalFlipAug",
    "DetRandomCropAug",
    "DetRandomPadAug",
    "CreateMultiRandCropAugmenter",
    "CreateDetAugmenter",
]


class DetHorizontalFlipAug(DetAugmenter):
    """Mirror the image and its boxes left-right with probability ``p``."""

    def __init__(self, p: float) -> None:
        super().__init__(p=p)
        self.p = p

    def __call__(self, src: Any, label: Label) -> tuple[Any, Label]:
        if random.random() >= self.p:
            return src, label
        flipped = img.image_op("flip", _flip, src, src.shape, src.data_array.dtype)
        out = np.array(label, dtype=np.float32, copy=True)
        out[:, 1], out[:, 3] = 1.0 - label[:, 3], 1.0 - label[:, 1]
        return flipped, out


def _as_range(value: Any) -> tuple[float, float]:
    """A (low, high) range; a single number is the range of that number alone."""
    if isinstance(value, (tuple, list)):
        return float(value[0]), float(value[1])
    return float(value), float(value)


def _range_as_given(value: Any) -> list[Any]:
    """A range as ``dumps()`` shows it: its numbers as given (``[0.5, 2]`` stays ``[0.5, 2]``), a single
    number twice, as MXNet keeps them."""
    return list(value) if isinstance(value, (tuple, list)) else [value, value]


def _box_areas(boxes: np.ndarray) -> np.ndarray:
    """Areas of rows ``[xmin, ymin, xmax, ymax, ...]``; inverted boxes have area 0."""
    return np.maximum(0, boxes[:, 2] - boxes[:, 0]) * np.maximum(0, boxes[:, 3] - boxes[:, 1])


def _attempts(aug: Any, height: int, width: int, for_crop: bool) -> Iterator[tuple[int, float, float, float]]:
    """The windows a crop or pad augmenter ``aug`` tries on a ``height`` x ``width`` image, drawn as
    MXNet draws them: for each of ``aug.max_attempts`` an aspect in ``aug.aspect_ratio_range`` (a
    non-positive one is skipped), then a height; yields ``(height, aspect, smallest area, largest
    area)``, the areas ``aug.area_range`` of the image's.  None at all when ``aug`` is disabled or the
    image empty."""
    if not aug.enabled or height <= 0 or width <= 0:
        return
    min_area = aug.area_range[0] * height * width
    max_area = aug.area_range[1] * height * width
    for _ in range(aug.max_attempts):
        ratio = random.uniform(*aug.aspect_ratio_range)
        if ratio > 0:
            yield _proposed_height(min_area, max_area, ratio, width, height, for_crop), ratio, min_area, max_area


def _proposed_height(min_area: float, max_area: float, ratio: float, width: int, height: int, for_crop: bool) -> int:
    """A random window height in MXNet's range for aspect ``ratio``, before the rounding fixes."""
    low = int(round(sqrt(min_area / ratio)))
    high = int(round(sqrt(max_area / ratio)))
    if for_crop:
        if round(high * ratio) > width:
            high = int((width + 0.4999999) / ratio)  # the largest height whose width still fits
        high = min(high, height)
    else:
        if round(low * ratio) < width:
            low = int((width + 0.499999) / ratio)  # the smallest height whose width covers the image
        low = max(low, height)
    low = min(low, high)
    return random.randint(low, high) if low < high else low


class DetRandomCropAug(DetAugmenter):
    """Crop a random window that keeps every object it touches at least ``min_object_covered`` covered.

    The window's area is ``area_range`` of the image's and its aspect (w/h) in
    ``aspect_ratio_range``; ``max_attempts`` windows are tried before giving up
    (the image is then left as it is).  Boxes are clipped to the window and an
    object left with ``min_eject_coverage`` or less of its area is removed.
    """

    def __init__(
        self,
        min_object_covered: float = 0.1,
        aspect_ratio_range: Any = (0.75, 1.33),
        area_range: Any = (0.05, 1.0),
        min_eject_coverage: float = 0.3,
        max_attempts: int = 50,
    ) -> None:
        super().__init__(
            min_object_covered=min_object_covered,
            aspect_ratio_range=_range_as_given(aspect_ratio_range),
            area_range=_range_as_given(area_range),
            min_eject_coverage=min_eject_coverage,
            max_attempts=max_attempts,
        )
        aspect_ratio_range, area_range = _as_range(aspect_ratio_range), _as_range(area_range)
        self.min_object_covered, self.min_eject_coverage = min_object_covered, min_eject_coverage
        self.aspect_ratio_range, self.area_range, self.max_attempts = aspect_ratio_range, area_range, max_attempts
        self.enabled = False
        if area_range[1] <= 0 or area_range[0] > area_range[1]:
            warn_from_user_code(f"DetRandomCropAug: disabled, area_range {area_range} is empty")
        elif aspect_ratio_range[0] <= 0 or aspect_ratio_range[0] > aspect_ratio_range[1]:
            warn_from_user_code(f"DetRandomCropAug: disabled, aspect_ratio_range {aspect_ratio_range} is empty")
        else:
            self.enabled = True

    def __call__(self, src: Any, label: Label) -> tuple[Any, Label]:
        crop = self._propose(label, int(src.shape[0]), int(src.shape[1]))
        if crop is None:
            return src, label
        x, y, w, h, new_label = crop
        return img.fixed_crop(src, x, y, w, h), new_label

    def _covers_objects(self, label: Label, window: tuple[int, int, int, int], width: int, height: int) -> bool:
        """Whether every object the window (x0, y0, x1, y1 in pixels) touches is covered enough."""
        x0, y0, x1, y1 = window
        if (x1 - x0) * (y1 - y0) < 2:
            return False
        boxes = label[:, 1:5]
        areas = _box_areas(boxes)
        sizable = areas * width * height > 2
        if not sizable.any():
            return False
        boxes, areas = boxes[sizable], areas[sizable]
        inside = np.stack(
            [
                np.maximum(boxes[:, 0], x0 / width),
                np.maximum(boxes[:, 1], y0 / height),
                np.minimum(boxes[:, 2], x1 / width),
                np.minimum(boxes[:, 3], y1 / height),
            ],
            axis=1,
        )
        coverages = _box_areas(inside) / areas
        touched = coverages[coverages > 0]
        return touched.size > 0 and float(touched.min()) > self.min_object_covered

    def _crop_label(self, label: Label, rect: tuple[int, int, int, int], width: int, height: int) -> Label | None:
        """The objects seen through ``rect`` (x, y, w, h in pixels), or None when none stays."""
        x, y, w, h = rect[0] / width, rect[1] / height, rect[2] / width, rect[3] / height
        out = np.array(label, dtype=np.float32, copy=True)
        out[:, (1, 3)] = np.clip((out[:, (1, 3)] - x) / w, 0, 1)
        out[:, (2, 4)] = np.clip((out[:, (2, 4)] - y) / h, 0, 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            coverage = _box_areas(out[:, 1:5]) * w * h / _box_areas(label[:, 1:5])
        keep = (out[:, 3] > out[:, 1]) & (out[:, 4] > out[:, 2]) & (coverage > self.min_eject_coverage)
        return out[keep] if keep.any() else None

    def _propose(self, label: Label, height: int, width: int) -> tuple[int, int, int, int, Label] | None:
        for h, ratio, min_area, max_area in _attempts(self, height, width, for_crop=True):
            w = int(round(h * ratio))
            # rounding can leave the area just outside the range: one step of the height fixes it
            if w * h < min_area:
                h += 1
                w = int(round(h * ratio))
            if w * h > max_area:
                h -= 1
                w = int(round(h * ratio))
            if not (min_area <= w * h <= max_area and 0 <= w <= width and 0 <= h <= height):
                continue
            y = random.randint(0, max(0, height - h))
            x = random.randint(0, max(0, width - w))
            if self._covers_objects(label, (x, y, x + w, y + h), width, height):
                new_label = self._crop_label(label, (x, y, w, h), width, height)
                if new_label is not None:
                    return x, y, w, h, new_label
        return None


class DetRandomPadAug(DetAugmenter):
    """Place the image at a random spot of a larger canvas filled with ``pad_val``.

    The canvas's area is ``area_range`` (above 1) of the image's and its aspect in
    ``aspect_ratio_range``; boxes shrink with the image.
    """

    def __init__(
        self,
        aspect_ratio_range: Any = (0.75, 1.33),
        area_range: Any = (1.0, 3.0),
        max_attempts: int = 50,
        pad_val: Any = (128, 128, 128),
    ) -> None:
        super().__init__(
            aspect_ratio_range=_range_as_given(aspect_ratio_range),
            area_range=_range_as_given(area_range),
            max_attempts=max_attempts,
            pad_val=pad_val,
        )
        if not isinstance(pad_val, (list, tuple)):
            pad_val = (pad_val,) * 3
        aspect_ratio_range, area_range = _as_range(aspect_ratio_range), _as_range(area_range)
        self.pad_val, self.aspect_ratio_range = tuple(pad_val), aspect_ratio_range
        self.area_range, self.max_attempts = area_range, max_attempts
        self.enabled = False
        if area_range[1] <= 1.0 or area_range[0] > area_range[1]:
            warn_from_user_code(f"DetRandomPadAug: disabled, area_range {area_range} allows no padding")
        elif aspect_ratio_range[0] <= 0 or aspect_ratio_range[0] > aspect_ratio_range[1]:
            warn_from_user_code(f"DetRandomPadAug: disabled, aspect_ratio_range {aspect_ratio_range} is empty")
        else:
            self.enabled = True

    def __call__(self, src: Any, label: Label) -> tuple[Any, Label]:
        height, width = int(src.shape[0]), int(src.shape[1])
        pad = self._propose(height, width)
        if pad is None:
            return src, label
        x, y, w, h = pad
        out = np.array(label, dtype=np.float32, copy=True)
        out[:, (1, 3)] = (out[:, (1, 3)] * width + x) / w
        out[:, (2, 4)] = (out[:, (2, 4)] * height + y) / h
        fill = list(self.pad_val) + [0] * (4 - len(self.pad_val))
        return img.copyMakeBorder(src, y, h - y - height, x, w - x - width, 0, fill), out

    def _propose(self, height: int, width: int) -> tuple[int, int, int, int] | None:
        """The canvas (x, y of the image in it, w, h), or None when no attempt pads by 2 pixels or more."""
        for h, ratio, _, _ in _attempts(self, height, width, for_crop=False):
            w = int(round(h * ratio))
            if h - height < 2 or w - width < 2:
                continue  # a border of a pixel or less is not worth the work
            y = random.randint(0, max(0, h - height))
            x = random.randint(0, max(0, w - width))
            return x, y, w, h
        return None


def _aligned(params: list[Any]) -> list[list[Any]]:
    """Each parameter as a list, single values repeated to the longest list's length."""
    lists = [p if isinstance(p, list) else [p] for p in params]
    count = max(len(p) for p in lists)
    for i, p in enumerate(lists):
        if len(p) != count:
            if len(p) != 1:
                raise OperatorError(
                    f"CreateMultiRandCropAugmenter: parameter lists must have one length or one value, "
                    f"got lengths {[len(q) for q in lists]}"
                )
            lists[i] = p * count
    return lists


def CreateMultiRandCropAugmenter(  # noqa: N802 - MXNet's name
    min_object_covered: Any = 0.1,
    aspect_ratio_range: Any = (0.75, 1.33),
    area_range: Any = (0.05, 1.0),
    min_eject_coverage: Any = 0.3,
    max_attempts: Any = 50,
    skip_prob: float = 0,
) -> DetRandomSelectAug:
    """One :class:`DetRandomCropAug` per set of parameters, one picked at random per image.

    Each parameter is a value or a list (Python lists, not tuples: a tuple is one
    range); lists must share a length and single values are used for every crop.

    Examples
    --------
    >>> from lazynd import image
    >>> aug = image.CreateMultiRandCropAugmenter(min_object_covered=[0.1, 0.5, 0.9])
    >>> len(aug.aug_list)
    3
    """
    params = _aligned([min_object_covered, aspect_ratio_range, area_range, min_eject_coverage, max_attempts])
    augs: list[DetAugmenter] = [
        DetRandomCropAug(covered, ratio, area, eject, attempts)
        for covered, ratio, area, eject, attempts in zip(*params, strict=True)
    ]
    return DetRandomSelectAug(augs, skip_prob=skip_prob)


def CreateDetAugmenter(  # noqa: N802 - MXNet's name
    data_shape: Sequence[int],
    resize: int = 0,
    rand_crop: float = 0,
    rand_pad: float = 0,
    rand_gray: float = 0,
    rand_mirror: bool = False,
    mean: Any = None,
    std: Any = None,
    brightness: float = 0,
    contrast: float = 0,
    saturation: float = 0,
    pca_noise: float = 0,
    hue: float = 0,
    inter_method: int = 2,
    min_object_covered: Any = 0.1,
    aspect_ratio_range: Any = (0.75, 1.33),
    area_range: Any = (0.05, 3.0),
    min_eject_coverage: Any = 0.3,
    max_attempts: Any = 50,
    pad_val: Any = (127, 127, 127),
) -> list[DetAugmenter]:
    """The standard detection augmenters for images of ``data_shape`` (C, H, W), in MXNet's order.

    Shorter side resized to ``resize``; a random crop with probability ``rand_crop``;
    a mirror half the time with ``rand_mirror``; a random pad with probability
    ``rand_pad`` (up to ``area_range[1]`` of the area); a forced resize to the data
    shape; a cast to float32; colour jitters; normalisation by ``mean``/``std``
    (``True``: ImageNet's).

    Examples
    --------
    >>> from lazynd import image
    >>> [type(a).__name__ for a in image.CreateDetAugmenter((3, 300, 300), rand_crop=0.5, rand_mirror=True)]
    ['DetRandomSelectAug', 'DetHorizontalFlipAug', 'DetBorrowAug', 'DetBorrowAug']
    """
    if len(data_shape) != 3:
        raise OperatorError(
            f"CreateDetAugmenter: data_shape must be (channels, height, width), got {tuple(data_shape)}"
        )
    augs: list[DetAugmenter] = []
    if resize > 0:
        augs.append(DetBorrowAug(ResizeAug(resize, inter_method)))
    if rand_crop > 0:
        augs.append(
            CreateMultiRandCropAugmenter(
                min_object_covered, aspect_ratio_range, area_range, min_eject_coverage, max_attempts, 1 - rand_crop
            )
        )
    if rand_mirror:
        augs.append(DetHorizontalFlipAug(0.5))
    if rand_pad > 0:  # after the crop and flip: they then work on the smaller image
        largest = area_range[1] if isinstance(area_range, (tuple, list)) else area_range
        pad = DetRandomPadAug(aspect_ratio_range, (1.0, largest), max_attempts, pad_val)
        augs.append(DetRandomSelectAug([pad], 1 - rand_pad))
    augs.append(DetBorrowAug(ForceResizeAug((int(data_shape[2]), int(data_shape[1])), inter_method)))
    augs.append(DetBorrowAug(CastAug()))
    # ImageNet's statistics in float64, as MXNet's CreateDetAugmenter holds them (its dumps() shows
    # 123.68; CreateAugmenter's are float32 NDArrays); the normalisation itself is float32 either way
    if mean is True:
        mean = np.array(IMAGENET_MEAN)
    if std is True:
        std = np.array(IMAGENET_STD)
    colors = color_augmenters(brightness, contrast, saturation, hue, pca_noise, rand_gray, mean, std)
    augs += [DetBorrowAug(aug) for aug in colors]
    return augs
