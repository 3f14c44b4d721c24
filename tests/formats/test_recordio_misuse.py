"""Misused record files raise lazynd's OperatorError (a ValueError) naming the file.

MXNet 1.9.1 asserts (a bare AssertionError) for a write to a reader or a read from a
writer, and raises a bare ValueError for an unknown flag.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from lazynd import recordio
from lazynd.errors import FormatError, OperatorError


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


def test_pack_img_refuses_a_nan_quality_by_name() -> None:
    # int()'s ValueError 'cannot convert float NaN to integer' before
    header = recordio.IRHeader(0, 1.0, 0, 0)
    with pytest.raises(FormatError, match="pack_img: quality must be a number; given nan"):
        recordio.pack_img(header, np.zeros((4, 4, 3), np.uint8), quality=float("nan"))


def test_pack_refuses_a_header_id_that_is_an_array_by_name() -> None:
    # struct's TypeError 'only integer scalar arrays can be converted to a scalar index' before
    with pytest.raises(FormatError, match="cannot pack image record header .*id and id2 integers"):
        recordio.pack(recordio.IRHeader(0, 1.0, np.ones(2), 0), b"a")


def test_an_infinite_index_key_names_the_index(tmp_path: Path) -> None:
    # int()'s OverflowError before
    writer = recordio.MXIndexedRecordIO(str(tmp_path / "a.idx"), str(tmp_path / "a.rec"), "w")
    with pytest.raises(FormatError, match=r"a.idx: key inf cannot be indexed"):
        writer.write_idx(float("inf"), b"a")
    writer.close()
