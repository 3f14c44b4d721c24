"""Indexed RecordIO: reading by key, the index file's lines, and damaged index files."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from recordio_records import MAGIC, write_records

from lazynd import recordio
from lazynd.errors import FormatError
from lazynd.formats.recordio_indexed import RecordIOIndexedByHeaders


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


def test_without_an_index_file_the_records_are_keyed_in_file_order(tmp_path: Path) -> None:
    # records holding the magic word are stored in several parts: each is still one key
    payloads = [b"a", MAGIC * 2 + b"xyz", b"", b"0123456789" + MAGIC]
    rec = tmp_path / "a.rec"
    write_records(rec, payloads)
    with recordio.MXRecordIO(rec, "r") as reader:
        offsets = reader.record_offsets()
        assert reader.read() == b"a"  # left rewound
    with RecordIOIndexedByHeaders(rec) as reader:
        assert reader.keys == [0, 1, 2, 3]
        assert reader.idx == dict(enumerate(offsets))
        assert [reader.read_idx(key) for key in (3, 1, 0, 2)] == [payloads[3], payloads[1], payloads[0], b""]


def test_without_an_index_file_bad_headers_are_named(tmp_path: Path) -> None:
    rec = tmp_path / "a.rec"
    write_records(rec, [b"abcd", b"efgh"])
    rec.write_bytes(rec.read_bytes() + b"\x0a\x23")
    with pytest.raises(FormatError, match=r"a.rec: file ends inside a record header at offset 24"):
        RecordIOIndexedByHeaders(rec)
    rec.write_bytes(b"notarecordfile!!")
    with pytest.raises(FormatError, match=r"a.rec: bad magic word 0x61746f6e at offset 0"):
        RecordIOIndexedByHeaders(rec)
