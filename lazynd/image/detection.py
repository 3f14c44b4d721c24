"""MXNet 1.x's ``mx.image.detection`` module (also ``mx.image.det``): the detection iterator and augmenters.

It hands on the names MXNet's module holds, from where they live here, so that programs written
against ``mx.image.det.CreateDetAugmenter`` or ``mx.image.detection.ImageDetIter`` run unchanged.
"""

from __future__ import annotations

from .augmenters import (
    Augmenter,
    CastAug,
    ColorJitterAug,
    ColorNormalizeAug,
    ForceResizeAug,
    LightingAug,
    RandomOrderAug,
    ResizeAug,
)
from .color_augmenters import HueJitterAug, RandomGrayAug
from .detection_augmenters import (
    CreateDetAugmenter,
    CreateMultiRandCropAugmenter,
    DetAugmenter,
    DetBorrowAug,
    DetHorizontalFlipAug,
    DetRandomCropAug,
    DetRandomPadAug,
    DetRandomSelectAug,
)
from .detection_iter import ImageDetIter
from .image_iter import ImageIter
from .transforms import copyMakeBorder, fixed_crop

__all__ = [
    "Augmenter",
    "CastAug",
    "ColorJitterAug",
    "ColorNormalizeAug",
    "CreateDetAugmenter",
    "CreateMultiRandCropAugmenter",
    "DetAugmenter",
    "DetBorrowAug",
    "DetHorizontalFlipAug",
    "DetRandomCropAug",
    "DetRandomPadAug",
    "DetRandomSelectAug",
    "ForceResizeAug",
    "HueJitterAug",
    "ImageDetIter",
    "ImageIter",
    "LightingAug",
    "RandomGrayAug",
    "RandomOrderAug",
    "ResizeAug",
    "copyMakeBorder",
    "fixed_crop",
]
