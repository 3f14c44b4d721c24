"""Colour augmenters, one effect each: brightness, contrast, saturation, hue, random grey (MXNet's names).

:class:`~lazynd.image.augmenters.ColorJitterAug` applies the first three in a random order;
these are its parts, usable alone or in a ``SequentialAug``/``RandomOrderAug``.  Each draws
its factor with Python's ``random`` (as MXNet's do) and gives float32 (H, W, C) images; brightness,
contrast and saturation write into a float32 image itself, as MXNet's (``src *= alpha``).
"""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np

from ..errors import OperatorError
from . import transforms as img
from .arguments import number_argument
from .augmenters import Augmenter, _jitter

__all__ = ["BrightnessJitterAug", "ContrastJitterAug", "SaturationJitterAug", "HueJitterAug", "RandomGrayAug"]

# RGB <-> YIQ: a hue shift is a rotation of the (I, Q) plane
_RGB_TO_YIQ = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321], [0.211, -0.523, 0.311]])
_YIQ_TO_RGB = np.array([[1.0, 0.956, 0.621], [1.0, -0.272, -0.647], [1.0, -1.107, 1.705]])
# the grey of RandomGrayAug, as a right-hand matrix on (..., RGB) pixels
_TO_GRAY = np.array([[0.21, 0.21, 0.21], [0.72, 0.72, 0.72], [0.07, 0.07, 0.07]], dtype=np.float32)


class _OneJitter(Augmenter):
    """Multiply one property by a factor drawn from [1 - amount, 1 + amount]."""

    kind = ""

    def __init__(self, amount: float) -> None:
        self.amount = number_argument(type(self).__name__, self.kind, amount)

    def augment(self, src: Any, label: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        # a grey (1-channel) image is its own grey, as in MXNet (whose weights broadcast over it)
        if self.kind != "brightness" and img.image_shape(type(self).__name__, src)[2] not in (1, 3):
            raise OperatorError(f"{type(self).__name__}: needs 1 or 3 channels, the image has shape {src.shape}")
        alpha = 1.0 + random.uniform(-self.amount, self.amount)
        steps = [(self.kind, alpha)]
        return img.image_op(
            f"{self.kind}_jitter", _jitter, src, src.shape, np.float32, steps, out=img.in_place_target(src)
        ), label

    def dumps(self) -> str:
        """``[class name in lower case, {kind: amount}]``, MXNet's form (``{"brightness": 0.3}``...)."""
        return json.dumps([type(self).__name__.lower(), {self.kind: self.amount}])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.amount!r})"


class BrightnessJitterAug(_OneJitter):
    """Scale every pixel by a factor in [1 - brightness, 1 + brightness].

    Examples
    --------
    >>> import lazynd as mx
    >>> mx.image.BrightnessJitterAug(0.5)(mx.nd.ones((2, 2, 3))).shape
    (2, 2, 3)
    """

    kind = "brightness"

    def __init__(self, brightness: float) -> None:  # MXNet's keyword: BrightnessJitterAug(brightness=0.3)
        super().__init__(brightness)


class ContrastJitterAug(_OneJitter):
    """Blend with the image's mean grey by a factor in [1 - contrast, 1 + contrast]."""

    kind = "contrast"

    def __init__(self, contrast: float) -> None:  # MXNet's keyword: ContrastJitterAug(contrast=0.3)
        super().__init__(contrast)


class SaturationJitterAug(_OneJitter):
    """Blend with each pixel's grey by a factor in [1 - saturation, 1 + saturation]."""

    kind = "saturation"

    def __init__(self, saturation: float) -> None:  # MXNet's keyword: SaturationJitterAug(saturation=0.3)
        super().__init__(saturation)


def _times_matrix(src: np.ndarray, out: np.ndarray, matrix: np.ndarray) -> None:
    np.matmul(src.astype(np.float32), matrix, out=out)


class HueJitterAug(Augmenter):
    """Rotate the hue by up to ``hue`` half-turns (an angle in [-hue, hue] times pi, in YIQ space)."""

    def __init__(self, hue: float) -> None:
        self.hue = number_argument("HueJitterAug", "hue", hue)

    def augment(self, src: Any, label: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        if img.image_shape("HueJitterAug", src)[2] != 3:
            raise OperatorError(f"HueJitterAug: needs 3 channels, the image has shape {src.shape}")
        angle = random.uniform(-self.hue, self.hue) * np.pi
        cos, sin = np.cos(angle), np.sin(angle)
        rotation = np.array([[1.0, 0.0, 0.0], [0.0, cos, -sin], [0.0, sin, cos]])
        matrix = (_YIQ_TO_RGB @ rotation @ _RGB_TO_YIQ).T.astype(np.float32)
        return img.image_op("hue_jitter", _times_matrix, src, src.shape, np.float32, matrix), label

    def __repr__(self) -> str:
        return f"HueJitterAug({self.hue!r})"


class RandomGrayAug(Augmenter):
    """With probability ``p``, replace each pixel by its grey (the same value in every channel)."""

    def __init__(self, p: float) -> None:
        self.p = number_argument("RandomGrayAug", "p", p)

    def augment(self, src: Any, label: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        if random.random() < self.p:
            if img.image_shape("RandomGrayAug", src)[2] != 3:
                raise OperatorError(f"RandomGrayAug: needs 3 channels, the image has shape {src.shape}")
            src = img.image_op("random_gray", _times_matrix, src, src.shape, np.float32, _TO_GRAY)
        return src, label

    def __repr__(self) -> str:
        return f"RandomGrayAug({self.p!r})"
