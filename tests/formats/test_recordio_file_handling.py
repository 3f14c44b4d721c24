"""RecordIO readers and writers as files: tell, reset, pickling, atomic replacement, permissions, modes."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest
from recordio_records import MAGIC, read_records, write_records

from lazynd import recordio
from lazynd.errors import OperatorError


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
