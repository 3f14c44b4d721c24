"""mx.image.detection / mx.image.det: MXNet 1.x's detection module hands on the detection objects."""

from __future__ import annotations

import numpy as np

import lazynd as mx

# the public names of MXNet 1.9.1's mx.image.detection that lazynd has (all but is_np_array, numeric_types)
MXNET_NAMES = [
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


def test_det_is_the_detection_module_as_in_mxnet():
    assert mx.image.det is mx.image.detection
    assert mx.img.det is mx.image.detection


def test_detection_module_holds_mxnets_names_as_the_image_objects():
    for name in MXNET_NAMES:
        assert getattr(mx.image.det, name) is getattr(mx.image, name), name


def test_det_create_det_augmenter_builds_a_working_pipeline():
    augs = mx.image.det.CreateDetAugmenter((3, 8, 8), rand_mirror=True)
    image = mx.nd.array(np.arange(12 * 10 * 3, dtype=np.float32).reshape(12, 10, 3))
    label = np.array([[0, 0.1, 0.2, 0.5, 0.6]], np.float32)
    for aug in augs:
        image, label = aug(image, label)
    assert image.shape == (8, 8, 3) and label.shape == (1, 5)
