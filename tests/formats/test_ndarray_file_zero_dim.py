"""0-d arrays and MXNet's NumPy-shape layout (V3 records) in NDArray files, against bytes MXNet 1.9.1 wrote.

MXNet 1.9.1 saves a 0-d array outside its NumPy-shape mode as a dense V2 record of ndim 0 followed by
its context, dtype and value (and cannot load that file itself: it takes the empty shape for a none
array); under ``np_shape(True)`` it writes every record as V3, which keeps 0-d arrays and which it loads
only under ``np_shape(True)``.
"""

from __future__ import annotations

import numpy as np
import pytest

import lazynd as mx
from lazynd.errors import FormatError
from lazynd.formats import ndarray_file as fmt

# MXNet 1.9.1: nd.save(f, {'s': nd.array(np.float64(2.5), dtype='float64'), 'v': nd.ones((2,))}), outside
# np_shape: 's' is a dense V2 record of ndim 0, its context, flag 1 (float64) and 2.5.
MXNET_V2_SCALAR_DICT = bytes.fromhex(
    "120100000000000000000000000000000200000000000000c9fa93f900000000000000000100000000000000010000000000"
    "000000000440c9fa93f9000000000100000002000000000000000100000000000000000000000000803f0000803f02000000"
    "00000000010000000000000073010000000000000076"
)
# The same call under mx.util.np_shape(True): V3 records (magic 0xF993FACA), otherwise the same bytes.
MXNET_V3_SCALAR_DICT = bytes.fromhex(
    "120100000000000000000000000000000200000000000000cafa93f900000000000000000100000000000000010000000000"
    "000000000440cafa93f9000000000100000002000000000000000100000000000000000000000000803f0000803f02000000"
    "00000000010000000000000073010000000000000076"
)


def _scalar_dict() -> dict[str, np.ndarray]:
    return {"s": np.array(2.5, np.float64), "v": np.ones(2, np.float32)}


def test_mxnet_v2_zero_dimensional_record_is_read_with_its_value():
    records = fmt.decode(MXNET_V2_SCALAR_DICT)
    assert list(records) == ["s", "v"]
    assert records["s"].array.shape == () and records["s"].array.dtype == np.float64
    assert records["s"].array == 2.5
    assert records["v"].array.tolist() == [1.0, 1.0]


def test_nd_load_gives_the_zero_dimensional_array(tmp_path):
    path = tmp_path / "scalar.params"
    path.write_bytes(MXNET_V2_SCALAR_DICT)
    loaded = mx.nd.load(str(path))
    assert loaded["s"].shape == () and loaded["s"].asscalar() == 2.5


def test_numpy_shape_layout_is_mxnets_byte_for_byte():
    assert fmt.encode(_scalar_dict(), np_shape=True) == MXNET_V3_SCALAR_DICT
    records = fmt.decode(fmt.encode(_scalar_dict(), np_shape=True))
    assert records["s"].array.shape == () and records["s"].array == 2.5


def test_nd_save_under_np_shape_writes_mxnets_numpy_shape_file(tmp_path):
    data = {name: mx.nd.array(value, dtype=value.dtype) for name, value in _scalar_dict().items()}
    with mx.np_shape():
        mx.nd.save(str(tmp_path / "np.params"), data)
    assert (tmp_path / "np.params").read_bytes() == MXNET_V3_SCALAR_DICT
    mx.nd.save(str(tmp_path / "legacy.params"), {"v": data["v"]})  # outside it: V2, as MXNet
    assert (tmp_path / "legacy.params").read_bytes()[24:28] == bytes.fromhex("c9fa93f9")


def test_zero_dimensional_array_outside_np_shape_is_refused_naming_the_way_out(tmp_path):
    with pytest.raises(FormatError, match=r"array 's' is 0-d.*mx\.np_shape\(\).*reshape it to \(1,\)"):
        mx.nd.save(str(tmp_path / "x.params"), {"s": mx.nd.array(np.float32(1.0))})
    assert not (tmp_path / "x.params").exists()


def test_none_array_in_numpy_shape_layout_round_trips():
    buf = fmt.encode([fmt.ArrayRecord(None), np.ones(1, np.float32)], np_shape=True)
    records = fmt.decode(buf)
    assert records[0].array is None and records[1].array.tolist() == [1.0]
