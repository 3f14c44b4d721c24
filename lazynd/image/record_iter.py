"""MXNet's ``ImageRecordIter`` (``mx.io``) on top of :class:`ImageIter`; its uint8 / int8 variants are in
:mod:`lazynd.image.record_iter_dtypes`.

They take MXNet's arguments and reproduce what MXNet's C++ iterator does with them:

- the default augmentation: shorter edge resized to ``resize``, a centre (or, with
  ``rand_crop``, random) crop of ``data_shape``, a horizontal flip (``mirror``: always,
  ``rand_mirror``: half the time); MXNet's affine warp (``max_rotate_angle``/``rotate``,
  ``max_shear_ratio``, ``max/min_aspect_ratio``, ``min/max_random_scale``, ``max/min_img_size``),
  ``pad`` and ``fill_value`` before the crop, MXNet's crops that resize to ``data_shape``
  (``random_resized_crop`` with ``min/max_random_area``, ``max/min_crop_size``), ``random_h/s/l``
  after it, ``max_random_contrast`` / ``max_random_illumination`` at normalisation
  (:mod:`lazynd.image.record_aug`);
- ``aug_seq``: ``'aug_default'`` (all of the above) or ``''`` (no augmentation: the records must
  already have ``data_shape``'s size), MXNet's two augmenter lists for this iterator;
- 1, 3 or 4 channels (grey, RGB, or RGB and alpha, as MXNet decodes such records);
- normalisation ``(pixel - mean) / std * scale``, the mean per channel (``mean_r/g/b/a``, with
  ``std_r/g/b/a``; the ``_a`` ones for the alpha channel) or a whole mean image (``mean_img``: a ``.nd`` file holding ``{"mean_img": (C, H, W)}``,
  computed over one pass of the data and saved there when the file is missing);
- ``round_batch``: the last batch of an epoch is completed from the start of the data
  (``pad`` says how many) and the next epoch goes on after those records;
- ``num_parts`` / ``part_index``: part ``i`` of ``n`` holds the records that start in
  the ``i``-th ``n``-th of the ``.rec`` file's bytes (MXNet's input split);
- ``path_imglist``: a ``.lst`` file whose labels replace the records' own, found by each record's
  image id (its header's ``id``), the first ``label_width`` of them;
- ``shuffle`` and ``num_parts`` need no ``.idx`` file, as in MXNet: without one, the records
  are found by walking their headers once.

``ImageRecordUInt8Iter`` (or ``ImageRecordIter(dtype='uint8')``, as in MXNet) gives the
augmented pixels as uint8, without normalisation.  ``ImageRecordInt8Iter`` (or
``dtype='int8'``) gives ``pixel - round(mean)`` clipped to int8 (MXNet rounds the mean
half away from zero and ignores ``std_*`` and ``scale``).  MXNet 1.x keeps its older
iterators as ``ImageRecordIter_v1`` / ``ImageRecordUInt8Iter_v1``.
Decoding runs on the engine's workers, so ``preprocess_threads`` and ``prefetch_buffer``
are accepted and have nothing left to do.  MXNet's other augmentation arguments are
accepted with a warning when given a value that would change the data, and ignored.
"""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..arguments import given
from ..engine import get_engine
from ..errors import DataError, FormatError, OperatorError, ShapeError
from ..io import DataBatch, DataDesc
from ..io.base import BatchCursor
from ..log import warn_from_user_code
from ..ndarray.dispatch import new_array
from ..ops.params import Param, parse_int, parse_shape
from .augmenters import (
    _EIGVAL,
    _EIGVEC,
    Augmenter,
    CastAug,
    CenterCropAug,
    ColorJitterAug,
    HorizontalFlipAug,
    LightingAug,
    RandomCropAug,
    ResizeAug,
)
from .image_iter import ImageIter
from .image_list import labels_by_image_id
from .record_aug import AUG_DEFAULTS, applies_default_augmentation, take_record_augmenters
from .record_crop import CoverAug
from .record_normalize import channel_factors, channel_means, int8_mean, stack_normalized

__all__ = ["ImageRecordIter"]

# arguments that only tune MXNet's threads and buffers: accepted, nothing to do
_PERFORMANCE_ONLY = {"prefetch_buffer", "verbose", "device_id", "ctx"}

# MXNet arguments this iterator does not implement, with the values that leave the data unchanged
_IGNORED_DEFAULTS: dict[str, Any] = {
    "shuffle_chunk_size": 0,
    "shuffle_chunk_seed": 0,
}


