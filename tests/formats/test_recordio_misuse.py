"""Misused record files raise lazynd's OperatorError (a ValueError) naming the file.

MXNet 1.9.1 asserts (a bare AssertionError) for a write to a reader or a read from a
writer, and raises a bare ValueError for an unknown flag.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lazynd import recordio
from lazynd.errors import OperatorError


def test_write_to_a_reader_names_the_file(tmp_path: Path) -> None:
    recordio.MXRecordIO(tmp_path / "a.rec", "w").close()
    reader = recordio.MXRecordIO(tmp_path / "a.rec", "r")
    with pytest.raises(OperatorError, match="a.rec: cannot write to a record file opened with flag 'r'"):
        reader.write(b"x")


def test_index_key_with_a_tab_names_the_index(tmp_path: Path) -> None:
    writer = recordio.MXIndexedRecordIO(tmp_path / "c.idx", tmp_path / "c.rec", "w", key_type=str)
    with pytest.raises(OperatorError, match="c.idx: index keys may not hold tabs"):
        writer.write_idx("a\tb", b"x")
    writer.close()
