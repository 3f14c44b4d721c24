"""Normalising (height, width, channels) image NDArrays per channel: ``(src - mean) / std``.

The mean and std come as a number or one per channel (:func:`channel_values` reads them, for
:func:`color_normalize` and ``ColorNormalizeAug``); the work is pushed as the other transforms'
(:func:`~.transforms.image_op`) and returns at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ArgumentTypeError, OperatorError
from .transforms import image_op, in_place_target

__all__ = ["channel_values", "color_normalize"]


def _per_row(values: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    """Per-channel ``values`` repeated along one image row of (H, W, C) ``shape``, or None if not per-channel."""
    if (
        len(shape) != 3
        or values.size not in (1, shape[2])
        or values.ndim > 1
        and values.shape[:-1] != (1,) * (values.ndim - 1)
    ):
        return None
    return np.tile(values.reshape(-1), shape[1] * shape[2] // values.size)


def _normalize(src: np.ndarray, out: np.ndarray, mean: np.ndarray, std: np.ndarray | None) -> None:
    row_mean = _per_row(mean, out.shape)
    row_std = None if std is None else _per_row(std, out.shape)
    if row_mean is not None and (std is None or row_std is not None) and src.flags.c_contiguous:
        # A length-C operand makes NumPy's inner loop C elements long (slow for C = 3); as one
        # image row repeats the channel pattern, work on (H, W*C) rows instead: same arithmetic.
        height = out.shape[0]
        src, out, mean, std = src.reshape(height, -1), out.reshape(height, -1), row_mean, row_std
    np.subtract(src, mean, out=out, casting="unsafe")
    if std is not None:
        np.divide(out, std, out=out)


def _broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether an array of ``shape`` broadcasts to ``target`` without changing it."""
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False


def channel_values(name: str, argument: str, value: Any) -> np.ndarray:
    """``value`` (a number, or one per channel: a list, a NumPy array, an NDArray) as float32, or an
    ``ArgumentTypeError`` naming ``name`` and ``argument`` (a string or None among them).

    Examples
    --------
    >>> channel_values("color_normalize", "mean", [1, 2, 3])
    array([1., 2., 3.], dtype=float32)
    """
    try:
        raw = np.asarray(value.asnumpy() if hasattr(value, "asnumpy") else value)
    except ValueError:  # a ragged list
        raw = None
    if raw is None or raw.dtype.kind not in "biuf":  # (NumPy would read None as NaN, 'abc' not at all)
        raise ArgumentTypeError(f"{name}: {argument} must be a number or one number per channel, got {value!r}")
    return raw.astype(np.float32)


def color_normalize(src: Any, mean: Any, std: Any = None) -> Any:
    """``(src - mean) / std`` per channel, as float32: into ``src`` itself when it is float32,
    as MXNet's (which returns ``src``), see :func:`in_place_target`.

    Examples
    --------
    >>> import lazynd as mx
    >>> from lazynd import image
    >>> image.color_normalize(mx.nd.ones((1, 1, 3)) * 4, [1, 2, 3], [1, 2, 3]).asnumpy().ravel()
    array([3.        , 1.        , 0.33333334], dtype=float32)
    """
    # mean None: no subtraction (MXNet's color_normalize skips it), only the division by std
    mean_np = channel_values("color_normalize", "mean", 0.0 if mean is None else mean)
    std_np = None if std is None else channel_values("color_normalize", "std", std)
    for name, value in (("mean", mean_np), ("std", std_np)):
        # checked here: a shape that does not broadcast would otherwise fail later, inside the engine
        if value is not None and not _broadcasts_to(value.shape, tuple(src.shape)):
            raise OperatorError(
                f"color_normalize: {name} of shape {value.shape} does not broadcast to the image's {tuple(src.shape)}"
            )
    return image_op(
        "color_normalize", _normalize, src, src.shape, np.float32, mean_np, std_np, out=in_place_target(src)
    )
