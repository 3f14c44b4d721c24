"""The image lists of ``ImageIter``: a ``.lst`` file (``index<TAB>label(s)<TAB>path`` lines) or an
``imglist`` of ``[label(s)..., path]`` items, read into ``{index: (labels, path)}`` (and where each
entry came from: a listed image that does not exist is a damaged or stale line, so its error names
the line); and a ``.lst`` file read as ``ImageRecordIter``'s labels, ``{image id: labels}``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..arguments import given
from ..errors import FormatError, MissingFileError, OperatorError
from ..formats.fileio import open_for_read

__all__ = ["labels_by_image_id", "load_image_list", "label_values", "read_listed_image"]


def load_image_list(
    path: str | None, items: list | None, dtype: str
) -> tuple[dict[Any, tuple[np.ndarray, str]], dict[Any, str]]:
    """``{index: (labels, path)}`` from a ``.lst`` file or from ``imglist`` items ``[label(s)..., path]``,
    and ``{index: where its entry is}`` ("line 3 of 'train.lst'", "imglist item 2"); labels are read
    as ``dtype`` (see :func:`label_values`)."""
    result: dict[Any, tuple[np.ndarray, str]] = {}
    origins: dict[Any, str] = {}
    if given(path):
        try:
            text = open_for_read(path).decode("utf-8")
        except UnicodeDecodeError as error:
            raise FormatError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
        first_line: dict[int, int] = {}
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue  # blank lines, as the .idx reader skips them
            parts = line.strip().split("\t")
            if len(parts) < 3:
                raise FormatError(f"{path}:{lineno}: expected 'index<TAB>label(s)<TAB>path', got {line.strip()!r}")
            try:
                index, entry = int(parts[0]), (label_values(parts[1:-1], dtype), parts[-1])
            except ValueError as error:
                raise FormatError(
                    f"{path}:{lineno}: {line.strip()!r} needs an integer index and numeric labels ({error})"
                ) from None
            # a second line with an index would silently replace the first image (MXNet reads the
            # second one twice)
            if index in first_line:
                raise FormatError(
                    f"{path}:{lineno}: index {index} is already used on line {first_line[index]}; "
                    "each image needs its own index"
                )
            first_line[index], result[index] = lineno, entry
            origins[index] = f"line {lineno} of {path!r}"
    else:
        if items is not None and (isinstance(items, (str, bytes)) or not isinstance(items, Iterable)):
            raise OperatorError(f"ImageIter: imglist must be a list of [label(s)..., path] items, got {items!r}")
        for i, item in enumerate(items if given(items) else []):
            try:
                label = label_values(item[0] if len(item) == 2 else item[:-1], dtype).reshape(-1)
            except (TypeError, ValueError) as error:
                raise OperatorError(
                    f"ImageIter: imglist item {i} is {item!r}; expected [label(s)..., path] with numeric labels ({error})"
                ) from None
            result[i], origins[i] = (label, item[-1]), f"imglist item {i}"
    return result, origins


def read_listed_image(read: Callable[[str], bytes], name: str, origin: str, owner: str) -> bytes:
    """``read(name)``, the bytes of the image ``name`` that ``origin`` of an image list names; an image
    that does not exist is a MissingFileError naming the image, the list and the line (``origin``)."""
    try:
        return read(name)
    except MissingFileError as error:
        raise MissingFileError(
            error.errno, f"{owner}: {origin} names an image that does not exist", error.filename
        ) from error


def label_values(values: Any, dtype: str) -> np.ndarray:
    """Label values read as ``dtype`` (an int dtype truncates), held as float32."""
    return np.array(values, dtype=np.float64).astype(dtype).astype(np.float32)


def labels_by_image_id(name: str, path: str, label_width: int) -> dict[int, np.ndarray]:
    """``{image id: its first label_width labels}`` from a ``.lst`` file, as MXNet reads it for
    ``ImageRecordIter``'s ``path_imglist``; a line with fewer labels is a FormatError naming ``name``."""
    labels = {}
    for index, (values, _) in load_image_list(path, None, "float32")[0].items():
        if values.size < label_width:
            raise FormatError(
                f"{name}: {path} gives image {index} {values.size} label(s), label_width is {label_width}"
            )
        labels[index] = values[:label_width]
    return labels
