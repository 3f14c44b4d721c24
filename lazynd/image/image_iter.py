"""ImageIter: batches of decoded, augmented images (``ImageRecordIter`` is in ``record_iter``).

A batch pushes every decode and augmentation at once, so the engine's workers
run them in parallel; one final operation stacks the images into the batch.
"""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..arguments import flag, given, is_choice
from ..engine import get_engine
from ..errors import EngineError, FormatError, OperatorError, ShapeError
from ..formats.fileio import open_for_read
from ..formats.recordio_indexed import RecordIOIndexedByHeaders
from ..formats.recordio_pack import unpack
from ..io import DataBatch, DataDesc, DataIter
from ..log import warn_from_user_code
from ..ndarray.dispatch import new_array
from ..recordio import MXIndexedRecordIO, MXRecordIO
from .augmenters import Augmenter, CreateAugmenter
from .image import imdecode
from .image_list import load_image_list, read_listed_image

__all__ = ["ImageIter"]

_LAST_BATCH_MODES = ("pad", "discard", "roll_over")
# MXNet's label dtypes for labels read from a .lst file or imglist (batches stay float32)
_LABEL_DTYPES = ("int32", "float32", "int64", "float64")


def _unpack(record: bytes, source: str) -> tuple[Any, bytes]:
    """The image record's header and payload; a damaged header names the record and its file."""
    try:
        return unpack(record)
    except FormatError as err:
        raise FormatError(f"ImageIter: {source}: {err}") from None


def _stack(images: list[np.ndarray], out: np.ndarray, nchw: bool) -> None:
    for i, image in enumerate(images):
        out[i] = image.transpose(2, 0, 1) if nchw else image


