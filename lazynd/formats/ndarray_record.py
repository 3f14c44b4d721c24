"""One array record of MXNet's NDArray format: the record type and its bytes, read and written.

Array records come in four versions.  We write V2, or V3 as MXNet does in its NumPy-shape mode; we
read them all:

=========  ==============  =====================================================
version    magic (uint32)  after the magic
=========  ==============  =====================================================
legacy     none            uint32 ndim, uint32 dims (the magic slot is the ndim)
V1         0xF993FAC8      uint32 ndim, int64 dims
V2         0xF993FAC9      int32 storage type (0 = dense), uint32 ndim, int64 dims
V3         0xF993FACA      as V2 but int32 ndim; MXNet's NumPy-shape mode
=========  ==============  =====================================================

A record without a shape ends there: it is an empty ("none") array, read as
``ArrayRecord(None)``.  That is ndim 0 in the legacy and V1 records, ndim -1 in V3, and in V2 ndim 0
with storage type -1 (undefined: MXNet 1.9.1 cannot save a none array at all).  A dense V2 record of
ndim 0 is a 0-d array with its data: MXNet 1.9.1 writes one for a 0-d array outside its NumPy-shape
mode (and cannot read it back, taking it for a none array).  Otherwise follow int32 dev_type, int32
dev_id (the context it was saved from), int32 dtype flag and the raw C-order data, all little-endian.

Part of :mod:`lazynd.formats.ndarray_file`, which hands these names on and frames the
records into a file.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import FormatError
from .fileio import BytesLike

V1_MAGIC = 0xF993FAC8
V2_MAGIC = 0xF993FAC9
V3_MAGIC = 0xF993FACA

DENSE_STORAGE = 0
UNDEFINED_STORAGE = -1
_SPARSE_STORAGE_NAMES = {1: "row_sparse", 2: "csr"}

# mshadow's type flags, as MXNet 1.9.1 knows them (12 is bfloat16: no NumPy dtype).
FLAG_TO_DTYPE: dict[int, np.dtype] = {
    0: np.dtype(np.float32),
    1: np.dtype(np.float64),
    2: np.dtype(np.float16),
    3: np.dtype(np.uint8),
    4: np.dtype(np.int32),
    5: np.dtype(np.int8),
    6: np.dtype(np.int64),
    7: np.dtype(np.bool_),
}
DTYPE_TO_FLAG: dict[np.dtype, int] = {dtype: flag for flag, dtype in FLAG_TO_DTYPE.items()}

# MXNet's device types: cpu, gpu, cpu_pinned, cpu_shared.
KNOWN_DEV_TYPES = frozenset({1, 2, 3, 5})
MAX_NDIM = 64  # NumPy's limit; MXNet never writes more

_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_CONTEXT_AND_FLAG = struct.Struct("<iii")


@dataclass
class ArrayRecord:
    """One array of an NDArray file and the context it was saved from.

    Attributes
    ----------
    array : numpy.ndarray or None
        The data; None for MXNet's empty ("none") array, which has no shape.
    dev_type : int
        MXNet device type: 1 cpu, 2 gpu, 3 cpu_pinned, 5 cpu_shared.
    dev_id : int
        Device number.
    """

    array: np.ndarray | None
    dev_type: int = 1
    dev_id: int = 0

    def __post_init__(self) -> None:
        if self.array is not None and not isinstance(self.array, np.ndarray):
            raise TypeError(f"ArrayRecord.array must be a numpy.ndarray or None, got {type(self.array).__name__}")


class ByteReader:
    """A cursor over the file's bytes that refuses to read past their end."""

    def __init__(self, view: memoryview, source: str) -> None:
        self.view = view
        self.source = source
        self.position = 0

    @property
    def remaining(self) -> int:
        return len(self.view) - self.position

    def error(self, message: str, position: int | None = None) -> FormatError:
        at = self.position if position is None else position
        return FormatError(f"{self.source}: {message} (at byte {at} of {len(self.view)})")

    def take(self, size: int, what: str) -> memoryview:
        if size > self.remaining:
            raise self.error(f"truncated: {what} needs {size} bytes, only {self.remaining} left")
        chunk = self.view[self.position : self.position + size]
        self.position += size
        return chunk

    def unpack(self, layout: struct.Struct, what: str) -> tuple[Any, ...]:
        return layout.unpack(self.take(layout.size, what))


