"""How ``ImageRecordIter`` turns augmented images into a batch: MXNet's per-channel statistics
(``mean_r/g/b/a``, ``std_r/g/b/a``, ``scale``) and the normalisation of each image into the batch.

MXNet's iterator takes 1, 3 or 4 channels: one grey channel (which uses the red channel's
statistics), RGB, or RGB and alpha (the ``_a`` statistics; MXNet decodes such records unchanged,
the colours put in RGB order).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import OperatorError

__all__ = ["channel_means", "channel_factors", "int8_mean", "stack_normalized"]


def channel_means(channels: int, means: Sequence[float]) -> np.ndarray:
    """The (C, 1, 1) means of ``channels`` channels from MXNet's (r, g, b, a) ``means``.

    Examples
    --------
    >>> channel_means(4, (1.0, 2.0, 3.0, 4.0)).ravel().tolist()
    [1.0, 2.0, 3.0, 4.0]
    """
    return np.array(list(means)[:channels], np.float32).reshape(channels, 1, 1)


def int8_mean(mean: np.ndarray) -> np.ndarray:
    """``mean`` rounded half away from zero, as MXNet's int8 iterator subtracts it.

    Examples
    --------
    >>> int8_mean(np.array([-2.5, 2.5, 1.2], np.float32)).tolist()
    [-3.0, 3.0, 1.0]
    """
    return np.copysign(np.floor(np.abs(mean) + 0.5), mean)


def channel_factors(name: str, channels: int, stds: Sequence[float], scale: float) -> np.ndarray:
    """The (C, 1, 1) factors ``scale / std`` of ``channels`` channels from MXNet's (r, g, b, a) ``stds``;
    an ``OperatorError`` naming ``name`` for a zero ``std`` (MXNet 1.9.1 gives NaN pixels).

    Examples
    --------
    >>> channel_factors("ImageRecordIter", 4, (1.0, 2.0, 4.0, 0.5), 2.0).ravel().tolist()
    [2.0, 1.0, 0.5, 4.0]
    """
    std = np.array(list(stds)[:channels], np.float32)
    for channel, value in zip("rgba", std, strict=False):
        if value == 0:
            raise OperatorError(f"{name}: std_{channel} must not be 0 (it divides the channel)")
    return (np.float32(scale) / std).reshape(channels, 1, 1)


def stack_normalized(
    images: list[np.ndarray],
    out: np.ndarray,
    mean: np.ndarray | None,
    factor: np.ndarray | None,
    lighting: np.ndarray | None = None,
) -> None:
    """``out[i] = ((image_i as CHW - mean) * c_i + l_i) * factor`` (each step skipped when its array
    is None), ``(c_i, l_i)`` the i-th row of ``lighting`` (MXNet's random contrast and illumination).

    An integer ``out`` takes the values clipped to its range, as MXNet's int8 iterator does.
    """
    limits = np.iinfo(out.dtype) if out.dtype.kind in "iu" else None
    for i, image in enumerate(images):
        chw = image.transpose(2, 0, 1)
        if mean is None and factor is None and lighting is None:
            out[i] = chw
            continue
        value = chw - mean if mean is not None else chw.astype(np.float32)
        if lighting is not None:
            value *= lighting[i, 0]
            value += lighting[i, 1]
        if factor is not None:
            value *= factor
        if limits is not None:
            value = np.clip(value, limits.min, limits.max)
        out[i] = value