class ImageIter(DataIter):
    """Images from a RecordIO file, a ``.lst`` file or a list, in batches of ``batch_size``.

    Parameters follow MXNet's ``mx.image.ImageIter`` (a list next to an indexed
    ``.rec`` gives the labels, by key, as in MXNet); ``skip_bad=True`` skips
    records that do not decode (with a warning) instead of raising.
    Each example's label holds ``label_width`` values (a single value fills
    the row).  ``last_batch_handle`` says what becomes of the examples that
    do not fill a last batch: ``'pad'`` fills it with the epoch's first examples,
    as MXNet does (its ``pad`` says how many; the next ``next()`` then ends the
    epoch), ``'discard'`` drops them, ``'roll_over'`` carries them into the first
    batch of the next epoch (``hard_reset()`` forgets them); as in MXNet, that batch's
    ``pad`` counts the examples the new epoch added to it.  ``dtype`` is the
    type labels from a ``.lst`` file or ``imglist`` are read as (MXNet's
    ``int32``, ``float32``, ``int64`` or ``float64``); batches stay float32.

    Examples
    --------
    >>> from lazynd import image
    >>> it = image.ImageIter(4, (3, 28, 28), path_imgrec='mnist50.rec')  # doctest: +SKIP
    """

    # the channel counts data_shape may ask for (MXNet's ImageRecordIter also takes 4: RGB and alpha)
    _CHANNELS: tuple[int, ...] = (1, 3)
    # MXNet's C++ record iterators (ImageRecordIter, ImageDetRecordIter) shuffle and split without an .idx
    _INDEX_FROM_HEADERS = False

    def __init__(
        self,
        batch_size: int,
        data_shape: Sequence[int],
        label_width: int = 1,
        path_imgrec: str | None = None,
        path_imglist: str | None = None,
        path_root: str | None = None,
        path_imgidx: str | None = None,
        shuffle: bool = False,
        part_index: int = 0,
        num_parts: int = 1,
        aug_list: list[Augmenter] | None = None,
        imglist: list | None = None,
        data_name: str = "data",
        label_name: str = "softmax_label",
        dtype: str = "float32",
        last_batch_handle: str = "pad",
        layout: str = "NCHW",
        skip_bad: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(batch_size)
        self._source = "an encoded image"  # what imdecode's errors name: the example being decoded
        if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise OperatorError(f"ImageIter: batch_size must be a positive integer, got {batch_size!r}")
        if str(dtype) not in _LABEL_DTYPES:
            raise OperatorError(f"ImageIter: dtype (of the labels) must be one of {_LABEL_DTYPES}, got {dtype!r}")
        self.dtype = str(dtype)
        # set by a padded last batch: the epoch is over until reset()
        self._exhausted = False
        if last_batch_handle not in _LAST_BATCH_MODES:
            raise OperatorError(
                f"ImageIter: last_batch_handle must be one of {_LAST_BATCH_MODES}, got {last_batch_handle!r}"
            )
        self.last_batch_handle = last_batch_handle
        # roll_over: the augmented images and labels of an epoch's incomplete last batch
        self._carried: tuple[list[Any], list[np.ndarray]] = ([], [])
        self.check_data_shape(data_shape)
        if not is_choice(layout, ("NCHW", "NHWC")):
            raise OperatorError(f"ImageIter: layout must be 'NCHW' or 'NHWC', got {layout!r}")
        flag("ImageIter", "shuffle", shuffle)
        if not (given(path_imgrec) or given(path_imglist) or imglist is not None):
            raise OperatorError("ImageIter: give path_imgrec, path_imglist or imglist")
        self.data_shape = tuple(int(s) for s in data_shape)
        self.label_width, self.layout, self.skip_bad = label_width, layout, skip_bad
        self.shuffle, self.path_root = shuffle, path_root or ""
        self.data_name, self.label_name = data_name, label_name
        self.auglist = aug_list if aug_list is not None else CreateAugmenter(self.data_shape, **kwargs)
        if isinstance(self.auglist, (str, bytes)) or not all(callable(aug) for aug in self.auglist):
            raise OperatorError(f"ImageIter: aug_list must be a list of augmenters (callables), got {aug_list!r}")
        # OpenCV's decode: grey, colour, or unchanged (colour and alpha)
        self._flag = {1: 0, 3: 1, 4: -1}[self.data_shape[0]]
        self.imgrec: MXRecordIO | None = None
        self.imglist: dict[Any, tuple[np.ndarray, str]] | None = None
        self._list_origins: dict[Any, str] = {}  # where each listed image is named, for its errors
        self.path_imgrec = path_imgrec
        if given(path_imgrec):
            if given(path_imgidx) or shuffle or num_parts > 1:
                self.imgrec = self._indexed_records(path_imgrec, path_imgidx)
                self.seq: list[Any] | None = list(self.imgrec.keys)  # type: ignore[attr-defined]
            else:
                self.imgrec = MXRecordIO(path_imgrec, "r")
                self.seq = None
            if given(path_imglist) or imglist is not None:  # as MXNet: the list's labels win, read by key
                self.imglist = load_image_list(path_imglist, imglist, self.dtype)[0]
        else:
            self.imglist, self._list_origins = load_image_list(path_imglist, imglist, self.dtype)
            self.seq = list(self.imglist)
        if num_parts > 1:
            if self.seq is None or not 0 <= part_index < num_parts:
                raise OperatorError(f"ImageIter: part_index {part_index} must be in [0, {num_parts})")
            per = len(self.seq) // num_parts
            self.seq = self.seq[part_index * per : (part_index + 1) * per]
        self.cur = 0
        self.reset()

    def _indexed_records(self, path_imgrec: str, path_imgidx: str | None) -> MXIndexedRecordIO:
        """The records read by key, through ``path_imgidx``; without it, through the ``.idx`` file beside
        them (MXNet's ImageIter needs one to shuffle or split the records) or, for the iterators that
        MXNet implements in C++ and that need none, through the records' own headers."""
        if given(path_imgidx):
            return MXIndexedRecordIO(path_imgidx, path_imgrec, "r")
        if self._INDEX_FROM_HEADERS:
            return RecordIOIndexedByHeaders(path_imgrec)
        return MXIndexedRecordIO(os.path.splitext(path_imgrec)[0] + ".idx", path_imgrec, "r")

    def _describe_data(self) -> list[DataDesc]:
        c, h, w = self.data_shape
        shape = (self.batch_size, c, h, w) if self.layout == "NCHW" else (self.batch_size, h, w, c)
        return [DataDesc(self.data_name, shape, np.float32, self.layout)]

    def _describe_label(self) -> list[DataDesc]:
        shape = (self.batch_size,) if self.label_width == 1 else (self.batch_size, self.label_width)
        return [DataDesc(self.label_name, shape, np.float32, "N")]

    def reset(self) -> None:
        if self.shuffle and self.seq is not None:
            random.shuffle(self.seq)
        self._restart()

    def hard_reset(self) -> None:
        """Reset, forgetting the examples ``roll_over`` carried from the last epoch (MXNet's)."""
        self._carried = ([], [])
        self.reset()

    def _restart(self) -> None:
        """Read from the first example again (no reshuffle)."""
        if self.imgrec is not None and self.seq is None:
            self.imgrec.reset()
        self.cur = 0
        self._exhausted = False

    # -- MXNet's hooks: a subclass overrides them, a custom next() calls them ----------------------
    def check_data_shape(self, data_shape: Sequence[int]) -> None:
        """Refuse a ``data_shape`` that is not (channels, height, width) with a channel count this
        iterator decodes (MXNet's hook, called by ``__init__``)."""
        if not hasattr(data_shape, "__len__") or len(data_shape) != 3 or data_shape[0] not in self._CHANNELS:
            raise OperatorError(
                f"{type(self).__name__}: data_shape must be (channels, height, width) with {self._CHANNELS} "
                f"channels, got {data_shape!r}"
            )

    def next_sample(self) -> tuple[Any, bytes]:
        """``(label, encoded image)`` of the next example, as MXNet's; ``StopIteration`` at the end.

        The label of a record is its header's, as MXNet gives it: a float when it is one value,
        else an array; a list's labels are arrays.  A subclass may override it (returning the same
        pair): the batches are then made of what it returns.
        """
        example = self._next_example()
        if example is None:
            raise StopIteration
        label = example[0]
        if self.imgrec is not None and self.imglist is None and label.size == 1:
            return float(label[0]), example[1]
        return label, example[1]

    def read_image(self, fname: str) -> bytes:
        """The encoded bytes of the image ``fname`` of the image list, under ``path_root``."""
        return open_for_read(os.path.join(self.path_root, fname))

    def imdecode(self, s: bytes) -> Any:
        """The decoded image (an HWC NDArray) of the encoded bytes ``s``; errors name the example."""
        return imdecode(s, self._flag, source=self._source)

    def check_valid_image(self, data: Any) -> None:
        """Raise RuntimeError for an image the batches must skip (MXNet's test: no row dimension)."""
        if len(data.shape) < 2:
            raise RuntimeError(f"Data shape is wrong: {tuple(data.shape)}")

    def augmentation_transform(self, data: Any) -> Any:
        """The image after every augmenter of ``auglist``."""
        for aug in self.auglist:
            data = aug(data)
        return data

    def postprocess_data(self, datum: Any) -> Any:
        """An augmented HWC image as one row of the batch: CHW, as MXNet's (the batch stacks and
        transposes every image in one operation unless a subclass overrides this)."""
        return datum.transpose(axes=(2, 0, 1)) if self.layout == "NCHW" else datum

    def _next_example(self) -> tuple[np.ndarray, Any, str] | None:
        """(label, encoded image, source) of the next example, or None at the end."""
        if type(self).next_sample is not ImageIter.next_sample:
            try:
                label, payload = self.next_sample()
            except StopIteration:
                return None
            return (
                np.asarray(label, np.float32).reshape(-1),
                payload,
                f"an example of {type(self).__name__}.next_sample()",
            )
        if self.seq is not None:
            if self.cur >= len(self.seq):
                return None
            key = self.seq[self.cur]
            self.cur += 1
            if self.imgrec is not None:
                source = f"record {key} of {self.path_imgrec}"
                header, payload = _unpack(self.imgrec.read_idx(key), source)  # type: ignore[attr-defined]
                return self._record_label(header, key, source), payload, source
            assert self.imglist is not None
            label, fname = self.imglist[key]
            payload = read_listed_image(self.read_image, fname, self._list_origins[key], type(self).__name__)
            return label, payload, f"file {os.path.join(self.path_root, fname)!r}"
        assert self.imgrec is not None
        raw = self.imgrec.read()
        if raw is None:
            return None
        source = f"record #{self.cur} of {self.path_imgrec}"
        header, payload = _unpack(raw, source)
        self.cur += 1
        return self._record_label(header, None, source), payload, source

    def _record_label(self, header: Any, key: Any, source: str) -> np.ndarray:
        """The label of a record read by ``key`` (None when read in file order): the image list's
        entry for its key when there is a list and a key (as MXNet's ImageIter), else its header's."""
        if self.imglist is None or key is None:
            return np.asarray(header.label, np.float32).reshape(-1)
        if key not in self.imglist:
            raise FormatError(f"ImageIter: {source} has no label in the image list (its keys: {len(self.imglist)})")
        return self.imglist[key][0]

    def _decode(self, payload: bytes, source: str) -> Any:
        self._source = source
        try:
            image = self.imdecode(payload)
            if self.skip_bad:
                image.wait_to_read()
            return image
        except (FormatError, EngineError) as err:
            if not self.skip_bad:
                raise
            warn_from_user_code(f"ImageIter: skipping {source}: {err}")
            return None

    def augment(self, image: Any, source: str) -> Any:
        image = self.augmentation_transform(image)
        c, h, w = self.data_shape
        if tuple(image.shape) != (h, w, c):
            raise ShapeError(
                f"ImageIter: {source} has shape {image.shape} after augmentation, expected {(h, w, c)}; "
                "add a resize or crop augmenter"
            )
        return image

    def _label_row(self, label: np.ndarray, source: str) -> np.ndarray:
        """``label`` as ``label_width`` values: as it is, or a single value repeated (as MXNet does)."""
        if label.size == self.label_width:
            return label
        if label.size == 1:
            return np.full(self.label_width, label[0], np.float32)
        raise FormatError(f"ImageIter: {source} has {label.size} label values, label_width is {self.label_width}")

    def _transform(self, image: Any, label: np.ndarray, source: str) -> tuple[Any, np.ndarray] | None:
        """The augmented image and its label row; subclasses may return None to skip the example."""
        return self.augment(image, source), self._label_row(label, source)

    def _label_batch(self, labels: list[np.ndarray]) -> np.ndarray:
        """The batch's label array, of ``provide_label``'s shape, from the examples' label rows."""
        return np.stack(labels).astype(np.float32).reshape(self._describe_label()[0].shape)

    def _read_examples(self, images: list[Any], labels: list[np.ndarray], count: int) -> None:
        """Append up to ``count`` more augmented examples and their label rows; fewer at the end."""
        target = len(images) + count
        while len(images) < target:
            sample = self._next_example()
            if sample is None:
                break
            label, payload, source = sample
            image = self._decode(payload, source)
            if image is None:
                continue
            try:
                self.check_valid_image(image)
            except RuntimeError as err:  # skipped, as MXNet's batches skip it
                warn_from_user_code(f"ImageIter: skipping {source}: {err}")
                continue
            example = self._transform(image, label, source)
            if example is None:
                continue
            images.append(example[0])
            labels.append(example[1])

    def _pad(self, images: list[Any], labels: list[np.ndarray], pad: int) -> None:
        """Fill a last batch with the epoch's first examples, as MXNet does (from the start
        again if the data is shorter than the padding; MXNet leaves those rows unset)."""
        filled = len(images)
        while len(images) < filled + pad:
            self._restart()
            before = len(images)
            self._read_examples(images, labels, filled + pad - len(images))
            if len(images) == before:  # nothing readable: repeat the batch's own examples
                for i in range(filled + pad - len(images)):
                    images.append(images[i % filled])
                    labels.append(labels[i % filled])
        self._exhausted = True

    def next(self) -> DataBatch:
        if self._exhausted:
            raise StopIteration
        images, labels = self._carried
        carried = len(images)
        self._carried = ([], [])
        self._read_examples(images, labels, self.batch_size - len(images))
        if not images:
            raise StopIteration
        pad = self.batch_size - len(images)
        if pad and self.last_batch_handle != "pad":
            if self.last_batch_handle == "roll_over":
                self._carried = (images, labels)
            raise StopIteration
        if pad:
            self._pad(images, labels, pad)
        if carried:
            # MXNet's ImageIter reports a rolled-over batch's pad as the examples the new epoch added
            pad = self.batch_size - carried
        shape = self._describe_data()[0].shape
        transpose = self.layout == "NCHW"
        if type(self).postprocess_data is not ImageIter.postprocess_data:  # a subclass's: one call an image
            images, transpose = [self.postprocess_data(image) for image in images], False
            if any(tuple(image.shape) != shape[1:] for image in images):
                got = sorted({tuple(image.shape) for image in images})
                raise ShapeError(
                    f"{type(self).__name__}.postprocess_data: gave images of shapes {got}, expected {shape[1:]}"
                )
        data = new_array(shape, np.float32, images[0].context)
        get_engine().push(
            _stack,
            ([im.data_array for im in images], data.data_array, transpose),
            [im.var for im in images],
            [data.var],
            "image_batch",
            data.context,
        )
        from .. import ndarray as nd

        label = nd.array(self._label_batch(labels))
        return DataBatch(
            [data], [label], pad=pad, provide_data=self._describe_data(), provide_label=self._describe_label()
        )
