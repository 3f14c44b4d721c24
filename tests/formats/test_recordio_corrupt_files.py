"""RecordIO files cut short or corrupted: the end of a file, and format errors naming file and offset."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from recordio_records import MAGIC, write_records

from lazynd import recordio
from lazynd.errors import FormatError


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
