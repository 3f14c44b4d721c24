"""``mx.image.imrotate`` and ``mx.image.random_rotate``: rotating float32 images (CHW) or
batches (NCHW) about their centres, as MXNet 1.x's.

An output pixel at ``(x, y)`` (relative to the centre) reads the input, by bilinear sampling
(``BilinearSampler``; outside the image it reads zeros), at ``(x, y)`` rotated by the angle,
so a positive angle turns the picture clockwise as displayed (y pointing down).  ``zoom_in``
scales the reading so that no padding shows; ``zoom_out`` so that the whole input shows.
``random_rotate`` draws its angles from NumPy's global generator, as MXNet's does.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ..errors import ArgumentTypeError, OperatorError


def _zoom(angles: np.ndarray, height: int, width: int, zoom_in: bool, zoom_out: bool) -> np.ndarray:
    """The factor each image's sampling grid is scaled by (1 without zoom)."""
    if not (zoom_in or zoom_out):
        return np.ones_like(angles)
    # the half-extents of the rotated image's bounding box, from its corners' polar coordinates
    radius, corner = math.hypot(height, width), math.atan(height / width)
    turn = np.abs(angles)
    extent_x = radius * np.maximum(np.abs(np.cos(corner + turn)), np.abs(np.cos(corner - turn)))
    extent_y = radius * np.maximum(np.abs(np.sin(corner + turn)), np.abs(np.sin(corner - turn)))
    if zoom_out:
        return np.maximum(extent_x / width, extent_y / height)
    return np.minimum(width / extent_x, height / extent_y)


def rotation_grid(angles: np.ndarray, height: int, width: int, zoom_in: bool, zoom_out: bool) -> np.ndarray:
    """``BilinearSampler``'s grid ``(N, 2, height, width)`` (x then y, in [-1, 1]) for ``angles``
    (radians, one per image)."""
    half_h, half_w = (height - 1) / 2, (width - 1) / 2
    y = (np.arange(height, dtype=np.float32) - np.float32(half_h)).reshape(1, height, 1)
    x = (np.arange(width, dtype=np.float32) - np.float32(half_w)).reshape(1, 1, width)
    cos = np.cos(angles).astype(np.float32).reshape(-1, 1, 1)
    sin = np.sin(angles).astype(np.float32).reshape(-1, 1, 1)
    scale = _zoom(angles, height, width, zoom_in, zoom_out).astype(np.float32).reshape(-1, 1, 1)
    grid_x = (x * cos - y * sin) / np.float32(half_w) * scale
    grid_y = (x * sin + y * cos) / np.float32(half_h) * scale
    return np.stack([grid_x, grid_y], axis=1)


def imrotate(src: Any, rotation_degrees: Any, zoom_in: bool = False, zoom_out: bool = False) -> Any:
    """Rotate ``src`` (float32, CHW or NCHW) by ``rotation_degrees`` (a number, or for a batch an
    NDArray of one angle per image).

    Examples
    --------
    >>> import lazynd as mx
    >>> img = mx.nd.array([[[0, 1, 0], [0, 1, 0], [0, 1, 0]]])
    >>> mx.image.imrotate(img, 90).asnumpy().round(3).tolist()
    [[[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]]
    """
    from .. import ndarray as nd
    from ..ndarray.dispatch import invoke_by_name

    if zoom_in and zoom_out:
        raise OperatorError("imrotate: zoom_in and zoom_out cannot both be True")
    if np.dtype(src.dtype) != np.float32:
        # a TypeError, as MXNet raises for it (as for the angle of a single image below)
        raise ArgumentTypeError(f"imrotate: 'src' must be float32, got {np.dtype(src.dtype).name}")
    single = src.ndim == 3
    if single and not isinstance(rotation_degrees, numbers.Real):
        raise ArgumentTypeError(
            "imrotate: a single image (CHW) takes one number as 'rotation_degrees', "
            f"got {type(rotation_degrees).__name__}"
        )
    if src.ndim not in (3, 4):
        raise OperatorError(f"imrotate: 'src' must be CHW or NCHW, got shape {tuple(src.shape)}")
    batch = src.expand_dims(axis=0) if single else src
    count, _, height, width = batch.shape
    if height < 2 or width < 2:
        raise OperatorError(f"imrotate: images need at least 2 rows and 2 columns, got shape {tuple(src.shape)}")
    if isinstance(rotation_degrees, numbers.Real):
        degrees = np.full(count, float(rotation_degrees))
    else:
        degrees = np.asarray(rotation_degrees.asnumpy() if hasattr(rotation_degrees, "asnumpy") else rotation_degrees)
        if degrees.shape != (count,):
            raise OperatorError(
                f"imrotate: 'rotation_degrees' must hold one angle per image, shape ({count},), "
                f"got shape {degrees.shape}"
            )
    grid = rotation_grid(np.radians(degrees.astype(np.float64)), height, width, zoom_in, zoom_out)
    rotated = invoke_by_name("BilinearSampler", [batch, nd.array(grid, ctx=batch.context)], {})
    return rotated[0] if single else rotated


def random_rotate(src: Any, angle_limits: tuple[float, float], zoom_in: bool = False, zoom_out: bool = False) -> Any:
    """Rotate ``src`` (CHW or NCHW, float32) by angles drawn uniformly from ``angle_limits``
    (degrees), one per image.

    Examples
    --------
    >>> import lazynd as mx
    >>> mx.image.random_rotate(mx.nd.ones((2, 3, 4, 4)), (-30, 30), zoom_in=True).shape
    (2, 3, 4, 4)
    """
    if src.ndim == 3:
        return imrotate(src, float(np.random.uniform(*angle_limits)), zoom_in, zoom_out)
    angles = np.random.uniform(*angle_limits, size=src.shape[0])
    return imrotate(src, angles, zoom_in, zoom_out)
