"""The augmenter interfaces, for images and for images with boxes, and the augmenters made of augmenters.

:class:`Augmenter` is what every classification augmenter is: ``aug(src)`` returns
the augmented (H, W, C) image NDArray, ``aug.augment(src, label)`` also moves a
detection label with the pixels (the label convention is described in
:mod:`~lazynd.image.augmenters`), and ``aug.dumps()`` gives MXNet's JSON form.
:class:`SequentialAug` and :class:`RandomOrderAug` apply a list of augmenters, in
order or in a random order.

:class:`DetAugmenter` is the same for detection (``aug(src, label)`` returns the new
``(src, label)``, see :mod:`~lazynd.image.detection_augmenters`);
:class:`DetBorrowAug` applies an :class:`Augmenter` to the pixels alone and
:class:`DetRandomSelectAug` applies one of a list of detection augmenters.
"""

from __future__ import annotations

import inspect
import json
import random
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..errors import OperatorError

__all__ = ["Augmenter", "RandomOrderAug", "SequentialAug", "DetAugmenter", "DetBorrowAug", "DetRandomSelectAug"]


class Augmenter:
    """Base class: subclasses implement :meth:`augment`."""

    def __call__(self, src: Any) -> Any:
        return self.augment(src, None)[0]

    def augment(self, src: Any, label: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        raise NotImplementedError(f"{type(self).__name__} does not implement augment")

    def dumps(self) -> str:
        """The augmenter as JSON, in MXNet's form: ``[class name in lower case, {argument: value}]``
        with the constructor's arguments (arrays as lists).

        Examples
        --------
        >>> import lazynd as mx
        >>> mx.image.ForceResizeAug((4, 2)).dumps()
        '["forceresizeaug", {"size": [4, 2], "interp": 2}]'
        """
        arguments = {}
        for name in list(inspect.signature(type(self).__init__).parameters)[1:]:
            if hasattr(self, name):
                arguments[name] = _as_json(getattr(self, name))
        return json.dumps([type(self).__name__.lower(), arguments])

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _as_json(value: Any) -> Any:
    """``value`` in types ``json.dumps`` takes: arrays and tuples as lists, dtypes as names."""
    if hasattr(value, "asnumpy"):
        value = value.asnumpy()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_as_json(v) for v in value]
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, np.generic):
        return value.item()
    return value


def augmenter_list(name: str, ts: Any) -> list[Augmenter]:
    """``ts`` as a list of augmenters, or an ``OperatorError`` naming ``name`` and the item that is not one
    (checked when the combinator is made, not at its first image)."""
    if isinstance(ts, (str, bytes)) or not isinstance(ts, Iterable):
        raise OperatorError(f"{name}: ts must be a list of augmenters, got {type(ts).__name__}")
    augs = list(ts)
    for i, aug in enumerate(augs):
        if not isinstance(aug, Augmenter):
            raise OperatorError(f"{name}: ts[{i}] must be an Augmenter, got {type(aug).__name__}")
    return augs


class RandomOrderAug(Augmenter):
    """Apply the augmenters ``ts`` in a random order."""

    def __init__(self, ts: Sequence[Augmenter]) -> None:
        self.ts = augmenter_list(type(self).__name__, ts)

    def dumps(self) -> list:  # type: ignore[override]  # MXNet returns a list here, not JSON
        """``[class name in lower case, [each augmenter's dumps()]]``, as MXNet."""
        return [type(self).__name__.lower(), [aug.dumps() for aug in self.ts]]

    def augment(self, src: Any, label: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        # shuffled in place, as MXNet does, so that a seeded run gives MXNet's orders call after call
        random.shuffle(self.ts)
        for aug in self.ts:
            src, label = aug.augment(src, label)
        return src, label


class SequentialAug(Augmenter):
    """Apply the augmenters ``ts`` one after the other.

    Examples
    --------
    >>> import lazynd as mx
    >>> aug = mx.image.SequentialAug([mx.image.ForceResizeAug((3, 1)), mx.image.CastAug()])
    >>> out = aug(mx.nd.ones((2, 2, 3), dtype="uint8"))
    >>> out.shape, out.dtype
    ((1, 3, 3), <class 'numpy.float32'>)
    """

    def __init__(self, ts: Sequence[Augmenter]) -> None:
        self.ts = augmenter_list(type(self).__name__, ts)

    def dumps(self) -> list:  # type: ignore[override]  # MXNet returns a list here, not JSON
        """``[class name in lower case, [each augmenter's dumps()]]``, as MXNet."""
        return [type(self).__name__.lower(), [aug.dumps() for aug in self.ts]]

    def augment(self, src: Any, label: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        for aug in self.ts:
            src, label = aug.augment(src, label)
        return src, label


# -- detection: an image and its boxes together ----------------------------------------------------
Label = np.ndarray


class DetAugmenter:
    """Base class: ``aug(src, label)`` returns the augmented ``(src, label)``."""

    def __init__(self, **kwargs: Any) -> None:
        self._kwargs = {
            key: value.tolist() if isinstance(value, np.ndarray) else value for key, value in kwargs.items()
        }

    def dumps(self) -> str:
        """The augmenter as JSON: ``[class name in lower case, {argument: value}]``, as MXNet."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __call__(self, src: Any, label: Label) -> tuple[Any, Label]:
        raise NotImplementedError(f"{type(self).__name__} does not implement __call__")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._kwargs})"


class DetBorrowAug(DetAugmenter):
    """Apply a classification :class:`Augmenter` to the pixels; the label passes through.

    Only augmenters that keep the image's geometry belong here (resizes and
    colour changes: fractional boxes do not move when the whole image is resized).
    """

    def __init__(self, augmenter: Augmenter) -> None:
        if not isinstance(augmenter, Augmenter):
            raise OperatorError(f"DetBorrowAug: expected an mx.image.Augmenter, got {type(augmenter).__name__}")
        self.augmenter = augmenter
        super().__init__(augmenter=augmenter.dumps())

    def dumps(self) -> list:  # type: ignore[override]  # MXNet returns a list here
        """``["detborrowaug", the borrowed augmenter's dumps()]``, as MXNet."""
        return [type(self).__name__.lower(), self.augmenter.dumps()]

    def __call__(self, src: Any, label: Label) -> tuple[Any, Label]:
        return self.augmenter(src), label


class DetRandomSelectAug(DetAugmenter):
    """Apply one augmenter of ``aug_list`` drawn at random, or none with probability ``skip_prob``."""

    def __init__(self, aug_list: Sequence[DetAugmenter], skip_prob: float = 0) -> None:
        super().__init__(skip_prob=skip_prob)
        for aug in aug_list:
            if not isinstance(aug, DetAugmenter):
                raise OperatorError(f"DetRandomSelectAug: aug_list takes DetAugmenters only, got {type(aug).__name__}")
        self.aug_list = list(aug_list)
        self.skip_prob = skip_prob if self.aug_list else 1

    def dumps(self) -> list:  # type: ignore[override]  # MXNet returns a list here
        """``["detrandomselectaug", [each augmenter's dumps()]]``, as MXNet."""
        return [type(self).__name__.lower(), [aug.dumps() for aug in self.aug_list]]

    def __call__(self, src: Any, label: Label) -> tuple[Any, Label]:
        if random.random() < self.skip_prob:
            return src, label
        # shuffled in place and the first one applied, as MXNet does, so seeded runs agree
        random.shuffle(self.aug_list)
        return self.aug_list[0](src, label)