def read_record(reader: ByteReader, index: int) -> ArrayRecord:
    start = reader.position
    what = f"array {index}"
    (first,) = reader.unpack(_U32, f"{what} magic")
    if first in (V2_MAGIC, V3_MAGIC):
        (storage,) = reader.unpack(_I32, f"{what} storage type")
        if storage in _SPARSE_STORAGE_NAMES:
            raise reader.error(
                f"{what} has {_SPARSE_STORAGE_NAMES[storage]} storage; only dense arrays are supported",
                start,
            )
        if storage not in (DENSE_STORAGE, UNDEFINED_STORAGE):
            raise reader.error(f"{what} has unknown storage type {storage}", start)
        ndim_layout = _I32 if first == V3_MAGIC else _U32
        (ndim,) = reader.unpack(ndim_layout, f"{what} ndim")
        if (first == V3_MAGIC and ndim == -1) or (storage == UNDEFINED_STORAGE and ndim == 0):
            return ArrayRecord(None)
        shape = _read_dims(reader, ndim, "<q", what)
        if storage == UNDEFINED_STORAGE:
            raise reader.error(f"{what} has undefined storage but shape {shape}", start)
    elif first == V1_MAGIC:
        (ndim,) = reader.unpack(_U32, f"{what} ndim")
        if ndim == 0:
            return ArrayRecord(None)
        shape = _read_dims(reader, ndim, "<q", what)
    else:
        if first > MAX_NDIM:
            raise reader.error(
                f"{what}: {first:#x} is neither a record magic "
                f"({V1_MAGIC:#x}, {V2_MAGIC:#x}, {V3_MAGIC:#x}) nor a legacy ndim (at most {MAX_NDIM})",
                start,
            )
        if first == 0:
            return ArrayRecord(None)
        shape = _read_dims(reader, first, "<u4", what)

    dev_type, dev_id, flag = reader.unpack(_CONTEXT_AND_FLAG, f"{what} context and dtype")
    if dev_type not in KNOWN_DEV_TYPES or dev_id < 0:
        raise reader.error(
            f"{what} has an invalid context (dev_type {dev_type}, dev_id {dev_id}); "
            f"expected dev_type in {sorted(KNOWN_DEV_TYPES)} and dev_id >= 0"
        )
    dtype = FLAG_TO_DTYPE.get(flag)
    if dtype is None:
        known = ", ".join(f"{f} {d.name}" for f, d in FLAG_TO_DTYPE.items())
        extra = " (bfloat16 has no NumPy dtype)" if flag == 12 else ""
        raise reader.error(f"{what} has unknown dtype flag {flag}{extra}; known: {known}")
    size = math.prod(shape)
    raw = reader.take(size * dtype.itemsize, f"{what} data of shape {shape} {dtype.name}")
    # One copy: out of the file buffer into aligned memory the array owns.
    flat = np.frombuffer(raw, dtype=dtype.newbyteorder("<"), count=size).astype(dtype)
    try:
        array = flat.reshape(shape)
    except ValueError as error:  # a zero-size shape whose other dims overflow
        raise reader.error(f"{what} has shape {shape}, which NumPy cannot represent") from error
    if dtype == np.bool_ and size and np.frombuffer(raw, dtype=np.uint8).max() > 1:
        raise reader.error(f"{what} is boolean but holds bytes other than 0 and 1")
    return ArrayRecord(array, dev_type, dev_id)


def _read_dims(reader: ByteReader, ndim: int, dim_format: str, what: str) -> tuple[int, ...]:
    if ndim < 0 or ndim > MAX_NDIM:
        raise reader.error(f"{what} has ndim {ndim}; expected 0 to {MAX_NDIM}")
    item = np.dtype(dim_format)
    raw = reader.take(ndim * item.itemsize, f"{what} shape of {ndim} dims")
    shape = tuple(int(dim) for dim in np.frombuffer(raw, dtype=item))
    if any(dim < 0 for dim in shape):
        raise reader.error(f"{what} has a negative dimension in shape {shape}")
    # Compare the data size with what is left before anything is allocated.
    if math.prod(shape) > reader.remaining:
        raise reader.error(f"{what} has shape {shape}, larger than the {reader.remaining} bytes left")
    return shape


def encode_record(label: str, item: ArrayRecord | np.ndarray, np_shape: bool = False) -> list[BytesLike]:
    """The record of one array: V2, or with ``np_shape`` V3 (what MXNet writes in its NumPy-shape mode,
    and the only record that keeps a 0-d array which MXNet reads back)."""
    record = item if isinstance(item, ArrayRecord) else ArrayRecord(item)
    array = record.array
    if array is None:
        if np_shape:
            return [struct.pack("<Iii", V3_MAGIC, UNDEFINED_STORAGE, -1)]
        return [struct.pack("<IiI", V2_MAGIC, UNDEFINED_STORAGE, 0)]
    if array.ndim == 0 and not np_shape:
        raise FormatError(
            f"array {label} is 0-d; outside its NumPy-shape mode MXNet reads an empty shape as an empty "
            "array and drops the value: save it under mx.np_shape() (MXNet loads that file under "
            "np_shape(True)) or reshape it to (1,)"
        )
    flag = DTYPE_TO_FLAG.get(array.dtype.newbyteorder("="))
    if flag is None:
        supported = ", ".join(dtype.name for dtype in FLAG_TO_DTYPE.values())
        raise FormatError(f"array {label} has dtype {array.dtype}, which MXNet cannot store; supported: {supported}")
    if record.dev_type not in KNOWN_DEV_TYPES or not 0 <= record.dev_id < 2**31:
        raise FormatError(
            f"array {label} has an invalid context (dev_type {record.dev_type}, dev_id {record.dev_id}); "
            f"expected dev_type in {sorted(KNOWN_DEV_TYPES)} and 0 <= dev_id < 2**31"
        )
    little = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
    header = struct.pack(
        f"<IiI{array.ndim}qiii",
        V3_MAGIC if np_shape else V2_MAGIC,
        DENSE_STORAGE,
        array.ndim,
        *array.shape,
        record.dev_type,
        record.dev_id,
        flag,
    )
    if little.size == 0:
        return [header]
    return [header, little.data.cast("B")]