def _byte_split(offsets: dict[Any, int], total: int, part_index: int, num_parts: int) -> list[Any]:
    """The keys of the records that start in part ``part_index`` of the file's ``total`` bytes.

    Parts are ``ceil(total / num_parts)`` bytes, rounded up to 4 (records are 4-byte aligned);
    a part owns every record whose first byte lies in it, as MXNet's input split does.
    """
    step = (total + num_parts - 1) // num_parts
    step = (step + 3) // 4 * 4
    begin, end = min(step * part_index, total), min(step * (part_index + 1), total)
    return [key for key, offset in sorted(offsets.items(), key=lambda item: item[1]) if begin <= offset < end]


class ImageRecordIter(BatchCursor, ImageIter):
    """Batches of images from a RecordIO file, with MXNet's ``ImageRecordIter`` arguments.

    See the module docstring for what each argument does.  Data is float32 ``(batch_size,
    C, H, W)`` (RGB order), labels float32 ``(batch_size,)`` or ``(batch_size, label_width)``.
    ``seed`` seeds Python's and NumPy's global generators, which shuffling and the random
    crops and flips draw from.  As MXNet's, it steps with ``iter_next()`` too, with
    ``getdata()``/``getlabel()`` giving the current batch's arrays (:class:`BatchCursor`).

    Examples
    --------
    >>> import lazynd as mx
    >>> it = mx.io.ImageRecordIter(path_imgrec='data.rec', data_shape=(3, 32, 32),
    ...                            batch_size=16, rand_crop=True, mean_img='mean.nd')  # doctest: +SKIP
    """

    # the data's dtype: float32 (normalised), uint8 (raw pixels) or int8 (pixels less the mean)
    _dtype: type = np.float32
    _CHANNELS = (1, 3, 4)
    _INDEX_FROM_HEADERS = True

    def __init__(
        self,
        path_imgrec: str = "",
        data_shape: Sequence[int] = (),
        batch_size: int = 0,
        label_width: int = 1,
        path_imgidx: str = "",
        shuffle: bool = False,
        part_index: int = 0,
        num_parts: int = 1,
        resize: int = -1,
        rand_crop: bool = False,
        rand_mirror: bool = False,
        mirror: bool = False,
        mean_img: str = "",
        mean_r: float = 0.0,
        mean_g: float = 0.0,
        mean_b: float = 0.0,
        std_r: float = 1.0,
        std_g: float = 1.0,
        std_b: float = 1.0,
        mean_a: float = 0.0,
        std_a: float = 1.0,
        scale: float = 1.0,
        brightness: float = 0.0,
        contrast: float = 0.0,
        saturation: float = 0.0,
        pca_noise: float = 0.0,
        inter_method: int = 1,
        round_batch: bool = True,
        seed: int | None = None,
        preprocess_threads: int = 4,
        data_name: str = "data",
        label_name: str = "softmax_label",
        skip_bad: bool = False,
        path_imglist: str = "",
        **kwargs: Any,
    ) -> None:
        name = type(self).__name__
        if not given(path_imgrec):
            raise OperatorError(f"{name}: path_imgrec is required")
        # MXNet reads its iterator parameters from text too: batch_size="32", data_shape="(3,224,224)"
        batch_size = Param(parse_int).parse(name, "batch_size", batch_size)
        data_shape = Param(parse_shape).parse(name, "data_shape", data_shape)
        if batch_size <= 0:
            raise OperatorError(f"{name}: batch_size must be > 0, got {batch_size}")
        if len(data_shape) != 3:
            raise OperatorError(f"{name}: data_shape must be (channels, height, width), got {tuple(data_shape)}")
        self._take_dtype(kwargs.pop("dtype", None))
        default_augmentation = applies_default_augmentation(name, kwargs.pop("aug_seq", "aug_default"))
        if data_shape[0] == 4 and (brightness or contrast or saturation or pca_noise):
            raise OperatorError(
                f"{name}: brightness, contrast, saturation and pca_noise work on RGB images; data_shape "
                f"{tuple(data_shape)} has 4 channels"
            )
        crop = (int(data_shape[2]), int(data_shape[1]))
        record_augs = take_record_augmenters(name, kwargs, inter_method, crop, rand_crop)
        # MXNet draws the random contrast and illumination for float32 data only
        self._lighting = record_augs.lighting if self._dtype == np.float32 else None
        self._check_extra_arguments(kwargs)
        self._labels_by_id = labels_by_image_id(name, path_imglist, label_width) if path_imglist else None
        if seed is not None:
            random.seed(seed)
            np.random.seed(seed)
        self.round_batch = bool(round_batch)
        self._overflow = 0
        augs: list[Augmenter] = [ResizeAug(resize, inter_method)] if resize > 0 else []
        augs += record_augs.before_crop
        if record_augs.crop is not None:
            augs.append(record_augs.crop)
        else:
            augs.append(CoverAug(crop, inter_method))
            augs.append(RandomCropAug(crop, inter_method) if rand_crop else CenterCropAug(crop, inter_method))
        augs += record_augs.after_crop
        if mirror or rand_mirror:
            augs.append(HorizontalFlipAug(1.0 if mirror else 0.5))
        if brightness or contrast or saturation or pca_noise:
            augs.append(CastAug())
            if brightness or contrast or saturation:
                augs.append(ColorJitterAug(brightness, contrast, saturation))
            if pca_noise > 0:
                augs.append(LightingAug(pca_noise, _EIGVAL, _EIGVEC))
        if not default_augmentation:
            augs = []
        super().__init__(
            batch_size,
            data_shape,
            label_width,
            path_imgrec=path_imgrec,
            path_imgidx=path_imgidx,
            shuffle=shuffle,
            aug_list=augs,
            data_name=data_name,
            label_name=label_name,
            skip_bad=skip_bad,
        )
        if self._holds_no_records():
            # MXNet refuses an empty file; reading on would give epochs of no batches, silently
            index = f" (as its index {path_imgidx} lists them)" if given(path_imgidx) else ""
            raise FormatError(f"{name}: {path_imgrec}{index} holds no records")
        if num_parts > 1:
            if not 0 <= part_index < num_parts:
                raise OperatorError(f"{name}: part_index {part_index} must be in [0, {num_parts})")
            if self.seq is None:  # read in file order so far: the byte split needs each record's offset
                self.imgrec.close()  # type: ignore[union-attr]
                self.imgrec = self._indexed_records(path_imgrec, path_imgidx)
            self.seq = _byte_split(
                self.imgrec.idx,  # type: ignore[union-attr]
                os.path.getsize(path_imgrec),
                part_index,
                num_parts,
            )
        channels = self.data_shape[0]
        self._mean: np.ndarray | None = None
        self._factor: np.ndarray | None = None
        if self._dtype == np.float32:
            self._factor = channel_factors(name, channels, (std_r, std_g, std_b, std_a), scale)
        if self._dtype != np.uint8:
            mean = self._mean_image(mean_img) if mean_img else channel_means(channels, (mean_r, mean_g, mean_b, mean_a))
            self._mean = int8_mean(mean) if self._dtype == np.int8 else mean
        self.reset()

    def _record_label(self, header: Any, key: Any, source: str) -> np.ndarray:
        """With ``path_imglist``, the list's labels for the record's image id (its header's ``id``, as
        MXNet looks them up), whatever its header holds; else the header's."""
        if self._labels_by_id is None:
            return super()._record_label(header, key, source)
        labels = self._labels_by_id.get(int(header.id))
        if labels is None:
            raise FormatError(f"{type(self).__name__}: {source} has image id {header.id}, which the image list lacks")
        return labels

    def _holds_no_records(self) -> bool:
        """Whether the record file (or its index) lists no record at all."""
        if self.seq is not None:
            return not self.seq
        assert self.imgrec is not None
        empty = self.imgrec.read() is None
        self.imgrec.reset()
        return empty

    # -- arguments ---------------------------------------------------------------------------------
    def _check_extra_arguments(self, kwargs: dict[str, Any]) -> None:
        name = type(self).__name__
        for key, value in kwargs.items():
            if key in _PERFORMANCE_ONLY:
                continue
            if key not in _IGNORED_DEFAULTS:
                known = sorted([*_PERFORMANCE_ONLY, *AUG_DEFAULTS, *_IGNORED_DEFAULTS])
                raise OperatorError(f"{name}: unknown argument {key!r} (MXNet arguments also accepted: {known})")
            if value != _IGNORED_DEFAULTS[key]:
                warn_from_user_code(f"{name}: {key}={value!r} is not implemented and is ignored")

    def _take_dtype(self, dtype: Any) -> None:
        """MXNet's ``dtype``: ``'uint8'`` / ``'int8'`` give the data of ``ImageRecordUInt8Iter`` /
        ``ImageRecordInt8Iter``, as in MXNet."""
        if dtype is None or str(dtype) == "float32":
            return
        try:
            wanted = np.dtype(dtype)
        except TypeError:
            raise OperatorError(
                f"{type(self).__name__}: dtype must be 'float32', 'uint8' or 'int8', got {dtype!r}"
            ) from None
        if wanted in (np.uint8, np.int8):
            self._dtype = wanted.type
        else:
            warn_from_user_code(f"{type(self).__name__}: dtype={dtype!r} is not implemented and is ignored (float32)")

    # -- the mean image ----------------------------------------------------------------------------
    def _mean_image(self, path: str) -> np.ndarray:
        """The mean image of ``path``, computed over one pass of the data and saved when missing."""
        from .. import ndarray as nd

        c, h, w = self.data_shape
        if not os.path.exists(path):
            # float32 sums times 1/count, as MXNet computes it: the saved file is byte for byte MXNet's
            total, count = np.zeros((c, h, w), np.float32), 0
            self.reset()
            while (sample := self._next_example()) is not None:
                _, payload, source = sample
                image = self._decode(payload, source)
                if image is not None:
                    total += self.augment(image, source).asnumpy().transpose(2, 0, 1)
                    count += 1
            if count == 0:
                raise DataError(f"{type(self).__name__}: no image to compute the mean image {path!r} from")
            nd.save(path, {"mean_img": nd.array(total * np.float32(1.0 / count))})
        loaded = nd.load(path)
        arrays = list(loaded.values()) if isinstance(loaded, dict) else list(loaded)
        if len(arrays) != 1:
            raise FormatError(f"{type(self).__name__}: {path} holds {len(arrays)} arrays, expected one mean image")
        mean = arrays[0].asnumpy().astype(np.float32)
        if mean.shape != (c, h, w):
            raise ShapeError(
                f"{type(self).__name__}: the mean image in {path} has shape {mean.shape}, expected {(c, h, w)}"
            )
        return mean

    # -- batches -----------------------------------------------------------------------------------
    def _describe_data(self) -> list[DataDesc]:
        return [DataDesc(self.data_name, (self.batch_size, *self.data_shape), self._dtype, "NCHW")]

    def _describe_label(self) -> list[DataDesc]:
        # MXNet's C++ iterators describe the label with DataDesc's default layout too: programs print
        # ``provide_label`` and see ``...,NCHW]`` (ImageIter, in Python, has its own)
        (label,) = super()._describe_label()
        return [DataDesc(label.name, label.shape, label.dtype, "NCHW")]

    def reset(self) -> None:
        # after a batch completed from the start, the next epoch goes on from there (MXNet)
        if self._overflow:
            self._overflow = 0
            return
        super().reset()

    def _read(self, images: list[Any], labels: list[np.ndarray]) -> None:
        while len(images) < self.batch_size:
            sample = self._next_example()
            if sample is None:
                return
            label, payload, source = sample
            if label.size != self.label_width:
                raise FormatError(
                    f"{type(self).__name__}: {source} has {label.size} label(s), label_width is {self.label_width}"
                )
            image = self._decode(payload, source)
            decoded_channels = image.shape[2] if image is not None and len(image.shape) == 3 else 1
            if image is not None and decoded_channels != self.data_shape[0] and self._flag == -1:
                raise FormatError(
                    f"{type(self).__name__}: {source} is an image of {decoded_channels} channel(s); data_shape "
                    f"{self.data_shape} asks for 4 (colour and alpha)"
                )
            if image is not None:
                images.append(self.augment(image, source))
                labels.append(label)

    def next(self) -> DataBatch:
        if self._overflow:
            raise StopIteration
        images: list[Any] = []
        labels: list[np.ndarray] = []
        self._read(images, labels)
        if not images:
            raise StopIteration
        pad = self.batch_size - len(images)
        if pad and self.round_batch:
            super().reset()
            self._read(images, labels)
            if len(images) < self.batch_size:
                raise DataError(
                    f"{type(self).__name__}: round_batch needs at least batch_size={self.batch_size} images, "
                    f"the data has {len(images) - pad}"
                )
            self._overflow = pad
        else:
            for i in range(pad):
                images.append(images[i])
                labels.append(labels[i])
        lighting = self._lighting(len(images)) if self._lighting is not None else None
        described = self._describe_data()[0]
        data = new_array(described.shape, described.dtype, images[0].context)
        get_engine().push(
            stack_normalized,
            ([im.data_array for im in images], data.data_array, self._mean, self._factor, lighting),
            [im.var for im in images],
            [data.var],
            "image_record_batch",
            data.context,
        )
        from .. import ndarray as nd

        label = nd.array(np.stack(labels).astype(np.float32).reshape(self._describe_label()[0].shape))
        return DataBatch(
            [data], [label], pad=pad, provide_data=self._describe_data(), provide_label=self._describe_label()
        )
