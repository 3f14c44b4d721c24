"""ImageRecordIter reads batch_size and data_shape from text as MXNet does, and refuses bad ones by name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lazynd as mx
from lazynd import recordio
from lazynd.errors import OperatorError


@pytest.fixture
def rec(tmp_path: Path) -> str:
    """Four 8x8 grey PNG images labelled 0..3."""
    path = str(tmp_path / "grey.rec")
    writer = recordio.MXRecordIO(path, "w")
    for i in range(4):
        image = np.full((8, 8), 40 * i, np.uint8)
        writer.write(recordio.pack_img(recordio.IRHeader(0, float(i), i, 0), image, img_fmt=".png"))
    writer.close()
    return path


def test_batch_size_and_data_shape_given_as_text_are_read_as_mxnet_reads_them(rec: str) -> None:
    iterator = mx.io.ImageRecordIter(path_imgrec=rec, data_shape="(1, 8, 8)", batch_size="2")
    batch = next(iter(iterator))
    assert batch.data[0].shape == (2, 1, 8, 8)
    assert batch.label[0].asnumpy().tolist() == [0.0, 1.0]


@pytest.mark.parametrize(
    ("keyword", "value"),
    [
        ("batch_size", "x"),
        ("batch_size", 2.5),
        ("batch_size", None),
        ("data_shape", "abc"),
        ("data_shape", (1, 8.5, 8)),
    ],
)
def test_a_batch_size_or_data_shape_that_is_not_one_is_refused_by_name(rec: str, keyword: str, value: Any) -> None:
    arguments = {"path_imgrec": rec, "data_shape": (1, 8, 8), "batch_size": 2, keyword: value}
    with pytest.raises(OperatorError, match=f"ImageRecordIter: invalid value .* for parameter '{keyword}'"):
        mx.io.ImageRecordIter(**arguments)
