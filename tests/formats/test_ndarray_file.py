"""Tests for lazynd.formats.ndarray_file against files written by MXNet itself."""

from __future__ import annotations

import json
import os
import struct
import uuid
from pathlib import Path

import numpy as np
import pytest

from lazynd.errors import FormatError
from lazynd.formats import ndarray_file as fmt

# Files written by MXNet 1.9.1 (hex), for cases the shared data set does not cover.
MXNET_BOOL_LIST = bytes.fromhex(  # nd.save([nd.array([1, 0], dtype='bool')])
    "120100000000000000000000000000000100000000000000c9fa93f90000000001000000"
    "020000000000000001000000000000000700000001000000000000000000"
)
MXNET_PINNED_LIST = bytes.fromhex(  # nd.save([nd.ones((1,), ctx=mx.cpu_pinned(0))])
    "120100000000000000000000000000000100000000000000c9fa93f90000000001000000"
    "01000000000000000300000000000000000000000000803f0000000000000000"
)
MXNET_NP_SCALAR_LIST = bytes.fromhex(  # under np_shape(True): a 0-d float32 3.0 (V3)
    "120100000000000000000000000000000100000000000000cafa93f90000000000000000"
    "010000000000000000000000000040400000000000000000"
)
MXNET_NP_ZERO_SIZE_LIST = bytes.fromhex(  # under np_shape(True): zeros((2, 0)) (V3)
    "120100000000000000000000000000000100000000000000cafa93f90000000002000000"
    "020000000000000000000000000000000100000000000000000000000000000000000000"
)
MXNET_ROW_SPARSE_LIST = bytes.fromhex(  # nd.ones((2, 2)).tostype('row_sparse')
    "120100000000000000000000000000000100000000000000c9fa93f90100000002000000"
    "000000000000000002000000000000000200000002000000000000000200000000000000"
    "010000000000000000000000060000000100000002000000000000000000803f0000803f"
    "0000803f0000803f000000000000000001000000000000000000000000000000"
)
NO_NAMES = struct.pack("<Q", 0)


def _file(records: list[bytes], tail: bytes = NO_NAMES) -> bytes:
    return struct.pack("<QQQ", 0x112, 0, len(records)) + b"".join(records) + tail


def _v2_header(shape: tuple[int, ...], flag: int = 0, context: tuple[int, int] = (1, 0)) -> bytes:
    dims = struct.pack(f"<{len(shape)}q", *shape)
    return struct.pack("<IiI", fmt.V2_MAGIC, 0, len(shape)) + dims + struct.pack("<iii", *context, flag)


def _v2_float32(values: list[float]) -> bytes:
    return _v2_header((len(values),)) + np.array(values, "<f4").tobytes()


@pytest.fixture(scope="module")
def mxnet_dir() -> Path:
    root = os.environ.get("LAZYND_DATA_DIR")
    if not root:
        pytest.skip("LAZYND_DATA_DIR is not set; it points at the shared data (../shared/data)")
    directory = Path(root) / "mxnet"
    if not directory.is_dir():
        pytest.skip(f"{directory} does not exist; LAZYND_DATA_DIR must hold the mxnet/ files")
    return directory


@pytest.fixture(scope="module")
def expected_dtypes(mxnet_dir) -> dict:
    return json.loads((mxnet_dir / "mxnet191_dtypes.json").read_text())


def _expected_record(entry: dict) -> fmt.ArrayRecord:
    values = np.array(entry["values"], dtype=entry["dtype"]).reshape(entry["shape"])
    return fmt.ArrayRecord(values)


# --- real MXNet files ------------------------------------------------------


def test_legacy_file_holds_six_float32_aranges_on_cpu0(mxnet_dir):
    records = fmt.load_arrays(mxnet_dir / "legacy_ndarray.v0")
    assert isinstance(records, list) and len(records) == 6
    for record in records:
        assert record.array.dtype == np.float32
        np.testing.assert_array_equal(record.array, np.arange(128, dtype=np.float32))
        assert (record.dev_type, record.dev_id) == (1, 0)


def test_legacy_file_reencoded_as_v2_keeps_its_values(mxnet_dir):
    records = fmt.load_arrays(mxnet_dir / "legacy_ndarray.v0")
    buf = fmt.encode(records)
    assert struct.unpack_from("<I", buf, 24)[0] == fmt.V2_MAGIC
    for record in fmt.decode(buf):
        np.testing.assert_array_equal(record.array, np.arange(128, dtype=np.float32))


