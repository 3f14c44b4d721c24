"""RecordIO: byte compatibility with MXNet's files, indexing, errors, image records."""

from __future__ import annotations

import doctest
import gzip
import json
import os
import pickle
import random
import struct
from pathlib import Path

import numpy as np
import pytest

from lazynd import recordio
from lazynd.errors import FormatError, OperatorError
from lazynd.formats import recordio_file, recordio_indexed, recordio_pack

MAGIC = struct.pack("<I", 0xCED7230A)


@pytest.fixture
def mxnet_dir() -> Path:
    root = os.environ.get("LAZYND_DATA_DIR")
    if not root:
        pytest.skip("LAZYND_DATA_DIR is not set: no real MXNet files to test against")
    return Path(root) / "mxnet"


@pytest.fixture
def mnist50(mxnet_dir: Path):
    reader = recordio.MXIndexedRecordIO(mxnet_dir / "mnist50.idx", mxnet_dir / "mnist50.rec", "r")
    yield reader
    reader.close()


def write_records(path: Path, payloads: list[bytes]) -> None:
    with recordio.MXRecordIO(path, "w") as writer:
        for payload in payloads:
            writer.write(payload)


def read_records(path: Path) -> list[bytes]:
    with recordio.MXRecordIO(path, "r") as reader:
        return list(reader)


# --- MXNet's own files ------------------------------------------------------


def test_mxnet_magic_payloads_file_reads_back_as_its_payloads(mxnet_dir: Path) -> None:
    expected = json.loads((mxnet_dir / "magic_payloads.json").read_text())
    records = read_records(mxnet_dir / "magic_payloads.rec")
    assert [r.hex() for r in records] == expected


def test_writing_magic_payloads_gives_the_bytes_mxnet_wrote(mxnet_dir: Path, tmp_path: Path) -> None:
    payloads = json.loads((mxnet_dir / "magic_payloads.json").read_text())
    write_records(tmp_path / "out.rec", [bytes.fromhex(p) for p in payloads])
    expected = (mxnet_dir / "magic_payloads.rec").read_bytes()
    assert (tmp_path / "out.rec").read_bytes() == expected


def test_mnist50_headers_carry_mxnet_ids_and_labels(mnist50) -> None:
    headers = [recordio.unpack(mnist50.read_idx(key))[0] for key in mnist50.keys]
    assert mnist50.keys == list(range(50))
    assert [(h.flag, h.label, h.id, h.id2) for h in headers] == [(0, float(i % 10), i, 0) for i in range(50)]


def test_mnist50_images_decode_to_the_mnist_test_digits(mnist50, mxnet_dir: Path) -> None:
    raw = gzip.decompress((mxnet_dir.parent / "mnist/t10k-images-idx3-ubyte.gz").read_bytes())
    digits = np.frombuffer(raw, np.uint8, offset=16).reshape(-1, 28, 28)[:50]
    for key in (0, 7, 31, 49):
        _, image = recordio.unpack_img(mnist50.read_idx(key))
        assert image.shape == (28, 28, 3) and image.dtype == np.uint8
        # JPEG at quality 95 is lossy; a wrong digit differs by ~16 on average.
        assert np.abs(image.astype(int) - digits[key][..., None]).mean() < 3


def test_mnist50_sequential_read_matches_indexed_read(mnist50) -> None:
    sequential = list(mnist50)
    assert len(sequential) == 50
    assert [mnist50.read_idx(k) for k in (3, 0, 49)] == [sequential[i] for i in (3, 0, 49)]


# --- records holding the magic word ----------------------------------------


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        MAGIC,
        b"abcd" + MAGIC,
        MAGIC + b"x",
        MAGIC * 3 + b"tail",
        b"ab" + MAGIC + b"cd" + MAGIC,
        b"1234" + MAGIC + b"5678" + MAGIC + b"9",
        bytes(range(256)) * 3 + MAGIC + bytes(5),
    ],
)
def test_payload_holding_the_magic_word_round_trips(tmp_path: Path, payload: bytes) -> None:
    write_records(tmp_path / "a.rec", [b"before", payload, b"after"])
    assert read_records(tmp_path / "a.rec") == [b"before", payload, b"after"]


