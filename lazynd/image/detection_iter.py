"""ImageDetIter: batches of images with their object boxes (MXNet's ``mx.image.ImageDetIter``).

It is an :class:`ImageIter` whose label is a detection label: each record's
flat label is ``[A, B, header..., objects...]``, a header of ``A`` values (the
first two are ``A`` and ``B``) followed by objects of ``B`` values
``[class, xmin, ymin, xmax, ymax, ...]`` with coordinates as fractions of the
image size.  A batch's label has shape ``(batch, objects, B)``: ``objects`` is
the largest object count of any record (read once, at construction), and the
rows an image does not use are -1.  Decoding and pixel augmentation run on the
engine's workers as in :class:`ImageIter`; the boxes move with the pixels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import FormatError, OperatorError, ShapeError
from ..io import DataDesc
from ..log import warn_from_user_code
from .detection_augmenters import CreateDetAugmenter, DetAugmenter
from .image_iter import ImageIter

__all__ = ["ImageDetIter", "parse_detection_label"]


def parse_detection_label(raw: np.ndarray, source: str) -> np.ndarray:
    """The objects ``(count, B)`` of the flat detection label ``raw`` read from ``source``.

    Objects with an empty box (``xmax <= xmin`` or ``ymax <= ymin``, such as
    rows of -1 padding) are dropped, as MXNet does; a label that is malformed,
    that keeps no object, or whose boxes leave [0, 1] is refused, naming ``source``.
    """
    raw = np.asarray(raw, dtype=np.float32).reshape(-1)
    if raw.size < 7:
        raise FormatError(
            f"ImageDetIter: {source} has a label of {raw.size} values; a detection label is "
            "[header width, object width, ...header, objects...] with at least one object of 5 or more values"
        )
    if not np.isfinite(raw[:2]).all():
        # int() of a NaN or inf would raise ValueError/OverflowError without naming the record
        raise FormatError(
            f"ImageDetIter: {source}: label header gives header width {raw[0]} and object width {raw[1]}; "
            "expected whole numbers (header width >= 2, object width >= 5)"
        )
    header_width, object_width = int(raw[0]), int(raw[1])
    if header_width < 2 or object_width < 5 or header_width >= raw.size:
        raise FormatError(
            f"ImageDetIter: {source}: label header says header width {header_width} and object width "
            f"{object_width}; expected a header width >= 2 (and below the label's {raw.size} values) "
            "and an object width >= 5"
        )
    body = raw.size - header_width
    if body % object_width:
        raise FormatError(
            f"ImageDetIter: {source}: label header says objects are {object_width} values wide, but "
            f"{body} values follow the {header_width}-value header (not a multiple of {object_width})"
        )
    objects = raw[header_width:].reshape(-1, object_width)
    objects = objects[(objects[:, 3] > objects[:, 1]) & (objects[:, 4] > objects[:, 2])]
    if not len(objects):
        raise FormatError(f"ImageDetIter: {source} has no object with a non-empty box in its label")
    if not np.isfinite(objects).all():
        # a NaN class id or box value would reach the batch as garbage; NaN fails every range check below
        row = int(np.nonzero(~np.isfinite(objects).all(axis=1))[0][0])
        raise FormatError(f"ImageDetIter: {source} has object {objects[row].tolist()} with a value that is not finite")
    boxes = objects[:, 1:5]
    if boxes.min() < 0 or boxes.max() > 1:
        row = int(np.nonzero((boxes < 0).any(axis=1) | (boxes > 1).any(axis=1))[0][0])
        raise FormatError(
            f"ImageDetIter: {source} has box {boxes[row].tolist()} outside [0, 1]; detection boxes are "
            "[xmin, ymin, xmax, ymax] as fractions of the image width and height"
        )
    return objects


def _has_object(label: np.ndarray) -> bool:
    return bool(((label[:, 0] >= 0) & (label[:, 3] > label[:, 1]) & (label[:, 4] > label[:, 2])).any())


class ImageDetIter(ImageIter):
    """Images and their boxes from a RecordIO file, a ``.lst`` file or a list, in batches.

    Parameters follow MXNet's ``mx.image.ImageDetIter``; extra keyword arguments
    go to :func:`CreateDetAugmenter` when ``aug_list`` is not given.  An example
    whose augmentation leaves it without objects is skipped (with a warning).

    Examples
    --------
    >>> from lazynd import image
    >>> it = image.ImageDetIter(4, (3, 300, 300), path_imgrec='train.rec', rand_crop=0.5)  # doctest: +SKIP
    >>> it.label_shape  # doctest: +SKIP
    (3, 5)
    """

    # detection augmenters take and give (image, objects), where ImageIter's take an image
    auglist: list[DetAugmenter]  # type: ignore[assignment]

    def __init__(
        self,
        batch_size: int,
        data_shape: Sequence[int],
        path_imgrec: str | None = None,
        path_imglist: str | None = None,
        path_root: str | None = None,
        path_imgidx: str | None = None,
        shuffle: bool = False,
        part_index: int = 0,
        num_parts: int = 1,
        aug_list: list[DetAugmenter] | None = None,
        imglist: list | None = None,
        data_name: str = "data",
        label_name: str = "label",
        last_batch_handle: str = "pad",
        **kwargs: Any,
    ) -> None:
        super().__init__(
            batch_size,
            data_shape,
            path_imgrec=path_imgrec,
            path_imglist=path_imglist,
            path_root=path_root,
            path_imgidx=path_imgidx,
            shuffle=shuffle,
            part_index=part_index,
            num_parts=num_parts,
            aug_list=[],
            imglist=imglist,
            data_name=data_name,
            label_name=label_name,
            last_batch_handle=last_batch_handle,
        )
        self.auglist = aug_list if aug_list is not None else CreateDetAugmenter(self.data_shape, **kwargs)
        self.label_shape = self._estimate_label_shape()

    def _estimate_label_shape(self) -> tuple[int, int]:
        """(largest object count, object width) over every record's label; the labels are checked."""
        count, width, first = 0, 0, ""
        self.reset()
        while (sample := self._next_example()) is not None:
            label, _, source = sample
            objects = parse_detection_label(label, source)
            self._check_record_label(label, source)
            if width and objects.shape[1] != width:
                raise FormatError(
                    f"ImageDetIter: {source} has objects {objects.shape[1]} values wide, but {first} "
                    f"has {width}; every label of a data set needs one object width"
                )
            if not width:
                width, first = objects.shape[1], source
            count = max(count, objects.shape[0])
        self.reset()
        if not width:
            what = self.path_imgrec or "the image list"
            index_path = getattr(self.imgrec, "idx_path", None)  # set when the records are read through an index
            index = f" (as its index {index_path} lists them)" if index_path else ""
            raise FormatError(f"ImageDetIter: {what}{index} holds no records")
        return count, width

    def _check_record_label(self, raw: np.ndarray, source: str) -> None:
        """Look at one record's flat label while the label shape is estimated (subclasses check more)."""

    def _describe_label(self) -> list[DataDesc]:
        return [DataDesc(self.label_name, (self.batch_size, *self.label_shape), np.float32, "NCW")]

    def _transform(self, image: Any, label: np.ndarray, source: str) -> tuple[Any, np.ndarray] | None:
        augmented = self._augment_example(image, label, source)
        if augmented is None:
            return None
        return augmented[0], self._label_rows(augmented[1], label, source)

    def _augment_example(self, image: Any, label: np.ndarray, source: str) -> tuple[Any, np.ndarray] | None:
        """The augmented image and objects, or None when no object is left."""
        objects = parse_detection_label(label, source)
        for aug in self.auglist:
            image, objects = aug(image, objects)
        c, h, w = self.data_shape
        if tuple(image.shape) != (h, w, c):
            raise ShapeError(
                f"ImageDetIter: {source} has shape {image.shape} after augmentation, expected {(h, w, c)}; "
                "end aug_list with a DetBorrowAug(ForceResizeAug(...))"
            )
        if not _has_object(objects):
            warn_from_user_code(f"ImageDetIter: skipping {source}: no object left after augmentation")
            return None
        return image, objects

    def _label_rows(self, objects: np.ndarray, raw: np.ndarray, source: str) -> np.ndarray:
        """The example's label of ``label_shape``: its objects, then rows of -1."""
        if objects.shape[0] > self.label_shape[0]:
            raise ShapeError(
                f"ImageDetIter: {source} has {objects.shape[0]} objects after augmentation, "
                f"label_shape holds {self.label_shape[0]}"
            )
        rows = np.full(self.label_shape, -1, np.float32)
        rows[: objects.shape[0]] = objects
        return rows

    def _label_batch(self, labels: list[np.ndarray]) -> np.ndarray:
        return np.stack(labels)

    def check_data_shape(self, data_shape: Sequence[int]) -> None:
        """Refuse a data shape that is not (1 or 3 channels, height, width)."""
        if len(data_shape) != 3 or data_shape[0] not in (1, 3):
            raise OperatorError(f"ImageDetIter: data_shape must be (1 or 3, height, width), got {tuple(data_shape)}")
        if hasattr(self, "data_shape") and data_shape[0] != self.data_shape[0]:  # reshape(); __init__ asks first
            raise OperatorError(
                f"ImageDetIter: data_shape's channels cannot change from {self.data_shape[0]} to {data_shape[0]}"
            )

    def check_label_shape(self, label_shape: Sequence[int]) -> None:
        """Refuse a label shape that holds fewer objects or has another object width."""
        if len(label_shape) != 2:
            raise OperatorError(f"ImageDetIter: label_shape must be (objects, object width), got {tuple(label_shape)}")
        if label_shape[0] < self.label_shape[0]:
            raise OperatorError(
                f"ImageDetIter: label_shape cannot hold fewer objects than the data has: "
                f"{label_shape[0]} < {self.label_shape[0]}"
            )
        if label_shape[1] != self.label_shape[1]:
            raise OperatorError(
                f"ImageDetIter: label_shape's object width must stay {self.label_shape[1]}, got {label_shape[1]}"
            )

    def reshape(self, data_shape: Sequence[int] | None = None, label_shape: Sequence[int] | None = None) -> None:
        """Give later batches ``data_shape`` (C, H, W) and/or ``label_shape`` (objects, B).

        A new data shape needs augmenters that produce it (MXNet's forced resize
        does not follow the iterator's shape either).
        """
        if data_shape is not None:
            self.check_data_shape(data_shape)
            self.data_shape = tuple(int(s) for s in data_shape)
        if label_shape is not None:
            self.check_label_shape(label_shape)
            self.label_shape = (int(label_shape[0]), int(label_shape[1]))

    def sync_label_shape(self, it: ImageDetIter, verbose: bool = False) -> ImageDetIter:
        """Give this iterator and ``it`` the same label shape (the larger object count); returns ``it``."""
        if not isinstance(it, ImageDetIter):
            raise OperatorError(f"ImageDetIter.sync_label_shape: expected an ImageDetIter, got {type(it).__name__}")
        if it.label_shape[1] != self.label_shape[1]:
            raise OperatorError(
                f"ImageDetIter.sync_label_shape: object widths differ: {self.label_shape[1]} and {it.label_shape[1]}"
            )
        count = max(self.label_shape[0], it.label_shape[0])
        if verbose:
            print(f"Resized label_shape to ({count}, {self.label_shape[1]}).")
        self.reshape(None, (count, self.label_shape[1]))
        it.reshape(None, (count, it.label_shape[1]))
        return it
