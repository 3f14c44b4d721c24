"""The uint8 and int8 variants of ``ImageRecordIter`` (``mx.io``), and MXNet's ``_v1`` names.

MXNet 1.x keeps its older C++ record iterators as ``ImageRecordIter_v1`` and
``ImageRecordUInt8Iter_v1``; they take the same arguments and give the same data, so
here they are the same classes.
"""

from __future__ import annotations

import numpy as np

from .record_iter import ImageRecordIter

__all__ = ["ImageRecordUInt8Iter", "ImageRecordInt8Iter", "ImageRecordIter_v1", "ImageRecordUInt8Iter_v1"]


class ImageRecordUInt8Iter(ImageRecordIter):
    """:class:`ImageRecordIter` giving the augmented pixels as uint8, without normalisation.

    ``mean_*``, ``std_*``, ``scale`` and ``mean_img`` are accepted (as MXNet accepts them)
    and have no effect.
    """

    _dtype = np.uint8


class ImageRecordInt8Iter(ImageRecordIter):
    """:class:`ImageRecordIter` giving int8 data: ``pixel - round(mean)`` clipped to [-128, 127].

    As in MXNet, the mean (``mean_r/g/b`` or ``mean_img``) is rounded half away from zero;
    ``std_*`` and ``scale`` are accepted and have no effect.
    """

    _dtype = np.int8


ImageRecordIter_v1 = ImageRecordIter
ImageRecordUInt8Iter_v1 = ImageRecordUInt8Iter
