"""ImageRecordIter's ``path_imglist``: a ``.lst`` file's labels replace the records' own.

As MXNet 1.9.1 (measured): the list is keyed by each record's image id (its header's ``id``,
not its position or its ``.idx`` key), and ``label_width`` takes the first labels of a line.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import lazynd as mx
from lazynd import recordio
from lazynd.errors import FormatError


@pytest.fixture
def rec(tmp_path: Path) -> str:
    """Six 8x8 PNG images whose headers hold label 100 + i and image id 50 + i."""
    path = str(tmp_path / "ids.rec")
    writer = recordio.MXRecordIO(path, "w")
    for i in range(6):
        image = np.full((8, 8, 3), 10 * i, np.uint8)
        writer.write(recordio.pack_img(recordio.IRHeader(0, 100.0 + i, 50 + i, 0), image, img_fmt=".png"))
    writer.close()
    return path


def write_list(tmp_path: Path, ids: range) -> str:
    """A ``.lst`` with two labels per image, ``7 * i`` and ``i``, for image id ``50 + i``."""
    path = tmp_path / "ids.lst"
    path.write_text("".join(f"{50 + i}\t{7 * i}\t{i}\tim{i}.png\n" for i in ids))
    return str(path)


def labels(rec: str, imglist: str, label_width: int) -> list:
    it = mx.io.ImageRecordIter(
        path_imgrec=rec, path_imglist=imglist, data_shape=(3, 8, 8), batch_size=4, label_width=label_width
    )
    return [batch.label[0].asnumpy().tolist() for batch in it]


def test_the_list_labels_replace_the_headers_by_image_id(rec: str, tmp_path: Path) -> None:
    # MXNet 1.9.1 gives these batches (round_batch completes the last from the start)
    assert labels(rec, write_list(tmp_path, range(6)), 2) == [
        [[0, 0], [7, 1], [14, 2], [21, 3]],
        [[28, 4], [35, 5], [0, 0], [7, 1]],
    ]


def test_label_width_one_takes_the_first_label_of_each_line(rec: str, tmp_path: Path) -> None:
    assert labels(rec, write_list(tmp_path, range(6)), 1) == [[0, 7, 14, 21], [28, 35, 0, 7]]


def test_a_record_whose_id_the_list_lacks_is_named(rec: str, tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="image id 54, which the image list lacks"):
        labels(rec, write_list(tmp_path, range(4)), 2)


def test_a_line_with_fewer_labels_than_label_width_is_refused(rec: str, tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="gives image 50 2 label"):
        labels(rec, write_list(tmp_path, range(6)), 3)