def test_aligned_magic_word_splits_the_record_into_flagged_parts(
    tmp_path: Path,
) -> None:
    write_records(tmp_path / "a.rec", [b"abcd" + MAGIC + b"ef"])
    data = (tmp_path / "a.rec").read_bytes()
    assert data == (
        MAGIC + struct.pack("<I", 1 << 29 | 4) + b"abcd"
        + MAGIC + struct.pack("<I", 3 << 29 | 2) + b"ef\0\0"
    )  # fmt: skip


def test_unaligned_magic_word_is_not_split(tmp_path: Path) -> None:
    write_records(tmp_path / "a.rec", [b"a" + MAGIC])
    data = (tmp_path / "a.rec").read_bytes()
    assert data == MAGIC + struct.pack("<I", 5) + b"a" + MAGIC + b"\0\0\0"


def test_random_payloads_with_magic_words_round_trip(tmp_path: Path) -> None:
    rng = random.Random(0)
    payloads = [b"".join(rng.choice([MAGIC, rng.randbytes(rng.randrange(9))]) for _ in range(6)) for _ in range(100)]
    write_records(tmp_path / "a.rec", payloads)
    assert read_records(tmp_path / "a.rec") == payloads


# --- truncated and corrupt files -------------------------------------------


def test_read_returns_none_at_end_of_file(tmp_path: Path) -> None:
    write_records(tmp_path / "a.rec", [b"only"])
    with recordio.MXRecordIO(tmp_path / "a.rec", "r") as reader:
        assert reader.read() == b"only"
        assert reader.read() is None
        assert reader.read() is None


@pytest.mark.parametrize(
    ("cut", "message"),
    [(12 + 3, "file ends inside a record header at offset 12"),
     (12 + 8 + 2, "record at offset 12 declares 5 bytes")],
)  # fmt: skip
def test_truncated_file_raises_format_error_naming_file_and_offset(tmp_path: Path, cut: int, message: str) -> None:
    write_records(tmp_path / "a.rec", [b"abcd", b"hello"])
    (tmp_path / "a.rec").write_bytes((tmp_path / "a.rec").read_bytes()[:cut])
    with recordio.MXRecordIO(tmp_path / "a.rec", "r") as reader:
        assert reader.read() == b"abcd"
        with pytest.raises(FormatError, match=message) as info:
            reader.read()
    assert str(tmp_path / "a.rec") in str(info.value)


def test_bad_magic_word_raises_format_error(tmp_path: Path) -> None:
    write_records(tmp_path / "a.rec", [b"abcd", b"efgh"])
    data = bytearray((tmp_path / "a.rec").read_bytes())
    data[12] ^= 0xFF
    (tmp_path / "a.rec").write_bytes(bytes(data))
    with recordio.MXRecordIO(tmp_path / "a.rec", "r") as reader:
        reader.read()
        with pytest.raises(FormatError, match="bad magic word 0xced723f5 at offset 12"):
            reader.read()


def test_file_cut_between_parts_of_a_split_record_raises(tmp_path: Path) -> None:
    write_records(tmp_path / "a.rec", [b"abcd" + MAGIC + b"efgh"])
    (tmp_path / "a.rec").write_bytes((tmp_path / "a.rec").read_bytes()[:12])
    with (
        recordio.MXRecordIO(tmp_path / "a.rec", "r") as reader,
        pytest.raises(FormatError, match="inside a multi-part record at offset 12"),
    ):
        reader.read()


def test_middle_part_without_first_part_raises(tmp_path: Path) -> None:
    (tmp_path / "a.rec").write_bytes(MAGIC + struct.pack("<I", 2 << 29 | 4) + b"abcd")
    with (
        recordio.MXRecordIO(tmp_path / "a.rec", "r") as reader,
        pytest.raises(
            FormatError,
            match="offset 0 has continuation flag 2; expected one of \\(0, 1\\)",
        ),
    ):
        reader.read()


# --- indexed files ----------------------------------------------------------


def test_indexed_records_read_back_by_key(tmp_path: Path) -> None:
    idx, rec = tmp_path / "a.idx", tmp_path / "a.rec"
    with recordio.MXIndexedRecordIO(idx, rec, "w", key_type=str) as writer:
        for name in ("cat", "dog", "eel"):
            writer.write_idx(name, name.encode() * 3)
    with recordio.MXIndexedRecordIO(idx, rec, "r", key_type=str) as reader:
        assert reader.keys == ["cat", "dog", "eel"]
        assert reader.read_idx("eel") == b"eeleeleel"
        assert reader.read_idx("cat") == b"catcatcat"