def test_dtypes_file_is_a_dict_in_file_order(mxnet_dir, expected_dtypes):
    records = fmt.load_arrays(mxnet_dir / "mxnet191_dtypes.params")
    assert isinstance(records, dict)
    assert list(records) == list(expected_dtypes)


@pytest.mark.parametrize("name", ["f32", "f64", "f16", "u8", "i32", "i64", "one"])
def test_dtypes_file_array_matches_expected(mxnet_dir, expected_dtypes, name):
    record = fmt.load_arrays(mxnet_dir / "mxnet191_dtypes.params")[name]
    entry = expected_dtypes[name]
    assert record.array.dtype == np.dtype(entry["dtype"])
    assert record.array.shape == tuple(entry["shape"])
    np.testing.assert_array_equal(record.array.ravel(), np.array(entry["values"], entry["dtype"]))


def test_list_file_is_a_list_of_two_arrays(mxnet_dir):
    records = fmt.load_arrays(mxnet_dir / "mxnet191_list.params")
    assert isinstance(records, list) and len(records) == 2
    np.testing.assert_array_equal(records[0].array, np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    np.testing.assert_array_equal(records[1].array, np.array([-5, 0, 2**30], np.int32))


def test_encoding_expected_dtypes_reproduces_mxnet_bytes(mxnet_dir, expected_dtypes):
    data = {name: _expected_record(entry) for name, entry in expected_dtypes.items()}
    assert fmt.encode(data) == (mxnet_dir / "mxnet191_dtypes.params").read_bytes()


def test_encoding_list_reproduces_mxnet_bytes(mxnet_dir):
    data = [
        np.arange(24, dtype=np.float32).reshape(2, 3, 4),
        np.array([-5, 0, 2**30], np.int32),
    ]
    assert fmt.encode(data) == (mxnet_dir / "mxnet191_list.params").read_bytes()


def test_saved_file_equals_mxnet_file(mxnet_dir, tmp_path):
    records = fmt.load_arrays(mxnet_dir / "mxnet191_dtypes.params")
    fmt.save_arrays(tmp_path / "copy.params", records)
    assert (tmp_path / "copy.params").read_bytes() == (mxnet_dir / "mxnet191_dtypes.params").read_bytes()


def test_bool_array_reproduces_mxnet_bytes():
    assert fmt.decode(MXNET_BOOL_LIST)[0].array.tolist() == [True, False]
    assert fmt.encode([np.array([True, False])]) == MXNET_BOOL_LIST


def test_context_is_kept_through_a_round_trip():
    record = fmt.decode(MXNET_PINNED_LIST)[0]
    assert (record.dev_type, record.dev_id) == (3, 0)
    assert fmt.encode([record]) == MXNET_PINNED_LIST


def test_v3_records_from_numpy_shape_mode_are_read():
    scalar = fmt.decode(MXNET_NP_SCALAR_LIST)[0].array
    assert scalar.shape == () and scalar == np.float32(3.0)
    assert fmt.decode(MXNET_NP_ZERO_SIZE_LIST)[0].array.shape == (2, 0)


def test_v1_record_is_read():
    record = struct.pack("<IIq", fmt.V1_MAGIC, 1, 2) + struct.pack("<iii", 1, 0, 0)
    record += np.array([1.5, 2.5], "<f4").tobytes()
    np.testing.assert_array_equal(fmt.decode(_file([record]))[0].array, [1.5, 2.5])


@pytest.mark.parametrize(
    "record",
    [
        struct.pack("<I", 0),
        struct.pack("<II", fmt.V1_MAGIC, 0),
        struct.pack("<IiI", fmt.V2_MAGIC, -1, 0),  # undefined storage: a dense V2 record of ndim 0 is 0-d
        struct.pack("<Iii", fmt.V3_MAGIC, 0, -1),
    ],
    ids=["legacy", "v1", "v2", "v3"],
)
def test_empty_shape_record_has_no_data_and_reads_as_none(record):
    records = fmt.decode(_file([record, _v2_float32([7.0])]))
    assert records[0].array is None
    assert records[1].array.tolist() == [7.0]


def test_none_array_is_written_as_an_empty_v2_shape_of_undefined_storage():
    assert fmt.encode([fmt.ArrayRecord(None)]) == _file([struct.pack("<IiI", fmt.V2_MAGIC, -1, 0)])


# --- writing ---------------------------------------------------------------


def test_round_trip_through_a_file_keeps_names_dtypes_and_shapes(tmp_path):
    data = {
        "arg:w": np.arange(12, dtype=np.float64).reshape(3, 4),
        "aux:ß": np.array([[1, -2]], np.int8),
        "empty": np.zeros((2, 0), np.float16),
    }
    fmt.save_arrays(tmp_path / "x.params", data)
    loaded = fmt.load_arrays(tmp_path / "x.params")
    assert list(loaded) == list(data)
    for name, array in data.items():
        assert loaded[name].array.dtype == array.dtype
        np.testing.assert_array_equal(loaded[name].array, array)


def test_round_trip_through_a_memory_url():
    pytest.importorskip("fsspec")
    uri = f"memory://lazynd-tests/{uuid.uuid4().hex}/x.params"
    fmt.save_arrays(uri, [np.arange(5, dtype=np.int64)])
    np.testing.assert_array_equal(fmt.load_arrays(uri)[0].array, np.arange(5))


def test_non_contiguous_and_big_endian_arrays_are_written_c_order_little_endian():
    base = np.arange(12, dtype=">i4").reshape(3, 4)
    view = base[:, ::2].T
    assert fmt.encode([view]) == fmt.encode([np.ascontiguousarray(view, dtype="<i4")])
    np.testing.assert_array_equal(fmt.decode(fmt.encode([view]))[0].array, view)


def test_decoded_arrays_own_aligned_writeable_memory():
    buf = bytearray(fmt.encode([np.arange(3, dtype=np.float64)]))
    array = fmt.decode(buf)[0].array
    assert array.flags.owndata or array.base.flags.owndata
    assert array.flags.aligned and array.flags.writeable
    buf[-16:] = bytes(16)
    assert array.tolist() == [0.0, 1.0, 2.0]


def test_empty_list_and_empty_dict_both_read_back_as_empty_list():
    assert fmt.decode(fmt.encode([])) == []
    assert fmt.decode(fmt.encode({})) == []


def test_zero_dimensional_array_is_refused():
    with pytest.raises(FormatError, match=r"array 'x' is 0-d.*reshape it to \(1,\)"):
        fmt.encode({"x": np.array(1.0, np.float32)})


@pytest.mark.parametrize("dtype", ["complex64", "int16", "uint32", "U3"])
def test_dtype_mxnet_lacks_is_refused(dtype):
    with pytest.raises(FormatError, match=f"index 0 has dtype {np.dtype(dtype)}"):
        fmt.encode([np.zeros(2, dtype)])


def test_invalid_context_is_refused():
    with pytest.raises(FormatError, match="dev_type 9"):
        fmt.encode([fmt.ArrayRecord(np.zeros(1, np.float32), dev_type=9)])


def test_non_str_name_is_refused():
    with pytest.raises(TypeError, match="names must be str"):
        fmt.encode({1: np.zeros(1, np.float32)})


def test_data_that_is_not_a_list_or_dict_is_refused():
    with pytest.raises(TypeError, match="list or dict"):
        fmt.encode(np.zeros(3, np.float32))


def test_array_record_refuses_non_numpy_array():
    with pytest.raises(TypeError, match="numpy.ndarray or None, got list"):
        fmt.ArrayRecord([1.0, 2.0])


# --- corrupted input ---------------------------------------------------------


def test_error_names_the_file_and_the_offset(tmp_path):
    path = tmp_path / "cut.params"
    path.write_bytes(_file([_v2_float32([1.0, 2.0])])[:-12])
    with pytest.raises(FormatError, match=rf"{path}: truncated: array 0 data .* \(at byte \d+ of \d+\)"):
        fmt.load_arrays(path)


def test_wrong_list_magic_is_refused():
    with pytest.raises(FormatError, match="not an MXNet NDArray file: magic is 0x113"):
        fmt.decode(struct.pack("<QQQQ", 0x113, 0, 0, 0))


def test_absurd_array_count_is_refused_before_reading_records():
    buf = struct.pack("<QQQ", 0x112, 0, 2**63) + NO_NAMES
    with pytest.raises(FormatError, match="claims 9223372036854775808 arrays"):
        fmt.decode(buf)


def test_huge_shape_is_refused_without_allocating():
    record = _v2_header((2**40, 2**40))
    with pytest.raises(FormatError, match=r"shape \(1099511627776, 1099511627776\), larger than"):
        fmt.decode(_file([record]))


def test_zero_size_shape_numpy_cannot_hold_is_refused():
    with pytest.raises(FormatError, match="NumPy cannot represent"):
        fmt.decode(_file([_v2_header((0, 2**62, 2**62))]))


def test_negative_dimension_is_refused():
    with pytest.raises(FormatError, match=r"negative dimension in shape \(2, -1\)"):
        fmt.decode(_file([_v2_header((2, -1))]))


def test_unknown_record_magic_is_refused():
    with pytest.raises(FormatError, match="0xf993facb is neither a record magic"):
        fmt.decode(_file([struct.pack("<I", 0xF993FACB) + bytes(32)]))


def test_v2_ndim_beyond_numpy_limit_is_refused():
    with pytest.raises(FormatError, match="ndim 65; expected 0 to 64"):
        fmt.decode(_file([struct.pack("<IiI", fmt.V2_MAGIC, 0, 65) + bytes(65 * 8)]))


def test_unknown_dtype_flag_is_refused():
    with pytest.raises(FormatError, match="unknown dtype flag 42; known: 0 float32"):
        fmt.decode(_file([_v2_header((1,), flag=42) + bytes(8)]))


def test_bfloat16_flag_says_numpy_lacks_it():
    with pytest.raises(FormatError, match="bfloat16 has no NumPy dtype"):
        fmt.decode(_file([_v2_header((1,), flag=12) + bytes(2)]))


def test_invalid_stored_context_is_refused():
    with pytest.raises(FormatError, match="invalid context .dev_type 4, dev_id 0."):
        fmt.decode(_file([_v2_header((1,), context=(4, 0)) + bytes(4)]))


def test_sparse_storage_is_refused_by_name():
    with pytest.raises(FormatError, match="row_sparse storage; only dense arrays"):
        fmt.decode(MXNET_ROW_SPARSE_LIST)


def test_bool_bytes_other_than_zero_and_one_are_refused():
    corrupted = MXNET_BOOL_LIST[:-9] + b"\x02" + MXNET_BOOL_LIST[-8:]
    with pytest.raises(FormatError, match="boolean but holds bytes other than 0 and 1"):
        fmt.decode(corrupted)


def test_name_count_that_differs_from_array_count_is_refused():
    names = struct.pack("<QQ", 2, 1) + b"a" + struct.pack("<Q", 1) + b"b"
    with pytest.raises(FormatError, match="1 arrays but 2 names"):
        fmt.decode(_file([_v2_float32([1.0])], tail=names))


def test_duplicate_names_are_refused():
    names = struct.pack("<QQ", 2, 1) + b"w" + struct.pack("<Q", 1) + b"w"
    with pytest.raises(FormatError, match=r"duplicate array names \['w'\]"):
        fmt.decode(_file([_v2_float32([1.0]), _v2_float32([2.0])], tail=names))


def test_name_that_is_not_utf8_is_refused():
    names = struct.pack("<QQ", 1, 2) + b"\xff\xfe"
    with pytest.raises(FormatError, match="name 0 is not valid UTF-8"):
        fmt.decode(_file([_v2_float32([1.0])], tail=names))


def test_trailing_garbage_is_refused():
    with pytest.raises(FormatError, match="3 bytes of unexpected trailing data"):
        fmt.decode(_file([_v2_float32([1.0])]) + b"xyz")


@pytest.mark.parametrize("name", ["legacy_ndarray.v0", "mxnet191_dtypes.params", "mxnet191_list.params"])
def test_every_truncation_of_a_real_file_is_refused(mxnet_dir, name):
    buf = (mxnet_dir / name).read_bytes()
    for length in range(len(buf)):
        with pytest.raises(FormatError):
            fmt.decode(buf[:length], source=f"{name}[:{length}]")


@pytest.mark.parametrize("name", ["legacy_ndarray.v0", "mxnet191_dtypes.params"])
def test_random_byte_flips_decode_or_raise_format_error(mxnet_dir, name):
    original = (mxnet_dir / name).read_bytes()
    rng = np.random.default_rng(20240611)
    refused = 0
    for _ in range(1500):
        corrupted = bytearray(original)
        for position in rng.integers(0, len(original), size=rng.integers(1, 4)):
            corrupted[position] = int(rng.integers(0, 256))
        try:
            fmt.decode(corrupted)
        except FormatError:
            refused += 1
    # Flips in headers must be caught; flips in the data bytes are legitimately silent.
    assert 0 < refused < 1500


def test_random_garbage_after_a_valid_header_raises_format_error():
    rng = np.random.default_rng(7)
    for _ in range(500):
        count = int(rng.integers(1, 4))
        garbage = rng.integers(0, 256, size=int(rng.integers(0, 200)), dtype=np.uint8).tobytes()
        with pytest.raises(FormatError):
            fmt.decode(struct.pack("<QQQ", 0x112, 0, count) + garbage)
