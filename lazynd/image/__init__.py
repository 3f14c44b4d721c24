"""Image decoding, transforms, augmenters and iterators (``mx.image``, ``mx.img``)."""

from __future__ import annotations

from . import detection
from .augmenters import (
    Augmenter,
    CastAug,
    CenterCropAug,
    ColorJitterAug,
    ColorNormalizeAug,
    CreateAugmenter,
    ForceResizeAug,
    HorizontalFlipAug,
    LightingAug,
    RandomCropAug,
    RandomOrderAug,
    RandomSizedCropAug,
    ResizeAug,
    SequentialAug,
)
from .color_augmenters import BrightnessJitterAug, ContrastJitterAug, HueJitterAug, RandomGrayAug, SaturationJitterAug
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
from .detection_record_iter import ImageDetRecordIter
from .image import imdecode, imread
from .image_iter import ImageIter
from .limits import limit_from_environment
from .normalize import color_normalize
from .record_iter import ImageRecordIter
from .record_iter_dtypes import ImageRecordInt8Iter, ImageRecordIter_v1, ImageRecordUInt8Iter, ImageRecordUInt8Iter_v1
from .rotation import imrotate, random_rotate
from .transforms import (
    center_crop,
    copyMakeBorder,
    fixed_crop,
    imresize,
    random_crop,
    random_size_crop,
    resize_short,
    scale_down,
)

# MXNet 1.x's short name of the detection module
det = detection

# the pixel cap of every decode (see lazynd.image.limits); users assign it
MAX_IMAGE_PIXELS: int | None = limit_from_environment()

__all__ = [
    "MAX_IMAGE_PIXELS",
    "det",
    "detection",
    "imdecode",
    "imread",
    "imresize",
    "resize_short",
    "scale_down",
    "fixed_crop",
    "random_crop",
    "center_crop",
    "random_size_crop",
    "color_normalize",
    "copyMakeBorder",
    "imrotate",
    "random_rotate",
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
    "BrightnessJitterAug",
    "ContrastJitterAug",
    "SaturationJitterAug",
    "HueJitterAug",
    "RandomGrayAug",
    "CreateAugmenter",
    "ImageIter",
    "DetAugmenter",
    "DetBorrowAug",
    "DetRandomSelectAug",
    "DetHorizontalFlipAug",
    "DetRandomCropAug",
    "DetRandomPadAug",
    "CreateMultiRandCropAugmenter",
    "CreateDetAugmenter",
    "ImageDetIter",
    "ImageDetRecordIter",
    "ImageRecordIter",
    "ImageRecordUInt8Iter",
    "ImageRecordInt8Iter",
    "ImageRecordIter_v1",
    "ImageRecordUInt8Iter_v1",
]