def test_index_file_holds_key_tab_offset_lines(tmp_path: Path) -> None:
    idx, rec = tmp_path / "a.idx", tmp_path / "a.rec"
    with recordio.MXIndexedRecordIO(idx, rec, "w") as writer:
        for key, payload in ((5, b"abc"), (9, b"abcdefgh"), (2, b"")):
            writer.write_idx(key, payload)
    assert idx.read_text() == "5\t0\n9\t12\n2\t28\n"


def test_random_seek_reads_the_record_of_each_key(tmp_path: Path) -> None:
    idx, rec = tmp_path / "a.idx", tmp_path / "a.rec"
    payloads = {key: bytes([key]) * key + MAGIC * (key % 3) for key in range(40)}
    with recordio.MXIndexedRecordIO(idx, rec, "w") as writer:
        for key, payload in payloads.items():
            writer.write_idx(key, payload)
    order = list(payloads)
    random.Random(1).shuffle(order)
    with recordio.MXIndexedRecordIO(idx, rec, "r") as reader:
        for key in order:
            reader.seek(key)
            assert reader.read() == payloads[key]
            assert reader.read() == payloads.get(key + 1)


def test_unknown_key_raises_key_error(tmp_path: Path) -> None:
    idx, rec = tmp_path / "a.idx", tmp_path / "a.rec"
    with recordio.MXIndexedRecordIO(idx, rec, "w") as writer:
        writer.write_idx(0, b"x")
    with (
        recordio.MXIndexedRecordIO(idx, rec, "r") as reader,
        pytest.raises(KeyError, match="key 7 is not in index"),
    ):
        reader.read_idx(7)


def test_malformed_index_line_raises_format_error(tmp_path: Path) -> None:
    write_records(tmp_path / "a.rec", [b"x"])
    (tmp_path / "a.idx").write_text("0\t0\nbad line\n")
    with pytest.raises(FormatError, match="a.idx: line 2 is 'bad line'"):
        recordio.MXIndexedRecordIO(tmp_path / "a.idx", tmp_path / "a.rec", "r")


def test_index_offset_past_the_last_record_raises_format_error(tmp_path: Path) -> None:
    write_records(tmp_path / "a.rec", [b"x"])
    (tmp_path / "a.idx").write_text("0\t0\n1\t12\n")
    with (
        recordio.MXIndexedRecordIO(tmp_path / "a.idx", tmp_path / "a.rec", "r") as reader,
        pytest.raises(FormatError, match="key 1 points at offset 12, past the last record"),
    ):
        reader.read_idx(1)


# --- file handling ----------------------------------------------------------


def test_tell_gives_the_offset_of_the_next_record(tmp_path: Path) -> None:
    with recordio.MXRecordIO(tmp_path / "a.rec", "w") as writer:
        offsets = []
        for payload in (b"a", b"abcde", b"ab" + MAGIC + b"cdef" + MAGIC):
            offsets.append(writer.tell())
            writer.write(payload)
    assert offsets == [0, 12, 28]
    with recordio.MXRecordIO(tmp_path / "a.rec", "r") as reader:
        reader.read()
        assert reader.tell() == 12


def test_reset_rewinds_a_reader(tmp_path: Path) -> None:
    write_records(tmp_path / "a.rec", [b"one", b"two"])
    with recordio.MXRecordIO(tmp_path / "a.rec", "r") as reader:
        first = list(reader)
        reader.reset()
        assert list(reader) == first == [b"one", b"two"]


def test_pickled_reader_resumes_where_it_was(tmp_path: Path) -> None:
    idx, rec = tmp_path / "a.idx", tmp_path / "a.rec"
    with recordio.MXIndexedRecordIO(idx, rec, "w") as writer:
        for key in range(3):
            writer.write_idx(key, b"record %d" % key)
    reader = recordio.MXIndexedRecordIO(idx, rec, "r")
    reader.read()
    clone = pickle.loads(pickle.dumps(reader))
    assert clone.read() == b"record 1"
    assert clone.read_idx(0) == b"record 0" and clone.keys == [0, 1, 2]
    reader.close()
    clone.close()


