"""MXNet's ``ImageDetRecordIter`` (``mx.io``) on top of :class:`ImageDetIter`.

It reads detection records (see :mod:`lazynd.image.detection_iter`) and gives
MXNet's C++ iterator's batches:

- data float32 ``(batch, C, H, W)``: each image (shorter side resized to
  ``resize`` first when given) resized to ``data_shape``, then
  ``(pixel - mean) / std * scale`` per channel (``std_*`` of 0 means no division);
- label float32 ``(batch, 4 + label_pad_width)``: per image ``[C, H, W, n]``
  (the data shape and the length ``n`` of its label), then the record's label
  ``[header..., objects...]`` after augmentation, then ``label_pad_value`` up to the
  width.  ``label_pad_width`` (and ``label_width`` when it is not -1, which every
  record must then match) default to the longest label of the file.

Augmentation uses the detection augmenters: ``rand_crop_prob`` picks one of
``num_crop_sampler`` :class:`DetRandomCropAug` (area from ``min/max_crop_scales``
squared, aspect from ``min/max_crop_aspect_ratios``, ``min_crop_object_coverages``,
``max_crop_trials``), and ``rand_mirror_prob`` flips.  These are lazynd's crop
rules, not the C++ samplers': the crops keep objects by coverage
(``min_eject_coverage``, 0.3) rather than by their centres, and draw from
Python's ``random`` (seeded by ``seed``).  ``rand_crop=True`` and
``rand_mirror=True`` (the classification iterator's names) stand for
``rand_crop_prob=1`` and ``rand_mirror_prob=0.5``.  MXNet's arguments that
these augmenters cannot express are refused by name when given a value that
would change the data.  Padded examples of the last batch repeat its first ones.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import FormatError, OperatorError
from ..io import DataDesc
from ..io.base import BatchCursor
from .augmenters import ColorNormalizeAug, ForceResizeAug, ResizeAug
from .detection_augmenters import CreateMultiRandCropAugmenter, DetAugmenter, DetBorrowAug, DetHorizontalFlipAug
from .detection_iter import ImageDetIter

__all__ = ["ImageDetRecordIter"]

# arguments that only tune MXNet's threads and buffers: accepted, nothing to do
_PERFORMANCE_ONLY = {"preprocess_threads", "prefetch_buffer", "verbose", "ctx", "device_id"}

# MXNet arguments with no lazynd counterpart, and the value that leaves the data as lazynd makes it
_ONLY_DEFAULT: dict[str, Any] = {
    "aug_seq": "det_aug_default",
    "path_imglist": "",
    "mean_img": "",
    "mean_a": 0.0,
    "std_a": 0.0,
    "resize_mode": "force",
    "dtype": None,
    "shuffle_chunk_size": 0,
    "shuffle_chunk_seed": 0,
    "min_crop_overlaps": (0.0,),
    "max_crop_overlaps": (1.0,),
    "min_crop_sample_coverages": (0.0,),
    "max_crop_sample_coverages": (1.0,),
    "max_crop_object_coverages": (1.0,),
    "crop_emit_mode": "center",
    "emit_overlap_thresh": 0.3,
    "rand_pad_prob": 0.0,
    "max_pad_scale": 1.0,
    "fill_value": 127,
    "max_random_hue": 0,
    "random_hue_prob": 0.0,
    "max_random_saturation": 0,
    "random_saturation_prob": 0.0,
    "max_random_illumination": 0,
    "random_illumination_prob": 0.0,
    "max_random_contrast": 0.0,
    "random_contrast_prob": 0.0,
}


# arguments that act only through a probability: while it is 0, MXNet never uses them, and they
# change nothing (mxnet-ssd's validation settings give max_random_hue=18 with random_hue_prob=0)
_ACTS_THROUGH = {
    "max_pad_scale": "rand_pad_prob",
    "fill_value": "rand_pad_prob",
    "max_random_hue": "random_hue_prob",
    "max_random_saturation": "random_saturation_prob",
    "max_random_illumination": "random_illumination_prob",
    "max_random_contrast": "random_contrast_prob",
    **dict.fromkeys(
        (
            "min_crop_overlaps",
            "max_crop_overlaps",
            "min_crop_sample_coverages",
            "max_crop_sample_coverages",
            "max_crop_object_coverages",
            "crop_emit_mode",
            "emit_overlap_thresh",
        ),
        "rand_crop_prob",
    ),
}


def _check_unsupported(kwargs: dict[str, Any], crop_prob: float) -> None:
    """Refuse by name each of MXNet's arguments lazynd has no counterpart for, when its value would change
    the data: unknown names, and values other than the default of an argument that acts (``crop_prob``
    is the probability of a crop, the arguments' own probabilities come from ``kwargs``)."""
    probabilities = {name: float(kwargs.get(name, 0.0)) for name in set(_ACTS_THROUGH.values())}
    probabilities["rand_crop_prob"] = crop_prob
    for key, value in kwargs.items():
        if key in _PERFORMANCE_ONLY:
            continue
        if key not in _ONLY_DEFAULT:
            raise OperatorError(f"ImageDetRecordIter: unknown argument {key!r}")
        if key in _ACTS_THROUGH and probabilities[_ACTS_THROUGH[key]] == 0:
            continue
        if not _same(value, _ONLY_DEFAULT[key]):
            raise OperatorError(
                f"ImageDetRecordIter: {key}={value!r} is not supported (only {_ONLY_DEFAULT[key]!r}); "
                "lazynd's detection augmenters are mx.image.CreateDetAugmenter's, see ImageDetIter"
            )


def _same(value: Any, default: Any) -> bool:
    """Whether an argument's value is its default (a number is the same as a tuple of that number)."""
    if isinstance(default, tuple):
        values = tuple(value) if isinstance(value, (tuple, list)) else (value,)
        return len(values) == 1 and float(values[0]) == default[0]
    if default is None or isinstance(default, str):
        return value == default or (default is None and str(value) == "float32")
    return float(value) == float(default)


def _per_sampler(name: str, value: Any, count: int) -> list[float]:
    """A crop argument as one value per sampler: a single value serves them all."""
    values = list(value) if isinstance(value, (tuple, list)) else [value]
    if len(values) == 1:
        values = values * count
    if len(values) != count:
        raise OperatorError(
            f"ImageDetRecordIter: {name} has {len(values)} values, num_crop_sampler is {count}; give 1 or {count}"
        )
    return [float(v) for v in values]


class ImageDetRecordIter(BatchCursor, ImageDetIter):
    """Batches of images and flat detection labels from a RecordIO file, with MXNet's arguments.

    See the module docstring for the data, the label layout and the augmentation.

    Examples
    --------
    >>> import lazynd as mx
    >>> it = mx.io.ImageDetRecordIter(path_imgrec='train.rec', data_shape=(3, 300, 300),
    ...                               batch_size=32, rand_mirror_prob=0.5)  # doctest: +SKIP
    """

    _INDEX_FROM_HEADERS = True

    def __init__(
        self,
        path_imgrec: str = "",
        data_shape: Sequence[int] = (),
        batch_size: int = 0,
        label_width: int = -1,
        label_pad_width: int = -1,
        label_pad_value: float = -1,
        path_imgidx: str = "",
        shuffle: bool = False,
        part_index: int = 0,
        num_parts: int = 1,
        seed: int | None = None,
        resize: int = -1,
        rand_crop_prob: float = 0.0,
        min_crop_scales: Any = (0.0,),
        max_crop_scales: Any = (1.0,),
        min_crop_aspect_ratios: Any = (1.0,),
        max_crop_aspect_ratios: Any = (1.0,),
        min_crop_object_coverages: Any = (0.0,),
        num_crop_sampler: int = 1,
        max_crop_trials: Any = (25,),
        rand_mirror_prob: float = 0.0,
        rand_crop: bool = False,
        rand_mirror: bool = False,
        inter_method: int = 1,
        mean_r: float = 0.0,
        mean_g: float = 0.0,
        mean_b: float = 0.0,
        std_r: float = 0.0,
        std_g: float = 0.0,
        std_b: float = 0.0,
        scale: float = 1.0,
        round_batch: bool = True,
        data_name: str = "data",
        label_name: str = "softmax_label",
        **kwargs: Any,
    ) -> None:
        if not path_imgrec:
            raise OperatorError("ImageDetRecordIter: path_imgrec is required")
        if batch_size <= 0:
            raise OperatorError(f"ImageDetRecordIter: batch_size must be > 0, got {batch_size}")
        if len(data_shape) != 3:
            raise OperatorError(
                f"ImageDetRecordIter: data_shape must be (channels, height, width), got {tuple(data_shape)}"
            )
        # as MXNet's: no crop without a sampler
        crop_prob = (rand_crop_prob or (1.0 if rand_crop else 0.0)) if num_crop_sampler > 0 else 0.0
        _check_unsupported(kwargs, crop_prob)
        if seed is not None:
            random.seed(seed)
            np.random.seed(seed)
        self._record_label_width, self.label_pad_value = int(label_width), float(label_pad_value)
        self.round_batch = bool(round_batch)
        self._longest = 0
        augs = self._augmenters(
            data_shape,
            resize,
            crop_prob,
            (min_crop_scales, max_crop_scales, min_crop_aspect_ratios, max_crop_aspect_ratios),
            min_crop_object_coverages,
            num_crop_sampler,
            max_crop_trials,
            rand_mirror_prob or (0.5 if rand_mirror else 0.0),
            inter_method,
            np.array([mean_r, mean_g, mean_b][: data_shape[0]], np.float32),
            np.array([std_r, std_g, std_b][: data_shape[0]], np.float32),
            scale,
        )
        super().__init__(
            batch_size,
            data_shape,
            path_imgrec=path_imgrec,
            path_imgidx=path_imgidx or None,
            shuffle=shuffle,
            part_index=part_index,
            num_parts=num_parts,
            aug_list=augs,
            data_name=data_name,
            label_name=label_name,
        )
        if label_pad_width > 0 and label_pad_width < self._longest:
            raise OperatorError(
                f"ImageDetRecordIter: label_pad_width {label_pad_width} is shorter than the longest label "
                f"of {path_imgrec} ({self._longest} values)"
            )
        self.label_pad_width = int(label_pad_width) if label_pad_width > 0 else self._longest

    @staticmethod
    def _augmenters(
        data_shape: Sequence[int],
        resize: int,
        crop_prob: float,
        crop_ranges: tuple[Any, Any, Any, Any],
        object_coverages: Any,
        samplers: int,
        trials: Any,
        mirror_prob: float,
        inter_method: int,
        mean: np.ndarray,
        std: np.ndarray,
        scale: float,
    ) -> list[DetAugmenter]:
        """The detection augmenters MXNet's arguments ask for (see the module docstring)."""
        augs: list[DetAugmenter] = []
        if resize > 0:
            augs.append(DetBorrowAug(ResizeAug(resize, inter_method)))
        if crop_prob > 0:
            names = ("min_crop_scales", "max_crop_scales", "min_crop_aspect_ratios", "max_crop_aspect_ratios")
            low_scale, high_scale, low_ratio, high_ratio = (
                _per_sampler(name, value, samplers) for name, value in zip(names, crop_ranges, strict=True)
            )
            augs.append(
                CreateMultiRandCropAugmenter(
                    min_object_covered=_per_sampler("min_crop_object_coverages", object_coverages, samplers),
                    aspect_ratio_range=[(lo, hi) for lo, hi in zip(low_ratio, high_ratio, strict=True)],
                    area_range=[(lo * lo, hi * hi) for lo, hi in zip(low_scale, high_scale, strict=True)],
                    max_attempts=[int(t) for t in _per_sampler("max_crop_trials", trials, samplers)],
                    skip_prob=1 - crop_prob,
                )
            )
        if mirror_prob > 0:
            augs.append(DetHorizontalFlipAug(mirror_prob))
        augs.append(DetBorrowAug(ForceResizeAug((int(data_shape[2]), int(data_shape[1])), inter_method)))
        divisor = np.where(std > 0, std, 1).astype(np.float32) / np.float32(scale)
        if mean.any() or (divisor != 1).any():
            augs.append(DetBorrowAug(ColorNormalizeAug(mean, divisor)))
        return augs

    def _check_record_label(self, raw: np.ndarray, source: str) -> None:
        size = np.asarray(raw).size
        if self._record_label_width > 0 and size != self._record_label_width:
            raise FormatError(
                f"ImageDetRecordIter: {source} has a label of {size} values, label_width is {self._record_label_width}"
            )
        self._longest = max(self._longest, size)

    def _describe_label(self) -> list[DataDesc]:
        width = getattr(self, "label_pad_width", self._longest)
        # "NCHW", DataDesc's default, as every MXNet C++ iterator describes its arrays
        return [DataDesc(self.label_name, (self.batch_size, 4 + width), np.float32, "NCHW")]

    def _label_rows(self, objects: np.ndarray, raw: np.ndarray, source: str) -> np.ndarray:
        """``[C, H, W, n, header..., objects..., pad...]`` for one example."""
        raw = np.asarray(raw, np.float32).reshape(-1)
        label = np.concatenate([raw[: int(raw[0])], objects.reshape(-1)])
        if label.size > self.label_pad_width:
            raise OperatorError(
                f"ImageDetRecordIter: {source} has {label.size} label values, label_pad_width is {self.label_pad_width}"
            )
        row = np.full(4 + self.label_pad_width, self.label_pad_value, np.float32)
        row[:3] = self.data_shape
        row[3] = label.size
        row[4 : 4 + label.size] = label
        return row
