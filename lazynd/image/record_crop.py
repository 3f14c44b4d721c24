"""The crops of MXNet's default image augmenter: the enlargement before ``ImageRecordIter``'s plain
crop, and the two crops that replace it.

- :class:`CoverAug`: before the plain centre (or random) crop, an image smaller than
  ``data_shape`` is enlarged until it covers it (see the class for MXNet's two steps).

The two crops below run after the affine warp and the pad (:mod:`lazynd.image.record_aug`) and resize what they
cut to ``data_shape``'s (width, height):

- ``max_crop_size`` / ``min_crop_size``: a square whose side is an integer drawn uniformly in
  ``[min_crop_size, max_crop_size]``, at a uniform random offset with ``rand_crop``, else centred
  (offsets rounded down);
- ``random_resized_crop``: the Inception-style crop.  Up to 10 tries: an area fraction ``a`` in
  ``[min_random_area, max_random_area]`` and an aspect ``r`` (width / height) in the aspect range
  are drawn; the region is ``round(sqrt(a A r))`` wide and ``round(sqrt(a A / r))`` high (``A`` the
  image's area), its sides swapped half the time (so ``1 / r`` is as likely as ``r``); the first
  region that fits is taken at a uniform random position.  When none fits, the central region of
  ``data_shape``'s size (scaled down to fit, as :func:`~lazynd.image.center_crop`) is taken.

These are MXNet 1.9.1's rules as measured on its ``ImageRecordIter`` (coordinate-pattern images,
hundreds of crops: sizes, swap frequency, fallback frequency and offsets).  The draws come from
the augmenter's generator (``seed_aug``, else NumPy's global one), as the warp's do.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import OperatorError
from .augmenter_base import Augmenter
from .transforms import center_crop, fixed_crop, image_shape, imresize

__all__ = ["CoverAug", "CropSizeAug", "ResizedCropAug"]

# MXNet tries this many random regions before it falls back to the centre crop
_RESIZED_CROP_TRIES = 10


def _round_half_up(value: float) -> int:
    """``value`` (>= 0) rounded half away from zero, as C++'s ``std::round``."""
    return int(math.floor(value + 0.5))


class CropSizeAug(Augmenter):
    """A square of random side in ``[min_size, max_size]``, resized to ``size`` (w, h)."""

    def __init__(
        self, min_size: int, max_size: int, size: tuple[int, int], rand_crop: bool, interp: int, rng: Any
    ) -> None:
        self.min_size, self.max_size, self.size = min_size, max_size, size
        self.rand_crop, self.interp, self.rng = rand_crop, interp, rng

    def augment(self, src: Any, label: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        height, width, _ = image_shape("ImageRecordIter (max_crop_size)", src)
        if width < self.max_size or height < self.max_size:
            raise OperatorError(
                f"ImageRecordIter: max_crop_size {self.max_size} needs an image of at least "
                f"{self.max_size}x{self.max_size} after the warp and pad, got {width}x{height}"
            )
        side = int(self.rng.randint(self.min_size, self.max_size + 1))
        if self.rand_crop:
            x0, y0 = int(self.rng.randint(0, width - side + 1)), int(self.rng.randint(0, height - side + 1))
        else:
            x0, y0 = (width - side) // 2, (height - side) // 2
        return fixed_crop(src, x0, y0, side, side, self.size, self.interp), label


class ResizedCropAug(Augmenter):
    """MXNet's ``random_resized_crop``: a region of random area fraction and aspect, resized to ``size``."""

    def __init__(
        self, area: tuple[float, float], aspect: tuple[float, float], size: tuple[int, int], interp: int, rng: Any
    ) -> None:
        self.area, self.aspect, self.size, self.interp, self.rng = area, aspect, size, interp, rng

    def region(self, width: int, height: int) -> tuple[int, int, int, int] | None:
        """A random (x0, y0, w, h) inside a ``width`` x ``height`` image, or None when no try fits.

        Examples
        --------
        >>> import numpy as np
        >>> quarter = ResizedCropAug((0.25, 0.25), (1.0, 1.0), (8, 8), 1, np.random.RandomState(0))
        >>> quarter.region(40, 40)[2:]
        (20, 20)
        >>> ResizedCropAug((1.0, 1.0), (2.0, 2.0), (8, 8), 1, np.random.RandomState(0)).region(40, 40) is None
        True
        """
        for _ in range(_RESIZED_CROP_TRIES):
            target = self.rng.uniform(*self.area) * width * height
            ratio = self.rng.uniform(*self.aspect)
            w, h = _round_half_up(math.sqrt(target * ratio)), _round_half_up(math.sqrt(target / ratio))
            if self.rng.uniform(0, 1) > 0.5:
                w, h = h, w
            if 0 < w <= width and 0 < h <= height:
                return int(self.rng.randint(0, width - w + 1)), int(self.rng.randint(0, height - h + 1)), w, h
        return None

    def augment(self, src: Any, label: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        height, width, _ = image_shape("ImageRecordIter (random_resized_crop)", src)
        region = self.region(width, height)
        if region is None:
            return center_crop(src, self.size, self.interp)[0], label
        return fixed_crop(src, *region, self.size, self.interp), label


class CoverAug(Augmenter):
    """Enlarge an image smaller than ``size`` (w, h), keeping its aspect, until it covers ``size``.

    MXNet's iterator does this before cropping, in two steps: an image too short is resized to
    the crop's height, then one (still) too narrow to the crop's width, the other side each time
    scaled by ``crop side / image side`` in float32 and rounded down.  A portrait image smaller
    than the crop is therefore resized twice, and a side can come out one pixel short of the
    exact ratio (41x41 to a 64x64 crop goes through 63x64, then 64x65): both change the pixels.
    """

    def __init__(self, size: tuple[int, int], interp: int) -> None:
        self.size, self.interp = size, interp

    @staticmethod
    def _scaled(side: int, target: int, current: int) -> int:
        """``side * target / current`` as MXNet computes it: float32, ``target / current`` first."""
        return int(np.float32(np.float32(target) / np.float32(current)) * np.float32(side))

    def augment(self, src: Any, label: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        crop_width, crop_height = self.size
        height, width = int(src.shape[0]), int(src.shape[1])
        if height < crop_height:
            width = self._scaled(width, crop_height, height)
            height = crop_height
            src = imresize(src, width, height, self.interp)
        if width < crop_width:
            height = self._scaled(height, crop_width, width)
            width = crop_width
            src = imresize(src, width, height, self.interp)
        return src, label
