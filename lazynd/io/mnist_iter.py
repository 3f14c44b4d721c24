"""``MNISTIter``: MNIST (or Fashion-MNIST) straight from its IDX files."""

from __future__ import annotations

import logging
import os
from typing import Any

import numpy as np

from ..errors import DataError, DataTypeError
from ..log import warn_from_user_code
from ..ops.params import Param, parse_bool, parse_int
from .single_array_iter import SingleArrayIter

_LOG = logging.getLogger("lazynd.io")


def _load_pair(
    image: str | None, label: str | None, data_dir: Any, train: bool, dataset: str
) -> tuple[np.ndarray, np.ndarray]:
    from .. import datasets

    if (image is None) != (label is None):
        raise DataError(f"MNISTIter: give both image and label paths or neither, got image={image!r} label={label!r}")
    if image is None:
        return datasets.load_mnist(dataset, data_dir, train)
    paths = []
    for given in (image, label):
        try:
            path = os.fspath(given)  # type: ignore[arg-type]  # both set: checked above
        except TypeError:
            raise DataTypeError(f"MNISTIter: image and label must be file paths, got {given!r}") from None
        if data_dir is not None and not os.path.isabs(path):
            path = os.path.join(os.fspath(data_dir), path)
        if not os.path.exists(path) and os.path.exists(path + ".gz"):
            path += ".gz"
        if os.path.isdir(path):
            raise DataError(f"MNISTIter: {path!r} is a folder, not an IDX file")
        if not os.path.exists(path):
            raise DataError(f"MNISTIter: no IDX file at {path!r} (nor {path + '.gz'!r})")
        paths.append(path)
    return datasets.read_idx(paths[0]), datasets.read_idx(paths[1])