def test_pickling_an_open_writer_raises(tmp_path: Path) -> None:
    writer = recordio.MXRecordIO(tmp_path / "a.rec", "w")
    with pytest.raises(TypeError, match="open for writing; close it first"):
        pickle.dumps(writer)
    writer.close()
    assert pickle.loads(pickle.dumps(writer)).is_open is False


def test_writer_replaces_the_file_only_when_closed(tmp_path: Path) -> None:
    write_records(tmp_path / "a.rec", [b"old"])
    writer = recordio.MXRecordIO(tmp_path / "a.rec", "w")
    writer.write(b"new")
    assert read_records(tmp_path / "a.rec") == [b"old"]
    writer.close()
    assert read_records(tmp_path / "a.rec") == [b"new"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.rec"]


def test_written_file_has_the_permissions_of_a_plain_open(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        write_records(tmp_path / "a.rec", [b"x"])
    finally:
        os.umask(umask)
    assert (tmp_path / "a.rec").stat().st_mode & 0o777 == 0o644


def test_error_inside_with_block_keeps_the_old_files(tmp_path: Path) -> None:
    idx, rec = tmp_path / "a.idx", tmp_path / "a.rec"
    with recordio.MXIndexedRecordIO(idx, rec, "w") as writer:
        writer.write_idx(0, b"old")
    with (
        pytest.raises(RuntimeError),
        recordio.MXIndexedRecordIO(idx, rec, "w") as writer,
    ):
        writer.write_idx(0, b"new")
        raise RuntimeError("stop")
    assert recordio.MXIndexedRecordIO(idx, rec, "r").read_idx(0) == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.idx", "a.rec"]


def test_wrong_mode_and_closed_file_raise(tmp_path: Path) -> None:
    writer = recordio.MXRecordIO(tmp_path / "a.rec", "w")
    with pytest.raises(OperatorError, match="a.rec: cannot read from a record file opened with flag 'w'"):
        writer.read()
    writer.close()
    with pytest.raises(OperatorError, match="a.rec: I/O operation on a closed record file"):
        writer.write(b"x")
    with pytest.raises(OperatorError, match=r"MXRecordIO\(.*a.rec'\): flag must be 'r' or 'w'; given 'a'"):
        recordio.MXRecordIO(tmp_path / "a.rec", "a")
    with pytest.raises(TypeError, match="bytes-like; given str"):
        recordio.MXRecordIO(tmp_path / "b.rec", "w").write("text")


# --- image records ----------------------------------------------------------


def test_scalar_label_is_stored_in_the_header() -> None:
    record = recordio.pack(recordio.IRHeader(9, 2.5, 3, 4), b"payload")
    assert record[:24] == struct.pack("<IfQQ", 0, 2.5, 3, 4)
    assert recordio.unpack(record) == (recordio.IRHeader(0, 2.5, 3, 4), b"payload")


def test_array_label_follows_the_header_with_flag_set_to_its_length() -> None:
    record = recordio.pack((0, np.array([1.5, -2.0, 3.0]), 7, 0), b"p")
    assert record == struct.pack("<IfQQ3f", 3, 0.0, 7, 0, 1.5, -2.0, 3.0) + b"p"
    header, payload = recordio.unpack(record)
    assert header.flag == 3 and payload == b"p"
    np.testing.assert_array_equal(header.label, [1.5, -2.0, 3.0])


def test_unpack_of_a_short_record_raises_format_error() -> None:
    with pytest.raises(FormatError, match="at least 24 bytes"):
        recordio.unpack(b"short")
    with pytest.raises(FormatError, match="announces 4 float32 labels"):
        recordio.unpack(struct.pack("<IfQQ", 4, 0.0, 0, 0) + b"\0" * 8)


def test_png_image_record_round_trips_exactly() -> None:
    image = np.random.default_rng(0).integers(0, 256, (5, 7, 3), dtype=np.uint8)
    record = recordio.pack_img(recordio.IRHeader(0, 1.0, 2, 0), image, img_fmt=".png")
    header, decoded = recordio.unpack_img(record)
    assert header == recordio.IRHeader(0, 1.0, 2, 0)
    np.testing.assert_array_equal(decoded, image)


def test_undecodable_image_record_raises_format_error() -> None:
    record = recordio.pack(recordio.IRHeader(0, 0.0, 11, 0), b"not an image")
    with pytest.raises(FormatError, match=r"cannot decode image record id 11: not a valid image \(12 bytes\)"):
        recordio.unpack_img(record)


def test_bad_image_or_quality_raises_value_error() -> None:
    header = recordio.IRHeader(0, 0.0, 0, 0)
    with pytest.raises(ValueError, match="JPEG quality must be in"):
        recordio.pack_img(header, np.zeros((2, 2), np.uint8), quality=101)
    with pytest.raises(ValueError, match="shape"):
        recordio.pack_img(header, np.zeros(4, np.uint8))


@pytest.mark.parametrize("module", [recordio_file, recordio_indexed, recordio_pack])
def test_docstring_examples_run(module) -> None:
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


# --- damaged index files -----------------------------------------------------


def _indexed_pair(tmp_path: Path) -> tuple[Path, Path]:
    idx, rec = tmp_path / "a.idx", tmp_path / "a.rec"
    with recordio.MXIndexedRecordIO(idx, rec, "w") as writer:
        for key in range(3):
            writer.write_idx(key, b"record %d" % key)
    return idx, rec


def test_index_that_is_not_utf8_names_the_file_and_line(tmp_path: Path) -> None:
    idx, rec = _indexed_pair(tmp_path)
    idx.write_bytes(b"0\t0\n\xff\xfe\t16\n")
    with pytest.raises(FormatError, match=r"a\.idx: line 2 is not UTF-8"):
        recordio.MXIndexedRecordIO(idx, rec, "r")


@pytest.mark.parametrize("offset", [2**70, 2**62, -8, 10_000])
def test_index_offset_outside_the_record_file_names_file_and_key(tmp_path: Path, offset: int) -> None:
    idx, rec = _indexed_pair(tmp_path)
    idx.write_text(f"0\t0\n7\t{offset}\n")
    with pytest.raises(FormatError, match=rf"a\.idx: line 2: key 7 has offset {offset}, outside .*a\.rec"):
        recordio.MXIndexedRecordIO(idx, rec, "r")


def test_index_offset_inside_a_record_is_a_format_error_naming_the_offset(tmp_path: Path) -> None:
    idx, rec = _indexed_pair(tmp_path)
    idx.write_text("0\t4\n")
    with (
        recordio.MXIndexedRecordIO(idx, rec, "r") as reader,
        pytest.raises(FormatError, match=r"a\.idx: key 0 points at offset 4 of .*a\.rec.*bad magic word"),
    ):
        reader.read_idx(0)


def test_write_idx_indexes_the_key_as_key_type_makes_it_so_the_index_reads_back(tmp_path: Path) -> None:
    idx, rec = str(tmp_path / "a.idx"), str(tmp_path / "a.rec")
    with recordio.MXIndexedRecordIO(idx, rec, "w") as writer:
        writer.write_idx(1.0, b"one")  # MXNet 1.9.1 writes int(1.0): "1"
        writer.write_idx(np.int64(2), b"two")
        assert writer.keys == [1, 2]
    assert Path(idx).read_text().splitlines()[0] == "1\t0"
    with recordio.MXIndexedRecordIO(idx, rec, "r") as reader:
        assert reader.keys == [1, 2] and reader.read_idx(1) == b"one"


def test_write_idx_of_a_key_key_type_refuses_raises_format_error_naming_it(tmp_path: Path) -> None:
    with recordio.MXIndexedRecordIO(str(tmp_path / "a.idx"), str(tmp_path / "a.rec"), "w") as writer:
        with pytest.raises(FormatError, match="key 'cat' cannot be indexed: key_type int"):
            writer.write_idx("cat", b"x")


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (recordio.IRHeader(0, "cat", 1, 0), "label must be a number or an array of numbers"),
        (recordio.IRHeader(0, 1.0, -1, 0), "id and id2 integers"),
    ],
)
def test_pack_of_a_header_the_format_cannot_hold_raises_format_error(header, message) -> None:
    with pytest.raises(FormatError, match=message):
        recordio.pack(header, b"payload")


def test_pack_img_that_opencv_cannot_encode_raises_format_error() -> None:
    with pytest.raises(FormatError, match="pack_img: OpenCV cannot encode"):
        recordio.pack_img(recordio.IRHeader(0, 1.0, 0, 0), np.zeros((4, 4, 3), np.uint8), img_fmt=".nope")
