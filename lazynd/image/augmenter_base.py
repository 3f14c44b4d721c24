"""The augmenter interface and the augmenters made of other augmenters.

:class:`Augmenter` is what every classification augmenter is: ``aug(src)`` returns
the augmented (H, W, C) image NDArray, ``aug.augment(src, label)`` also moves a
detection label with the pixels (the label convention is described in
:mod:`~lazynd.image.augmenters`), and ``aug.dumps()`` gives MXNet's JSON form.
:class:`SequentialAug` and :class:`RandomOrderAug` apply a list of augmenters, in
order or in a random order.
"""

from __future__ import annotations

import inspect
import json
import random
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["Augmenter", "RandomOrderAug", "SequentialAug"]


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


class RandomOrderAug(Augmenter):
    """Apply the augmenters ``ts`` in a random order."""

    def __init__(self, ts: Sequence[Augmenter]) -> None:
        self.ts = list(ts)

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
        self.ts = list(ts)

    def dumps(self) -> list:  # type: ignore[override]  # MXNet returns a list here, not JSON
        """``[class name in lower case, [each augmenter's dumps()]]``, as MXNet."""
        return [type(self).__name__.lower(), [aug.dumps() for aug in self.ts]]

    def augment(self, src: Any, label: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        for aug in self.ts:
            src, label = aug.augment(src, label)
        return src, label