class MNISTIter(SingleArrayIter):
    """Batches of MNIST images scaled by 1/256, as MXNet's ``MNISTIter`` scales them, with their labels.

    Parameters
    ----------
    image, label : str, optional
        Paths of the IDX image and label files, gzipped or not (a missing
        ``.gz`` suffix is tolerated).  Leave both out to use
        ``lazynd.datasets.load_mnist`` (``$LAZYND_DATA_DIR`` or ``data_dir``).
    batch_size : int
        Only full batches are given (as by MXNet): the examples that do not fill one are left out.
    shuffle : bool
        Shuffle the images once, when they are loaded, in an order drawn from ``seed`` (as
        MXNet does): every epoch, and every pass after ``reset()``, sees the same order, so
        a prediction pass and a pass over the labels agree.
    flat : bool
        Give ``(batch, 784)`` instead of ``(batch, 1, 28, 28)``.
    input_shape, data_shape : tuple, optional
        Accepted and, as by MXNet 1.x's ``MNISTIter``, not used: ``flat`` alone decides the
        layout.  A shape that disagrees with it (``data_shape=(784,)`` without ``flat=True``)
        gets a warning, since the batches will not have it.
    silent : bool
        Without it, the iterator logs MXNet's line ``MNISTIter: load N images, shuffle=1,
        shape=(100,784)`` at INFO on the ``lazynd.io`` logger (MXNet writes it to its C++ log).
    prefetch_buffer, dtype :
        MXNet's other arguments, accepted; ``prefetch_buffer`` and ``dtype`` are ignored with a
        warning (wrap the iterator in ``PrefetchingIter`` to prefetch).
    seed : int
    data_dir : str, optional
        Folder for relative paths, or the dataset root when no path is given.
    train : bool
        Which split to load when no path is given.
    num_parts, part_index : int
        Use only part ``part_index`` of ``num_parts`` parts (one per worker): part ``i`` starts at
        example ``int(count / num_parts * i)``, as in MXNet, so every example is in one part.

    Examples
    --------
    >>> it = MNISTIter(batch_size=100, train=False)  # doctest: +SKIP
    >>> it.provide_data  # doctest: +SKIP
    [DataDesc[data,(100, 1, 28, 28),<class 'numpy.float32'>,NCHW]]

    As MXNet's ``MNISTIter``, ``getdata()`` and ``getlabel()`` give one NDArray each
    (batches still hold lists).
    """

    def __init__(
        self,
        image: str | None = None,
        label: str | None = None,
        batch_size: int = 128,
        shuffle: bool = True,
        flat: bool = False,
        seed: int = 0,
        data_dir: Any = None,
        train: bool = True,
        dataset: str = "mnist",
        num_parts: int = 1,
        part_index: int = 0,
        data_name: str = "data",
        label_name: str = "softmax_label",
        ctx: Any = None,
        input_shape: Any = None,
        data_shape: Any = None,
        silent: bool = False,
        **mxnet_options: Any,
    ) -> None:
        _warn_ignored(mxnet_options)
        # MXNet's C++ iterator reads its arguments as text too: batch_size="100", flat="True"
        batch_size, seed, num_parts, part_index = (
            Param(parse_int).parse("MNISTIter", name, value)
            for name, value in (
                ("batch_size", batch_size),
                ("seed", seed),
                ("num_parts", num_parts),
                ("part_index", part_index),
            )
        )
        shuffle, flat, silent = (
            Param(parse_bool).parse("MNISTIter", name, value)
            for name, value in (("shuffle", shuffle), ("flat", flat), ("silent", silent))
        )
        images, labels = _load_pair(image, label, data_dir, train, dataset)
        if images.ndim != 3 or labels.shape != images.shape[:1]:
            raise DataError(
                f"MNISTIter: expected images (N, rows, cols) and N labels, got {images.shape} and {labels.shape}"
            )
        if not 0 <= part_index < num_parts:
            raise DataError(f"MNISTIter: part_index must be in [0, {num_parts}), got {part_index}")
        start, stop = (int(len(images) / num_parts * i) for i in (part_index, part_index + 1))
        images, labels = images[start:stop], labels[start:stop]
        for name, shape in (("input_shape", input_shape), ("data_shape", data_shape)):
            if shape is not None:
                _warn_if_not_the_layout(name, shape, flat, images.shape[1:])
        if shuffle:
            order = np.random.default_rng(seed).permutation(len(images))
            images, labels = images[order], labels[order]
        if not silent:  # MXNet's lines, at INFO (its C++ log): who runs with INFO on sees them
            if flat:
                shape = f"({batch_size},{int(np.prod(images.shape[1:]))})"
            else:
                shape = "[" + ",".join(map(str, (batch_size, 1, *images.shape[1:]))) + "]"
            _LOG.info("MNISTIter: load %d images, shuffle=%d, shape=%s", len(images), shuffle, shape)
        # MXNet divides by 256, not 255: the brightest pixel is 255/256
        pixels = images.astype(np.float32) * np.float32(1.0 / 256.0)
        pixels = pixels.reshape(len(images), int(np.prod(images.shape[1:]))) if flat else pixels[:, None, :, :]
        super().__init__(
            pixels,
            labels.astype(np.float32),
            batch_size=batch_size,
            shuffle=False,
            # MXNet's MNISTIter gives only full batches: the examples left over are not read
            last_batch_handle="discard",
            data_name=data_name,
            label_name=label_name,
            # MXNet describes flat images with the default layout too
            layout="NCHW",
            ctx=ctx,
        )


# MXNet's MNISTIter arguments that change nothing here
_IGNORED = ("prefetch_buffer", "dtype")


def _warn_ignored(options: dict[str, Any]) -> None:
    unknown = sorted(set(options) - set(_IGNORED))
    if unknown:
        raise DataError(f"MNISTIter: unknown argument(s) {unknown}")
    if options:
        warn_from_user_code(f"MNISTIter: ignoring {sorted(options)} (MXNet options with no effect here)")


def _warn_if_not_the_layout(name: str, shape: Any, flat: bool, image_shape: tuple[int, ...]) -> None:
    """Warn when MXNet's ``input_shape``/``data_shape`` differs from the layout ``flat`` gives.

    MXNet's ``MNISTIter`` accepts these arguments and ignores them (only ``flat`` decides), so
    lazynd gives the same batches; the warning tells a user who expected the shape to count.
    """
    layout = (int(np.prod(image_shape)),) if flat else (1, *image_shape)
    try:
        given = tuple(int(d) for d in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    except (TypeError, ValueError):
        given = None
    if given != layout:
        warn_from_user_code(
            f"MNISTIter: {name}={shape!r} is ignored, as by MXNet: flat={flat} decides the layout, "
            f"giving images of shape {layout}"
        )
